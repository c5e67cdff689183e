#include "heuristics/sm90_fp8_gemm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "heuristics/cost_model.hpp"

namespace hopgemm::heuristics {
namespace {

using device::Sm90Fp8GemmConfig;

// K per pipeline stage: the recipes' scales change every 128 K.
constexpr int kBlockK = 128;

// What the FP8 kernel sustains per tile (fitted by bench/fit_heuristics.py on `hopgemm tune` logs, which reads these
// constexpr doubles by name; docs/DESIGN_NOTES.md gives the fits and their held-out checks).
// Tensor-core efficiency by math warpgroups: one cannot hide its own promotion, two overlap each other's; three
// (192-row tiles) as two: a fitted 0.80 moved 12 fresh picks to 192x128 that then ran 1.016x slower (worst 1.19x).
constexpr double kOneWgEfficiency = 0.45;
constexpr double kTwoWgEfficiency = 0.73;
constexpr double kThreeWgEfficiency = 0.73;
// Widths that are not a multiple of 32 lose on the B loads and the epilogue (256x112 25% slower than 256x128 at
// 4096x7168x16384); FP32 1D1D widths lose nothing measurable (the tuned 88, 144, 152).
constexpr double kOddNEfficiency = 0.77;
constexpr double k1D1DOddNEfficiency = 1.0;
// 1D1D promotes with two multiplies per element (a row and a column scale); fitted on 16 tuned weight-gradient
// shapes, it took held-out picks from 1.133x to 1.083x of the best measured.
constexpr double k1D1DEfficiency = 0.70;
// 1D1D tiles whose column scales do not fit in registers (device::col_scales_in_regs) read them from shared memory at
// every promotion.
constexpr double k1D1DColScalesInSmemEfficiency = 0.95;
// 1D1D's FP32 D reduce runs through the L2 too, leaving the operands less of its output.
constexpr double k1D1DL2GBps = 6600.0;
// A k-block's serial chain (wait for the stage, the WGMMAs, wait, promote, release) takes at least this long.
// Two or more math warpgroups overlap theirs.
constexpr double kKBlockFloorUs = 0.03;
// One math warpgroup (64-row tiles) has nothing to overlap it: 0.26-0.30 us per k-block at every width from 16 to 128
// on decode shapes, where the throughput term charges 64x16 0.13 us (the fit puts the rest into launch and per-tile).
constexpr double kOneWgKBlockFloorUs = 0.144;
// At the floor, widths that are not a multiple of 32 still ran 1.02-1.07x slower per k-block (4x2048x1536: 64x16
// 11.6 us, 64x32 10.0).
constexpr double kOneWgOddNFloorFactor = 1.06;

// Schedule rules' thresholds.
// sfb_regs from K = 4096: the math warps holding B's block scales ran -1.1 to -2% at K >= 7168, -0.5% at 3072-4096,
// +0.7% at 2048, +10% at 512.
constexpr int64_t kSfbRegsMinK = 4096;
// D staged in the last stage for a 4th stage at 256x128 (4096x7168x16384: 1288 -> 1313 TFLOPS); at K = 1536 the two
// exposed store waits per tile cost 2%.
constexpr int64_t kDInStage256MinK = 8192;
// ... and for a 6th stage at 1D2D 128x128, without warpgroup turns: 0.956-0.987 of the time on 10 of 12 picks at
// K >= 2048, no better at K <= 1536.
constexpr int64_t kDInStage128MinK = 2048;
// Pipelines shallower than this cannot keep TMA ahead of the tensor cores.
constexpr int kMinStages = 3;
// 1D1D promotes with a scale per column: beyond 160 columns its math warps spill (ptxas).
constexpr int k1D1DMaxBlockN = 160;

double mma_efficiency(const Sm90Fp8GemmConfig& c) {
  double eff = wgmma_smem_efficiency(c.block_n);
  const bool is_1d1d = c.recipe == device::kRecipe1D1D;
  if (c.block_n % 32 != 0) eff *= is_1d1d ? k1D1DOddNEfficiency : kOddNEfficiency;
  const int wgs = device::num_math_wgs(c);
  eff *= wgs == 3 ? kThreeWgEfficiency : wgs == 2 ? kTwoWgEfficiency : kOneWgEfficiency;
  if (is_1d1d) eff *= k1D1DEfficiency * (device::col_scales_in_regs(c) ? 1.0 : k1D1DColScalesInSmemEfficiency);
  return eff;
}

TileRates tile_rates(const Sm90Fp8GemmConfig& c) {
  TileRates r;
  r.mma_efficiency = mma_efficiency(c);
  r.math_wgs = device::num_math_wgs(c);
  r.k_block_floor_us =
      r.math_wgs == 1 ? kOneWgKBlockFloorUs * (c.block_n % 32 != 0 ? kOneWgOddNFloorFactor : 1.0) : kKBlockFloorUs;
  r.l2_gbps = c.recipe == device::kRecipe1D1D ? k1D1DL2GBps : kL2GBps;
  return r;
}

ModelGemm model_gemm(const Fp8GemmProblem& p) {
  ModelGemm g;
  g.m = p.m;
  g.n = p.n;
  g.k = p.k;
  g.groups = static_cast<int>(p.num_groups);
  g.dtype = MmaDtype::kE4m3;
  g.out_bytes = p.out_dtype == device::kOutFp32 ? 4 : 2;
  g.accumulate = p.accumulate != 0;
  g.num_sms = p.num_sms;
  g.tc_util = p.tc_util;
  return g;
}

// The tile without splits, every schedule rule applied.
std::optional<Sm90Fp8GemmConfig> unsplit_config(const Fp8GemmProblem& p, const Fp8GemmTile& t) {
  const bool is_1d1d = p.recipe == device::kRecipe1D1D;
  Sm90Fp8GemmConfig c;
  c.block_m = t.block_m;
  c.block_n = t.block_n;
  c.cluster_m = t.cluster_m;
  c.cluster_n = t.cluster_n;
  c.recipe = p.recipe;
  c.out_dtype = p.out_dtype;
  c.accumulate = p.accumulate;
  c.sfa_k_major = p.sfa_k_major;
  c.sfb_k_major = p.sfb_k_major;  // 1 for 1D2D (make_fp8_gemm_problem)
  c.grouping = p.grouping;
  // Tiles of the group-ids layout must not straddle two groups.
  if (p.grouping == device::kGroupingMIds && p.group_align % t.block_m != 0) return std::nullopt;
  // The next k-block's WGMMA issued before this one is promoted: 3-4% faster where per-block latency dominates
  // (64-row tiles, 1D1D), 7% slower on clustered 128x128 (shared-memory bound). 1D1D's longer promotion pays for
  // pipelining a 256-row tile's two waves too, where both accumulator sets fit (block_n <= 96).
  c.promote_overlap = ((t.block_m == 64 || is_1d1d) && t.block_m <= 128 && t.block_n <= 128) ||
                      (is_1d1d && t.block_m == 256 && t.block_n <= 96);
  c.sfb_regs = !is_1d1d && p.k >= kSfbRegsMinK ? 1 : 0;
  // Row-major per-row scales with 16-byte rows come by TMA in chunks of 4 k-blocks (1D1D: 7-18% less time than the
  // producer's per-stage copies; for 1D2D its register staging was faster).
  c.sf_chunks = is_1d1d && p.sf_rows_tma == 1 && (p.sfa_k_major == 1 || p.sfb_k_major == 1) ? 1 : 0;
  c.num_stages = max_stages(c);
  // D staged in the A slot of the tile's last stage instead of a tile of its own, where that buys a deeper ring.
  const bool long_k_128 = !is_1d1d && t.block_m == 128 && t.block_n == 128 && p.k >= kDInStage128MinK;
  if ((t.block_m == 256 && p.k >= kDInStage256MinK) || long_k_128) {
    Sm90Fp8GemmConfig staged = c;
    staged.d_in_stage = 1;
    staged.d_passes = t.block_n * (p.out_dtype == device::kOutFp32 ? 4 : 2) / 128;
    staged.num_stages = max_stages(staged);
    // FP32 D += A B^T reduces from registers without a staging tile, so staging frees nothing there; at equal depth
    // the staged TMA reduce-add still ran faster (1D1D 256x128, 4 stages, 1536x24576x8192: 656 vs 668 us).
    const bool prefer_staged = staged.num_stages > c.num_stages ||
                               (staged.num_stages == c.num_stages && device::reduces_from_registers(c));
    if (staged.d_passes >= 1 && prefer_staged && device::is_valid(staged)) c = staged;
  }
  if (c.num_stages < kMinStages || !device::is_valid(c)) return std::nullopt;
  return c;
}

// `base` split `k_splits` ways (fused split-K; the split that counts last stores D as `base` would).
std::optional<Sm90Fp8GemmConfig> split_config(const Fp8GemmProblem& p, Sm90Fp8GemmConfig base, int k_splits) {
  base.k_splits = k_splits;
  base.num_stages = max_stages(base);
  if (base.num_stages < kMinStages || !device::is_valid(base) || !device::k_splits_fit(p.k, k_splits)) return std::nullopt;
  return base;
}

}  // namespace

Fp8GemmProblem make_fp8_gemm_problem(const Fp8GemmCall& call) {
  Fp8GemmProblem p;
  p.m = call.m;
  p.n = call.n;
  p.k = call.k;
  p.recipe = call.recipe;
  p.out_dtype = call.out_dtype;
  p.accumulate = call.accumulate;
  p.num_sms = call.num_sms;
  p.tc_util = call.tc_util;
  const bool is_1d1d = call.recipe == device::kRecipe1D1D;
  p.sfa_k_major = call.sfa.k_major;
  p.sfb_k_major = is_1d1d ? call.sfb.k_major : 1;
  // sf_chunks needs every row-major per-row scale tensor TMA-loadable.
  const int64_t sf_k = device::ceil_div<int64_t>(call.k, kBlockK);
  auto tma_ok = [&](const ScaleRows& s) { return device::sf_rows_tma_ok(sf_k, s.row_stride.value_or(sf_k), s.base); };
  const bool sfa_rows = p.sfa_k_major == 1, sfb_rows = is_1d1d && p.sfb_k_major == 1;
  p.sf_rows_tma = (sfa_rows || sfb_rows) && (!sfa_rows || tma_ok(call.sfa)) && (!sfb_rows || tma_ok(call.sfb)) ? 1 : 0;
  return p;
}

Fp8GemmProblem make_m_grouped_problem(int grouping, int64_t rows_per_group, int64_t n, int64_t k, int64_t groups,
                                      int sfa_k_major, int group_align, int num_sms, int tc_util) {
  Fp8GemmCall call;
  call.m = std::max<int64_t>(rows_per_group, 1);
  call.n = n;
  call.k = k;
  call.sfa.k_major = sfa_k_major;
  call.num_sms = num_sms;
  call.tc_util = tc_util;
  Fp8GemmProblem p = make_fp8_gemm_problem(call);
  p.num_groups = groups;
  p.grouping = grouping;
  p.group_align = grouping == device::kGroupingMIds ? group_align : 0;
  return p;
}

Fp8GemmProblem make_k_grouped_problem(int64_t m, int64_t n, int64_t mean_k, int64_t groups, int num_sms, int tc_util) {
  Fp8GemmCall call;
  call.m = m;
  call.n = n;
  call.k = mean_k;
  call.recipe = device::kRecipe1D1D;
  call.out_dtype = device::kOutFp32;
  call.accumulate = 1;
  call.sfa.k_major = 0;
  call.sfb.k_major = 0;
  call.num_sms = num_sms;
  call.tc_util = tc_util;
  Fp8GemmProblem p = make_fp8_gemm_problem(call);
  p.num_groups = groups;
  p.grouping = device::kGroupingK;
  return p;
}

int max_stages(Sm90Fp8GemmConfig config) { return deepest_stages(config); }

std::optional<Sm90Fp8GemmConfig> build_fp8_gemm_config(const Fp8GemmProblem& p, const Fp8GemmTile& tile) {
  const auto base = unsplit_config(p, {tile.block_m, tile.block_n, tile.cluster_m, tile.cluster_n, 1});
  if (!base || tile.k_splits == 1) return base;
  return split_config(p, *base, tile.k_splits);
}

Fp8GemmChoice predict_fp8_gemm(const Fp8GemmProblem& p, const Sm90Fp8GemmConfig& c, int raster_band) {
  return predict_config(model_gemm(p), c, kBlockK, tile_rates(c), raster_band);
}

namespace {

// The FP8 family as the ranker (ranker.hpp) asks it.
struct Fp8Family {
  using Problem = Fp8GemmProblem;
  using Config = Sm90Fp8GemmConfig;
  static ModelGemm model(const Fp8GemmProblem& p) { return model_gemm(p); }
  static int block_k(const Fp8GemmProblem&) { return kBlockK; }
  static TileRates rates(const Sm90Fp8GemmConfig& c) { return tile_rates(c); }
  static std::optional<Sm90Fp8GemmConfig> build(const Fp8GemmProblem& p, const GemmTile& tile) {
    return build_fp8_gemm_config(p, tile);
  }

