// The BF16 GEMM family compiles for sm_90a under NVRTC without spills: every tile height at its widest tile (the most
// registers a config of that height can hold), in every operand layout, BF16 and FP32 (+ accumulate) outputs, both CTA
// pairs and split-K; and every config the heuristics can build lies inside that envelope (so none of them spills
// either: a narrower tile of the same height, layout and output holds fewer sums). The suites' picks are compiled by
// test_precompile_cli.cpp (the sm90_bf16_gemm precompile entry).
#include <gtest/gtest.h>

#include <map>
#include <tuple>
#include <vector>

#include "api/bf16_gemm_internal.hpp"
#include "compile/compiled_kernel_checks.hpp"
#include "heuristics/sm90_bf16_gemm.hpp"

namespace hopgemm {
namespace {

using device::Sm90Bf16GemmConfig;

struct Layout {
  int a_k_major, b_k_major, out_dtype, accumulate;
};
std::vector<Layout> every_layout() {
  std::vector<Layout> out;
  for (int a : {1, 0})
    for (int b : {1, 0})
      for (auto [dtype, acc] : {std::pair{device::kOutBf16, 0}, {device::kOutBf16, 1}, {device::kOutFp32, 0},
                                {device::kOutFp32, 1}})
        out.push_back({a, b, dtype, acc});
  return out;
}

// The widest block_n the builder gives a tile height in a layout (its register high-water mark).
int widest_block_n(int block_m, const Layout& l, int cluster_m, int cluster_n, int k_splits) {
  heuristics::Bf16GemmProblem p{.m = 8192, .n = 8192, .k = 8192, .a_k_major = l.a_k_major, .b_k_major = l.b_k_major,
                                .out_dtype = l.out_dtype, .accumulate = l.accumulate};
  for (int block_n = 256; block_n >= 8; block_n -= 8) {
    if (heuristics::build_bf16_gemm_config(p, {block_m, block_n, cluster_m, cluster_n, k_splits})) return block_n;
  }
  return 0;
}

TEST(Bf16GemmKernels, WidestTilesCompileWithNvrtc) {
  std::vector<jit::KernelSource> sources;
  for (const Layout& l : every_layout()) {
    heuristics::Bf16GemmProblem p{.m = 8192, .n = 8192, .k = 8192, .a_k_major = l.a_k_major,
                                  .b_k_major = l.b_k_major, .out_dtype = l.out_dtype, .accumulate = l.accumulate};
    for (int block_m : {64, 128, 256}) {
      // Unpaired, split 3 and 8 ways (more than 4 splits reserve more registers beside the fused reduction), and both
      // CTA pairs (whose multicast halves differ per operand layout).
      for (auto [cm, cn, splits] : {std::tuple{1, 1, 1}, {1, 1, 3}, {1, 1, 8}, {2, 1, 1}, {1, 2, 1}}) {
        const int block_n = widest_block_n(block_m, l, cm, cn, splits);
        if (block_n == 0) continue;
        const auto c = heuristics::build_bf16_gemm_config(p, {block_m, block_n, cm, cn, splits});
        ASSERT_TRUE(c && device::is_valid(*c));
        sources.push_back(api::render_sm90_bf16_gemm(*c));
      }
    }
  }
  EXPECT_GE(sources.size(), 150u);
  testing::compile_all_clean(sources);
}

TEST(Bf16GemmKernels, PairSharingWholeBTileCompilesWithNvrtc) {
  // A B-sharing pair whose half of B is not whole 8-row swizzle atoms (128x152 on M): the first CTA loads and
  // multicasts the whole K-major B tile; A K-major and MN-major, BF16 and FP32 += D. An MN-major B keeps its 64-row
  // boxes: a pair's half of it must be whole boxes, so 152 columns are refused there.
  std::vector<jit::KernelSource> sources;
  for (const Layout& l : every_layout()) {
    heuristics::Bf16GemmProblem p{.m = 8192, .n = 8192, .k = 8192, .a_k_major = l.a_k_major,
                                  .b_k_major = l.b_k_major, .out_dtype = l.out_dtype, .accumulate = l.accumulate};
    const auto c = heuristics::build_bf16_gemm_config(p, {128, 152, 2, 1, 1});
    if (l.b_k_major == 0) {
      EXPECT_FALSE(c.has_value());
      continue;
    }
    ASSERT_TRUE(c && device::is_valid(*c) && device::pair_loads_whole_b(*c));
    sources.push_back(api::render_sm90_bf16_gemm(*c));
  }
  // The group-ids scheduler, where a pair split between two groups loads a whole B tile in each CTA (no multicast).
  const auto ids = heuristics::build_bf16_gemm_config(
      heuristics::make_bf16_m_grouped_problem(device::kGroupingMIds, 4096, 8192, 8192, 8, true, 128, 132, 100),
      {128, 152, 2, 1, 1});
  ASSERT_TRUE(ids && device::pair_loads_whole_b(*ids));
  sources.push_back(api::render_sm90_bf16_gemm(*ids));
  EXPECT_EQ(sources.size(), 9u);
  testing::compile_all_clean(sources);
}

TEST(Bf16GemmKernels, MGroupedMnMajorBCompilesWithNvrtc) {
  // The M-grouped schedulers with an MN-major B (a 3-D map of groups: kBGroupsBatched), each pairing they allow: group
  // ids alone, with an A-sharing pair and with a B-sharing pair (whose tiles may take two groups' B: each CTA loads its
  // own); row ranges with both pairs and the 256-row tile; the widest tiles of each.
  std::vector<jit::KernelSource> sources;
  for (auto [grouping, block_m, block_n, cm, cn] :
       {std::tuple{device::kGroupingMIds, 128, 256, 1, 1}, {device::kGroupingMIds, 64, 256, 1, 2},
        {device::kGroupingMIds, 128, 256, 2, 1}, {device::kGroupingMIds, 128, 128, 2, 1},
        {device::kGroupingMRanges, 128, 256, 2, 1}, {device::kGroupingMRanges, 256, 128, 1, 2},
        {device::kGroupingMRanges, 64, 64, 1, 1}}) {
    const auto c = heuristics::build_bf16_gemm_config(
        heuristics::make_bf16_m_grouped_problem(grouping, 4096, 8192, 8192, 8, /*b_k_major=*/false, 128, 132, 100),
        {block_m, block_n, cm, cn, 1});
    ASSERT_TRUE(c && device::is_valid(*c)) << block_m << "x" << block_n;
    EXPECT_EQ(c->b_k_major, 0);
    sources.push_back(api::render_sm90_bf16_gemm(*c));
  }
  testing::compile_all_clean(sources);
}

TEST(Bf16GemmKernels, EveryBuildableConfigIsInsideTheCompiledEnvelope) {
  size_t built = 0;
  for (const Layout& l : every_layout()) {
    heuristics::Bf16GemmProblem p{.m = 8192, .n = 8192, .k = 8192, .a_k_major = l.a_k_major,
                                  .b_k_major = l.b_k_major, .out_dtype = l.out_dtype, .accumulate = l.accumulate};
    for (int block_m : {64, 128, 192, 256}) {
      for (int block_n = 8; block_n <= 256; block_n += 8) {
        for (auto [cm, cn] : {std::pair{1, 1}, {2, 1}, {1, 2}}) {
          for (int splits : {1, 2, 3, 4, 6, 8}) {
            const auto c = heuristics::build_bf16_gemm_config(p, {block_m, block_n, cm, cn, splits});
            if (!c) continue;
            ++built;
            EXPECT_TRUE(device::is_valid(*c));
            // Split-K keeps the fused reduction's state live: its envelope is its own, compiled at 3 splits (up to 4
            // splits the same register reserve) and 8 (more than 4: a larger reserve, the same unroll bound).
            EXPECT_LE(block_n, widest_block_n(block_m, l, cm, cn, splits > 4 ? 8 : splits > 1 ? 3 : 1))
                << api::render_sm90_bf16_gemm(*c).code;
          }
        }
      }
    }
  }
  EXPECT_GT(built, 1000u);
}

}  // namespace
}  // namespace hopgemm
