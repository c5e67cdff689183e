#pragma once
// Epilogue for a tile that ends inside its group's rows (a grouped scheduler's kRowMaskedTiles): a math warpgroup
// writes its promoted accumulators as BF16 straight from registers, only the rows before row_end, so the rows that
// belong to the next group (or past a masked group's count) are never touched. A TMA store could only clip at the
// tensor's edge. One warp instruction covers 8 rows x 16 bytes; only a group's last tile row takes this path.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/ptx/convert.cuh"
#include "hopgemm/device/ptx/ld_global.cuh"

namespace hopgemm::device::epilogue {

// fin[w][4g + {0,1}] = (row lane/4, cols 8g + 2(lane%4) + {0,1}) of wave w, fin[4g + {2,3}] the same 8 rows down
// (wgmma accumulator layout, rows relative to the warp's 16). Column pairs past N are skipped (N % 8 == 0).
template <int kBlockN, int kWgRows>
HOPGEMM_DEVICE void store_tile_rows_bf16(const float (&fin)[kWgRows / 64][kBlockN / 2], u16* d, i64 ldd, i32 row_end,
                                         i32 n, u32 wg, i32 m0, i32 n0) {
  const u32 thread = threadIdx.x % 128, warp = thread / 32, lane = thread % 32;
  const i32 col0 = n0 + static_cast<i32>(lane % 4) * 2;
  const i32 cols_left = n - col0;
#pragma unroll
  for (int w = 0; w < kWgRows / 64; ++w) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const i32 row = m0 + static_cast<i32>(wg) * kWgRows + w * 64 + static_cast<i32>(warp * 16 + lane / 4) + 8 * h;
      if (row >= row_end) continue;
      u16* p = d + row * ldd + col0;
#pragma unroll
      for (int g = 0; g < kBlockN / 8; ++g)
        if (g * 8 < cols_left) ptx::st_global_b32(p + g * 8, ptx::cvt_bf16x2(fin[w][g * 4 + 2 * h], fin[w][g * 4 + 2 * h + 1]));
    }
  }
}

}  // namespace hopgemm::device::epilogue
