// einsum's and fp8_einsum's kernels: the BF16 and FP8 GEMM families with the batched schedulers (scheduler/sm90_batched_scheduler.cuh), as the
// heuristics pick them for DeepGEMM's tests/test_einsum.py shapes: every pick is a valid config of its grouping and
// compiles for sm_90a under NVRTC without spills.
#include <gtest/gtest.h>

#include <set>
#include <tuple>
#include <vector>

#include "api/bf16_gemm_internal.hpp"
#include "compile/compiled_kernel_checks.hpp"
#include "api/gemm_sources.hpp"
#include "heuristics/sm90_bf16_gemm.hpp"
#include "heuristics/sm90_fp8_gemm.hpp"

namespace hopgemm {
namespace {

struct EinsumCase {
  int grouping;
  int64_t m, n, k, batches;
  bool b_k_major;
  int out_dtype;
  bool accumulate;
};

// DeepGEMM's test_einsum.py: bmk,bnk->mn with s in (129, 4096, 8192) and (m, n, k) in ((128, 384, 128),
// (256, 256, 256), (384, 128, 384)), FP32 D += or BF16 D; bhr,hdr->bhd and bhd,hdr->bhr with (h, r, d) in
// ((128, 512, 128), (8, 4096, 1024)) and b in (4, 32, 128, 4096, 8192).
std::vector<EinsumCase> deepgemm_cases() {
  std::vector<EinsumCase> cases;
  for (int64_t s : {129, 4096, 8192}) {
    for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{128, 384, 128}, {256, 256, 256}, {384, 128, 384}}) {
      cases.push_back({device::kGroupingBatchSum, m, n, k, s, true, device::kOutFp32, true});
      cases.push_back({device::kGroupingBatchSum, m, n, k, s, true, device::kOutBf16, false});
    }
  }
  for (auto [h, r, d] : {std::tuple<int64_t, int64_t, int64_t>{128, 512, 128}, {8, 4096, 1024}}) {
    for (int64_t b : {4, 32, 128, 4096, 8192}) {
      cases.push_back({device::kGroupingBatched, b, d, r, h, true, device::kOutBf16, false});   // bhr,hdr->bhd
      cases.push_back({device::kGroupingBatched, b, r, d, h, false, device::kOutBf16, false});  // bhd,hdr->bhr
    }
  }
  return cases;
}

TEST(EinsumKernels, DeepGemmShapesCompileWithNvrtc) {
  std::set<std::vector<int>> seen;
  std::vector<jit::KernelSource> sources;
  for (const auto& e : deepgemm_cases()) {
    const auto p = heuristics::make_bf16_batched_problem(e.grouping, e.m, e.n, e.k, e.batches, e.b_k_major,
                                                         e.out_dtype, e.accumulate, 132, 100);
    const auto choice = heuristics::choose_bf16_gemm_config(p);
    ASSERT_GT(choice.num_tiles, 0) << heuristics::describe(p);
    const auto& c = choice.config;
    ASSERT_EQ(device::config_violation(c), nullptr) << heuristics::describe(choice);
    EXPECT_EQ(c.grouping, e.grouping);
    if (e.grouping == device::kGroupingBatched) EXPECT_EQ(c.k_splits, 1);
    std::vector<int> key;
#define HOPGEMM_KEY_FIELD(name, default_value, tunable) key.push_back(c.name);
    HOPGEMM_SM90_BF16_GEMM_FIELDS(HOPGEMM_KEY_FIELD)
#undef HOPGEMM_KEY_FIELD
    // The batch sum's kernel under DeepGEMM's name (profiler filters look for it), the batched ones as the GEMM's.
    if (seen.insert(key).second) {
      sources.push_back(e.grouping == device::kGroupingBatchSum
                            ? api::render_bf16_config(api::kSm90Bf16BatchSumFamily, c)
                            : api::render_sm90_bf16_gemm(c));
    }
  }
  std::printf("%zu distinct einsum kernels\n", sources.size());
  testing::compile_all_clean(sources);
}

TEST(EinsumKernels, Fp8DeepGemmShapesCompileWithNvrtc) {
  // DeepGEMM's test_fp8_bhr_hdr_bhd: (h, r, d) = (8, 4096, 1024), b in (4, 32, 128, 4096, 8192); BF16 and FP32 d.
  std::set<std::vector<int>> seen;
  std::vector<jit::KernelSource> sources;
  for (int64_t b : {4, 32, 128, 4096, 8192}) {
    for (int out : {device::kOutBf16, device::kOutFp32}) {
      auto p = heuristics::make_m_grouped_problem(device::kGroupingBatched, b, 1024, 4096, 8, 1, 0, 132, 100);
      p.out_dtype = out;
      const auto choice = heuristics::choose_fp8_gemm_config(p);
      ASSERT_GT(choice.num_tiles, 0) << heuristics::describe(p);
      const auto& c = choice.config;
      ASSERT_EQ(device::config_violation(c), nullptr) << heuristics::describe(choice);
      EXPECT_EQ(c.grouping, device::kGroupingBatched);
      EXPECT_EQ(c.k_splits, 1);
      std::vector<int> key;
#define HOPGEMM_KEY_FIELD(name, default_value, tunable) key.push_back(c.name);
      HOPGEMM_SM90_FP8_GEMM_FIELDS(HOPGEMM_KEY_FIELD)
#undef HOPGEMM_KEY_FIELD
      if (seen.insert(key).second) sources.push_back(api::render_sm90_fp8_gemm(c));
    }
  }
  std::printf("%zu distinct fp8_einsum kernels\n", sources.size());
  testing::compile_all_clean(sources);
  device::Sm90Fp8GemmConfig c;  // batched FP8: 1D2D, no C, no scale chunks
  c.grouping = device::kGroupingBatched;
  c.sfa_k_major = 1;
  EXPECT_EQ(device::config_violation(c), nullptr);
  c.sf_chunks = 1;
  EXPECT_NE(device::config_violation(c), nullptr);
}

TEST(EinsumKernels, ConfigRules) {
  device::Sm90Bf16GemmConfig c;
  c.grouping = device::kGroupingBatched;
  EXPECT_EQ(device::config_violation(c), nullptr);
  c.k_splits = 2;  // a batched GEMM takes no split-K ...
  EXPECT_NE(device::config_violation(c), nullptr);
  c.k_splits = 1;
  c.accumulate = 1;  // ... nor a C
  c.out_dtype = device::kOutFp32;
  EXPECT_NE(device::config_violation(c), nullptr);
  c.grouping = device::kGroupingBatchSum;  // summed over batches: split-K over every batch's K, C accumulated
  c.k_splits = 4;
  EXPECT_EQ(device::config_violation(c), nullptr);
}

}  // namespace
}  // namespace hopgemm
