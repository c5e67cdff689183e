#include "api/gemm_sources.hpp"

#include "heuristics/sm90_fp8_gemm.hpp"

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
      {"sfb_regs", &C::sfb_regs, true},
  };
  return fields;
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
