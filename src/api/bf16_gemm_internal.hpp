#pragma once
// The BF16 GEMM family below the public API: its kernel family and rendering (for the kernel cache, precompile and
// the compile tests), the problem of a suite GEMM, and its precompile entry.
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "api/suites.hpp"
#include "heuristics/sm90_bf16_gemm.hpp"
#include "hopgemm/device/kernels/sm90_bf16_gemm_types.cuh"
#include "jit/kernel_source.hpp"
#include "jit/loader.hpp"

namespace hopgemm::api {

inline constexpr jit::KernelFamily kSm90Bf16GemmFamily{"sm90_bf16_gemm", "hopgemm/device/kernels/sm90_bf16_gemm.cuh",
                                                    "hopgemm::device::sm90_bf16_gemm_kernel",
                                                    "hopgemm::device::Sm90Bf16GemmConfig"};
// einsum "bmk,bnk->mn"'s kernel: the same body under DeepGEMM's kernel name (kernels/sm90_bf16_bmn_bnk_mn_gemm.cuh).
inline constexpr jit::KernelFamily kSm90Bf16BatchSumFamily{
    "sm90_bf16_bmn_bnk_mn_gemm", "hopgemm/device/kernels/sm90_bf16_bmn_bnk_mn_gemm.cuh",
    "hopgemm::device::sm90_bf16_bmn_bnk_mn_gemm_impl", "hopgemm::device::Sm90Bf16GemmConfig"};
jit::KernelSource render_sm90_bf16_gemm(const device::Sm90Bf16GemmConfig& config);
// A BF16 config's kernel of another family of the same config (kSm90Bf16BatchSumFamily).
jit::KernelSource render_bf16_config(const jit::KernelFamily& family, const device::Sm90Bf16GemmConfig& config);

// The BF16 GEMM kernel of `config`, compiled or loaded once per process (every BF16 op shares the cache), and its
// launch with `choice`'s launch parameters.
// The kernel of `config`: the BF16 GEMM's, or under the batch sum's name where its grouping is batch_sum.
const jit::LoadedKernel& bf16_gemm_kernel(const device::Sm90Bf16GemmConfig& config, const char* op, cudaStream_t stream);
void bf16_gemm_launch(const jit::LoadedKernel& kernel, const heuristics::Bf16GemmChoice& choice,
                      const device::Sm90Bf16GemmParams* params, int device, cudaStream_t stream);
// The heuristics' choice for `problem`, memoised; Error(kUnsupported) naming `op` where no configuration fits.
heuristics::Bf16GemmChoice bf16_grouped_choice(const char* op, const heuristics::Bf16GemmProblem& problem);

// The problem bf16_gemm_{nt,..} sees for a suite GEMM in DeepGEMM's BF16 layouts: forward A, B K-major, BF16 D;
// dgrad B MN-major; wgrad A, B MN-major, FP32 D += A B^T.
heuristics::Bf16GemmProblem bf16_suite_problem(const SuiteGemm& gemm, int num_sms);
// The BF16 family's precompile entry (suite_sources.hpp): the dense suites' kernels, or the MoE suite's M-grouped ones.
std::vector<jit::KernelSource> bf16_gemm_suite_sources(const std::string& suite, int num_sms);

}  // namespace hopgemm::api
