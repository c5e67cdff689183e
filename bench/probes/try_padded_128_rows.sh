#!/usr/bin/env bash
# Next after the thirteenth session (notes v22): at M = 144 / 160 the model's 128x128 pick ran 1.14-1.21x the time of
# 64x192. Is it the mostly-padding second tile row? The same widths at M = 256 (no padding) and M = 160 / 144 side by
# side: if 64-row tiles win only where 128-row tiles pad, charge the padded row; else the model's one-warpgroup terms.
source bench/probes/try_lib.sh
C="cluster_m=1,cluster_n=1,k_splits=1,wg_order=0,d_in_stage=0,d_passes=1,promote_overlap=0"
try_configs --rounds 3 144x7168x7168,160x8192x8192,256x8192x8192,192x7168x7168 \
  "block_m=128,block_n=128,$C" "block_m=64,block_n=128,$C" "block_m=64,block_n=192,$C" "block_m=128,block_n=192,$C" \
  "block_m=256,block_n=64,$C"
