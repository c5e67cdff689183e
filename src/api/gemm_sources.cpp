#include "api/gemm_sources.hpp"

#include <algorithm>
#include <stdexcept>

#include "heuristics/sm90_fp8_gemm.hpp"
#include "hopgemm/error.hpp"

namespace hopgemm::api {

const std::vector<Sm90Fp8GemmConfigField>& sm90_fp8_gemm_config_fields() {
  using C = device::Sm90Fp8GemmConfig;
  static const std::vector<Sm90Fp8GemmConfigField> fields = {
#define HOPGEMM_FIELD_ENTRY(name, default_value, tunable) {#name, &C::name, tunable != 0},
      HOPGEMM_SM90_FP8_GEMM_FIELDS(HOPGEMM_FIELD_ENTRY)
#undef HOPGEMM_FIELD_ENTRY
  };
  return fields;
}

namespace {

// The launch parameters settable by name beside the tunable config fields.
constexpr std::pair<const char*, int heuristics::Fp8GemmLaunch::*> kLaunchFields[] = {
    {"num_sms", &heuristics::Fp8GemmLaunch::num_sms}, {"raster_band", &heuristics::Fp8GemmLaunch::raster_band}};

// The tunable field or launch parameter called `name` into `choice`; else Error(kInvalidArgument) naming `who` and
// listing the settable names.
int& settable_field(heuristics::Fp8GemmChoice& choice, const std::string& name, const char* who) {
  for (const auto& f : sm90_fp8_gemm_config_fields()) {
    if (f.tunable && name == f.name) return choice.config.*(f.member);
  }
  for (const auto& [launch_name, member] : kLaunchFields) {
    if (name == launch_name) return choice.launch.*member;
  }
  std::string settable;
  for (const auto& f : sm90_fp8_gemm_config_fields()) {
    if (f.tunable) settable += std::string(settable.empty() ? "" : ", ") + f.name;
  }
  for (const auto& [launch_name, member] : kLaunchFields) settable += std::string(", ") + launch_name;
  throw Error(ErrorKind::kInvalidArgument,
              std::string(who) + ": unknown or fixed config field '" + name + "' (settable: " + settable + ")");
}

}  // namespace

heuristics::Fp8GemmChoice apply_config_overrides(heuristics::Fp8GemmChoice choice,
                                                 const std::map<std::string, int>& overrides, const char* who) {
  for (const auto& [name, value] : overrides) settable_field(choice, name, who) = value;
  if (!overrides.contains("num_stages")) choice.config.num_stages = heuristics::max_stages(choice.config);
  return choice;
}

std::map<std::string, int> parse_config_overrides(const std::string& text, const char* who) {
  std::map<std::string, int> overrides;
  heuristics::Fp8GemmChoice probe;  // names are checked as apply_config_overrides checks them
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    const size_t eq = item.find('=');
    size_t used = 0;
    int value = 0;
    try {
      if (eq == std::string::npos || eq == 0) throw std::invalid_argument("no name=value");
      value = std::stoi(item.substr(eq + 1), &used);
    } catch (const std::exception&) {
      used = std::string::npos;
    }
    if (used != item.size() - eq - 1) {
      throw Error(ErrorKind::kInvalidArgument,
                  std::string(who) + ": config override '" + item + "' is not field=integer (e.g. block_n=128,num_stages=4)");
    }
    const std::string name = item.substr(0, eq);
    settable_field(probe, name, who);
    overrides[name] = value;
    start = end + 1;
  }
  return overrides;
}

jit::KernelSource render_sm90_fp8_gemm(const device::Sm90Fp8GemmConfig& c) {
  return jit::render_kernel(kSm90Fp8GemmFamily, [&](jit::ConfigWriter& w) {
    for (const auto& f : sm90_fp8_gemm_config_fields()) w.field(f.name, c.*(f.member));
  });
}

heuristics::Fp8GemmProblem suite_gemm_problem(const SuiteGemm& gemm, int num_sms, int sfa_k_major, int sfb_k_major,
                                              int tc_util) {
  // The suites' row-major scales are contiguous [rows, ceil(K / 128)], as quantised.
  heuristics::Fp8GemmCall call;
  call.m = gemm.m;
  call.n = gemm.n;
  call.k = gemm.k;
  call.sfa.k_major = sfa_k_major;
  call.num_sms = num_sms;
  call.tc_util = tc_util;
  if (gemm.role == GemmRole::kWgrad) {
    call.recipe = device::kRecipe1D1D;
    call.out_dtype = device::kOutFp32;
    call.accumulate = 1;
    call.sfb.k_major = sfb_k_major;
  }
  return heuristics::make_fp8_gemm_problem(call);
}

std::vector<jit::KernelSource> gemm_suite_sources(const std::vector<SuiteGemm>& gemms, int num_sms) {
  std::vector<jit::KernelSource> sources;
  for (const auto& g : gemms) {
    const bool wgrad = g.role == GemmRole::kWgrad;
    // Both scale layouts callers pass: row-major (as quantised) and MN-major TMA-aligned, for A, and for B
    // where its scales are per row too (1D1D weight gradients: FP32 accumulate).
    for (int sfa_k_major : {1, 0}) {
      for (int sfb_k_major : {1, 0}) {
        if (!wgrad && sfb_k_major == 0) continue;  // 1D2D block scales: one kernel for both layouts
        const auto choice = heuristics::choose_fp8_gemm_config(suite_gemm_problem(g, num_sms, sfa_k_major, sfb_k_major));
        if (choice.num_tiles == 0) continue;
        sources.push_back(render_sm90_fp8_gemm(choice.config));
      }
    }
  }
  return sources;
}

}  // namespace hopgemm::api

namespace hopgemm::api {

std::vector<jit::KernelSource> fp8_gemm_suite_sources(const std::string& suite, int num_sms) {
  if (suite != kMoeSuite) return gemm_suite_sources(suite_gemms(suite), num_sms);
  std::vector<jit::KernelSource> sources;
  for (const auto& problem : moe_suite_problems(num_sms)) {
    const auto choice = heuristics::choose_fp8_gemm_config(problem);
    if (choice.num_tiles > 0) sources.push_back(render_sm90_fp8_gemm(choice.config));
  }
  return sources;
}

}  // namespace hopgemm::api
