// The BF16 family's heuristics: every problem the ops accept gets a configuration (in every operand layout: an
// MN-major B takes tiles of 64-column multiples, however narrow N is), valid and fitting the problem's layout; the
// MoE problems honour the group alignment.
#include <gtest/gtest.h>

#include <cstdint>
#include <tuple>

#include "heuristics/sm90_bf16_gemm.hpp"

namespace hopgemm {
namespace {

TEST(Bf16Heuristics, EveryShapeAndLayoutGetsAValidConfig) {
  for (int a_k_major : {1, 0}) {
    for (int b_k_major : {1, 0}) {
      for (int out : {device::kOutBf16, device::kOutFp32}) {
        for (int64_t m : {1, 7, 129, 4095, 8192}) {
          for (int64_t n : {8, 24, 136, 7176}) {
            for (int64_t k : {8, 24, 136, 7176}) {
              const heuristics::Bf16GemmProblem p{.m = m, .n = n, .k = k, .a_k_major = a_k_major,
                                                  .b_k_major = b_k_major, .out_dtype = out};
              const auto choice = heuristics::choose_bf16_gemm_config(p);
              ASSERT_GT(choice.num_tiles, 0) << heuristics::describe(p);
              const auto& c = choice.config;
              EXPECT_TRUE(device::is_valid(c)) << heuristics::describe(choice);
              EXPECT_EQ(c.a_k_major, a_k_major);
              EXPECT_EQ(c.b_k_major, b_k_major);
              EXPECT_EQ(c.out_dtype, out);
              EXPECT_TRUE(device::k_splits_fit(k, device::kBf16BlockK, c.k_splits)) << heuristics::describe(choice);
            }
          }
        }
      }
    }
  }
}

TEST(Bf16Heuristics, GroupedTilesRespectTheLayout) {
  for (int64_t rows : {1, 20, 192, 4096}) {
    const auto ids = heuristics::choose_bf16_gemm_config(
        heuristics::make_bf16_m_grouped_problem(device::kGroupingMIds, rows, 4096, 7168, 8, true, 128, 132, 100));
    ASSERT_GT(ids.num_tiles, 0);
    EXPECT_EQ(128 % ids.config.block_m, 0) << heuristics::describe(ids);
    EXPECT_EQ(ids.config.k_splits, 1);
    const auto masked = heuristics::choose_bf16_gemm_config(
        heuristics::make_bf16_m_grouped_problem(device::kGroupingMRanges, rows, 4096, 7168, 32, true, 0, 132, 100));
    ASSERT_GT(masked.num_tiles, 0);
    EXPECT_EQ(masked.config.grouping, device::kGroupingMRanges);
    EXPECT_EQ(masked.config.k_splits, 1);
  }
}

TEST(Bf16Heuristics, GroupedMnMajorBTakesWholeBoxesOfColumns) {
  // An MN-major B (the contiguous layouts' nn form) loads 64-column boxes: every pick's tile (a B-sharing pair's half of
  // it) is whole boxes, and keeps B's major.
  for (int grouping : {device::kGroupingMIds, device::kGroupingMRanges}) {
    for (int64_t rows : {1, 20, 192, 4096}) {
      for (int64_t n : {8, 24, 136, 4096, 7168}) {
        const auto choice = heuristics::choose_bf16_gemm_config(
            heuristics::make_bf16_m_grouped_problem(grouping, rows, n, 7168, 8, false, 128, 132, 100));
        ASSERT_GT(choice.num_tiles, 0) << n;
        const auto& c = choice.config;
        EXPECT_EQ(c.b_k_major, 0) << heuristics::describe(choice);
        EXPECT_EQ(c.grouping, grouping) << heuristics::describe(choice);
        EXPECT_EQ(c.block_n % (c.cluster_m == 2 ? 128 : 64), 0) << heuristics::describe(choice);
        EXPECT_EQ(c.k_splits, 1);
      }
    }
  }
}

// einsum bmk,bnk->mn (a few tiles over every batch's K): within 5% of the model's best the candidate whose units read
// the fewest A and B bytes goes first. Measured picks (H200, call Q of session 5): 4096x128x384x128 took 64x48 x 8
// splits (240 us) where 128x128 x 24 ran 184 us; the small sums keep the model's front.
TEST(Bf16Heuristics, BatchSumTiesGoToTheLeastIntakePerUnit) {
  auto summed = [](int64_t s, int64_t m, int64_t n, int64_t k) {
    return heuristics::make_bf16_batched_problem(device::kGroupingBatchSum, m, n, k, s, true, device::kOutFp32, true,
                                                 132, 100);
  };
  const auto wide = heuristics::choose_bf16_gemm_config(summed(4096, 128, 384, 128)).config;
  EXPECT_EQ(wide.block_m, 128);
  EXPECT_EQ(wide.block_n, 128);
  EXPECT_EQ(wide.k_splits, 24);
  EXPECT_EQ(heuristics::choose_bf16_gemm_config(summed(4096, 256, 256, 256)).config.k_splits, 32);
  for (const auto& [s, m, n, k] : {std::tuple{129, 256, 256, 256}, {129, 128, 384, 128}, {1024, 512, 512, 128}}) {
    const auto p = summed(s, m, n, k);
    SCOPED_TRACE(heuristics::describe(p));
    const auto ranked = heuristics::rank_bf16_gemm_configs(p, SIZE_MAX);
    ASSERT_FALSE(ranked.empty());
    for (const auto& other : ranked) EXPECT_GE(other.predicted_us, ranked.front().predicted_us * 0.995);
  }
}

}  // namespace
}  // namespace hopgemm
