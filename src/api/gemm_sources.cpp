#include "api/gemm_sources.hpp"

#include <algorithm>
#include <stdexcept>

#include "heuristics/sm90_fp8_gemm.hpp"
#include "hopgemm/error.hpp"

namespace hopgemm::api {

const std::vector<Sm90Fp8GemmConfigField>& sm90_fp8_gemm_config_fields() {
  using C = device::Sm90Fp8GemmConfig;
  static const std::vector<Sm90Fp8GemmConfigField> fields = {
      {"block_m", &C::block_m, true},         {"block_n", &C::block_n, true},
      {"num_stages", &C::num_stages, true},   {"cluster_m", &C::cluster_m, true},
      {"cluster_n", &C::cluster_n, true},     {"recipe", &C::recipe, false},
      {"out_dtype", &C::out_dtype, false},    {"accumulate", &C::accumulate, false},
      {"sfa_k_major", &C::sfa_k_major, false}, {"sfb_k_major", &C::sfb_k_major, false},
      {"num_sms", &C::num_sms, true},         {"raster_band", &C::raster_band, true},
      {"promote_overlap", &C::promote_overlap, true}, {"wg_order", &C::wg_order, true},
      {"d_passes", &C::d_passes, true},       {"d_in_stage", &C::d_in_stage, true},
      {"shape_n", &C::shape_n, false},        {"shape_k", &C::shape_k, false},
      {"k_splits", &C::k_splits, true},      {"splitk_fused", &C::splitk_fused, true},
      {"sfb_regs", &C::sfb_regs, true},       {"sf_chunks", &C::sf_chunks, true},
  };
  return fields;
}

namespace {

// The tunable field called `name`; else Error(kInvalidArgument) naming `who` and listing the tunable ones.
const Sm90Fp8GemmConfigField& tunable_field(const std::string& name, const char* who) {
  const auto& fields = sm90_fp8_gemm_config_fields();
  auto it = std::find_if(fields.begin(), fields.end(), [&](const auto& f) { return f.tunable && name == f.name; });
  if (it == fields.end()) {
    std::string tunable;
    for (const auto& f : fields)
      if (f.tunable) tunable += std::string(tunable.empty() ? "" : ", ") + f.name;
    throw Error(ErrorKind::kInvalidArgument,
                std::string(who) + ": unknown or fixed config field '" + name + "' (tunable: " + tunable + ")");
  }
  return *it;
}

}  // namespace

device::Sm90Fp8GemmConfig apply_config_overrides(device::Sm90Fp8GemmConfig config,
                                                 const std::map<std::string, int>& overrides, const char* who) {
  for (const auto& [name, value] : overrides) config.*(tunable_field(name, who).member) = value;
  if (overrides.contains("k_splits") && !overrides.contains("splitk_fused"))
    config.splitk_fused = heuristics::preferred_splitk_fused(config);
  if (!overrides.contains("num_stages")) config.num_stages = heuristics::max_stages(config);
  return config;
}

std::map<std::string, int> parse_config_overrides(const std::string& text, const char* who) {
  std::map<std::string, int> overrides;
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
    overrides[tunable_field(item.substr(0, eq), who).name] = value;
    start = end + 1;
  }
  return overrides;
}

jit::KernelSource render_sm90_fp8_gemm(const device::Sm90Fp8GemmConfig& c) {
  jit::ConfigWriter config("hopgemm::device::Sm90Fp8GemmConfig");
  for (const auto& f : sm90_fp8_gemm_config_fields()) config.field(f.name, c.*(f.member));
  return jit::render_kernel("sm90_fp8_gemm", "hopgemm/device/kernels/sm90_fp8_gemm.cuh",
                            "hopgemm::device::sm90_fp8_gemm_kernel", config.str());
}

jit::KernelSource render_sm90_splitk_reduce(const device::Sm90SplitkReduceConfig& c) {
  const std::string config = jit::ConfigWriter("hopgemm::device::Sm90SplitkReduceConfig")
                                 .field("out_dtype", c.out_dtype)
                                 .field("accumulate", c.accumulate)
                                 .str();
  return jit::render_kernel("sm90_splitk_reduce", "hopgemm/device/kernels/sm90_splitk_reduce.cuh",
                            "hopgemm::device::sm90_splitk_reduce_kernel", config);
}

heuristics::Fp8GemmProblem suite_gemm_problem(const SuiteGemm& gemm, int num_sms, int sfa_k_major, int sfb_k_major) {
  heuristics::Fp8GemmProblem p;
  p.m = gemm.m;
  p.n = gemm.n;
  p.k = gemm.k;
  p.num_sms = num_sms;
  p.sfa_k_major = sfa_k_major;
  if (gemm.role == GemmRole::kWgrad) {
    p.recipe = device::kRecipe1D1D;
    p.out_dtype = device::kOutFp32;
    p.accumulate = 1;
    p.sfb_k_major = sfb_k_major;
  }
  // The suites' row-major scales are contiguous [rows, ceil(K / 128)]: 16-byte rows where that is a multiple of 4.
  const bool row_major_per_row = sfa_k_major == 1 || (p.recipe == device::kRecipe1D1D && p.sfb_k_major == 1);
  const int64_t sf_k = device::ceil_div<int64_t>(gemm.k, 128);
  p.sf_rows_tma = row_major_per_row && heuristics::sf_rows_tma_ok(sf_k, sf_k, 0) ? 1 : 0;
  return p;
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
        if (choice.config.k_splits > 1 && choice.config.splitk_fused == 0) {
          sources.push_back(render_sm90_splitk_reduce({choice.config.out_dtype, choice.config.accumulate}));
        }
      }
    }
  }
  return sources;
}

}  // namespace hopgemm::api
