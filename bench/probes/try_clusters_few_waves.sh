#!/usr/bin/env bash
# Fourteenth session: the suite's one- and two-wave table rows without a cluster (4096x576x7168 192x96: 132 tiles, 0.91x
# of cuBLASLt per-tensor; its CTAs pull ~7.8 TB/s from L2 together, near what one wave of ours ever gets). A pair that
# multicasts the shared operand cuts each CTA's L2 reads by a third (A shared) or a sixth (B shared); the model never
# offers pairs below two waves, so `tune` never timed them. Alternating rounds against the table row.
source bench/probes/try_lib.sh
try_configs --rounds 3 4096x576x7168 "cluster_n=2" "cluster_m=2" "cluster_n=2,raster_band=16" \
  "block_m=128,block_n=144,cluster_n=2,raster_band=16,wg_order=0" "block_m=128,block_n=144,cluster_m=2,raster_band=16,wg_order=0"
try_configs --rounds 3 4096x2048x7168,4096x7168x576 "cluster_n=2" "cluster_m=2"
try_configs --rounds 3 4096x2112x7168 "cluster_m=2" "cluster_m=2,raster_band=16"
