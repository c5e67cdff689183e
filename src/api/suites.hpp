#pragma once
// The embedded benchmark / precompile suites: DeepSeek-V3's GEMM shapes.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hopgemm::api {

enum class GemmRole { kForward, kDgrad, kWgrad };
const char* gemm_role_name(GemmRole role);
// The role named "fwd", "dgrad" or "wgrad" (gemm_role_name's names); nullopt for anything else.
std::optional<GemmRole> gemm_role_from_name(const std::string& name);

struct SuiteGemm {
  GemmRole role;
  int64_t m, n, k;
};

std::vector<std::string> suite_names();
// Throws Error(kInvalidArgument) listing the known suites for an unknown name.
const std::vector<SuiteGemm>& suite_gemms(const std::string& suite);

}  // namespace hopgemm::api
