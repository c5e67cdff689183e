#pragma once
// Fused FP8 (e4m3) quantisation kernels with the numerics of DeepGEMM's Python helpers:
// amax = max |x| over the scaling group (float32), clamped to 1e-4; sf = amax / 448 (rounded up to a
// power of two when use_ue8m0); x_fp8 = round_to_e4m3(x * (1 / sf)). Inputs BF16 or FP32.
#include <cuda_runtime_api.h>

#include "hopgemm/tensor.hpp"

namespace hopgemm {

// Per token, 1 x gran_k along the last dim: x [m, n] -> x_fp8 [m, n], sf FP32 [m, ceil(n / gran_k)].
void per_token_cast_to_fp8(const TensorView& x, const TensorView& x_fp8, const TensorView& sf, bool use_ue8m0,
                           int gran_k, cudaStream_t stream);
// Per 128 x 128 block: x [m, n] -> x_fp8 [m, n], sf FP32 [ceil(m / 128), ceil(n / 128)].
void per_block_cast_to_fp8(const TensorView& x, const TensorView& x_fp8, const TensorView& sf, bool use_ue8m0,
                           int gran_k, cudaStream_t stream);
// Per channel, gran_k x 1 along the first dim: x [m, n] (m % gran_k == 0) -> x_fp8 [m, n], sf FP32 [m / gran_k, n].
void per_channel_cast_to_fp8(const TensorView& x, const TensorView& x_fp8, const TensorView& sf, bool use_ue8m0,
                             int gran_k, cudaStream_t stream);

}  // namespace hopgemm
