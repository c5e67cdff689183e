#!/usr/bin/env bash
# Ran on branch wip/tail-split with .device/v_shfl and .device/v_noreduce copied from its include/ (main took the
# broadcast for fused split-K: 9d5a826).
# Fifteenth session. (a) Fused split-K with the last-split verdict broadcast from lane 0 (.device/v_shfl): the decode
# kernels' mainloop then keeps its WGMMA descriptors in uniform registers (SASS: 48 R2UR fewer per k-block at 64x64 k4).
# (b) tail_split=1 ran 2-5% slower than tail_split=0 with the same work (one piece per tail unit, nothing summed) and an
# identical mainloop in SASS: the same with the tail's reduction code compiled out (.device/v_noreduce).
scripts/ab_headers.sh .device/v_shfl 3 1x2112x7168 1x576x7168 64x2112x7168 64x576x7168 128x2112x7168 128x576x7168 1x7168x16384
AB_BENCH_ARGS="--config tail_split=1" scripts/ab_headers.sh .device/v_noreduce 3 4096x512x32768 4096x2048x7168
