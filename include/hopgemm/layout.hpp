#pragma once
// Scale-factor layouts and alignment helpers, with DeepGEMM's exact semantics (reference §2).
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
// out: same shape and dtype with mn_major_tma_aligned_strides. Any mn (including mn % 4 != 0).
void get_mn_major_tma_aligned_tensor(const TensorView& sf, const TensorView& out, cudaStream_t stream);

// FP32 scales -> UE8M0 exponents packed 4 per int32 along K, MN-major TMA-aligned (DeepGEMM's SM100
// format). sf: FP32 [mn, sf_k] or [G, mn, sf_k]; out: int32 [mn, ceil(sf_k/4)] (or [G, ...]) with
// mn_major_tma_aligned_strides. Each scale is first rounded up to a power of two.
void get_mn_major_tma_aligned_packed_ue8m0_tensor(const TensorView& sf, const TensorView& out, cudaStream_t stream);

// K-grouped variant: sf FP32 [sum_g ceil(ks[g]/128), mn] per-channel scales of the groups stacked along K;
// out int32 [sum_g ceil(ks[g]/512), mn]... exact layout documented in src/api/layout.cpp.
void get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(const TensorView& sf, const std::vector<int>& ks,
                                                            const TensorView& out, cudaStream_t stream);

}  // namespace hopgemm
