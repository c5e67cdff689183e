#pragma once
// Epilogue without a staging tile: a math warpgroup writes its promoted accumulators straight from registers into
// D, no shared memory and no TMA (see writes_from_registers in kernels/sm90_fp8_gemm_types.cuh). FP32 D += A B^T
// adds with vector reductions performed in L2; a plain D (BF16 or FP32) is stored.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/ptx/convert.cuh"
#include "hopgemm/device/ptx/global_store.cuh"

namespace hopgemm::device::epilogue {

enum class GlobalWrite { kReduceAddF32, kStoreF32, kStoreBf16 };

// fin[w][4g + {0,1}] = (row lane/4, cols 8g + 2(lane%4) + {0,1}) of wave w, fin[4g + {2,3}] the same 8 rows down
// (wgmma accumulator layout, rows relative to the warp's 16). One warp instruction covers 8 rows x 4 column pairs.
// Rows past M and 8-column groups past N are skipped: N % 8 == 0 for BF16 D; for FP32 D N % 4 == 0, and a pair
// (2 of the group's columns) is all in or all out. d: D's element type per kWrite, ldd its row stride (elements;
// even, so every pair is aligned).
template <int kBlockN, int kWgRows, GlobalWrite kWrite>
HOPGEMM_DEVICE void write_tile_global(const float (&fin)[kWgRows / 64][kBlockN / 2], void* d, i64 ldd, i32 m, i32 n,
                                      u32 wg, i32 m0, i32 n0) {
  const u32 thread = threadIdx.x % 128, warp = thread / 32, lane = thread % 32;
  const i32 col0 = n0 + static_cast<i32>(lane % 4) * 2;
  const i32 cols_left = n - col0;  // group g is in bounds iff 8 g < cols_left
#pragma unroll
  for (int w = 0; w < kWgRows / 64; ++w) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const i32 row = m0 + static_cast<i32>(wg) * kWgRows + w * 64 + static_cast<i32>(warp * 16 + lane / 4) + 8 * h;
      if (row >= m) continue;
      const i64 offset = row * ldd + col0;  // the groups are compile-time offsets from here
#pragma unroll
      for (int g = 0; g < kBlockN / 8; ++g) {
        if (g * 8 >= cols_left) continue;
        const float lo = fin[w][g * 4 + 2 * h], hi = fin[w][g * 4 + 2 * h + 1];
        if constexpr (kWrite == GlobalWrite::kReduceAddF32)
          ptx::red_global_add_v2_f32(static_cast<float*>(d) + offset + g * 8, lo, hi);
        else if constexpr (kWrite == GlobalWrite::kStoreF32)
          ptx::st_global_v2_f32(static_cast<float*>(d) + offset + g * 8, lo, hi);
        else
          ptx::st_global_b32(static_cast<u16*>(d) + offset + g * 8, ptx::cvt_bf16x2(lo, hi));
      }
    }
  }
}

}  // namespace hopgemm::device::epilogue
