#!/usr/bin/env bash
# On the GPU machine: A/B timing of versions of the device headers with one CLI binary, alternating runs
# so clock and thermal drift fall on all of them. Usage (each OTHER is a carried copy of an include/ tree,
# e.g. a diagnostic variant under .device/):
#   scripts/ab_headers.sh OTHER_INCLUDE_DIR[,OTHER...] ROUNDS SHAPE [SHAPE...]   (SHAPE as `hopgemm bench --shape`)
# Each round times this tree's include/ ("new") and then every OTHER (named by its directory).
# AB_BENCH_ARGS adds bench options to every run (e.g. AB_BENCH_ARGS="--sfa row").
set -uo pipefail
cd "$(dirname "$0")/.."
IFS=, read -r -a others <<< "$1"; rounds="$2"; shift 2
sides=("$(realpath include)")
for o in "${others[@]}"; do sides+=("$(realpath "$o")"); done
export HOPGEMM_BUILD_DIR=/tmp/hopgemm-build
source scripts/setup_env.sh
build_cli /tmp/hopgemm-ab-build.log || exit 1
for shape in "$@"; do
  for round in $(seq "$rounds"); do
    for inc in "${sides[@]}"; do
      side=new
      # A tree is named by its directory, or by its parent's when it is an include/ copy (.device/base/include).
      [ "$inc" = "${sides[0]}" ] || { side="$(basename "$inc")"; [ "$side" = include ] && side="$(basename "$(dirname "$inc")")"; }
      us=$(HOPGEMM_INCLUDE_DIR="$inc" HOPGEMM_CACHE_DIR="/tmp/hopgemm-ab-$side" "$BUILD_DIR/hopgemm" bench --shape "$shape" --iters 50 ${AB_BENCH_ARGS:-} \
           2>/dev/null | awk -F'|' '/^(fwd|dgrad|wgrad) /{split($2, a, " "); print a[1]}')
      echo "$shape round $round $side $us us"
    done
  done
done
