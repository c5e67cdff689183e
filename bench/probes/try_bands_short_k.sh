#!/usr/bin/env bash
# Fourteenth session: at 4096x7168x640 the model's 256x128 (raster band 16) took 1.10x the time of the same tile with
# band 2 (the suite's K = 576 row), at K = 512 0.97x (bench/results/h100-2026-11-22-try-k-tail-cost.txt). Bands at
# short K, on the model's picks, alternating rounds against band 16.
source bench/probes/try_lib.sh
try_configs --rounds 3 4096x7168x512,4096x7168x640,4096x7168x768,4096x7168x1024,8192x4096x640,2048x7168x640 \
  "raster_band=1" "raster_band=2" "raster_band=4" "raster_band=8"
try_configs --rounds 3 4096x16384x512,4096x4096x768,8192x8192x1024,4096x2048x640 "raster_band=1" "raster_band=2" "raster_band=4"
