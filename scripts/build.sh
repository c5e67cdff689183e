#!/usr/bin/env bash
# Configure and build the library, the CLI and the C++ tests into build/ (or $HOPGEMM_BUILD_DIR), and install the Python
# package into the venv. Idempotent: a second run only rebuilds what changed.
set -euo pipefail
source "$(dirname "$0")/setup_env.sh"
cd "$HOPGEMM_ROOT"
cmake -S . -B "$BUILD_DIR" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" -j"$JOBS"
"$PYTHON" -m pip install -q --no-build-isolation --no-deps -C build-dir="$BUILD_DIR/python" .
