#!/usr/bin/env bash
# Twelfth session, on the GPU machine: the decode (M 8-96) and mid-M (256-3072) log shapes re-measured over the
# model's top 40 with the fused split-K's all-at-once reads, for a refit of the model's split-K terms
# (bench/fit_heuristics.py). Candidate lines to $OUT/split-candidates.log, one summary line per shape to
# $OUT/split-summary.txt; the winners' table rows to $OUT/split-*.inc (not merged unless they are re-confirmed).
export HOPGEMM_VENV=/tmp/hopgemm-venv HOPGEMM_BUILD_DIR=/tmp/hopgemm-build HOPGEMM_CACHE_DIR=/tmp/hopgemm-cache
source scripts/setup_env.sh; set +e
build_cli /tmp/build_cli.log || exit 1
out="${OUT:-/tmp}"
for m in 8 16 32 48 96 256 384 512 768 1024 1536 2048 3072; do
  for nk in 7168x2048 4096x7168 2112x7168 24576x1536 7168x16384 576x7168 32768x512; do
    [ "$m" -ge 256 ] && { [ "$nk" = 576x7168 ] || [ "$nk" = 32768x512 ]; } && continue
    "$BUILD_DIR/hopgemm" tune --shape "${m}x${nk}" --top 40 --out "$out/split-m$m.inc" 2>> "$out/split-candidates.log" |
      grep -E "^(fwd|dgrad|wgrad) " >> "$out/split-summary.txt"
  done
done
