#pragma once
// Promotion of a 128-K block's tensor-core partial sums into the FP32 accumulators on CUDA cores:
// fin += scale_a(row) * scale_b(.., col) * acc (DeepSeek-V3 two-level accumulation).
// acc/fin use the wgmma m64nN accumulator layout: for 8-column group g, [4g + {0,1}] are
// (row lane/4, cols 8g + 2(lane%4) + {0,1}) and [4g + {2,3}] the same columns at row lane/4 + 8.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/ptx/ld_shared.cuh"

namespace hopgemm::device::mma {

HOPGEMM_HOST_DEVICE constexpr int gcd_int(int a, int b) { return b == 0 ? a : gcd_int(b, a % b); }

// 1D2D: one B scale per 128 columns. The first kFormerGroups 8-column groups lie in the tile's first
// 128-column scale block (sb0), the rest in the next one (sb1); a compile-time split keeps the FFMAs
// free of selects.
template <int kBlockN, int kFormerGroups>
HOPGEMM_DEVICE void promote_1d2d(float (&fin)[kBlockN / 2], const float (&acc)[kBlockN / 2], float sa0, float sa1,
                                 float sb0, float sb1) {
  const float s00 = sa0 * sb0, s10 = sa1 * sb0, s01 = sa0 * sb1, s11 = sa1 * sb1;
#pragma unroll
  for (int g = 0; g < kBlockN / 8; ++g) {
    const float top = g < kFormerGroups ? s00 : s01, bottom = g < kFormerGroups ? s10 : s11;
    fin[4 * g + 0] += top * acc[4 * g + 0];
    fin[4 * g + 1] += top * acc[4 * g + 1];
    fin[4 * g + 2] += bottom * acc[4 * g + 2];
    fin[4 * g + 3] += bottom * acc[4 * g + 3];
  }
}

// Calls f.template operator()<kFormerGroups>() for this tile's column offset inside its 128-column
// scale block (n0 % 128, a multiple of gcd(kBlockN, 128)): one compiled promotion per possible offset.
template <int kBlockN, int kOffset = 0, typename F>
HOPGEMM_DEVICE void dispatch_former_groups(u32 n_mod_128, F&& f) {
  constexpr int kStep = gcd_int(kBlockN, 128);
  constexpr int kFormer = (kBlockN < 128 - kOffset ? kBlockN : 128 - kOffset) / 8;
  if constexpr (128 % kBlockN == 0 || kOffset + kStep >= 128) {  // tile never straddles, or last case
    f.template operator()<kFormer>();
  } else {
    if (n_mod_128 == kOffset)
      f.template operator()<kFormer>();
    else
      dispatch_former_groups<kBlockN, kOffset + kStep>(n_mod_128, f);
  }
}

// 1D1D: one B scale per column. The thread's columns of 8-column group g are 8g + 2(lane%4) + {0,1}; their
// scales come in registers (load_col_scales_1d1d, read before the WGMMA wait so the shared-memory latency
// hides behind the tensor cores and the stage can be released before the promotion).
template <int kBlockN>
HOPGEMM_DEVICE void load_col_scales_1d1d(float2 (&sb)[kBlockN / 8], const float* sfb, u32 lane) {
#pragma unroll
  for (int g = 0; g < kBlockN / 8; ++g) sb[g] = *reinterpret_cast<const float2*>(sfb + g * 8 + (lane % 4) * 2);
}

// The same from a scale chunk (sf_chunks): column c's scale of the chunk's k-block j at col_base + 16 c + 4 j, with
// col_base = the slot's B part + 4 j (two 4-byte loads per group: a column's k-blocks are adjacent, not its neighbours).
template <int kBlockN>
HOPGEMM_DEVICE void load_col_scales_1d1d_chunked(float2 (&sb)[kBlockN / 8], u32 col_base, u32 lane) {
  const u32 addr = col_base + (lane % 4) * 2 * 16;
#pragma unroll
  for (int g = 0; g < kBlockN / 8; ++g)
    sb[g] = make_float2(ptx::ld_shared_f32(addr + g * 8 * 16), ptx::ld_shared_f32(addr + g * 8 * 16 + 16));
}

template <int kBlockN>
HOPGEMM_DEVICE void promote_1d1d(float (&fin)[kBlockN / 2], const float (&acc)[kBlockN / 2], float sa0, float sa1,
                                 const float2 (&sb)[kBlockN / 8]) {
#pragma unroll
  for (int g = 0; g < kBlockN / 8; ++g) {
    fin[4 * g + 0] += sa0 * sb[g].x * acc[4 * g + 0];
    fin[4 * g + 1] += sa0 * sb[g].y * acc[4 * g + 1];
    fin[4 * g + 2] += sa1 * sb[g].x * acc[4 * g + 2];
    fin[4 * g + 3] += sa1 * sb[g].y * acc[4 * g + 3];
  }
}

}  // namespace hopgemm::device::mma
