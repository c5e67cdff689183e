#!/usr/bin/env bash
# Build everything and run every test: C++ (CPU, compile, GPU) through ctest, Python through pytest.
# GPU tests skip with a printed reason where no GPU is present. Tests labelled `slow` (the shape-grid compile) are left
# out here; the GPU routine (scripts/gpu_check.sh) runs them, or: ctest --test-dir build -L slow.
# torch is installed for the tests that use it
# (HOPGEMM_TORCH=0: not installed, those tests skip).
set -euo pipefail
source "$(dirname "$0")/setup_env.sh"
ensure_torch
"$HOPGEMM_ROOT/scripts/build.sh"
cd "$HOPGEMM_ROOT"
status=0
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$JOBS" -LE slow || status=$?
# Run from outside the source tree so `import hopgemm` is the installed package; the wheel build.sh made is the one
# tests/python/test_wheel.py installs into a fresh venv.
wheel=$(ls "$BUILD_DIR"/wheel/hopgemm-*.whl)
(cd /tmp && HOPGEMM_WHEEL="$wheel" "$PYTHON" -m pytest -q -rs "$HOPGEMM_ROOT/tests/python" "$HOPGEMM_ROOT/tests/gpu") ||
  status=$?
exit $status
