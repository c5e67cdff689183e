#!/usr/bin/env bash
# Fourteenth session: short K is D-store bound (4096x7168x576: 58.7 MB of D in 41.8 us, 1.4 TB/s; 4096x32768x512 2.0
# TB/s), and a k-block's round costs the same for half a block (notes v23). Epilogue variants on the suite's short-K
# table rows, alternating rounds against the table's pick: D staged in the last stage (a 4th stage), half-width D
# passes, a raster band of 16.
source bench/probes/try_lib.sh
try_configs --rounds 3 4096x7168x576,4096x32768x512,4096x7168x512,8192x7168x576 \
  "d_in_stage=1,d_passes=2" "d_passes=2" "d_in_stage=1,d_passes=1" "raster_band=16"
