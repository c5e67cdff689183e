// Beyond the suites: the config the heuristics pick for any untuned problem must compile without spills too (a
// spilling pick runs, slowly). A grid of problems of both recipes and every scale layout; each distinct pick that is not
// already a suite kernel (those are test_precompile_cli.cpp's) is compiled on every core through the disk cache
// (about 500 kernels: ten minutes on two cores, so under the `slow` ctest label that CI leaves out and the GPU routine
// runs). Found fused split-K tiles past the register bound (is_valid's fused_ok).
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "api/gemm_sources.hpp"
#include "compile/compiled_kernel_checks.hpp"
#include "heuristics/sm90_fp8_gemm.hpp"

namespace hopgemm {
namespace {

TEST(ShapeGridCompile, PicksCompileWithoutSpills) {
  std::set<std::string> seen;
  for (const auto& s : testing::suite_gemm_sources()) seen.insert(s.code);
  std::vector<jit::KernelSource> sources;
  for (int recipe : {device::kRecipe1D2D, device::kRecipe1D1D}) {
    for (int sfa_k_major : {0, 1}) {
      for (int sfb_k_major : {0, 1}) {
        if (recipe == device::kRecipe1D2D && sfb_k_major == 0) continue;  // 1D2D reads either layout alike
        for (int64_t m : {1, 16, 64, 96, 128, 200, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 8192, 16384}) {
          for (int64_t n : {256, 576, 1024, 1536, 2112, 3072, 4096, 7168, 12288, 24576}) {
            for (int64_t k : {256, 512, 1536, 2048, 4096, 7168, 16384}) {
              // Row-major scales at an address TMA cannot load from: the per-stage copies (the suites' kernels
              // cover the chunked loads).
              const bool is_1d1d = recipe == device::kRecipe1D1D;
              const heuristics::Fp8GemmProblem p = heuristics::make_fp8_gemm_problem(
                  {.m = m, .n = n, .k = k, .recipe = recipe, .out_dtype = is_1d1d ? device::kOutFp32 : device::kOutBf16,
                   .accumulate = is_1d1d ? 1 : 0, .sfa = {.k_major = sfa_k_major, .base = 4},
                   .sfb = {.k_major = sfb_k_major, .base = 4}, .num_sms = 132});
              const auto choice = heuristics::choose_fp8_gemm_config(p);
              ASSERT_GT(choice.num_tiles, 0) << heuristics::describe(p);
              auto s = api::render_sm90_fp8_gemm(choice.config);
              if (seen.insert(s.code).second) sources.push_back(std::move(s));
            }
          }
        }
      }
    }
  }
  const size_t compiled = testing::compile_all_clean(sources);
  std::printf("%zu distinct picks beyond the suites' kernels, %zu compiled now\n", sources.size(), compiled);
}

}  // namespace
}  // namespace hopgemm
