#pragma once
// SM90 BF16 GEMM: D = A . B^T (+ D). The shared GEMM body (collective/sm90_gemm_kernel.cuh: persistent,
// warp-specialised, the config's scheduler) with BF16 operands, each K- or MN-major (WGMMA m64nNk16 from shared
// memory, collective/sm90_bf16_operands.cuh) and no scales (collective/sm90_no_scales.cuh): every k-block's WGMMAs
// add into the FP32 sums.
// Host contract (descriptors, launch): kernels/sm90_bf16_gemm_types.cuh.

#include "hopgemm/device/collective/sm90_bf16_operands.cuh"
#include "hopgemm/device/collective/sm90_gemm_kernel.cuh"
#include "hopgemm/device/collective/sm90_no_scales.cuh"
#include "hopgemm/device/kernels/sm90_bf16_gemm_types.cuh"

namespace hopgemm::device {

template <Sm90Bf16GemmConfig kConfig>
using Sm90Bf16GemmTraits =
    collective::Sm90GemmTraits<kConfig, collective::Sm90Bf16Operands<kConfig.a_k_major == 1, kConfig.b_k_major == 1>,
                               collective::Sm90NoScales<Sm90Bf16GemmParams>>;

template <Sm90Bf16GemmConfig kConfig>
__global__ void __launch_bounds__(num_threads(kConfig), 1)
    sm90_bf16_gemm_kernel(const __grid_constant__ Sm90Bf16GemmParams params) {
  static_assert(is_valid(kConfig), "invalid Sm90Bf16GemmConfig (see is_valid)");
  extern __shared__ __align__(1024) u8 smem_base[];
  collective::sm90_gemm<Sm90Bf16GemmTraits<kConfig>>(params, smem_base);
}

}  // namespace hopgemm::device
