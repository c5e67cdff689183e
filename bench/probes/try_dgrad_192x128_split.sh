#!/usr/bin/env bash
# Thirteenth session: 192x128 tiles (three math warpgroups) with fused split-K on dgrad 4096x512x32768 (one wave of
# 128x128 tiles, intake-bound: 192x128 split 3 is 264 units, two waves, a sixth less intake per SM), in alternating
# rounds against the table's pick; the GPU test of the 3-warpgroup fused splits first.
source bench/probes/try_lib.sh
(cd /tmp && "$PYTHON" -m pytest -q "$HOPGEMM_ROOT/tests/gpu/test_fp8_gemm.py" -k "largest_tiles_sum_in_place") 2>&1 | tail -3
B="block_n=128,cluster_m=1,cluster_n=1,wg_order=0,splitk_fused=1"
try_configs --rounds 3 4096x512x32768 \
  "block_m=192,$B,k_splits=3,d_in_stage=0,d_passes=1" \
  "block_m=192,$B,k_splits=3,d_in_stage=1,d_passes=2" \
  "block_m=192,$B,k_splits=3,d_in_stage=0,d_passes=1,raster_band=1" \
  "block_m=192,$B,k_splits=6,d_in_stage=0,d_passes=1" \
  "block_m=192,$B,k_splits=3,d_in_stage=0,d_passes=1,wg_order=1"
