#pragma once
// Kernel sources of the GEMM families: rendering for the kernel caches, and the set a suite needs
// (for precompile).
#include <vector>

#include "api/suites.hpp"
#include "hopgemm/device/kernels/sm90_fp8_gemm_types.cuh"
#include "hopgemm/device/kernels/sm90_splitk_reduce_types.cuh"
#include "jit/kernel_source.hpp"

namespace hopgemm::api {

jit::KernelSource render_sm90_fp8_gemm(const device::Sm90Fp8GemmConfig& config);
jit::KernelSource render_sm90_splitk_reduce(const device::Sm90SplitkReduceConfig& config);
// Every FP8 GEMM kernel (and split-K reduction) the suite's shapes select on a device with `num_sms` SMs (de-duplicated by the caller).
std::vector<jit::KernelSource> gemm_suite_sources(const std::vector<SuiteGemm>& gemms, int num_sms);

}  // namespace hopgemm::api
