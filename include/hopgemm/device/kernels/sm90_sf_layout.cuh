#pragma once
// Scale-factor layout transforms: FP32 -> MN-major TMA-aligned FP32, and FP32 -> packed UE8M0 (plain and
// K-grouped). One kernel for every size: mn, sf_k, strides and groups are run-time parameters.
// Semantics and launch geometry: sm90_sf_layout_types.cuh.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/kernels/sm90_sf_layout_types.cuh"

namespace hopgemm::device {

// The whole transform; the two __global__ entry points at the end differ in their names only.
template <SfLayoutConfig kConfig>
__device__ __forceinline__ void sf_layout(const SfLayoutParams<kConfig.max_groups>& params) {
  static_assert(is_valid(kConfig), "invalid SfLayoutConfig");
  constexpr int kTile = kSfLayoutTile;
  constexpr int kRowsPerPass = kSfLayoutThreads / 32;  // 8 warps
  static_assert(kTile == 32 && kTile % kRowsPerPass == 0, "one lane per tile column");

  // tile[i][k]: 32 mn x 32 k raw FP32 bits; the odd row length (33) keeps row- and column-wise accesses
  // of a warp on 32 distinct banks.
  __shared__ u32 tile[kTile][kTile + 1];

  const int g = blockIdx.z;
  i64 in_base, out_base;
  int sf_k;
  if constexpr (kConfig.max_groups > 0) {
    sf_k = params.group_sf_start[g + 1] - params.group_sf_start[g];
    in_base = static_cast<i64>(params.group_sf_start[g]) * params.sf_stride_k;
    out_base = static_cast<i64>(params.group_out_start[g]) * params.out_stride_k;
  } else {
    sf_k = params.sf_k;
    in_base = static_cast<i64>(g) * params.sf_stride_group;
    out_base = static_cast<i64>(g) * params.out_stride_group;
  }
  const int k0 = blockIdx.y * kTile;
  if (k0 >= sf_k) return;  // K-grouped: this group is shorter than the longest one (whole block exits)
  const int mn0 = blockIdx.x * kTile;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const u32* sf = reinterpret_cast<const u32*>(params.sf);
  u32* out = static_cast<u32*>(params.out);

  // Load: lanes walk the contiguous dimension of sf.
#pragma unroll
  for (int pass = 0; pass < kTile / kRowsPerPass; ++pass) {
    const int a = warp + pass * kRowsPerPass;
    const int i = params.k_fast ? a : lane, k = params.k_fast ? lane : a;
    u32 v = 0;
    if (mn0 + i < params.mn && k0 + k < sf_k) {
      v = sf[in_base + static_cast<i64>(mn0 + i) * params.sf_stride_mn + static_cast<i64>(k0 + k) * params.sf_stride_k];
    }
    tile[i][k] = v;
  }
  __syncthreads();

  // Store: lanes walk mn, the output's contiguous dimension.
  const int i = lane;
  if (mn0 + i >= params.mn) return;
  if constexpr (kConfig.pack_ue8m0 == 0) {
#pragma unroll
    for (int pass = 0; pass < kTile / kRowsPerPass; ++pass) {
      const int k = warp + pass * kRowsPerPass;
      if (k0 + k < sf_k) out[out_base + (mn0 + i) + static_cast<i64>(k0 + k) * params.out_stride_k] = tile[i][k];
    }
  } else {
    // 8 warps x 4 K each = the tile's 32 K: warp w packs K k0 + 4w .. k0 + 4w + 3 into output column k0 / 4 + w.
    static_assert(kTile / 4 == kRowsPerPass, "one packed column per warp");
    const int kk = 4 * warp;
    if (k0 + kk >= sf_k) return;
    u32 packed = 0;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const u32 byte = k0 + kk + j < sf_k ? (tile[i][kk + j] >> 23) & 0xffu : 0u;
      packed |= byte << (8 * j);
    }
    out[out_base + (mn0 + i) + static_cast<i64>(k0 / 4 + warp) * params.out_stride_k] = packed;
  }
}

// Named for what they do, which is also what profiler filters written for DeepGEMM look for ('transpose',
// 'pack_fp32_into_ue8m0'): the FP32 MN-major re-layout, and the UE8M0 packing (plain and K-grouped).
template <SfLayoutConfig kConfig>
  requires(kConfig.pack_ue8m0 == 0)
__global__ void __launch_bounds__(kSfLayoutThreads) sm90_sf_transpose_kernel(
    const __grid_constant__ SfLayoutParams<kConfig.max_groups> params) {
  sf_layout<kConfig>(params);
}

template <SfLayoutConfig kConfig>
  requires(kConfig.pack_ue8m0 == 1)
__global__ void __launch_bounds__(kSfLayoutThreads) sm90_sf_pack_fp32_into_ue8m0_kernel(
    const __grid_constant__ SfLayoutParams<kConfig.max_groups> params) {
  sf_layout<kConfig>(params);
}

}  // namespace hopgemm::device
