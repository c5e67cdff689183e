#!/usr/bin/env bash
# On the GPU machine: build the CLI and run `hopgemm tune` with the given arguments, e.g.
#   scripts/tune.sh --suite deepseek-v3 --role wgrad --sfa mn
# Winners are appended to $OUT/tuned.inc (merge them into src/heuristics/sm90_fp8_gemm_tuned.inc with
# scripts/merge_tuned.py: a problem appears once), every candidate's time to $OUT/tune.log.
# Set HOPGEMM_COMMIT=<hash> for the table headers: the device machine's copy of .git can be older than the tree.
set -uo pipefail
cd "$(dirname "$0")/.."
export HOPGEMM_BUILD_DIR=/tmp/hopgemm-build HOPGEMM_CACHE_DIR=/tmp/hopgemm-cache
OUTDIR="${OUT:-/tmp/hopgemm-out}"; mkdir -p "$OUTDIR"
source scripts/setup_env.sh
build_cli /tmp/hopgemm-tune-build.log || exit 1
"$BUILD_DIR/hopgemm" tune "$@" --out "$OUTDIR/tuned.inc" 2>> "$OUTDIR/tune.log"
