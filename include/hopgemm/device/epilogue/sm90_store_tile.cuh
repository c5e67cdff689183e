#pragma once
// Epilogue: a math warpgroup's promoted FP32 accumulators -> swizzled smem tile -> TMA store
// (or TMA reduce-add) of its own rows. Each warpgroup stores independently (named barrier per
// warpgroup), and the store is only waited for before the buffer is rewritten by the next tile,
// so it overlaps the next tile's mainloop.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/epilogue/sm90_column_map.cuh"
#include "hopgemm/device/pipeline/sm90_named_barriers.cuh"
#include "hopgemm/device/ptx/barrier.cuh"
#include "hopgemm/device/ptx/convert.cuh"
#include "hopgemm/device/ptx/fence.cuh"
#include "hopgemm/device/ptx/stmatrix.cuh"
#include "hopgemm/device/ptx/tma.cuh"

namespace hopgemm::device::epilogue {

// Byte offset of (row, byte column) in the staged D tile. The tile is cut into column atoms of
// kSwizzle bytes (one TMA box each), atom-major; inside an atom rows are kSwizzle bytes apart and the
// 16-byte chunk index is XORed with address bits 7.. as TMA's SWIZZLE_{32,64,128}B expects.
template <int kBlockM, int kSwizzle>
HOPGEMM_DEVICE u32 d_tile_offset(u32 row, u32 col_bytes) {
  const u32 linear = (col_bytes / kSwizzle) * (kBlockM * kSwizzle) + row * kSwizzle + col_bytes % kSwizzle;
  if constexpr (kSwizzle >= 32) return linear ^ (((linear >> 7) & (kSwizzle / 16 - 1)) << 4);
  return linear;
}

// fin[w][i]: wave w (64 rows) of the warpgroup, wgmma accumulator layout: for 8-column group g,
// fin[4g + {0,1}] = (row lane/4, cols 8g + 2(lane%4) + {0,1}), fin[4g + {2,3}] = same at row + 8,
// rows relative to warp * 16 inside the wave.
// kPasses > 1: the smem buffer holds only kBlockN / kPasses columns (kAtoms / kPasses swizzle atoms);
// the warpgroup writes and stores one column slice per pass, waiting for the previous slice's TMA store
// to finish reading the buffer before overwriting it.
// Columns: where each box's first column lands in D (epilogue/sm90_column_map.cuh; the identity for every GEMM but
// skip_head_mid's). kBatched: tma_d is 3-D, `batch` its outermost coordinate (a batched scheduler's D); else 2-D.
template <int kBlockM, int kBlockN, int kWgRows, bool kFp32, bool kAccumulate, int kSwizzle, int kPasses = 1,
          class Columns = Sm90IdentityColumns, bool kBatched = false>
HOPGEMM_DEVICE void store_tile(float (&fin)[kWgRows / 64][kBlockN / 2], u32 smem_d, const TmaDescriptor* tma_d,
                               u32 wg, i32 m0, i32 n0, i32 batch = 0) {
  static_assert(!(kBatched && kAccumulate), "a batched D is stored, never reduced into");
  constexpr int kWaves = kWgRows / 64;
  constexpr int kElem = kFp32 ? 4 : 2;
  constexpr int kAtoms = kBlockN * kElem / kSwizzle;
  constexpr int kAtomsPerPass = kAtoms / kPasses;
  constexpr int kGroupsPerPass = kBlockN / 8 / kPasses;     // 8-column groups per pass
  static_assert(kAtoms % kPasses == 0 && (kBlockN / 8) % kPasses == 0, "pass = whole atoms and 8-column groups");
  const u32 thread = threadIdx.x % 128, warp = thread / 32, lane = thread % 32;
  const u32 barrier_id = pipeline::kBarrierWarpgroup0 + wg;

#pragma unroll
  for (int p = 0; p < kPasses; ++p) {
    // The previous TMA store (previous pass, or the previous tile's last one) must have finished reading.
    if (thread == 0) ptx::cp_async_bulk_wait_group_read<0>();
    ptx::bar_sync(barrier_id, 128);

#pragma unroll
    for (int w = 0; w < kWaves; ++w) {
      const u32 row0 = wg * kWgRows + w * 64 + warp * 16;  // this warp's 16 rows in the tile
      if constexpr (kFp32) {
        // st.shared.v2.f32; with the 128B swizzle the 8 rows of one store spread over all banks.
#pragma unroll
        for (int gl = 0; gl < kGroupsPerPass; ++gl) {
          const int g = p * kGroupsPerPass + gl;
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const u32 off = d_tile_offset<kBlockM, kSwizzle>(row0 + lane / 4 + 8 * h, (gl * 8 + (lane % 4) * 2) * 4);
            asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(smem_d + off), "f"(fin[w][g * 4 + 2 * h]),
                         "f"(fin[w][g * 4 + 2 * h + 1])
                         : "memory");
          }
        }
      } else {
        // stmatrix x4 = 8-column groups g, g+1 x rows 0-7, 8-15; lane l addresses matrix l/8's row l%8.
        const u32 mat = lane / 8, mat_row = lane % 8;
#pragma unroll
        for (int gl = 0; gl + 1 < kGroupsPerPass; gl += 2) {
          const int g = p * kGroupsPerPass + gl;
          const u32 off = d_tile_offset<kBlockM, kSwizzle>(row0 + (mat & 1) * 8 + mat_row, (gl + (mat >> 1)) * 16);
          ptx::stmatrix_x4(smem_d + off, ptx::cvt_bf16x2(fin[w][g * 4 + 0], fin[w][g * 4 + 1]),
                           ptx::cvt_bf16x2(fin[w][g * 4 + 2], fin[w][g * 4 + 3]),
                           ptx::cvt_bf16x2(fin[w][g * 4 + 4], fin[w][g * 4 + 5]),
                           ptx::cvt_bf16x2(fin[w][g * 4 + 6], fin[w][g * 4 + 7]));
        }
        if constexpr (kGroupsPerPass % 2 == 1) {
          constexpr int gl = kGroupsPerPass - 1;
          const int g = p * kGroupsPerPass + gl;
          const u32 off = d_tile_offset<kBlockM, kSwizzle>(row0 + (mat & 1) * 8 + mat_row, gl * 16);
          ptx::stmatrix_x2(smem_d + off, ptx::cvt_bf16x2(fin[w][g * 4 + 0], fin[w][g * 4 + 1]),
                           ptx::cvt_bf16x2(fin[w][g * 4 + 2], fin[w][g * 4 + 3]));
        }
      }
    }
    // Generic-proxy smem writes -> visible to the TMA engine, then all 128 threads done.
    ptx::fence_proxy_async_shared_cta();
    ptx::bar_sync(barrier_id, 128);

    if (thread == 0) {
#pragma unroll
      for (int al = 0; al < kAtomsPerPass; ++al) {
        const int a = p * kAtomsPerPass + al;
        const u32 src = smem_d + al * (kBlockM * kSwizzle) + wg * kWgRows * kSwizzle;
        const i32 x = Columns::map(n0 + a * (kSwizzle / kElem)), y = m0 + static_cast<i32>(wg) * kWgRows;
        if constexpr (kAccumulate)
          ptx::cp_reduce_async_bulk_tensor_2d_add(tma_d, x, y, src);
        else if constexpr (kBatched)
          ptx::cp_async_bulk_tensor_3d_s2g(tma_d, x, y, batch, src);
        else
          ptx::cp_async_bulk_tensor_2d_s2g(tma_d, x, y, src);
      }
      ptx::cp_async_bulk_commit_group();
    }
  }
}

}  // namespace hopgemm::device::epilogue