  static std::vector<GemmTile> candidates(const Fp8GemmProblem& p) {
    std::vector<GemmTile> tiles;
    const bool is_1d1d = p.recipe == device::kRecipe1D1D;
    const int n_step = is_1d1d ? 8 : 16;
    // Candidates are listed in the order that wins the model's ties: cluster none, B shared (2x1), A shared (1x2);
    // then tile height and width, smallest first. Where A takes more than half the L2, it is re-streamed from HBM for
    // every band of tile columns, which the L2 terms cannot see and sharing it halves: A-sharing pairs go first
    // (8192x7168x7168 617 vs 636 us unclustered, 16384x32768x8192 6577 vs 7588; with A in L2 they lose, 768x12288x7168
    // 118.5 vs 105.1). Measured for 1D2D only.
    const bool a_outgrows_l2 = !is_1d1d && double(p.m) * double(p.k) > kL2Bytes / 2;
    // M-grouped problems take the dense order: with the row-range kernels' descriptors back on the uniform datapath,
    // its 256x128 A-sharing pair ran fastest there too (H200, same process, psum: 4 x 8192 x 6144 x 7168 2091 us
    // against 2222-2317 with B-sharing 128x192 pairs; 8 x 4096 x 4096 x 2048 430 vs 448; 6 x 1024 x 6144 x 7168 407 vs
    // 421).
    const int cluster_order[3] = {a_outgrows_l2 ? 2 : 0, a_outgrows_l2 ? 0 : 1, a_outgrows_l2 ? 1 : 2};
    for (int cluster : cluster_order) {
      for (int block_m : {64, 128, 192, 256}) {
        for (int block_n = n_step; block_n <= 256; block_n += n_step) {
          // Three math warpgroups: 1D2D 192x128, where its tile count fills the waves better 12-17% faster than the
          // model's pick without it; 192x96 won and lost (8% slower at 1536x7168x16384), 1D1D 192x96 8% slower than
          // the 256-row picks.
          if (block_m == 192 && (is_1d1d || block_n != 128)) continue;
          if (is_1d1d && block_n > k1D1DMaxBlockN) continue;
          // B-sharing pairs whose first CTA loads the whole B tile (1D1D widths of 8 mod 16: DeepGEMM's 128x152 wgrad
          // pair) run, but are not ranked until measured against the model's picks (issue 27 item 2).
          if (cluster == 1 && device::shared_operand_box_rows(block_n) == block_n) continue;
          // Tiles far larger than the problem waste the tensor cores on zero padding.
          if (block_m > 64 && (block_m / 2) >= p.m) continue;
          if (block_n > 16 && block_n - n_step >= p.n) continue;
          tiles.push_back({block_m, block_n, cluster == 1 ? 2 : 1, cluster == 2 ? 2 : 1, 1});
        }
      }
    }
    return tiles;
  }

