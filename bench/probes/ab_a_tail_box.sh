#!/usr/bin/env bash
# A's box of M's rows in the last tile row (a_tail_rows), against the whole-tile box zero-filled past M (the code
# before it: the tree of 4a0e09a with bench/probes/a_tail_box.patch reversed). The same config through both CLIs, in
# alternation, twice; then new/old per line
# (bench/ab_model_picks.py --summary).
source bench/probes/ab_lib.sh
build_old_cli bench/probes/a_tail_box.patch || exit 1
C="cluster_m=1,cluster_n=1,k_splits=1,wg_order=0,d_in_stage=0,d_passes=1,promote_overlap=0"
for s in 160x8192x8192 144x7168x7168 136x7168x2048 300x7168x7168 1000x4096x7168 200x8192x4096; do
  ab_old_new $s "block_m=128,block_n=128,$C"
done
for s in 160x8192x8192 300x4096x7168 4000x7168x7168; do ab_old_new $s "block_m=256,block_n=64,$C"; done
ab_old_new 4000x7168x7168 "block_m=256,block_n=128,$C"
ab_old_new 150x7168x7168 "block_m=192,block_n=128,$C"
for s in 8x28672x7168 64x7168x2048 160x8192x8192 1000x4096x7168 4095x7168x2048 2100x7168x16384; do ab_old_new $s; done
