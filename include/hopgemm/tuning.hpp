#pragma once
// Hook for tests, tuning and benchmarks: an FP8 GEMM run with its kernel configuration changed by field name. Not
// needed to compute anything fp8_gemm_nt cannot.
#include <cuda_runtime_api.h>

#include <map>
#include <string>

#include "hopgemm/gemm.hpp"
#include "hopgemm/tensor.hpp"

namespace hopgemm {

// fp8_gemm_nt with the heuristics' configuration for the problem, then `overrides` applied by name: the kernel's
// schedule fields (block_m, block_n, num_stages, cluster_m, cluster_n, promote_overlap, d_passes, d_in_stage,
// k_splits, sfb_regs, sf_chunks) and the launch parameters num_sms and raster_band. num_stages follows a new tile
// unless overridden. Throws Error(kInvalidArgument) for an unknown or fixed name, or a configuration that does not
// fit the problem (nothing is written then).
void fp8_gemm_nt_with_overrides(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                                const TensorView& d, const TensorView* c, const GemmOptions& options,
                                const std::map<std::string, int>& overrides, cudaStream_t stream);

}  // namespace hopgemm
