#!/usr/bin/env bash
# The main job. With an SM90 GPU: `hopgemm bench` on the embedded deepseek-v3 suite against the
# cuBLASLt baselines (table, JSON and plot in bench/results/). Without one: precompile the suite's
# kernels for sm_90a and report how many were built and how long it took.
set -euo pipefail
source "$(dirname "$0")/setup_env.sh"
"$HOPGEMM_ROOT/scripts/build.sh"
cd "$HOPGEMM_ROOT"
if nvidia-smi -L 2>/dev/null | grep -q "GPU"; then
  exec "$BUILD_DIR/hopgemm" bench --suite deepseek-v3 --plot "$@"
else
  echo "no GPU found: precompiling instead of benchmarking"
  exec "$BUILD_DIR/hopgemm" precompile --suite deepseek-v3 "$@"
fi
