#pragma once
// Dense BF16 GEMMs (DeepGEMM's bf16_gemm_{nt,nn,tn,tt}).
//
//   D[M, N] = C[M, N] + A[M, K] @ B[N, K]^T      (FP32 accumulation over all of K)
//
// A, B: BF16, each K-major or MN-major as given: SM90's BF16 tensor cores read either from shared memory, so no
// operand is transposed or copied. D: BF16 or FP32 (row-major rows: stride(-1) == 1). C optional, D's dtype: aliased
// with D (accumulate in place) or distinct (copied into D first).
// The letters name A's and B's layouts against A [M, K], B [K, N] (DeepGEMM's convention): n = as is, t = transposed.
// Alignment (TMA): 16-byte aligned data pointers; a K-major operand's row stride and an MN-major operand's K stride
// multiples of 8 elements; K a multiple of 8; N a multiple of 8 (BF16 D) or 4 (FP32 D). M is free. Zero-size
// problems return after validation (K == 0 writes D = C or zeros). Errors: hopgemm::Error naming the op and the
// argument; nothing is written.
#include <cuda_runtime_api.h>

#include "hopgemm/gemm.hpp"
#include "hopgemm/tensor.hpp"

namespace hopgemm {

// nt: A [M, K], B [N, K]. `c` may be null; options.compiled_dims is accepted for compatibility.
void bf16_gemm_nt(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c,
                  const GemmOptions& options, cudaStream_t stream);
// nn: A [M, K], B given as [K, N].
void bf16_gemm_nn(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c,
                  const GemmOptions& options, cudaStream_t stream);
// tn: A given as [K, M], B as [K, N].
void bf16_gemm_tn(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c,
                  const GemmOptions& options, cudaStream_t stream);
// tt: A given as [K, M], B as [N, K].
void bf16_gemm_tt(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c,
                  const GemmOptions& options, cudaStream_t stream);

}  // namespace hopgemm
