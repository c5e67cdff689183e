// The MoE grouped GEMMs' kernels compile for sm_90a under NVRTC without spills: every config the heuristics pick for
// the grouped suites of DeepGEMM's tests (contiguous with both layouts, masked, k-grouped), on 132 and 114 SMs.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "api/gemm_sources.hpp"
#include "compile/compiled_kernel_checks.hpp"
#include "api/suites.hpp"
#include "heuristics/sm90_fp8_gemm.hpp"

namespace hopgemm {
namespace {

// The MoE suite and the small, ragged cases the GPU tests run (N = 768 / 256 k-grouped, tiny masked groups).
std::vector<heuristics::Fp8GemmProblem> grouped_problems(int num_sms) {
  std::vector<heuristics::Fp8GemmProblem> problems = api::moe_suite_problems(num_sms);
  problems.push_back(heuristics::make_k_grouped_problem(512, 768, 256, 8, num_sms, 100));
  problems.push_back(heuristics::make_k_grouped_problem(256, 256, 384, 40, num_sms, 100));
  problems.push_back(heuristics::make_m_grouped_problem(device::kGroupingMRanges, 4, 4096, 7168, 4, 1, 0, num_sms, 100));
  return problems;
}

TEST(GroupedGemmKernels, SuitePicksCompileWithNvrtc) {
  std::set<std::vector<int>> seen;
  std::vector<jit::KernelSource> sources;
  for (int num_sms : {132, 114}) {
    for (const auto& p : grouped_problems(num_sms)) {
      const heuristics::Fp8GemmChoice choice = heuristics::choose_fp8_gemm_config(p);
      ASSERT_GT(choice.num_tiles, 0) << heuristics::describe(p);
      ASSERT_TRUE(device::is_valid(choice.config)) << heuristics::describe(choice);
      EXPECT_EQ(choice.config.grouping, p.grouping) << heuristics::describe(choice);
      const auto& c = choice.config;
      std::vector<int> key;
#define HOPGEMM_KEY_FIELD(name, default_value, tunable) key.push_back(c.name);
      HOPGEMM_SM90_FP8_GEMM_FIELDS(HOPGEMM_KEY_FIELD)
#undef HOPGEMM_KEY_FIELD
      if (seen.insert(key).second) sources.push_back(api::render_sm90_fp8_gemm(c));
    }
  }
  std::printf("%zu distinct grouped kernels\n", sources.size());
  testing::compile_all_clean(sources);
}

TEST(GroupedGemmKernels, EverySchedulerCompilesWithNvrtc) {
  // Each grouped scheduler with each pairing it allows: group ids alone and with an A-sharing pair, row ranges with
  // both pairs and the 256-row tile, K groups with a B-sharing pair (and DeepGEMM's 128x152 one, whose first CTA loads
  // the whole B tile); row-major and MN-major A scales.
  std::vector<jit::KernelSource> sources;
  auto add = [&](device::Sm90Fp8GemmConfig c) {
    c.num_stages = heuristics::max_stages(c);
    ASSERT_TRUE(device::is_valid(c)) << device::config_violation(c);
    sources.push_back(api::render_sm90_fp8_gemm(c));
  };
  for (int sfa_k_major : {0, 1}) {
    for (auto [grouping, block_m, cluster_m, cluster_n] :
         {std::tuple{device::kGroupingMIds, 128, 1, 1}, {device::kGroupingMIds, 64, 1, 2}, {device::kGroupingMIds, 128, 2, 1},
          {device::kGroupingMRanges, 128, 2, 1}, {device::kGroupingMRanges, 256, 1, 2},
          {device::kGroupingMRanges, 64, 1, 1}}) {
      // 256 rows of row-major sfa staged beside the row-range scheduler do not fit the producer's registers.
      if (grouping == device::kGroupingMRanges && block_m == 256 && sfa_k_major == 1) continue;
      device::Sm90Fp8GemmConfig c;
      c.grouping = grouping;
      c.block_m = block_m;
      c.block_n = 128;
      c.cluster_m = cluster_m;
      c.cluster_n = cluster_n;
      c.sfa_k_major = sfa_k_major;
      c.sfb_regs = block_m == 128 ? 1 : 0;
      c.promote_overlap = block_m == 64 ? 1 : 0;
      add(c);
    }
  }
  for (auto [block_m, block_n, cluster_m] : {std::tuple{128, 144, 2}, {256, 96, 1}, {64, 128, 1}, {128, 152, 1}, {128, 152, 2}}) {
    device::Sm90Fp8GemmConfig c;
    c.grouping = device::kGroupingK;
    c.recipe = device::kRecipe1D1D;
    c.out_dtype = device::kOutFp32;
    c.accumulate = 1;
    c.sfa_k_major = 0;
    c.sfb_k_major = 0;
    c.block_m = block_m;
    c.block_n = block_n;
    c.cluster_m = cluster_m;
    c.promote_overlap = block_n <= 128 ? 1 : 0;
    add(c);
  }
  testing::compile_all_clean(sources);
}

}  // namespace
}  // namespace hopgemm
