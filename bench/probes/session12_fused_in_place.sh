#!/usr/bin/env bash
# Twelfth session, on the GPU machine from the repository root: fused split-K summed in place (no second set of sums
# beside the accumulators), which lets 256x128 and 128x192 tiles split without spilling, and D staged in the last
# stage of a fused split. (1) dgrad 4096x512x32768, the one suite shape under 0.97x of cuBLASLt: 256x128 split 2
# (4 stages with D in the last one, 3 without) and 128x192 split 2 against the table's 128x128 pairs, 3 alternating
# rounds, each result checked against the table pick's. (2) The in-place sum against the previous reduction
# (headers of 16547a9 carried as .device/base_reduce/include) on split-K decode picks.
export HOPGEMM_VENV=/tmp/hopgemm-venv HOPGEMM_BUILD_DIR=/tmp/hopgemm-build HOPGEMM_CACHE_DIR=/tmp/hopgemm-cache
source scripts/setup_env.sh; set +e
scripts/build.sh > /tmp/b.log 2>&1 || { tail -30 /tmp/b.log; exit 1; }
R=$HOPGEMM_ROOT
(cd /tmp && $PYTHON $R/bench/try_configs.py --rounds 3 4096x512x32768 \
  "block_m=256,block_n=128,cluster_n=1,k_splits=2,splitk_fused=1,d_in_stage=1,d_passes=2" \
  "block_m=256,block_n=128,cluster_n=1,k_splits=2,splitk_fused=1,d_in_stage=0,d_passes=1" \
  "block_m=128,block_n=192,cluster_n=1,k_splits=2,splitk_fused=1,d_in_stage=0,d_passes=1")
scripts/ab_headers.sh .device/base_reduce/include 2 1x2112x7168 8x2112x7168 64x576x7168 128x2112x7168 1x576x7168
