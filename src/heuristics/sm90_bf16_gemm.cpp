#include "heuristics/sm90_bf16_gemm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "heuristics/cost_model.hpp"

namespace hopgemm::heuristics {
namespace {

using device::Sm90Bf16GemmConfig;

// What the BF16 kernel sustains per tile. Not yet fitted on BF16 measurements (bench/fit_heuristics.py fits the FP8
// family's from `hopgemm tune` logs): without a promotion on CUDA cores the tensor cores only wait for shared memory,
// so one math warpgroup is taken to reach what two reach on FP8 and two a little more.
constexpr double kOneWgEfficiency = 0.70;
constexpr double kTwoWgEfficiency = 0.80;
// A k-block's serial chain (stage wait, WGMMAs, release): a BF16 k-block is half an FP8 one's K.
constexpr double kKBlockFloorUs = 0.015;
constexpr double kOneWgKBlockFloorUs = 0.07;
// Pipelines shallower than this cannot keep TMA ahead of the tensor cores; below kDeepStages the builder trades the
// D staging tile for stages.
constexpr int kMinStages = 3;
constexpr int kDeepStages = 4;
constexpr int64_t kDeepStagesMinK = 2048;

TileRates tile_rates(const Sm90Bf16GemmConfig& c) {
  const bool one_wg = device::num_math_wgs(c) == 1;
  return {.mma_efficiency = wgmma_smem_efficiency(c.block_n) * (one_wg ? kOneWgEfficiency : kTwoWgEfficiency),
          .k_block_floor_us = one_wg ? kOneWgKBlockFloorUs : kKBlockFloorUs,
          .math_wgs = device::num_math_wgs(c)};
}

// The BF16 family as the ranker (ranker.hpp) asks it.
struct Bf16Family {
  using Problem = Bf16GemmProblem;
  using Config = Sm90Bf16GemmConfig;
  static ModelGemm model(const Bf16GemmProblem& p) {
    return {.m = p.m, .n = p.n, .k = p.k, .groups = static_cast<int>(p.num_groups), .dtype = MmaDtype::kBf16,
            .out_bytes = p.out_dtype == device::kOutFp32 ? 4 : 2, .accumulate = p.accumulate != 0,
            .num_sms = p.num_sms, .tc_util = p.tc_util};
  }
  static int block_k(const Bf16GemmProblem&) { return device::kBf16BlockK; }
  static TileRates rates(const Sm90Bf16GemmConfig& c) { return tile_rates(c); }
  static std::optional<Sm90Bf16GemmConfig> build(const Bf16GemmProblem& p, const GemmTile& tile) {
    return build_bf16_gemm_config(p, tile);
  }
  // Cluster none, B shared (2x1), A shared (1x2); then tile height and width, smallest first (the model's ties go to
  // the earlier). Widths step by 16 (8 below 16); tiles far larger than the problem waste the tensor cores on padding,
  // down to the narrowest width the layout allows (an MN-major B loads 64-column boxes).
  static std::vector<GemmTile> candidates(const Bf16GemmProblem& p) {
    std::vector<GemmTile> tiles;
    const int narrowest = p.b_k_major ? 16 : 64;
    for (int cluster : {0, 1, 2}) {
      for (int block_m : {64, 128, 256}) {
        for (int block_n = 8; block_n <= 256; block_n += block_n < 16 ? 8 : 16) {
          if (block_m > 64 && (block_m / 2) >= p.m) continue;
          if (block_n > narrowest && block_n - 16 >= p.n) continue;
          // A B-sharing pair of 8 columns (its first CTA loads the whole B tile) runs, but is not ranked (not measured).
          if (cluster == 1 && device::shared_operand_box_rows(block_n) == block_n) continue;
          tiles.push_back({block_m, block_n, cluster == 1 ? 2 : 1, cluster == 2 ? 2 : 1, 1});
        }
      }
    }
    return tiles;
  }
  static void tie_rules(const Bf16GemmProblem& p, std::vector<Bf16GemmChoice>& ranked) {
    if (p.grouping == device::kGroupingBatchSum) least_intake_first(p, ranked);
  }

