#!/usr/bin/env bash
# Fourteenth session: A's boxes zero-filled past M were slow (bench/results/h100-2026-11-22-ab-a-tail-box.txt). Does
# the K tail (the last k-block of every tile half past K at K = 2112 and 576, two suite dgrad shapes) cost likewise?
# The same config at K one half-block below and above: a K-tail cost shows as time(2112) well above the mean of
# time(2048) and time(2176).
source bench/probes/try_lib.sh
C2112="block_m=256,block_n=128,cluster_m=1,cluster_n=2,raster_band=16,k_splits=1,d_in_stage=0,d_passes=1"
try_configs --rounds 3 4096x7168x2048,4096x7168x2112,4096x7168x2176 "$C2112"
C576="block_m=256,block_n=128,cluster_m=1,cluster_n=1,raster_band=2,k_splits=1,d_in_stage=0,d_passes=1"
try_configs --rounds 3 4096x7168x512,4096x7168x576,4096x7168x640 "$C576"
C64="block_m=64,block_n=128,cluster_m=1,cluster_n=1,k_splits=1,promote_overlap=1"
try_configs --rounds 3 128x7168x2048,128x7168x2112,128x7168x2176 "$C64"
