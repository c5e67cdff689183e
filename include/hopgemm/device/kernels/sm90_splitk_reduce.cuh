#pragma once
// Split-K reduction: sums the FP32 partial planes of a split-K GEMM in fixed order (s = 0, 1, ...), adds D's
// previous value when accumulating, converts and writes D. Pure streaming: 16-byte loads and stores, one
// kVec-column chunk per thread and loop trip. Semantics and launch: sm90_splitk_reduce_types.cuh.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/kernels/sm90_splitk_reduce_types.cuh"
#include "hopgemm/device/ptx/griddepcontrol.cuh"

namespace hopgemm::device {

namespace splitk_detail {

// ld.global.cs.v4.f32: the partials are read once (evict-first).
HOPGEMM_DEVICE void load_f32x4(const float* p, float (&v)[4]) {
  asm volatile("ld.global.cs.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v[0]), "=f"(v[1]), "=f"(v[2]), "=f"(v[3])
               : "l"(p));
}
HOPGEMM_DEVICE void load_u32x4(const void* p, u32 (&v)[4]) {
  asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]) : "l"(p));
}
HOPGEMM_DEVICE void store_u32x4(void* p, const u32 (&v)[4]) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"l"(p), "r"(v[0]), "r"(v[1]), "r"(v[2]), "r"(v[3])
               : "memory");
}
// cvt.rn.bf16x2.f32: lo in the low half (lower address).
HOPGEMM_DEVICE u32 pack_bf16x2(float lo, float hi) {
  u32 r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

}  // namespace splitk_detail

template <Sm90SplitkReduceConfig kConfig>
__global__ void __launch_bounds__(kSplitkReduceThreads) sm90_splitk_reduce_kernel(
    const __grid_constant__ Sm90SplitkReduceParams params) {
  static_assert(is_valid(kConfig), "invalid Sm90SplitkReduceConfig");
  using namespace splitk_detail;
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
    for (int h = 0; h < kVec / 4; ++h) load_f32x4(src + 4 * h, reinterpret_cast<float(&)[4]>(acc[4 * h]));
#pragma unroll 4
    for (i32 s = 1; s < params.num_splits; ++s) {
      float part[kVec];
#pragma unroll
      for (int h = 0; h < kVec / 4; ++h)
        load_f32x4(src + s * params.split_stride + 4 * h, reinterpret_cast<float(&)[4]>(part[4 * h]));
#pragma unroll
      for (int i = 0; i < kVec; ++i) acc[i] += part[i];
    }

    void* dst = static_cast<u8*>(params.d) + (static_cast<i64>(row) * params.ldd + col) * (kFp32 ? 4 : 2);
    u32 out[4];
    if constexpr (kFp32) {
      if constexpr (kConfig.accumulate == 1) {
        u32 prev[4];
        load_u32x4(dst, prev);
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[i] = __uint_as_float(prev[i]) + acc[i];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) out[i] = __float_as_uint(acc[i]);
    } else {
      if constexpr (kConfig.accumulate == 1) {
        u32 prev[4];
        load_u32x4(dst, prev);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          acc[2 * i] = __uint_as_float(prev[i] << 16) + acc[2 * i];
          acc[2 * i + 1] = __uint_as_float(prev[i] & 0xffff0000u) + acc[2 * i + 1];
        }
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) out[i] = pack_bf16x2(acc[2 * i], acc[2 * i + 1]);
    }
    store_u32x4(dst, out);
  }
}

}  // namespace hopgemm::device
