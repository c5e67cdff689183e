#!/usr/bin/env bash
# On the GPU machine: how good are the heuristics' picks on shapes the tuning table does not list? Tunes each
# held-out shape over the model's top 40 and writes tune's summary (model pick vs best measured) and candidate log,
# which `bench/fit_heuristics.py` scores for the current and for refitted constants (--score), offline.
# Usage: scripts/validate_model.sh [SHAPE...]   (default: a held-out set of forward shapes; SHAPE as --shape)
# VALIDATE_TOP sets how many of the model's candidates are timed (default 40).
# Set HOPGEMM_COMMIT=<hash> for the headers: the device machine's copy of .git can be older than the tree.
set -uo pipefail
cd "$(dirname "$0")/.."
OUTDIR="${OUT:-/tmp/hopgemm-out}"; mkdir -p "$OUTDIR"
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=(2048x3072x4096 4096x5120x7168 6144x3072x4096 512x7168x4096 256x4096x7168
                                   32x7168x7168 1024x1536x7168 3000x7000x5120 dgrad:4096x3072x12288 96x6144x2048)
for s in "${shapes[@]}"; do
  OUT="$OUTDIR/one" scripts/tune.sh --shape "$s" --top "${VALIDATE_TOP:-40}" --sfa mn >> "$OUTDIR/heldout-summary.txt" 2>> "$OUTDIR/heldout-errors.txt"
  cat "$OUTDIR/one/tune.log" >> "$OUTDIR/heldout-candidates.log"
  rm -rf "$OUTDIR/one"
done
grep -E "^(fwd|dgrad|wgrad) " "$OUTDIR/heldout-summary.txt"