  static void tie_rules(const Fp8GemmProblem& p, std::vector<Fp8GemmChoice>& ranked) {
    // An M-grouped problem's rows per group are a hint (masked: expected_m; contiguous: a mean), and DeepGEMM's
    // README warns that real groups run several times past it. Where the rows fit one 64-row tile, the model ties
    // almost every width (B's bytes bound them all), and the narrowest, listed first, led: 64x32 at expected_m 24
    // (32 x 4096 x 7168) ran 626 us on groups of 80 rows against 286 us for the pick at the right hint, while
    // DeepGEMM's time did not move (H200, same process, bench/results/h200-2026-11-28-vs-deepgemm-grouped-cd50098.json,
    // masked-4x). So among those ties the width predicted fastest at four times the rows goes first (the model
    // predicted that row 634 against 336 us for 64x128); the rules below then order what is still tied.
    if (p.grouping == device::kGroupingMRanges || p.grouping == device::kGroupingMIds) {
      if (p.m <= 64) robust_to_more_rows(p, ranked);
    }
    // Three math warpgroups against two on the same tile area: 192x128 and 128x192 tie in the model, but 192x128 ran
    // faster on 22 of the 24 fresh shapes whose pick this moved (new/old 0.974 at K <= 8192, 0.958 above).
    if (p.recipe != device::kRecipe1D1D) {
      const auto ties = ranked.begin() + leading_ties(ranked, [](const Fp8GemmChoice&) { return true; });
      for (auto it = ranked.begin(); it < ties; ++it) {
        const Sm90Fp8GemmConfig& c = it->config;
        if (c.block_m != 128 || c.block_n != 192) continue;
        const auto twin = std::find_if(it + 1, ties, [&](const Fp8GemmChoice& t) {
          return t.config.block_m == 192 && t.config.block_n == 128 && t.config.cluster_m == c.cluster_m &&
                 t.config.cluster_n == c.cluster_n && t.config.k_splits == c.k_splits;
        });
        if (twin != ties) std::rotate(it, twin, twin + 1);
      }
    }
    // Where HBM bounds the front and its ties alike (small M, large N x K) every width looks equal, and the narrowest
    // came first. Widths straddling the 128-column B-scale blocks ran 6-8% slower (64x16384x5120: 64x48 45.9 us,
    // 64x128 42.7), and of the others the fewest waves ran fastest (32x28672x4096: 64x128 54.0 us, 64x64 55.8). So
    // within the tile height that led (64-row tiles at M = 96 ran 5% faster than 128-row ones): no straddle, then
    // fewer waves.
    const size_t tied = leading_ties(ranked, [](const Fp8GemmChoice& x) { return x.dram_bound; });
    auto straddles = [](const Fp8GemmChoice& x) { return x.config.block_n % 128 != 0 && 128 % x.config.block_n != 0; };
    std::stable_sort(ranked.begin(), ranked.begin() + tied, [&](const Fp8GemmChoice& x, const Fp8GemmChoice& y) {
      return std::tuple{x.config.block_m, straddles(x), x.num_waves} <
             std::tuple{y.config.block_m, straddles(y), y.num_waves};
    });
  }

