#!/usr/bin/env bash
# Configure and build the library, the CLI and the C++ tests into build/ (or $HOPGEMM_BUILD_DIR), link the `hopgemm`
# command into the environment's bin/, and install the Python package into it. Idempotent: a second run only
# rebuilds what changed.
set -euo pipefail
source "$(dirname "$0")/setup_env.sh"
cd "$HOPGEMM_ROOT"
configure ON
cmake --build "$BUILD_DIR" -j"$JOBS"
link_cli
"$PYTHON" -m pip install -q --no-build-isolation --no-deps -C build-dir="$BUILD_DIR/python" .
