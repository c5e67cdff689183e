#pragma once
// Epilogue for FP32 D += A B^T: a math warpgroup adds its promoted accumulators into D straight from registers
// with vector reductions (no staging tile, no TMA): see reduces_from_registers in kernels/sm90_fp8_gemm_types.cuh.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/ptx/red_global.cuh"

namespace hopgemm::device::epilogue {

// fin[w][4g + {0,1}] = (row lane/4, cols 8g + 2(lane%4) + {0,1}) of wave w, fin[4g + {2,3}] the same 8 rows down
// (wgmma accumulator layout, rows relative to the warp's 16). A warp's reduction covers 8 rows x 32 bytes. Rows
// past M and column pairs past N (N % 4 == 0: a pair is all in or all out) are skipped.
template <int kBlockN, int kWgRows>
HOPGEMM_DEVICE void reduce_tile_global(const float (&fin)[kWgRows / 64][kBlockN / 2], float* d, i64 ldd, i32 m, i32 n,
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
      float* p = d + row * ldd + col0;  // the groups are compile-time offsets from here
#pragma unroll
      for (int g = 0; g < kBlockN / 8; ++g)
        if (g * 8 < cols_left) ptx::red_global_add_v2_f32(p + g * 8, fin[w][g * 4 + 2 * h], fin[w][g * 4 + 2 * h + 1]);
    }
  }
}

}  // namespace hopgemm::device::epilogue
