#pragma once
// DeepGEMM's einsum: the batched BF16 GEMMs of the expressions it runs on SM90, each on a batched scheduler of the GEMM
// kernels (scheduler/sm90_batched_scheduler.cuh: 3-D descriptors, the batch their outermost coordinate, so any
// strides between batches and any shape run without copies).
//
//   einsum (BF16 a, b):
//     "bmk,bnk->mn"   a [s, m, k], b [s, n, k], d [m, n] BF16 or FP32: D = C + sum_s a[s] @ b[s]^T (one GEMM summed
//                     over the batches; split-K splits that K). C: aliased with d (accumulate in place, DeepGEMM's FP32
//                     form) or distinct (copied first), d's dtype.
//     "bhr,hdr->bhd"  a [b, h, r], b [h, d, r], d [b, h, d] BF16: for each h, d[:, h] = a[:, h] @ b[h]^T. No C.
//     "bhd,hdr->bhr"  a [b, h, d], b [h, d, r], d [b, h, r] BF16: for each h, d[:, h] = a[:, h] @ b[h] (b read
//                     MN-major as it is). No C.
//   fp8_einsum (FP8 e4m3 a, b with FP32 scales, recipe (1, 128, 128)):
//     "bhr,hdr->bhd"  a [b, h, r] with sfa [b, h, ceil(r/128)] (per 1x128, row-major: per_token_cast_to_fp8 of
//                     a.view(-1, r) viewed back), b [h, d, r] with sfb [h, ceil(d/128), ceil(r/128)] (per 128x128
//                     block), d [b, h, d] BF16 or FP32: for each h, d[:, h] = a[:, h] @ b[h]^T dequantised. No C (the
//                     1D2D kernel stores D), as DeepGEMM's SM90 kernel.
// The last dimension of every tensor is contiguous; other strides are free where TMA takes them (16-byte multiples,
// 16-byte aligned data). Other expressions raise NotImplementedError (kUnsupported) naming them (DeepGEMM's SM100-only
// forms among them).
#include <cuda_runtime_api.h>

#include <array>
#include <string>

#include "hopgemm/tensor.hpp"

namespace hopgemm {

void einsum(const std::string& expr, const TensorView& a, const TensorView& b, const TensorView& d, const TensorView* c,
            cudaStream_t stream);

void fp8_einsum(const std::string& expr, const TensorView& a, const TensorView& sfa, const TensorView& b,
                const TensorView& sfb, const TensorView& d, const TensorView* c, const std::array<int, 3>& recipe,
                cudaStream_t stream);

}  // namespace hopgemm
