#pragma once
// Dense FP8 GEMMs with fine-grained scaling (DeepGEMM's fp8_gemm_{nt,nn,tn,tt}).
//
//   D[M, N] = C[M, N] + (A[M, K] * sfa) @ (B[N, K] * sfb)^T
//
// A, B: FP8 e4m3, K-major ("nt": A row-major [M, K], B row-major [N, K]). The nn/tn/tt forms take the
// transposed views DeepGEMM takes and require them to be K-major after transposition.
// Recipes (FP32 scale factors):
//   (1, 128, 128) "1D2D": sfa per 1x128 of A, [M, ceil(K/128)] row-major or MN-major TMA-aligned;
//                         sfb per 128x128 block of B, [ceil(N/128), ceil(K/128)]. D BF16 (or FP32).
//   (1, 1, 128)   "1D1D": sfa and sfb per 1x128, [M|N, ceil(K/128)] (either layout). D FP32 (or BF16),
//                         C optional: aliased with D (accumulate in place) or distinct (copied first).
// Shapes: M >= 0; N a multiple of 8 (BF16 D) or 4 (FP32 D); K a multiple of 16. Zero-size problems
// return after validation (K == 0 writes D = C or zeros).
#include <cuda_runtime_api.h>

#include <array>
#include <string>

#include "hopgemm/tensor.hpp"

namespace hopgemm {

struct GemmOptions {
  // (gran_m of A, gran_n of B, gran_k); {0, 0, 0} picks (1, 128, 128) unless D is FP32 and C is given,
  // which picks (1, 1, 128) (DeepGEMM's default per output type).
  std::array<int, 3> recipe = {0, 0, 0};
  // Which of m, n, k are baked into the kernel as compile-time constants ("nk" default). hopgemm
  // accepts it for compatibility; its kernels take every dimension at run time.
  std::string compiled_dims = "nk";
  // Accepted for compatibility (SM90 consumes FP32 scales; there is no UE8M0 cast to disable).
  bool disable_ue8m0_cast = false;
};

// D = C + A @ B^T with A [M, K], B [N, K] K-major. `c` may be null.
void fp8_gemm_nt(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                 const TensorView& d, const TensorView* c, const GemmOptions& options, cudaStream_t stream);
// The letters name A's and B's layouts against A [M, K], B [K, N] (DeepGEMM's convention): n = as is,
// t = transposed. nn: A [M, K], B given as [K, N] (its transpose must be K-major).
void fp8_gemm_nn(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                 const TensorView& d, const TensorView* c, const GemmOptions& options, cudaStream_t stream);
// tn: A given as [K, M], B as [K, N] (both transposes must be K-major).
void fp8_gemm_tn(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                 const TensorView& d, const TensorView* c, const GemmOptions& options, cudaStream_t stream);
// tt: A given as [K, M] (its transpose must be K-major), B as [N, K].
void fp8_gemm_tt(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                 const TensorView& d, const TensorView* c, const GemmOptions& options, cudaStream_t stream);

// DeepGEMM's fp8_gemm_nt_skip_head_mid: fp8_gemm_nt of A [M, K] and B [N, K] with recipe (1, 128, 128) (no C) whose
// N columns are heads of left + right columns, each stored into d [M, N / (left + right) * (left + mid + right)]
// around its `mid` middle columns, which are left untouched: GEMM column h (left + right) + j lands at
// h (left + mid + right) + j, plus mid where j >= left. head_splits = {left, mid, right}: mid > 0, left + right > 0,
// N a multiple of left + right, each a multiple of 128 bytes of d (64 BF16 or 32 FP32 columns: a TMA store box never
// straddles two parts). K > 0; M == 0 writes nothing. The kernel is fp8_gemm_nt's with its epilogue's columns moved
// (same tiles, pairs and split-K as the plain GEMM of that M, N, K).
void fp8_gemm_nt_skip_head_mid(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                               const TensorView& d, const std::array<int, 3>& head_splits, const GemmOptions& options,
                               cudaStream_t stream);

// The transposed view of the last two dimensions (no data movement).
TensorView transposed(const TensorView& t);

}  // namespace hopgemm
