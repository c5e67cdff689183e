#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck over tests/gpu/sanitize_fp8_gemm.py.
# Each tool must report 0 errors. Usage: tests/gpu/sanitize.sh [python]
set -uo pipefail
py="${1:-python3}"
here="$(cd "$(dirname "$0")" && pwd)"
status=0
for tool in memcheck racecheck synccheck; do
  log=$(cd /tmp && compute-sanitizer --tool "$tool" --target-processes application-only \
        --kernel-name-exclude kns=nvjet "$py" "$here/sanitize_fp8_gemm.py" 2>&1)
  summary=$(echo "$log" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tail -1)
  echo "$tool: ${summary:-no summary}"
  if ! echo "$summary" | grep -qE "(ERROR|RACECHECK) SUMMARY: 0 (errors|hazards)"; then
    echo "$log" | grep -vE "^=+ *$" | head -40
    status=1
  fi
done
exit $status
