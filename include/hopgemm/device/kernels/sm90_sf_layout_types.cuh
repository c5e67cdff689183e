#pragma once
// Config and parameters of the scale-factor layout kernel (kernels/sm90_sf_layout.cuh).
// Compiles as device code (NVRTC, NVCC) and as plain host C++20: the host fills SfLayoutParams.
//
// The kernel moves FP32 scale factors of logical shape [G, mn, sf_k] (any strides) into an MN-major output
// (element (g, i, c) at out_base(g) + i + c * out_stride_k), 32 x 32 tiles staged through shared memory so
// that both the load (along whichever of mn / k is contiguous) and the store (along mn) are coalesced:
//   pack_ue8m0 == 0: out[g, i, c] = sf[g, i, c]                                      (FP32 -> FP32)
//   pack_ue8m0 == 1: out[g, i, c] = sum_j byte(sf[g, i, 4c + j]) << 8j, j = 0..3      (FP32 -> int32)
//                    byte(v) = (bits(v) >> 23) & 0xff, the UE8M0 exponent; 0 where 4c + j >= sf_k.
// Groups: max_groups == 0: group g at sf + g * sf_stride_group, out + g * out_stride_group, every group sf_k.
//         max_groups  > 0 (K-grouped): group g's sf_k = group_sf_start[g + 1] - group_sf_start[g]; its input
//         starts at row group_sf_start[g] of K (sf + start * sf_stride_k) and its output at row
//         group_out_start[g] (out + start * out_stride_k); num_groups <= max_groups per launch.
// Launch: grid (ceil(mn / 32), ceil(max_g sf_k_g / 32), num_groups), block (256), no dynamic smem.

#include "hopgemm/device/common.cuh"

namespace hopgemm::device {

// All fields int: a structural C++20 NTTP, no padding.
struct SfLayoutConfig {
  int pack_ue8m0 = 0;   // 0: FP32 transpose, 1: pack UE8M0 exponents 4 per int32 along K
  int max_groups = 0;   // 0: plain [mn, sf_k] / [G, mn, sf_k]; > 0: K-grouped table of this capacity
};

inline constexpr int kSfLayoutTile = 32;        // mn x k tile
inline constexpr int kSfLayoutThreads = 256;    // 8 warps
inline constexpr int kSfLayoutMaxKGroups = 256; // groups per K-grouped launch (the host launches in chunks)

template <int kMaxGroups>
struct SfLayoutParams {
  const float* sf;
  void* out;                 // float (transpose) or int32 (pack), 4 bytes per element either way
  i64 sf_stride_group;       // elements
  i64 sf_stride_mn;
  i64 sf_stride_k;
  i64 out_stride_group;      // elements (unused when K-grouped)
  i64 out_stride_k;          // elements between output columns (tma-aligned mn, or the K-grouped row stride)
  i32 mn;
  i32 sf_k;                  // plain layouts
  i32 k_fast;                // 1: load with lanes along k (sf_stride_k == 1), 0: along mn
  i32 num_groups;
  i32 group_sf_start[kMaxGroups + 1];   // K-grouped: absolute first sf row (K) of each group, then the end
  i32 group_out_start[kMaxGroups + 1];  // K-grouped: absolute first output row of each group, then the end
};

HOPGEMM_HOST_DEVICE constexpr bool is_valid(const SfLayoutConfig& c) {
  return (c.pack_ue8m0 == 0 || c.pack_ue8m0 == 1) && c.max_groups >= 0 && c.max_groups <= kSfLayoutMaxKGroups &&
         (c.max_groups == 0 || c.pack_ue8m0 == 1);
}

}  // namespace hopgemm::device