  // The front's ties, stably ordered by their prediction for the same groups of four times the rows (a prediction
  // within the model's tie of the best at 4x counts as the best).
  static void robust_to_more_rows(const Fp8GemmProblem& p, std::vector<Fp8GemmChoice>& ranked) {
    const size_t tied = leading_ties(ranked, [](const Fp8GemmChoice&) { return true; });
    if (tied < 2) return;
    Fp8GemmProblem more = p;
    more.m = p.m * 4;
    std::vector<std::pair<double, Fp8GemmChoice>> front;
    for (size_t i = 0; i < tied; ++i) {
      front.emplace_back(predict_fp8_gemm(more, ranked[i].config, ranked[i].launch.raster_band).predicted_us, ranked[i]);
    }
    auto faster = [](const auto& x, const auto& y) { return x.first < y.first; };
    const double best = std::min_element(front.begin(), front.end(), faster)->first;
    for (auto& [us, choice] : front) us = std::max(us, best * (1.0 + kModelTie));
    std::stable_sort(front.begin(), front.end(), faster);
    for (size_t i = 0; i < tied; ++i) ranked[i] = front[i].second;
  }
};

}  // namespace

std::vector<Fp8GemmChoice> rank_fp8_gemm_configs(const Fp8GemmProblem& p, size_t max_count) {
  return rank_configs<Fp8Family>(p, max_count);
}

namespace {

constexpr TunedFp8GemmEntry kTuned[] = {
#include "heuristics/sm90_fp8_gemm_tuned.inc"
};

bool lists(const TunedFp8GemmEntry& e, const Fp8GemmProblem& p) {
  return p.grouping == device::kGroupingNone && e.m == p.m && e.n == p.n && e.k == p.k && e.recipe == p.recipe && e.out_dtype == p.out_dtype &&
         e.accumulate == p.accumulate && e.sfa_k_major == p.sfa_k_major && e.sfb_k_major == p.sfb_k_major &&
         e.sf_rows_tma == p.sf_rows_tma && e.num_sms == p.num_sms;
}

}  // namespace

std::span<const TunedFp8GemmEntry> tuned_fp8_gemm_table() { return kTuned; }

std::optional<Fp8GemmChoice> tuned_fp8_gemm_choice(const Fp8GemmProblem& p) {
  for (const TunedFp8GemmEntry& e : kTuned) {
    if (lists(e, p)) return predict_fp8_gemm(p, e.config, e.raster_band);
  }
  return std::nullopt;
}

std::string tuned_fp8_gemm_row(const Fp8GemmProblem& p, const Fp8GemmChoice& choice) {
  char problem[192];
  std::snprintf(problem, sizeof(problem), "{%lld, %lld, %lld, %d, %d, %d, %d, %d, %d, %d, {", static_cast<long long>(p.m),
                static_cast<long long>(p.n), static_cast<long long>(p.k), p.recipe, p.out_dtype, p.accumulate,
                p.sfa_k_major, p.sfb_k_major, p.sf_rows_tma, p.num_sms);
  std::string row = problem, separator;
  // The head splits are not in the table's rows: a tuned problem is a plain GEMM (skip_head_mid sets them on the
  // plain GEMM's choice), and a row's omitted trailing fields take their defaults (0).
#define HOPGEMM_ROW_FIELD(name, default_value, tunable)                           \
  if (!std::string_view(#name).starts_with("head_")) {                            \
    row += separator + std::to_string(choice.config.name);                        \
    separator = ", ";                                                             \
  }
  HOPGEMM_SM90_FP8_GEMM_FIELDS(HOPGEMM_ROW_FIELD)
#undef HOPGEMM_ROW_FIELD
  return row + "}, " + std::to_string(choice.launch.raster_band) + "},";
}

Fp8GemmChoice choose_fp8_gemm_config(const Fp8GemmProblem& p) {
  if (auto tuned = tuned_fp8_gemm_choice(p)) return *tuned;
  const auto ranked = rank_fp8_gemm_configs(p, 1);
  return ranked.empty() ? Fp8GemmChoice{} : ranked.front();
}

std::string describe(const Fp8GemmProblem& p) {
  static constexpr const char* kGroupings[] = {"", ", grouping=m_group_ids", ", grouping=m_group_ranges",
                                               ", grouping=k_groups", ", grouping=k_ranges", ", grouping=batched",
                                               ", grouping=batch_sum", ""};
  char groups[96] = "";
  if (p.grouping != device::kGroupingNone) {
    std::snprintf(groups, sizeof(groups), "%s, num_groups=%lld, group_align=%d", kGroupings[p.grouping & 7],
                  static_cast<long long>(p.num_groups), p.group_align);
  }
  char text[352];
  std::snprintf(text, sizeof(text),
                "Fp8GemmProblem(m=%lld, n=%lld, k=%lld, recipe=%s, out=%s, accumulate=%d, sfa=%s, sfb=%s, "
                "num_sms=%d, tc_util=%d%s%s)",
                static_cast<long long>(p.m), static_cast<long long>(p.n), static_cast<long long>(p.k),
                p.recipe == device::kRecipe1D2D ? "1D2D" : "1D1D", p.out_dtype == device::kOutFp32 ? "fp32" : "bf16",
                p.accumulate, p.sfa_k_major ? "k-major" : "mn-major", p.sfb_k_major ? "k-major" : "mn-major",
                p.num_sms, p.tc_util, p.sf_rows_tma ? ", sf_rows_tma=1" : "", groups);
  return text;
}

std::string describe(const Fp8GemmChoice& choice) {
  const auto& c = choice.config;
  // The schedule fields that differ from the defaults, spelled as `--config` takes them, so a printed pick can be
  // timed again as it is (hopgemm bench --config).
  std::string schedule;
  for (const auto& [name, value] : {std::pair{"promote_overlap", c.promote_overlap},
                                    {"d_in_stage", c.d_in_stage}, {"d_passes", c.d_passes == 1 ? 0 : c.d_passes},
                                    {"sfb_regs", c.sfb_regs},
                                    {"sf_chunks", c.sf_chunks}}) {
    if (value != 0) schedule += std::string(", ") + name + "=" + std::to_string(value);
  }
  char text[384];
  std::snprintf(text, sizeof(text),
                "Sm90Fp8GemmConfig(block_m=%d, block_n=%d, stages=%d, cluster=%dx%d, k_splits=%d, num_sms=%d, band=%d, "
                "smem=%d%s) tiles=%d waves=%d predicted=%.1f us",
                c.block_m, c.block_n, c.num_stages, c.cluster_m, c.cluster_n, c.k_splits, choice.launch.num_sms,
                choice.launch.raster_band,
                device::smem_bytes(c), schedule.c_str(), choice.num_tiles, choice.num_waves, choice.predicted_us);
  return text;
}

}  // namespace hopgemm::heuristics
