#pragma once
// The BF16 GEMM family below the public API: its kernel family and rendering (for the kernel cache, precompile and
// the compile tests), the problem of a suite GEMM, and its precompile entry.
#include <string>
#include <vector>

#include "api/suites.hpp"
#include "heuristics/sm90_bf16_gemm.hpp"
#include "hopgemm/device/kernels/sm90_bf16_gemm_types.cuh"
#include "jit/kernel_source.hpp"

namespace hopgemm::api {

inline constexpr jit::KernelFamily kSm90Bf16GemmFamily{"sm90_bf16_gemm", "hopgemm/device/kernels/sm90_bf16_gemm.cuh",
                                                    "hopgemm::device::sm90_bf16_gemm_kernel",
                                                    "hopgemm::device::Sm90Bf16GemmConfig"};
jit::KernelSource render_sm90_bf16_gemm(const device::Sm90Bf16GemmConfig& config);

// The problem bf16_gemm_{nt,..} sees for a suite GEMM in DeepGEMM's BF16 layouts: forward A, B K-major, BF16 D;
// dgrad B MN-major; wgrad A, B MN-major, FP32 D += A B^T.
heuristics::Bf16GemmProblem bf16_suite_problem(const SuiteGemm& gemm, int num_sms);
// The BF16 family's precompile entry (suite_sources.hpp): the dense suites' kernels; none for the MoE suite.
std::vector<jit::KernelSource> bf16_gemm_suite_sources(const std::string& suite, int num_sms);

}  // namespace hopgemm::api
