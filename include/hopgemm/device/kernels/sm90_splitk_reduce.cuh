#pragma once
// Split-K reduction: sums the FP32 partial planes of a split-K GEMM in fixed order (s = 0, 1, ...), adds D's
// previous value when accumulating, converts and writes D. Pure streaming: 16-byte loads and stores, one
// kVec-column chunk per thread and loop trip. Semantics and launch: sm90_splitk_reduce_types.cuh.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/kernels/sm90_splitk_reduce_types.cuh"
#include "hopgemm/device/ptx/convert.cuh"
#include "hopgemm/device/ptx/griddepcontrol.cuh"
#include "hopgemm/device/ptx/ld_global.cuh"

namespace hopgemm::device {

template <Sm90SplitkReduceConfig kConfig>
__global__ void __launch_bounds__(kSplitkReduceThreads) sm90_splitk_reduce_kernel(
    const __grid_constant__ Sm90SplitkReduceParams params) {
  static_assert(is_valid(kConfig), "invalid Sm90SplitkReduceConfig");
  constexpr int kVec = vec_width(kConfig);  // columns per chunk: 8 (BF16 D) or 4 (FP32 D)
  constexpr bool kFp32 = kConfig.out_dtype == kOutFp32;

  // PDL: the partials are the previous grid's output.
  ptx::griddepcontrol_wait();

  const i32 chunks_per_row = params.n / kVec;
  const i64 num_chunks = static_cast<i64>(params.m) * chunks_per_row;
  for (i64 chunk = static_cast<i64>(blockIdx.x) * kSplitkReduceThreads + threadIdx.x; chunk < num_chunks;
       chunk += static_cast<i64>(gridDim.x) * kSplitkReduceThreads) {
    const i32 row = static_cast<i32>(chunk / chunks_per_row);
    const i32 col = static_cast<i32>(chunk - static_cast<i64>(row) * chunks_per_row) * kVec;
    const float* src = params.partials + static_cast<i64>(row) * params.n + col;

    // acc = partial_0 + partial_1 + ... in this order.
    float acc[kVec];
#pragma unroll
    for (int h = 0; h < kVec / 4; ++h) ptx::ld_global_cs_v4_f32(src + 4 * h, reinterpret_cast<float(&)[4]>(acc[4 * h]));
#pragma unroll 4
    for (i32 s = 1; s < params.num_splits; ++s) {
      float part[kVec];
#pragma unroll
      for (int h = 0; h < kVec / 4; ++h)
        ptx::ld_global_cs_v4_f32(src + s * params.split_stride + 4 * h, reinterpret_cast<float(&)[4]>(part[4 * h]));
#pragma unroll
      for (int i = 0; i < kVec; ++i) acc[i] += part[i];
    }

    void* dst = static_cast<u8*>(params.d) + (static_cast<i64>(row) * params.ldd + col) * (kFp32 ? 4 : 2);
    u32 out[4];
    if constexpr (kFp32) {
      if constexpr (kConfig.accumulate == 1) {
        u32 prev[4];
        ptx::ld_global_v4_u32(dst, prev);
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[i] = __uint_as_float(prev[i]) + acc[i];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) out[i] = __float_as_uint(acc[i]);
    } else {
      if constexpr (kConfig.accumulate == 1) {
        u32 prev[4];
        ptx::ld_global_v4_u32(dst, prev);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          acc[2 * i] = ptx::bf16x2_lo(prev[i]) + acc[2 * i];
          acc[2 * i + 1] = ptx::bf16x2_hi(prev[i]) + acc[2 * i + 1];
        }
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) out[i] = ptx::cvt_bf16x2(acc[2 * i], acc[2 * i + 1]);
    }
    ptx::st_global_v4_u32(dst, out);
  }
}

}  // namespace hopgemm::device
