#!/usr/bin/env bash
# The main job. With an SM90 GPU: `hopgemm bench` on the embedded deepseek-v3 suite against the
# cuBLASLt baselines (table, JSON and plot in bench/results/). Without one: precompile the suite's
# kernels for sm_90a and report how many were built and how long it took. Builds only the CLI.
set -euo pipefail
source "$(dirname "$0")/setup_env.sh"
cd "$HOPGEMM_ROOT"
echo "building the hopgemm command (log: $BUILD_DIR/build-cli.log)"
mkdir -p "$BUILD_DIR"
build_cli "$BUILD_DIR/build-cli.log"
if nvidia-smi -L 2>/dev/null | grep -q "GPU"; then
  # --plot needs matplotlib; on a machine that cannot install it (offline) the bench runs without the plot.
  plot=(--plot)
  if ! "$PYTHON" -c "import matplotlib" 2>/dev/null &&
     ! "$PYTHON" -m pip install -q --retries 1 --timeout 15 matplotlib >/dev/null 2>&1; then
    echo "matplotlib is missing and could not be installed: no plot ($PYTHON -m pip install matplotlib adds it)"
    plot=()
  fi
  exec "$BUILD_DIR/hopgemm" bench --suite deepseek-v3 "${plot[@]}" "$@"
else
  echo "no GPU found: precompiling instead of benchmarking"
  exec "$BUILD_DIR/hopgemm" precompile --suite deepseek-v3 "$@"
fi
