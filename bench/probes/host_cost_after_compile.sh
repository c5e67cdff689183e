#!/usr/bin/env bash
# The C++ host-cost test right after its kernel's cold compile (a fresh cache directory) and with a warm disk cache,
# three times each: whether the slow reads after a cold compile (5.19 and 5.52 us against 3.25-4.24) are the first
# batches or every batch. On the GPU machine after scripts/build.sh:
#   bash bench/probes/host_cost_after_compile.sh > $OUT/host-cost-after-compile.txt
export HOPGEMM_VENV=/tmp/hopgemm-venv HOPGEMM_BUILD_DIR=/tmp/hopgemm-build
source scripts/setup_env.sh; set +e
for run in cold cold cold warm warm warm; do
  [ "$run" = cold ] && rm -rf /tmp/hopgemm-cache-probe
  echo "== $run"
  HOPGEMM_CACHE_DIR=/tmp/hopgemm-cache-probe "$BUILD_DIR/tests/hopgemm_gpu_tests" \
    --gtest_filter='JitTimings.WarmHostCost*' 2>&1 | grep -E "RESULT|Failure|actual"
done
