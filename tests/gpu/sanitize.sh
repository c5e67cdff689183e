#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck, synccheck and initcheck over tests/gpu/sanitize_fp8_gemm.py (dense GEMMs, quantisers,
# layout), tests/gpu/sanitize_grouped_gemm.py (the MoE grouped GEMMs) and tests/gpu/sanitize_mqa_logits.py (the
# DeepSeek-V3.2 indexer: prefill, paged decode, its schedule).
# Each tool must report 0 errors on each script, and the script must finish (print its "subset ran" line: a failed
# check inside it does not show in the sanitizer's summary, and a script that ran nothing fails).
# initcheck reports a kernel's read of device memory nothing wrote: the subsets fill every output (NaN poison, or C)
# before the op, so a finding is a read of a workspace, scale or padding byte the op itself left unwritten.
# Usage: tests/gpu/sanitize.sh [python [script...]]   (scripts: names in tests/gpu/; default all three)
#        SANITIZE_TOOLS="initcheck" tests/gpu/sanitize.sh ...   (a subset of the tools)
set -uo pipefail
py="${1:-python3}"
shift $(( $# > 0 ? 1 : 0 ))
here="$(cd "$(dirname "$0")" && pwd)"
scripts=("$@")
[ ${#scripts[@]} -gt 0 ] || scripts=(sanitize_fp8_gemm.py sanitize_grouped_gemm.py sanitize_mqa_logits.py)
status=0
for script in "${scripts[@]}"; do
  if [ ! -f "$here/$script" ]; then
    echo "no such sanitizer subset: $here/$script"
    status=1
    continue
  fi
  for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}; do
    log=$(cd /tmp && compute-sanitizer --tool "$tool" --target-processes application-only \
          --kernel-name-exclude kns=nvjet "$py" "$here/$script" 2>&1)
    summary=$(echo "$log" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tail -1)
    echo "$tool: ${summary:-no summary} ($script)"
    if ! echo "$summary" | grep -qE "(ERROR|RACECHECK) SUMMARY: 0 (errors|hazards)" ||
       ! echo "$log" | grep -q "subset ran"; then
      echo "$log" | grep -vE "^=+ *$" | head -40
      status=1
    fi
  done
done
exit $status
