#!/usr/bin/env bash
# Configure and build the library, the CLI and the C++ tests into build/ (or $HOPGEMM_BUILD_DIR), then build the Python
# package as a wheel ($BUILD_DIR/wheel) and install it into the environment: the `hopgemm` package and the `hopgemm`
# command. Idempotent: a second run only rebuilds what changed.
set -euo pipefail
source "$(dirname "$0")/setup_env.sh"
cd "$HOPGEMM_ROOT"
configure ON
cmake --build "$BUILD_DIR" -j"$JOBS"
install_package "$BUILD_DIR/build-wheel.log"
