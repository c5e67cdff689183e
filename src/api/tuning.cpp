// The tuning hooks that need no tensors (include/hopgemm/tuning.hpp): the configuration an op would run for a
// problem, and ahead-of-time compilation of chosen configurations.
#include "hopgemm/tuning.hpp"

#include <string>
#include <vector>

#include "api/gemm_internal.hpp"
#include "api/gemm_sources.hpp"
#include "heuristics/sm90_fp8_gemm.hpp"
#include "hopgemm/error.hpp"
#include "jit/precompile.hpp"

namespace hopgemm {
namespace {

// The problem the op of `spec` builds (the same make_* functions the ops call).
heuristics::Fp8GemmProblem spec_problem(const Fp8GemmProblemSpec& s) {
  switch (s.op) {
    case Fp8GemmOpKind::kGemm: {
      heuristics::Fp8GemmCall call;
      call.m = s.m;
      call.n = s.n;
      call.k = s.k;
      call.recipe = s.recipe_1d1d ? device::kRecipe1D1D : device::kRecipe1D2D;
      call.out_dtype = s.fp32_out ? device::kOutFp32 : device::kOutBf16;
      call.accumulate = s.accumulate ? 1 : 0;
      // Aligned: rows padded to 16 bytes at an aligned base; else at an address TMA cannot load from.
      const int64_t sf_k = device::ceil_div<int64_t>(s.k, 128);
      const heuristics::ScaleRows rows{.k_major = 1,
                                       .row_stride = s.scale_rows_aligned ? device::align_up<int64_t>(sf_k, 4) : sf_k,
                                       .base = s.scale_rows_aligned ? 0u : 4u};
      call.sfa = rows;
      call.sfa.k_major = s.sfa_row_major ? 1 : 0;
      call.sfb = rows;
      call.sfb.k_major = s.sfb_row_major ? 1 : 0;
      call.num_sms = s.num_sms;
      call.tc_util = s.tc_util;
      return heuristics::make_fp8_gemm_problem(call);
    }
    case Fp8GemmOpKind::kMGroupedIds:
    case Fp8GemmOpKind::kMGroupedRanges: {
      const bool ids = s.op == Fp8GemmOpKind::kMGroupedIds;
      return heuristics::make_m_grouped_problem(ids ? device::kGroupingMIds : device::kGroupingMRanges, s.m, s.n, s.k,
                                                s.num_groups, s.sfa_row_major ? 1 : 0, s.group_align, s.num_sms,
                                                s.tc_util);
    }
    case Fp8GemmOpKind::kKGrouped:
      return heuristics::make_k_grouped_problem(s.m, s.n, s.k, s.num_groups, s.num_sms, s.tc_util);
  }
  throw Error(ErrorKind::kInvalidArgument, "fp8_gemm_config: unknown op kind");
}

// A spec no op could build is refused by name before the heuristics' arithmetic sees it (an M of 2^63 overflowed it).
void check_spec(const Fp8GemmProblemSpec& s) {
  constexpr int64_t kMaxExtent = int64_t{1} << 31, kMaxGroups = 1024, kMaxGroupedRows = int64_t{1} << 36;
  auto refuse = [](const std::string& what) { throw Error(ErrorKind::kInvalidArgument, "fp8_gemm_config: " + what); };
  for (const auto& [value, name] : {std::pair{s.m, "m"}, {s.n, "n"}, {s.k, "k"}}) {
    if (value < 1 || value >= kMaxExtent) {
      refuse(std::string(name) + " must be in [1, 2^31), got " + std::to_string(value));
    }
  }
  if (s.num_groups < 1 || s.num_groups > kMaxGroups || s.m * s.num_groups >= kMaxGroupedRows) {
    refuse("num_groups must be in [1, 1024] with m * num_groups < 2^36, got " + std::to_string(s.num_groups));
  }
  if (s.num_sms < 1) refuse("num_sms must be positive, got " + std::to_string(s.num_sms));
}

}  // namespace

std::map<std::string, int> fp8_gemm_config(const Fp8GemmProblemSpec& spec, const std::map<std::string, int>& overrides) {
  check_spec(spec);
  const heuristics::Fp8GemmProblem problem = spec_problem(spec);
  const heuristics::Fp8GemmChoice& chosen = api::fp8_gemm_choice(problem);
  if (chosen.num_tiles == 0) {
    throw Error(ErrorKind::kUnsupported, "fp8_gemm_config: no kernel configuration fits " + heuristics::describe(problem));
  }
  const heuristics::Fp8GemmChoice choice = api::apply_config_overrides(chosen, overrides, "fp8_gemm_config");
  if (const char* rule = device::config_violation(choice.config)) {
    throw Error(ErrorKind::kInvalidArgument, std::string("fp8_gemm_config: the overrides make an invalid config: ") + rule);
  }
  if (!device::k_splits_fit(problem.k, choice.config.k_splits)) {
    throw Error(ErrorKind::kInvalidArgument, "fp8_gemm_config: k_splits leaves a split without k-blocks");
  }
  std::map<std::string, int> out;
  for (const auto& f : api::sm90_fp8_gemm_config_fields()) out[f.name] = choice.config.*(f.member);
  out["num_sms"] = choice.launch.num_sms;
  out["raster_band"] = choice.launch.raster_band;
  return out;
}

PrecompileReport precompile_fp8_gemm_configs(const std::vector<std::map<std::string, int>>& configs, int jobs) {
  std::vector<jit::KernelSource> sources;
  for (const auto& fields : configs) {
    device::Sm90Fp8GemmConfig config;
    for (const auto& f : api::sm90_fp8_gemm_config_fields()) {
      const auto it = fields.find(f.name);
      if (it == fields.end()) {
        throw Error(ErrorKind::kInvalidArgument, std::string("precompile_fp8_gemm_configs: a config lacks '") + f.name + "'");
      }
      config.*(f.member) = it->second;
    }
    for (const auto& [name, value] : fields) {
      bool known = name == "num_sms" || name == "raster_band";
      for (const auto& f : api::sm90_fp8_gemm_config_fields()) known = known || name == f.name;
      if (!known) throw Error(ErrorKind::kInvalidArgument, "precompile_fp8_gemm_configs: unknown field '" + name + "'");
    }
    if (const char* rule = device::config_violation(config)) {
      throw Error(ErrorKind::kInvalidArgument, std::string("precompile_fp8_gemm_configs: invalid config: ") + rule);
    }
    sources.push_back(api::render_sm90_fp8_gemm(config));
  }
  return jit::precompile_sources(sources, jobs);
}

}  // namespace hopgemm
