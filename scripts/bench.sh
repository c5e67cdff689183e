#!/usr/bin/env bash
# The main job. Builds and installs the Python package and its `hopgemm` command (so that afterwards
# `source .venv/bin/activate && hopgemm info` and `import hopgemm` work). With an SM90 GPU: `hopgemm bench` on the
# embedded deepseek-v3 suite against the cuBLASLt baselines (table, JSON and plot in bench/results/). Without one:
# precompile the suite's kernels for sm_90a and report how many were built and how long it took.
set -euo pipefail
source "$(dirname "$0")/setup_env.sh"
cd "$HOPGEMM_ROOT"
mkdir -p "$BUILD_DIR"
echo "building and installing the hopgemm package and command (log: $BUILD_DIR/build-wheel.log)"
install_package "$BUILD_DIR/build-wheel.log"
if nvidia-smi -L 2>/dev/null | grep -q "GPU"; then
  # --plot needs matplotlib; on a machine that cannot install it (offline) the bench runs without the plot.
  plot=(--plot)
  if ! "$PYTHON" -c "import matplotlib" 2>/dev/null &&
     ! "$PYTHON" -m pip install -q --retries 1 --timeout 15 matplotlib >/dev/null 2>&1; then
    echo "matplotlib is missing and could not be installed: no plot ($PYTHON -m pip install matplotlib adds it)"
    plot=()
  fi
  exec "$HOPGEMM_BIN_DIR/hopgemm" bench --suite deepseek-v3 "${plot[@]}" "$@"
else
  echo "no GPU found: precompiling instead of benchmarking"
  exec "$HOPGEMM_BIN_DIR/hopgemm" precompile --suite deepseek-v3 "$@"
fi
