#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck over tests/gpu/sanitize_fp8_gemm.py (dense GEMMs, quantisers,
# layout) and tests/gpu/sanitize_grouped_gemm.py (the MoE grouped GEMMs).
# Each tool must report 0 errors on each script, and the script must finish (print its "subset ran" line: a failed
# check inside it does not show in the sanitizer's summary, and a script that ran nothing fails).
# Usage: tests/gpu/sanitize.sh [python]
set -uo pipefail
py="${1:-python3}"
here="$(cd "$(dirname "$0")" && pwd)"
status=0
for script in sanitize_fp8_gemm.py sanitize_grouped_gemm.py; do
  for tool in memcheck racecheck synccheck; do
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
