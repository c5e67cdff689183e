#!/usr/bin/env bash
# Next after the thirteenth session (notes v22): the warpgroup turns lost to no turns on 128x128 at K >= 2048. Here
# (a) the other 128-row widths the model picks with turns (128x32 .. 128x96), turns off; (b) 128x128 at K < 2048,
# turns off, with and without D staged in the last stage. Alternating rounds against the heuristics' pick.
source bench/probes/try_lib.sh
try_configs --rounds 3 \
  256x2048x1536,256x4096x4096,256x5120x4096,512x3072x4096,768x1536x7168,768x2048x4096,1024x1536x7168,512x2048x7168 \
  "wg_order=0"
try_configs --rounds 3 256x7168x1024,512x4096x1536,1024x2048x512,1024x2048x1536,512x4096x512 \
  "wg_order=0" "wg_order=0,d_in_stage=1,d_passes=2"
