#!/usr/bin/env bash
# On the GPU machine: A/B timing of two versions of the device headers with one CLI binary, alternating runs
# so clock and thermal drift fall on both. Usage (OLD is a carried copy of an include/ tree):
#   scripts/ab_headers.sh OLD_INCLUDE_DIR ROUNDS SHAPE [SHAPE...]      (SHAPE as `hopgemm bench --shape`)
# AB_BENCH_ARGS adds bench options to every run (e.g. AB_BENCH_ARGS="--sfa row").
set -uo pipefail
cd "$(dirname "$0")/.."
old="$(realpath "$1")"; rounds="$2"; shift 2
export HOPGEMM_BUILD_DIR=/tmp/hopgemm-build
source scripts/setup_env.sh
build_cli /tmp/hopgemm-ab-build.log || exit 1
for shape in "$@"; do
  for round in $(seq "$rounds"); do
    for side in old new; do
      if [ "$side" = old ]; then inc="$old"; else inc="$HOPGEMM_ROOT/include"; fi
      us=$(HOPGEMM_INCLUDE_DIR="$inc" HOPGEMM_CACHE_DIR="/tmp/hopgemm-ab-$side" "$BUILD_DIR/hopgemm" bench --shape "$shape" --iters 50 ${AB_BENCH_ARGS:-} \
           2>/dev/null | awk -F'|' '/^(fwd|dgrad|wgrad) /{split($2, a, " "); print a[1]}')
      echo "$shape round $round $side $us us"
    done
  done
done
