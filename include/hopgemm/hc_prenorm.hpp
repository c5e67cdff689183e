#pragma once
// DeepGEMM's tf32_hc_prenorm_gemm (the hyper-connection pre-norm GEMM): for A [M, K] BF16 and B [N, K] FP32 (both
// K-major, N a multiple of 8 up to 32),
//   D = A @ B^T in TF32 (B rounded to nearest, as torch does) with FP32 sums, and sqr_sum[m] = sum_k A[m][k]^2 (FP32),
// with num_splits == 0 (DeepGEMM's None): d [M, N], sqr_sum [M]; else K cut into num_splits ranges of whole 64-K
// blocks, d [num_splits, M, N] and sqr_sum [num_splits, M] holding each range's part (the caller sums them: a split
// with no block writes zeros). D row-major (last stride 1), sqr_sum contiguous. K a multiple of 8 (16-byte rows).
#include <cuda_runtime_api.h>

#include "hopgemm/tensor.hpp"

namespace hopgemm {

void tf32_hc_prenorm_gemm(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView& sqr_sum,
                          int num_splits, cudaStream_t stream);

}  // namespace hopgemm
