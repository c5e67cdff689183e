#!/usr/bin/env bash
# The WGMMA descriptors of every cached FP8 GEMM kernel: R2UR instructions in the window around its WGMMAs (40 before
# the first QGMMA/HGMMA to 5 after the last), where there should be none (docs/DESIGN_NOTES.md, uniform datapath: a
# descriptor moved from a vector register before every WGMMA means ptxas lost the loop's uniformity). No GPU needed:
#   HOPGEMM_CACHE_DIR=/tmp/kc build/hopgemm precompile --suite deepseek-v3   (and wgrad-pr95)
#   bench/sass_mainloop_r2ur.sh /tmp/kc
# cuobjdump: the CUDA toolkit's, or the `nvidia-cuda-cuobjdump` wheel's (CUOBJDUMP=path). Prints "R2UR-in-window
# R2UR-in-kernel config", worst first.
set -uo pipefail
cache="${1:?usage: sass_mainloop_r2ur.sh JIT_CACHE_DIR}"
cuobjdump="${CUOBJDUMP:-cuobjdump}"
ops=$(mktemp)
for cubin in $(find "$cache" -name "*.cubin"); do
  "$cuobjdump" -sass "$cubin" | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed -E 's/^\s+\/\*[0-9a-f]{4}\*\/\s+//; s/\s*;.*//' > "$ops"
  first=$(grep -n -E "QGMMA|HGMMA" "$ops" | head -1 | cut -d: -f1)
  last=$(grep -n -E "QGMMA|HGMMA" "$ops" | tail -1 | cut -d: -f1)
  [ -z "$first" ] && continue
  window=$(sed -n "$((first > 40 ? first - 40 : 1)),$((last + 5))p" "$ops" | grep -c R2UR)
  config=$(grep -o "Sm90Fp8GemmConfig{[^}]*}" "$(dirname "$cubin")/kernel.cu" 2>/dev/null | sed 's/\.//g; s/ = /=/g')
  echo "$window $(grep -c R2UR "$ops") ${config:-$(dirname "$cubin")}"
done | sort -rn
rm -f "$ops"
