#pragma once
// Kernel sources of the GEMM families: rendering for the kernel caches, and the set a suite needs
// (for precompile).
#include <map>
#include <string>
#include <vector>

#include "api/suites.hpp"
#include "heuristics/sm90_fp8_gemm.hpp"
#include "hopgemm/device/kernels/sm90_fp8_gemm_types.cuh"
#include "jit/kernel_source.hpp"

namespace hopgemm::api {

// Every field of Sm90Fp8GemmConfig in declaration order (the order designated initializers need), derived from
// HOPGEMM_SM90_FP8_GEMM_FIELDS: the kernel source is rendered from it, and the test/tuning hook sets the tunable ones
// by these names (the others follow from the problem: recipe, dtypes, scale layouts).
struct Sm90Fp8GemmConfigField {
  const char* name;
  int device::Sm90Fp8GemmConfig::*member;
  bool tunable;
};
const std::vector<Sm90Fp8GemmConfigField>& sm90_fp8_gemm_config_fields();
// `choice` with the tunable config fields and launch parameters (num_sms, raster_band) in `overrides` set by name
// (the test, tuning and bench hook behind `_fp8_gemm_nt_with_config` and `hopgemm bench --config`): num_stages
// follows the new tile unless overridden. An unknown or non-tunable name throws Error(kInvalidArgument) naming
// `who`. Validity against a problem is checked at launch.
heuristics::Fp8GemmChoice apply_config_overrides(heuristics::Fp8GemmChoice choice,
                                                 const std::map<std::string, int>& overrides, const char* who);
// "field=value,field=value" (as `hopgemm bench --config` and bench/try_configs.py take them) -> overrides; a
// malformed item or a name apply_config_overrides would refuse throws Error(kInvalidArgument) naming `who`.
std::map<std::string, int> parse_config_overrides(const std::string& text, const char* who);

inline constexpr jit::KernelFamily kSm90Fp8GemmFamily{"sm90_fp8_gemm", "hopgemm/device/kernels/sm90_fp8_gemm.cuh",
                                                   "hopgemm::device::sm90_fp8_gemm_kernel",
                                                   "hopgemm::device::Sm90Fp8GemmConfig"};
jit::KernelSource render_sm90_fp8_gemm(const device::Sm90Fp8GemmConfig& config);
// The problem fp8_gemm_nt sees for a suite GEMM whose A scales (and, for weight gradients, B scales: 1D1D, FP32
// D += A B^T) come in the given layouts (1: row-major as quantised, 0: MN-major TMA-aligned).
heuristics::Fp8GemmProblem suite_gemm_problem(const SuiteGemm& gemm, int num_sms, int sfa_k_major, int sfb_k_major,
                                              int tc_util = 100);
// Every FP8 GEMM kernel the suite's shapes select on a device with `num_sms` SMs (de-duplicated by the caller).
std::vector<jit::KernelSource> gemm_suite_sources(const std::vector<SuiteGemm>& gemms, int num_sms);
// The FP8 family's precompile entry (suite_sources.hpp): the dense suites' kernels (gemm_suite_sources), or the MoE
// suite's (moe_suite_problems).
std::vector<jit::KernelSource> fp8_gemm_suite_sources(const std::string& suite, int num_sms);

}  // namespace hopgemm::api
