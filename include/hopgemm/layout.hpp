#pragma once
// Scale-factor layouts and alignment helpers, with DeepGEMM's exact semantics.
//
// "MN-major TMA-aligned" scale factors: logical shape [mn, sf_k] (or [G, mn, sf_k]) stored column-major
// with the leading dimension padded to 16 bytes: strides (1, tma_mn) (and tma_mn * sf_k for the group
// dimension) where tma_mn = get_tma_aligned_size(mn, element_size). Padding rows are unspecified.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "hopgemm/tensor.hpp"

namespace hopgemm {

// align(x, 16 / element_size); element_size must divide 16.
int64_t get_tma_aligned_size(int64_t x, int64_t element_size);
// Row alignment of each group in the M-grouped contiguous layout (128 on SM90).
int get_mk_alignment_for_contiguous_layout();

// True if `sf` (rank 2 or 3) already has the MN-major TMA-aligned strides for its dtype.
bool is_mn_major_tma_aligned(const TensorView& sf);
// The strides (elements) of the MN-major TMA-aligned layout for `shape` ([mn, k] or [G, mn, k]).
void mn_major_tma_aligned_strides(int rank, const int64_t* shape, int64_t element_size, int64_t* strides);

// out = sf in the MN-major TMA-aligned layout. sf: FP32 [mn, sf_k] or [G, mn, sf_k], any strides;
// out: same shape and dtype with mn_major_tma_aligned_strides, 16-byte aligned, not overlapping sf.
// Any mn (including mn % 4 != 0), any sf_k, G <= 65535; one compiled kernel serves every size.
// Errors: kInvalidArgument naming the argument (dtype, rank, shape, strides, alignment, host memory, overlap).
void get_mn_major_tma_aligned_tensor(const TensorView& sf, const TensorView& out, cudaStream_t stream);

// FP32 scales -> UE8M0 exponents packed 4 per int32 along K, MN-major TMA-aligned (DeepGEMM's SM100
// format). sf: FP32 [mn, sf_k] or [G, mn, sf_k], any strides; out: int32 [mn, ceil(sf_k / 4)] (or [G, ...])
// with mn_major_tma_aligned_strides (element size 4), 16-byte aligned. Byte j (LSB first) of out[.., i, c] is
// (bits(sf[.., i, 4c + j]) >> 23) & 0xff, the biased exponent, or 0 where 4c + j >= sf_k: exact for scales
// that already are positive powers of two (per_*_cast_to_fp8 with use_ue8m0); other values keep only their
// exponent (no rounding), like DeepGEMM's reference. Padding rows mn..align(mn, 4)-1 are not written.
void get_mn_major_tma_aligned_packed_ue8m0_tensor(const TensorView& sf, const TensorView& out, cudaStream_t stream);

// K-grouped variant (MoE weight gradients): sf FP32 [sum_g ceil(ks[g] / 128), mn], the per-channel scales of
// the groups stacked along K (group g owns sf_k_g = ceil(ks[g] / 128) rows starting at sum_{h<g} sf_k_h), any
// strides; ks[g] >= 0 (zeros allowed). out: int32 [sum_g ceil(ks[g] / 512), mn], contiguous. Group g owns
// ceil(sf_k_g / 4) output rows starting at sum_{h<g} ceil(sf_k_h / 4); byte j of its row r, column i, is the
// exponent byte of sf row (4r + j) of the group, 0 where 4r + j >= sf_k_g (no packing across groups). Any
// number of groups and any mn (DeepGEMM: <= 128 groups, mn % 4 == 0). DeepGEMM's `ks_tensor` argument only
// mirrors `ks` on the device; the group table here comes from `ks` and travels in the launch parameters.
void get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(const TensorView& sf, const std::vector<int>& ks,
                                                            const TensorView& out, cudaStream_t stream);

// What transform_sf_into_required_layout has to do with a scale-factor tensor on SM90.
enum class SfTransform {
  kNone,               // use sf as it is
  kMnMajorTmaAligned,  // get_mn_major_tma_aligned_tensor(sf, out) into a new MN-major TMA-aligned tensor
};

// DeepGEMM's transform_sf_into_required_layout on SM90, planning part: validates sf like DeepGEMM's
// check_sf_layout (FP32 or int32; rank 2, or 3 with size(0) == num_groups when num_groups >= 0;
// size(-2) == ceil(mn / gran_mn); size(-1) == ceil(k / gran_k), ceil(k / (4 gran_k)) for int32), then:
//   FP32, (gran_mn, gran_k) == (1, 128):   kMnMajorTmaAligned, or kNone if sf already is_mn_major_tma_aligned;
//   FP32, (128, 128):                      kNone, after checking sf is contiguous K-major or contiguous MN-major
//                                          (last two dims swapped) per group (extent-1 dims: any stride);
//   anything else:                         Error(kUnsupported) "unknown SF transformation".
// Recipes: with DeepGEMM's 3-tuple (a, b, k) gran_mn = is_sfa ? a : b, gran_k = k; a 2-tuple is (gran_mn, gran_k).
SfTransform plan_transform_sf_into_required_layout(const TensorView& sf, int64_t mn, int64_t k, int gran_mn,
                                                   int gran_k, int num_groups = -1);

}  // namespace hopgemm
