#pragma once
// SM90 FP8 GEMM with fine-grained scaling (recipes 1D2D and 1D1D): D = A . B^T (+ D). The shared GEMM body
// (collective/sm90_gemm_kernel.cuh: persistent, warp-specialised, the config's scheduler) with FP8 e4m3 operands
// (WGMMA m64nNk32 from shared memory, collective/sm90_operands.cuh) and the FP8 scale policy: the scales' loads beside
// A's and B's, and the promotion of every 128-K block on CUDA cores with the row x column scales
// (collective/sm90_fp8_scales.cuh).
// Host contract (descriptors, launch): kernels/sm90_fp8_gemm_types.cuh.

#include "hopgemm/device/collective/sm90_fp8_scales.cuh"
#include "hopgemm/device/collective/sm90_gemm_kernel.cuh"
#include "hopgemm/device/collective/sm90_operands.cuh"
#include "hopgemm/device/kernels/sm90_fp8_gemm_types.cuh"

namespace hopgemm::device {

// The epilogue's column map is the identity unless the config has head splits (fp8_gemm_nt_skip_head_mid).
template <Sm90Fp8GemmConfig kConfig>
using Sm90Fp8GemmTraits = collective::Sm90GemmTraits<
    kConfig, collective::Sm90E4m3Operands, collective::Sm90Fp8Scales<kConfig>,
    typename epilogue::Sm90ColumnMapFor<kConfig.head_left, kConfig.head_mid, kConfig.head_right>::Type>;

template <Sm90Fp8GemmConfig kConfig>
__global__ void __launch_bounds__(num_threads(kConfig), 1)
    sm90_fp8_gemm_kernel(const __grid_constant__ Sm90Fp8GemmParams params) {
  static_assert(is_valid(kConfig), "invalid Sm90Fp8GemmConfig (see is_valid)");
  extern __shared__ __align__(1024) u8 smem_base[];
  collective::sm90_gemm<Sm90Fp8GemmTraits<kConfig>>(params, smem_base);
}

}  // namespace hopgemm::device
