#!/usr/bin/env bash
# Thirteenth session: 128x128 with D staged in the last stage (a 6th stage) below K = 16384, with and without the
# warpgroup turns, on shapes whose model pick is 128x128 with turns and 5 stages (one wave or few, B streamed):
# alternating rounds against the heuristics' pick (bench/try_configs.py).
source bench/probes/try_lib.sh
[ "${SECOND:-0}" = 1 ] || try_configs --rounds 3 160x8192x8192,1152x3584x7168,144x7168x7168,2048x1024x8192 \
  "d_in_stage=1,d_passes=2" "d_in_stage=1,d_passes=2,wg_order=0" "block_m=64,block_n=192,wg_order=0"
# Second call: more shapes whose model pick is 128x128 with turns (K 2048-12288), D in the last stage without turns
# against turns off alone.
if [ "${SECOND:-0}" = 1 ]; then
  try_configs --rounds 3 \
    512x3584x2048,1024x2048x2048,512x4096x4096,4096x3584x4096,1024x2048x5120,4096x3584x5120,2048x1024x12288,512x3584x12288 \
    "d_in_stage=1,d_passes=2,wg_order=0" "wg_order=0"
fi
