#!/usr/bin/env bash
# Builds and runs the SM90 FP8 GEMM harness on a GPU machine, from the repo root:
#   tests/gpu/harness/run.sh [check] [perf]
# Also checks the SASS of one representative instantiation (QGMMA present, no local memory).
set -euo pipefail
B=${HARNESS_BUILD:-/tmp/hopgemm_harness}
mkdir -p "$B"
nvcc -std=c++20 -O2 -Iinclude tests/gpu/harness/sm90_fp8_gemm_harness.cu -lcuda -lnvrtc -o "$B/harness"
cat > "$B/inst.cu" <<'SRC'
#include "hopgemm/device/kernels/sm90_fp8_gemm.cuh"
template __global__ void hopgemm::device::sm90_fp8_gemm_kernel<hopgemm::device::Sm90Fp8GemmConfig{
    .block_m = 256, .block_n = 128, .num_stages = 3, .cluster_n = 2}>(const __grid_constant__ hopgemm::device::Sm90Fp8GemmParams);
SRC
nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++20 -cubin -Xptxas -v -Iinclude "$B/inst.cu" -o "$B/inst.cubin" 2>&1 | grep -E "registers|spill"
cuobjdump --dump-sass "$B/inst.cubin" > "$B/inst.sass"
echo "SASS: QGMMA=$(grep -c QGMMA "$B/inst.sass") LDL/STL=$(grep -cE '\b(LDL|STL)' "$B/inst.sass" || true)"
"$B/harness" include "$@"
