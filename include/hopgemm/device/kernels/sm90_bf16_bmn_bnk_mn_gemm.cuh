#pragma once
// einsum "bmk,bnk->mn": the SM90 BF16 GEMM body (kernels/sm90_bf16_gemm.cuh's traits) with the batch-sum scheduler
// (scheduler/sm90_batched_scheduler.cuh: a tile's k-blocks run over every batch's K). A kernel of its own only for its
// name: DeepGEMM's is sm90_bmn_bnk_mn_gemm_impl, and profiler filters written for DeepGEMM (its test_einsum.py:
// bench_kineto(..., 'bmn_bnk_mn_gemm_impl')) look for that name.
// Host contract (descriptors, launch): kernels/sm90_bf16_gemm_types.cuh, A and B 3-D.

#include "hopgemm/device/kernels/sm90_bf16_gemm.cuh"

namespace hopgemm::device {

template <Sm90Bf16GemmConfig kConfig>
__global__ void __launch_bounds__(num_threads(kConfig), 1)
    sm90_bf16_bmn_bnk_mn_gemm_impl(const __grid_constant__ Sm90Bf16GemmParams params) {
  static_assert(is_valid(kConfig) && kConfig.grouping == kGroupingBatchSum, "a valid batch-sum Sm90Bf16GemmConfig");
  extern __shared__ __align__(1024) u8 smem_base[];
  collective::sm90_gemm<Sm90Bf16GemmTraits<kConfig>>(params, smem_base);
}

}  // namespace hopgemm::device
