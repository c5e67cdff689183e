// The FP8 GEMM heuristics: every suite problem gets a valid config that fits shared memory, choices are
// deterministic, and they follow the shape of the problem (small M -> 64-row tiles, large -> big tiles).
#include <gtest/gtest.h>

#include <numeric>
#include <tuple>

#include "api/suites.hpp"
#include "heuristics/sm90_fp8_gemm.hpp"

namespace hopgemm {
namespace {

using heuristics::Fp8GemmProblem;

// A forward GEMM, or a weight gradient (1D1D, FP32 D += A B^T), with row-major scales as quantised (contiguous rows).
heuristics::Fp8GemmCall gemm(int64_t m, int64_t n, int64_t k, bool wgrad = false) {
  heuristics::Fp8GemmCall call{.m = m, .n = n, .k = k};
  if (wgrad) {
    call.recipe = device::kRecipe1D1D;
    call.out_dtype = device::kOutFp32;
    call.accumulate = 1;
  }
  return call;
}
Fp8GemmProblem problem(const heuristics::Fp8GemmCall& call) { return heuristics::make_fp8_gemm_problem(call); }
Fp8GemmProblem problem(int64_t m, int64_t n, int64_t k, bool wgrad = false) { return problem(gemm(m, n, k, wgrad)); }

TEST(Heuristics, EverySuiteProblemGetsAValidConfig) {
  for (int num_sms : {132, 114, 78, 16}) {
    for (const auto& g : api::suite_gemms("deepseek-v3")) {
      heuristics::Fp8GemmCall call = gemm(g.m, g.n, g.k, g.role == api::GemmRole::kWgrad);
      call.num_sms = num_sms;
      const Fp8GemmProblem p = problem(call), with_sms = p;
      const auto choice = heuristics::choose_fp8_gemm_config(with_sms);
      SCOPED_TRACE(heuristics::describe(with_sms));
      ASSERT_GT(choice.num_tiles, 0);
      EXPECT_TRUE(device::is_valid(choice.config));
      EXPECT_LE(device::smem_bytes(choice.config), device::kSm90SmemCapacity);
      EXPECT_LE(choice.launch.num_sms, num_sms);
      EXPECT_EQ(choice.launch.num_sms % device::cluster_size(choice.config), 0);
      EXPECT_GE(choice.config.num_stages, 3);
      EXPECT_EQ(choice.config.recipe, p.recipe);
      EXPECT_EQ(choice.config.out_dtype, p.out_dtype);
      if (p.recipe == device::kRecipe1D2D) {  // a tile may touch at most two 128-column B-scale blocks
        EXPECT_LE(choice.config.block_n - std::gcd(choice.config.block_n, 128), 128);
      }
    }
  }
}

TEST(Heuristics, Deterministic) {
  const auto a = heuristics::choose_fp8_gemm_config(problem(4096, 7168, 16384));
  const auto b = heuristics::choose_fp8_gemm_config(problem(4096, 7168, 16384));
  EXPECT_EQ(heuristics::describe(a), heuristics::describe(b));
}

TEST(Heuristics, FollowsTheProblemShape) {
  // Decode-sized M: 64-row tiles, no 128-row padding waste.
  for (int64_t m : {1, 16, 64}) EXPECT_EQ(heuristics::choose_fp8_gemm_config(problem(m, 7168, 2048)).config.block_m, 64);
  // Large problems: the biggest tiles the register file allows, a full grid.
  const auto big = heuristics::choose_fp8_gemm_config(problem(8192, 8192, 8192));
  EXPECT_GE(big.config.block_m * big.config.block_n, 128 * 128);
  EXPECT_EQ(big.launch.num_sms, 132);
  // No cluster when there are not enough tiles to pair in every wave.
  EXPECT_EQ(device::cluster_size(heuristics::choose_fp8_gemm_config(problem(128, 2112, 7168)).config), 1);
}

TEST(Heuristics, ThreeWarpgroupsWhereTheirTilesFillTheWaves) {
  // 192-row tiles (three math warpgroups) where their count fills the waves better than 128- and 256-row ones
  // (4096x1536x7168: 264 tiles = 2 full waves; measured 69.6 vs 83.5 us for the pick without them), not where
  // 256 rows do (4096x7168x16384: 7 waves of 256x128 tiles against 9.3 of 192x128), and never for 1D1D.
  const auto fill = heuristics::choose_fp8_gemm_config(problem(4096, 1536, 7168));
  EXPECT_EQ(fill.config.block_m, 192) << heuristics::describe(fill);
  EXPECT_EQ(fill.config.block_n, 128);
  EXPECT_NE(heuristics::choose_fp8_gemm_config(problem(4096, 7168, 16384)).config.block_m, 192);
  const Fp8GemmProblem wgrad = problem(4096, 7168, 4096, /*wgrad=*/true);
  for (const auto& choice : heuristics::rank_fp8_gemm_configs(wgrad, SIZE_MAX)) EXPECT_NE(choice.config.block_m, 192);
}

TEST(Heuristics, ThreeWarpgroupsWinTheirTiesWithTwo) {
  // 192x128 and 128x192 tie in the model; measured, 192x128 won (fresh shapes: 22 of the 24 picks it moved faster).
  for (const auto& [m, n, k] : {std::tuple{768, 7168, 4096}, {6144, 7168, 8192}, {384, 32768, 8192}, {3072, 6144, 16384}}) {
    const auto p = problem(m, n, k);
    const auto ranked = heuristics::rank_fp8_gemm_configs(p, 4);
    ASSERT_FALSE(ranked.empty());
    EXPECT_EQ(ranked.front().config.block_m, 192) << heuristics::describe(ranked.front());
    EXPECT_EQ(ranked.front().config.block_n, 128);
    for (const auto& other : ranked) EXPECT_GE(other.predicted_us, ranked.front().predicted_us * 0.995);
  }
}

TEST(Heuristics, Tiles128x128StageDInTheLastStageWithoutTurnsFromK2048) {
  // Measured: 0.956-0.987 of the time of the turns with 5 stages at K = 2048-12288. Below K = 2048 the staging tile
  // stays (D in stage measured no better at K = 512-1536).
  for (const auto& [m, n, k] : {std::tuple{1024, 2048, 5120}, {512, 3584, 2048}, {2048, 1024, 12288}}) {
    const auto ranked = heuristics::rank_fp8_gemm_configs(problem(m, n, k), SIZE_MAX);
    bool seen = false;
    for (const auto& choice : ranked) {
      const auto& c = choice.config;
      if (c.block_m != 128 || c.block_n != 128 || c.k_splits != 1) continue;
      seen = true;
      SCOPED_TRACE(heuristics::describe(choice));
      EXPECT_EQ(c.d_in_stage, 1);
      EXPECT_EQ(c.num_stages, 6);
    }
    EXPECT_TRUE(seen) << m << "x" << n << "x" << k;
  }
  for (const auto& choice : heuristics::rank_fp8_gemm_configs(problem(4096, 4096, 1536), SIZE_MAX)) {
    const auto& c = choice.config;
    if (c.block_m == 128 && c.block_n == 128 && c.k_splits == 1) EXPECT_EQ(c.d_in_stage, 0) << heuristics::describe(choice);
  }
}

TEST(Heuristics, ClustersDoNotPairAnOddTileCount) {
  // Three 256- or 128-row tile rows: a cluster along M would run a phantom fourth row, which takes SMs like a real
  // one (768x32768x8192: 310.5 us without, 482 with; 384x16384x16384: 186.4 vs 290).
  for (const auto& p : {problem(768, 32768, 8192), problem(384, 16384, 16384)}) {
    const auto c = heuristics::choose_fp8_gemm_config(p);
    const int64_t tiles_m = (p.m + c.config.block_m - 1) / c.config.block_m;
    EXPECT_TRUE(c.config.cluster_m == 1 || tiles_m % 2 == 0) << heuristics::describe(c);
  }
}

TEST(Heuristics, SplitKOnlyWhereTilesAreFew) {
  // Decode shapes with a few dozen tiles and a long K: split-K fills the SMs.
  for (int64_t m : {1, 64}) {
    const auto c = heuristics::choose_fp8_gemm_config(problem(m, 2112, 7168));
    EXPECT_GT(c.config.k_splits, 1) << heuristics::describe(c);
    EXPECT_GE(c.num_tiles * c.config.k_splits, 99) << heuristics::describe(c);  // >= 3/4 of 132 SMs
  }
  // Many tiles, or too little K to cut: no split.
  EXPECT_EQ(heuristics::choose_fp8_gemm_config(problem(4096, 7168, 16384)).config.k_splits, 1);
  EXPECT_EQ(heuristics::choose_fp8_gemm_config(problem(8192, 8192, 8192)).config.k_splits, 1);
  EXPECT_EQ(heuristics::choose_fp8_gemm_config(problem(1, 7168, 256)).config.k_splits, 1);
  // Wherever it is chosen: the tiles leave SMs idle, every split is non-empty and holds >= 2 k-blocks,
  // and the FP32 staging tile still leaves a 3-stage pipeline.
  for (int num_sms : {132, 78}) {
    for (const auto& g : api::suite_gemms("deepseek-v3")) {
      for (int sfa_k_major : {0, 1}) {
        heuristics::Fp8GemmCall call = gemm(g.m, g.n, g.k, g.role == api::GemmRole::kWgrad);
        call.num_sms = num_sms;
        call.sfa.k_major = sfa_k_major;
        const Fp8GemmProblem p = problem(call);
        const auto c = heuristics::choose_fp8_gemm_config(p);
        SCOPED_TRACE(heuristics::describe(p) + " -> " + heuristics::describe(c));
        EXPECT_EQ(c.config.sfa_k_major, sfa_k_major);
        if (c.config.k_splits == 1) continue;
        EXPECT_LE(c.num_tiles, 2 * num_sms);
        EXPECT_TRUE(device::k_splits_fit(p.k, c.config.k_splits));
        EXPECT_GE((p.k + 127) / 128, 2 * c.config.k_splits);
        EXPECT_GE(c.config.num_stages, 3);
        EXPECT_EQ(device::cluster_size(c.config), 1);
      }
    }
  }
}

TEST(Heuristics, SplitKCostIncludesTheReduction) {
  // The same tile split further is not free: with enough tiles for every SM, splitting only adds the
  // partials' traffic and the reduction launch, so the model keeps k_splits = 1 among equal tiles.
  for (const auto& c : heuristics::rank_fp8_gemm_configs(problem(2048, 7168, 7168), SIZE_MAX)) {
    EXPECT_EQ(c.config.k_splits, 1) << heuristics::describe(c);
  }
  const auto ranked = heuristics::rank_fp8_gemm_configs(problem(1, 2112, 7168), SIZE_MAX);
  for (const auto& c : ranked) {
    if (c.config.k_splits == 1) continue;
    for (const auto& base : ranked) {
      if (base.config.k_splits == 1 && base.config.block_m == c.config.block_m &&
          base.config.block_n == c.config.block_n) {
        EXPECT_GE(c.predicted_us, 2.5) << heuristics::describe(c);  // at least a second launch
      }
    }
  }
}

TEST(Heuristics, MaxStagesFillsSharedMemory) {
  device::Sm90Fp8GemmConfig c;
  c.block_m = 128;
  c.block_n = 128;
  const int stages = heuristics::max_stages(c);
  c.num_stages = stages;
  EXPECT_LE(device::smem_bytes(c), device::kSm90SmemCapacity);
  c.num_stages = stages + 1;
  EXPECT_TRUE(stages == 16 || device::smem_bytes(c) > device::kSm90SmemCapacity);
}

// HOPGEMM_PRINT_CONFIGS and the bench print the schedule fields that differ from the defaults, as --config spells
// them, so a printed pick can be re-timed as it is.
TEST(Heuristics, DescribeNamesTheScheduleFields) {
  heuristics::Fp8GemmChoice choice;
  choice.config.block_m = 256;
  choice.config.block_n = 128;
  const std::string plain = heuristics::describe(choice);
  EXPECT_EQ(plain.find("d_in_stage"), std::string::npos) << plain;
  choice.config.d_in_stage = 1;
  choice.config.d_passes = 2;
  choice.config.sfb_regs = 1;
  const std::string text = heuristics::describe(choice);
  EXPECT_NE(text.find(", d_in_stage=1, d_passes=2, sfb_regs=1)"), std::string::npos) << text;
}

// Fused split-K is offered on every tile whose accumulators fit: the last split sums the partials in place in its
// registers (the compile tests check the largest tiles for spills), never with a cluster.
TEST(Heuristics, FusedSplitKOnEveryTileWithoutACluster) {
  auto fused = [](int block_m, int block_n, int sfb_regs = 0, int cluster_n = 1) {
    device::Sm90Fp8GemmConfig c;
    c.block_m = block_m;
    c.block_n = block_n;
    c.sfb_regs = sfb_regs;
    c.cluster_n = cluster_n;
    c.k_splits = 2;
    c.num_stages = heuristics::max_stages(c);
    return device::is_valid(c);
  };
  for (int sfb_regs : {0, 1}) {
    EXPECT_TRUE(fused(128, 160, sfb_regs));
    EXPECT_TRUE(fused(256, 96, sfb_regs));
    EXPECT_TRUE(fused(64, 192, sfb_regs));
    EXPECT_TRUE(fused(128, 192, sfb_regs));
    EXPECT_TRUE(fused(256, 128, sfb_regs));
  }
  EXPECT_FALSE(fused(256, 136));  // the accumulators alone do not fit
  EXPECT_FALSE(fused(128, 128, 0, 2));
}


// FP32 D += A B^T with one unit per tile reduces into D from registers, so its candidates carry no staging tile
// and get the stages it would have taken; only where D staged in a pipeline stage reaches the same depth (256x128
// at K >= 8192) does that form stay (measured faster there at equal depth). A plain FP32 D and split-K keep the
// staging tile. (Row-major scales whose rows TMA cannot load: no scale chunks.)
TEST(Heuristics, AccumulatingTilesReduceFromRegisters) {
  for (int64_t k : {4096, 8192}) {
    heuristics::Fp8GemmCall call = gemm(7168, 2112, k, /*wgrad=*/true);
    call.sfa.base = call.sfb.base = 4;
    const Fp8GemmProblem p = problem(call);
    for (const auto& choice : heuristics::rank_fp8_gemm_configs(p, SIZE_MAX)) {
      const auto& c = choice.config;
      SCOPED_TRACE(heuristics::describe(choice));
      if (c.k_splits > 1 || c.d_in_stage == 1) {
        EXPECT_FALSE(device::reduces_from_registers(c));
        EXPECT_TRUE(c.d_in_stage == 0 || (c.block_m == 256 && k >= 8192));
        continue;
      }
      EXPECT_TRUE(device::reduces_from_registers(c));
      EXPECT_EQ(device::smem_layout(c).d, 0);
      EXPECT_EQ(c.num_stages, heuristics::max_stages(c));
      if (c.block_m == 128 && c.block_n >= 144 && c.block_n <= 160) EXPECT_EQ(c.num_stages, 6);
    }
  }
  heuristics::Fp8GemmCall plain = gemm(7168, 2112, 4096, /*wgrad=*/true);
  plain.accumulate = 0;
  for (const auto& choice : heuristics::rank_fp8_gemm_configs(problem(plain), 8)) {
    EXPECT_FALSE(device::reduces_from_registers(choice.config));
    if (choice.config.d_in_stage == 0) EXPECT_GT(device::smem_layout(choice.config).d, 0);
  }
}

// Row-major per-row scales with 16-byte rows come by TMA in chunks (sf_chunks) for 1D1D: every candidate takes them
// so, keeps 6 stages at 128x160 (the chunk ring fits beside them) and may use 256-row tiles with both layouts
// row-major; unaligned rows, MN-major scales and 1D2D (whose row-major A scales the producer warps stage faster) do not.
TEST(Heuristics, RowMajorScaleChunks) {
  static_assert(device::sf_rows_tma_ok(32, 32, 0));
  static_assert(device::sf_rows_tma_ok(5, 8, 16));    // padded rows
  static_assert(!device::sf_rows_tma_ok(5, 5, 0));    // 20-byte rows
  static_assert(!device::sf_rows_tma_ok(32, 32, 4));  // base not 16-byte aligned
  static_assert(!device::sf_rows_tma_ok(3, 4, 0));    // narrower than one chunk
  const Fp8GemmProblem wgrad = problem(7168, 2112, 4096, /*wgrad=*/true);
  ASSERT_EQ(wgrad.sf_rows_tma, 1);
  bool saw_256_rows = false;
  for (const auto& choice : heuristics::rank_fp8_gemm_configs(wgrad, SIZE_MAX)) {
    const auto& c = choice.config;
    SCOPED_TRACE(heuristics::describe(choice));
    EXPECT_EQ(c.sf_chunks, 1);
    EXPECT_TRUE(device::sfa_chunked(c) && device::sfb_chunked(c));
    EXPECT_EQ(device::smem_layout(c).sfa_stage, 0);
    EXPECT_EQ(device::smem_layout(c).sfb_stage, 0);
    if (c.block_m == 128 && c.block_n == 160 && c.k_splits == 1) EXPECT_EQ(c.num_stages, 6);
    saw_256_rows |= c.block_m == 256;
  }
  EXPECT_TRUE(saw_256_rows);
  heuristics::Fp8GemmCall unaligned_call = gemm(7168, 2112, 4096, /*wgrad=*/true);
  unaligned_call.sfb.row_stride = 33;  // 132-byte rows
  const Fp8GemmProblem unaligned = problem(unaligned_call);
  ASSERT_EQ(unaligned.sf_rows_tma, 0);
  for (const auto& choice : heuristics::rank_fp8_gemm_configs(unaligned, SIZE_MAX)) {
    EXPECT_EQ(choice.config.sf_chunks, 0);
    EXPECT_NE(choice.config.block_m, 256);  // the producer would stage 256 rows of A scales next to B's copies
  }
  const Fp8GemmProblem fwd = problem(4096, 7168, 4096);
  ASSERT_EQ(fwd.sf_rows_tma, 1);
  for (const auto& choice : heuristics::rank_fp8_gemm_configs(fwd, 16)) EXPECT_EQ(choice.config.sf_chunks, 0);
  device::Sm90Fp8GemmConfig forced = heuristics::rank_fp8_gemm_configs(unaligned, 1).front().config;
  forced.sf_chunks = 1;
  forced.sfa_k_major = 0;
  forced.sfb_k_major = 0;  // nothing row-major to chunk
  EXPECT_FALSE(device::is_valid(forced));
  EXPECT_STREQ(device::config_violation(forced), "sf_chunks needs row-major per-row scales");
}

TEST(Heuristics, ConfigViolationNamesTheRule) {
  device::Sm90Fp8GemmConfig c;
  EXPECT_EQ(device::config_violation(c), nullptr);
  c.block_m = 256;
  c.d_in_stage = 1;
  c.d_passes = 2;
  c.num_stages = 4;
  EXPECT_EQ(device::config_violation(c), nullptr);
  c.k_splits = 2;  // the split that finishes last stages BF16 D like an unsplit tile
  EXPECT_EQ(device::config_violation(c), nullptr);
  c.d_passes = 1;  // a pass of 256 bytes per row: more than the stage's 128-byte A rows
  EXPECT_STREQ(device::config_violation(c), "d_in_stage needs one 128-byte swizzle atom per pass");
  c = {};
  c.num_stages = 16;  // 16 x 32 KB
  EXPECT_STREQ(device::config_violation(c), "the stages and the D tile do not fit the 227 KB of shared memory");
  c = {};
  c.block_m = 96;
  EXPECT_NE(std::string(device::config_violation(c)).find("block_m is 64, 128, 192 or 256"), std::string::npos);
}

// Small M, large N x K: HBM bounds every width alike. Among the model's ties the width that tiles the B-scale blocks
// with the fewest waves goes first (H100: 64x128 6-8% faster than the narrow straddling 64x48 the model took before).
TEST(Heuristics, MemoryBoundTiesTakeWholeScaleBlocksAndFewWaves) {
  for (const auto& [m, n, k] : {std::tuple{64, 16384, 5120}, {32, 28672, 4096}, {16, 16384, 7168}}) {
    const auto p = problem(m, n, k);
    SCOPED_TRACE(heuristics::describe(p));
    const auto ranked = heuristics::rank_fp8_gemm_configs(p, 8);
    ASSERT_FALSE(ranked.empty());
    EXPECT_TRUE(ranked.front().dram_bound);
    EXPECT_EQ(ranked.front().config.block_m, 64);
    EXPECT_EQ(ranked.front().config.block_n, 128);
    for (const auto& other : ranked) {  // nothing ranked behind it was predicted faster
      EXPECT_GE(other.predicted_us, ranked.front().predicted_us * 0.995);
    }
  }
}

// An M-grouped problem's rows per group are a hint: where the model ties every width at a small expected m, the pick
// is the tie predicted fastest for groups of four times the rows (masked 32 x 24 x 4096 x 7168 took 64x32 tiles and
// ran 2.2x slower than the right hint's pick on groups of 80 rows; DeepGEMM did not slow down).
TEST(Heuristics, MGroupedTiesHoldUpPastTheExpectedRows) {
  for (const int grouping : {device::kGroupingMRanges, device::kGroupingMIds}) {
    for (const auto& [groups, m, n, k] : {std::tuple{32, 24, 4096, 7168}, {6, 24, 4096, 7168}, {32, 20, 7168, 3072}}) {
      const auto p = heuristics::make_m_grouped_problem(grouping, m, n, k, groups, 0, 64, 132, 100);
      SCOPED_TRACE(heuristics::describe(p));
      const auto ranked = heuristics::rank_fp8_gemm_configs(p, SIZE_MAX);
      ASSERT_FALSE(ranked.empty());
      for (const auto& other : ranked) {  // still the best at the hinted rows
        EXPECT_GE(other.predicted_us, ranked.front().predicted_us * 0.95);
      }
      auto more = p;
      more.m = 4 * m;
      const double pick_at_more = heuristics::predict_fp8_gemm(more, ranked.front().config,
                                                               ranked.front().launch.raster_band).predicted_us;
      double best_at_more = pick_at_more;
      for (const auto& c : heuristics::rank_fp8_gemm_configs(more, SIZE_MAX)) best_at_more = std::min(best_at_more, c.predicted_us);
      EXPECT_LE(pick_at_more, best_at_more * 1.05) << heuristics::describe(ranked.front());
    }
  }
}

// The model prunes clusters below two waves of tiles; a tuning-table row may still name one (dgrad 4096x512x32768:
// one wave of 128 tiles, A-sharing pairs measured faster) and a raster band other than the candidates' 16.
TEST(Heuristics, TableRowsMayNameWhatTheModelPrunes) {
  heuristics::Fp8GemmCall call = gemm(4096, 512, 32768);
  call.sfa.k_major = 0;  // MN-major A scales, as the suite runs it
  const Fp8GemmProblem p = problem(call);
  for (const auto& c : heuristics::rank_fp8_gemm_configs(p, SIZE_MAX)) {  // 128 tiles: under two waves
    EXPECT_FALSE(c.config.block_m == 128 && c.config.block_n == 128 && device::cluster_size(c.config) > 1);
  }
  const auto chosen = heuristics::choose_fp8_gemm_config(p).config;
  EXPECT_EQ(chosen.block_m, 128);
  EXPECT_EQ(chosen.block_n, 128);
  EXPECT_EQ(chosen.cluster_n, 2);
  call.sfa.k_major = 1;  // row-major A scales: the table's row for them visits tiles in bands of 1
  EXPECT_EQ(heuristics::choose_fp8_gemm_config(problem(call)).launch.raster_band, 1);
}

// One function builds a candidate's configuration: every config the ranking offers is what build_fp8_gemm_config
// gives for its tile, and predict_fp8_gemm reproduces its prediction.
TEST(Heuristics, TheRankingBuildsEachCandidateByTheOneBuilder) {
  for (const auto& call : {gemm(1, 2112, 7168), gemm(4096, 7168, 16384), gemm(7168, 2112, 8192, /*wgrad=*/true),
                           gemm(4096, 1536, 7168), gemm(512, 3584, 2048)}) {
    const Fp8GemmProblem p = problem(call);
    for (const auto& choice : heuristics::rank_fp8_gemm_configs(p, SIZE_MAX)) {
      const auto& c = choice.config;
      SCOPED_TRACE(heuristics::describe(choice));
      const auto built = heuristics::build_fp8_gemm_config(p, {c.block_m, c.block_n, c.cluster_m, c.cluster_n, c.k_splits});
      ASSERT_TRUE(built.has_value());
      EXPECT_EQ(heuristics::describe(heuristics::predict_fp8_gemm(p, *built)), heuristics::describe(choice));
    }
  }
  // None where the tile cannot run: a split without k-blocks, a 1D1D tile past the register bound.
  EXPECT_FALSE(heuristics::build_fp8_gemm_config(problem(64, 2112, 256), {64, 64, 1, 1, 3}).has_value());
  EXPECT_FALSE(heuristics::build_fp8_gemm_config(problem(4096, 4096, 4096, true), {256, 136, 1, 1, 1}).has_value());
}

// The problem builder: the scale layouts the call brings, and whether TMA can load the row-major per-row ones.
TEST(Heuristics, ProblemBuilder) {
  Fp8GemmProblem p = problem(64, 2112, 7168);
  EXPECT_EQ(p.recipe, device::kRecipe1D2D);
  EXPECT_EQ(p.sfa_k_major, 1);
  EXPECT_EQ(p.sfb_k_major, 1);
  EXPECT_EQ(p.sf_rows_tma, 1);  // 56 scales per row: 224-byte rows
  EXPECT_EQ(problem(64, 2112, 2112).sf_rows_tma, 0);  // 17 per row
  heuristics::Fp8GemmCall call = gemm(64, 2112, 2112);
  call.sfa.row_stride = 20;  // padded to 80-byte rows
  EXPECT_EQ(problem(call).sf_rows_tma, 1);
  call.sfa.base = 8;
  EXPECT_EQ(problem(call).sf_rows_tma, 0);
  call = gemm(64, 2112, 7168);
  call.sfa.k_major = 0;
  call.sfb.k_major = 0;  // 1D2D's block scales: one kernel for either layout
  p = problem(call);
  EXPECT_EQ(p.sfa_k_major, 0);
  EXPECT_EQ(p.sfb_k_major, 1);
  EXPECT_EQ(p.sf_rows_tma, 0);  // no row-major per-row scales
  call = gemm(4096, 7168, 4096, /*wgrad=*/true);
  call.sfa.k_major = 0;
  call.sfb.base = 4;
  p = problem(call);
  EXPECT_EQ(p.recipe, device::kRecipe1D1D);
  EXPECT_EQ(p.sfa_k_major, 0);
  EXPECT_EQ(p.sfb_k_major, 1);
  EXPECT_EQ(p.sf_rows_tma, 0);  // B's rows are not 16-byte aligned
}

}  // namespace
}  // namespace hopgemm