  // einsum bmk,bnk->mn streams every batch's A and B once per tile row / column: a few tiles split over a very long K.
  // Every candidate there is bound by HBM in the model, which rates HBM at a device copy of 3.0 TB/s; an H200 copies
  // 4.24 TB/s, and what then binds is each SM's intake from the L2 (its tile's A and B rows over its split of K). So
  // within 5% of the model's best, the candidate whose units take in the fewest bytes goes first. Measured (H200,
  // same process, bench/results/h200-2026-11-28-s5-gpu-checks-moe-ep-einsum.txt, call Q): 4096x128x384x128 the front
  // 64x48 x 8 splits 240.4 us, this rule's 128x128 x 24 184.0; 4096x256x256x256 128x128 x 24 293.9 -> x 32 292.6;
  // 2048x256x256x256 165.3 -> 167.1; 129x256x256x256, 129x128x384x128 and 1024x512x512x128 keep the front. A wider
  // band took 128x128 x 16 at 1024x512x512x128, 13% slower than the front's x 8.
  static void least_intake_first(const Bf16GemmProblem& p, std::vector<Bf16GemmChoice>& ranked) {
    constexpr double kBand = 1.05;
    if (ranked.empty()) return;
    const double k_blocks = std::ceil(double(p.k) / device::kBf16BlockK);
    auto intake = [&](const Bf16GemmChoice& c) {  // rows of A and B a unit reads, times its k-blocks
      return double(std::min<int64_t>(c.config.block_m, p.m) + std::min<int64_t>(c.config.block_n, p.n)) *
             std::ceil(k_blocks / c.config.k_splits);
    };
    auto best = ranked.begin();
    for (auto it = ranked.begin(); it != ranked.end() && it->predicted_us <= ranked.front().predicted_us * kBand; ++it) {
      if (intake(*it) < intake(*best)) best = it;
    }
    std::rotate(ranked.begin(), best, best + 1);
  }
};

}  // namespace

std::optional<Sm90Bf16GemmConfig> build_bf16_gemm_config(const Bf16GemmProblem& p, const GemmTile& t) {
  // Tiles of the group-ids layout must not straddle two groups.
  if (p.grouping == device::kGroupingMIds && p.group_align % t.block_m != 0) return std::nullopt;
  Sm90Bf16GemmConfig c;
  c.block_m = t.block_m;
  c.block_n = t.block_n;
  c.cluster_m = t.cluster_m;
  c.cluster_n = t.cluster_n;
  c.k_splits = t.k_splits;
  c.a_k_major = p.a_k_major;
  c.b_k_major = p.b_k_major;
  c.out_dtype = p.out_dtype;
  c.accumulate = p.accumulate;
  c.grouping = p.grouping;
  c.num_stages = deepest_stages(c);
  // A BF16 k-block is half an FP8 one's K, so a shallow ring drains twice as fast: where the D staging tile leaves
  // fewer than kDeepStages stages and K is long, stage D in halves (d_passes 2) or in the last stage's A slot
  // (d_in_stage) if that buys a deeper ring, or makes a tile fit at all. H200, same runs as DeepGEMM: 4096x129280x7168
  // FP32 D 12.2 -> 10.7 ms (128x256 with D in halves: 3 stages, where a whole FP32 D tile left room for 2), but
  // 4096x32768x512 210 -> 219 us (128x256, D in the stage for a 4th stage; 8 k-blocks: the exposed store waits, as
  // the FP8 family saw at short K).
  if (c.num_stages < kDeepStages && p.k >= kDeepStagesMinK) {
    for (const auto& [in_stage, passes] : {std::pair{1, c.block_n * device::out_elem_bytes(c) / 128}, {0, 2}}) {
      Sm90Bf16GemmConfig deeper = c;
      deeper.d_in_stage = in_stage;
      deeper.d_passes = passes;
      if (passes < 1 || device::config_violation(deeper) != nullptr) continue;
      deeper.num_stages = deepest_stages(deeper);
      if (deeper.num_stages > c.num_stages && device::is_valid(deeper)) c = deeper;
    }
  }
  if (c.num_stages < kMinStages || !device::is_valid(c)) return std::nullopt;
  if (!device::k_splits_fit(p.k, device::kBf16BlockK, c.k_splits)) return std::nullopt;
  return c;
}

Bf16GemmProblem make_bf16_m_grouped_problem(int grouping, int64_t rows_per_group, int64_t n, int64_t k, int64_t groups,
                                            bool b_k_major, int group_align, int num_sms, int tc_util) {
  return {.m = std::max<int64_t>(rows_per_group, 1), .n = n, .k = k, .num_groups = groups,
          .b_k_major = b_k_major ? 1 : 0, .num_sms = num_sms, .tc_util = tc_util, .grouping = grouping,
          .group_align = grouping == device::kGroupingMIds ? group_align : 0};
}

Bf16GemmProblem make_bf16_k_grouped_problem(int64_t m, int64_t n, int64_t mean_k, int64_t groups, int num_sms,
                                            int tc_util) {
  return {.m = m, .n = n, .k = mean_k, .num_groups = groups, .a_k_major = 0, .b_k_major = 0,
          .out_dtype = device::kOutFp32, .accumulate = 1, .num_sms = num_sms, .tc_util = tc_util,
          .grouping = device::kGroupingKRanges};
}

Bf16GemmProblem make_bf16_batched_problem(int grouping, int64_t m, int64_t n, int64_t k, int64_t batches,
                                          bool b_k_major, int out_dtype, bool accumulate, int num_sms, int tc_util) {
  const bool summed = grouping == device::kGroupingBatchSum;
  const int64_t k_blocks = (k + device::kBf16BlockK - 1) / device::kBf16BlockK;
  return {.m = m, .n = n, .k = summed ? batches * k_blocks * device::kBf16BlockK : k, .num_groups = summed ? 1 : batches,
          .b_k_major = b_k_major ? 1 : 0, .out_dtype = out_dtype, .accumulate = accumulate ? 1 : 0,
          .num_sms = num_sms, .tc_util = tc_util, .grouping = grouping};
}

std::vector<Bf16GemmChoice> rank_bf16_gemm_configs(const Bf16GemmProblem& p, size_t max_count) {
  return rank_configs<Bf16Family>(p, max_count);
}

Bf16GemmChoice choose_bf16_gemm_config(const Bf16GemmProblem& p) {
  const auto ranked = rank_bf16_gemm_configs(p, 1);
  return ranked.empty() ? Bf16GemmChoice{} : ranked.front();
}

std::string describe(const Bf16GemmProblem& p) {
  static constexpr const char* kGroupings[] = {"", ", grouping=m_group_ids", ", grouping=m_group_ranges",
                                               ", grouping=k_groups", ", grouping=k_ranges", ", grouping=batched",
                                               ", grouping=batch_sum", ""};
  char text[320];
  std::snprintf(text, sizeof(text),
                "Bf16GemmProblem(m=%lld, n=%lld, k=%lld, a=%s, b=%s, out=%s, accumulate=%d, num_sms=%d, tc_util=%d%s, "
                "num_groups=%lld)",
                static_cast<long long>(p.m), static_cast<long long>(p.n), static_cast<long long>(p.k),
                p.a_k_major ? "k-major" : "mn-major", p.b_k_major ? "k-major" : "mn-major",
                p.out_dtype == device::kOutFp32 ? "fp32" : "bf16", p.accumulate, p.num_sms, p.tc_util,
                kGroupings[p.grouping & 7], static_cast<long long>(p.num_groups));
  return text;
}

std::string describe(const Bf16GemmChoice& choice) {
  const auto& c = choice.config;
  char text[320];
  std::snprintf(text, sizeof(text),
                "Sm90Bf16GemmConfig(block_m=%d, block_n=%d, stages=%d, cluster=%dx%d, k_splits=%d, a_k_major=%d, "
                "b_k_major=%d, d_in_stage=%d, d_passes=%d, num_sms=%d, band=%d, smem=%d) tiles=%d waves=%d "
                "predicted=%.1f us",
                c.block_m, c.block_n, c.num_stages, c.cluster_m, c.cluster_n, c.k_splits, c.a_k_major, c.b_k_major,
                c.d_in_stage, c.d_passes, choice.launch.num_sms, choice.launch.raster_band, device::smem_bytes(c), choice.num_tiles,
                choice.num_waves, choice.predicted_us);
  return text;
}

}  // namespace hopgemm::heuristics
