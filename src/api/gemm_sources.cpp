#include "api/gemm_sources.hpp"

#include "heuristics/sm90_fp8_gemm.hpp"

namespace hopgemm::api {

jit::KernelSource render_sm90_fp8_gemm(const device::Sm90Fp8GemmConfig& c) {
  const std::string config = jit::ConfigWriter("hopgemm::device::Sm90Fp8GemmConfig")
                                 .field("block_m", c.block_m)
                                 .field("block_n", c.block_n)
                                 .field("num_stages", c.num_stages)
                                 .field("cluster_m", c.cluster_m)
                                 .field("cluster_n", c.cluster_n)
                                 .field("recipe", c.recipe)
                                 .field("out_dtype", c.out_dtype)
                                 .field("accumulate", c.accumulate)
                                 .field("sfa_k_major", c.sfa_k_major)
                                 .field("sfb_k_major", c.sfb_k_major)
                                 .field("num_sms", c.num_sms)
                                 .field("raster_band", c.raster_band)
                                 .field("promote_overlap", c.promote_overlap)
                                 .field("wg_order", c.wg_order)
                                 .field("d_passes", c.d_passes)
                                 .field("d_in_stage", c.d_in_stage)
                                 .field("shape_n", c.shape_n)
                                 .field("shape_k", c.shape_k)
                                 .field("k_splits", c.k_splits)
                                 .field("splitk_fused", c.splitk_fused)
                                 .str();
  return jit::render_kernel("sm90_fp8_gemm", "hopgemm/device/kernels/sm90_fp8_gemm.cuh",
                            "hopgemm::device::sm90_fp8_gemm_kernel", config);
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
