#pragma once
// The embedded benchmark / precompile suites: DeepSeek-V3's GEMM shapes.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "heuristics/sm90_fp8_gemm.hpp"

namespace hopgemm::api {

enum class GemmRole { kForward, kDgrad, kWgrad };
const char* gemm_role_name(GemmRole role);
// The role named "fwd", "dgrad" or "wgrad" (gemm_role_name's names); nullopt for anything else.
std::optional<GemmRole> gemm_role_from_name(const std::string& name);

struct SuiteGemm {
  GemmRole role;
  int64_t m, n, k;
};

// The dense suites (bench, tune, precompile).
std::vector<std::string> suite_names();
// Throws Error(kInvalidArgument) listing the known suites for an unknown name.
const std::vector<SuiteGemm>& suite_gemms(const std::string& suite);

// The MoE suite of grouped GEMMs (precompile): DeepGEMM's grouped test shapes (DeepSeek-V3 MoE layers: m-grouped
// contiguous with both layouts and both sfa layouts, masked, k-grouped) as the grouped ops build their problems.
inline constexpr const char* kMoeSuite = "deepseek-v3-moe";
std::vector<heuristics::Fp8GemmProblem> moe_suite_problems(int num_sms);

}  // namespace hopgemm::api
