#pragma once
// Config and parameters of the split-K reduction (kernels/sm90_splitk_reduce.cuh).
// Compiles as device code (NVRTC, NVCC) and as plain host C++20: the host fills Sm90SplitkReduceParams.
//
// D[r, c] = (D[r, c] when accumulating) + sum_{s = 0..num_splits-1} partials[s, r, c], summed in FP32 in
// that fixed order (bitwise-reproducible), converted to D's dtype.
//   partials: FP32 [num_splits, M, N], contiguous (what the split-K GEMM's epilogue wrote).
//   d: BF16 or FP32 [M, N], row stride ldd elements, 16-byte aligned base and row pitch.
// Each thread owns kVec consecutive columns (8 for BF16: one 16-byte store; 4 for FP32), so N % kVec == 0
// (the GEMM already requires N % 8 for BF16 and N % 4 for FP32).
// Launch: grid (ceil(M * N / kVec / kSplitkReduceThreads)) (the kernel loops if the grid is smaller), block
// (kSplitkReduceThreads), no smem; optionally PDL (griddepcontrol.wait before the first load).

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/kernels/sm90_fp8_gemm_types.cuh"

namespace hopgemm::device {

// All fields int: a structural C++20 NTTP, no padding.
struct Sm90SplitkReduceConfig {
  int out_dtype = kOutBf16;
  int accumulate = 0;  // 1: add D's previous value (C, already in D)
};

inline constexpr int kSplitkReduceThreads = 256;

struct Sm90SplitkReduceParams {
  const float* partials;
  void* d;
  i64 ldd;           // elements
  i64 split_stride;  // elements between partial planes (M * N)
  i32 m, n, num_splits;
};

HOPGEMM_HOST_DEVICE constexpr int vec_width(const Sm90SplitkReduceConfig& c) { return c.out_dtype == kOutFp32 ? 4 : 8; }

HOPGEMM_HOST_DEVICE constexpr bool is_valid(const Sm90SplitkReduceConfig& c) {
  return (c.out_dtype == kOutBf16 || c.out_dtype == kOutFp32) && (c.accumulate == 0 || c.accumulate == 1);
}

}  // namespace hopgemm::device
