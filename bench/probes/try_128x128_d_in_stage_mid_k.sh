#!/usr/bin/env bash
# Thirteenth session: 128x128 with D staged in the last stage (a 6th stage) below K = 16384, with and without the
# warpgroup turns, on shapes whose model pick is 128x128 with turns and 5 stages (one wave or few, B streamed):
# alternating rounds against the heuristics' pick (bench/try_configs.py).
export HOPGEMM_VENV=/tmp/hopgemm-venv HOPGEMM_BUILD_DIR=/tmp/hopgemm-build HOPGEMM_CACHE_DIR=/tmp/hopgemm-cache
source scripts/setup_env.sh; set +e; scripts/build.sh > /tmp/b.log 2>&1 || tail -20 /tmp/b.log; R=$HOPGEMM_ROOT; cd /tmp
$PYTHON $R/bench/try_configs.py --rounds 3 160x8192x8192,1152x3584x7168,144x7168x7168,2048x1024x8192 \
  "d_in_stage=1,d_passes=2" "d_in_stage=1,d_passes=2,wg_order=0" "block_m=64,block_n=192,wg_order=0"
