#include "heuristics/sm90_fp8_gemm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace hopgemm::heuristics {
namespace {

using device::Sm90Fp8GemmConfig;

// H100 SXM figures the model is built on (measured on the project's H100 unless noted). The fitted ones
// (L2 rate, per-tile and launch costs, efficiencies, the split-K fixed cost) come from bench/fit_heuristics.py
// on 58 forward shapes x 29-40 measured candidates (bench/results/h100-2026-11-22-tune40-fwd.log) and were
// checked on 9 shapes outside that set and outside the tuning table (scripts/validate_model.sh,
// bench/results/h100-2026-11-22-heldout-*): the pick's measured time over the best of 40 went 1.102x -> 1.044x
// (worst 1.33x -> 1.14x) there, 1.041x -> 1.030x on the fitting set.
constexpr double kPeakTflops = 1979.0;     // dense FP8 tensor cores, datasheet
constexpr double kDramGBps = 3000.0;       // device copy
// L2 -> SM: the L2's output over all SMs (the shared operand counted once per cluster), and what one SM takes in
// (its whole A and B tiles, multicast or not). 1D1D: the FP32 D reduce runs through the same L2, whose rate left to
// the operands fits lower. Fitted 2026-11-22 (ninth session) on the tune40, mid-M and decode logs: the aggregate
// rate alone (6600) made narrow tiles and clusters look L2-bound where they are not (held-out picks 1.044x ->
// 1.003x, 1.034x -> 1.020x, 1.031x -> 1.016x, 1.066x -> 1.037x of the best measured with the ingress term).
constexpr double kL2GBps = 9405.0;         // fitted
constexpr double k1D1DL2GBps = 6600.0;     // fitted
constexpr double kSmIngressGBps = 73.5;    // per SM (fitted)
constexpr double kL2Bytes = 50.0 * 1024 * 1024;  // H100 L2 capacity
constexpr double kSmsForFullDram = 66.0;   // SMs whose TMA streams saturate HBM
constexpr double kTileOverheadUs = 1.89;   // prologue + epilogue + promotion tail per tile (fitted)
constexpr int64_t kSfbRegsMinK = 4096;     // from here on 1D2D keeps the B scales in registers (sfb_regs)
constexpr int64_t kDInStage128MinK = 2048;  // from here on 1D2D 128x128 stages D in its last stage
// Kernel launch + ramp, and (in the timings fitted) the write-back of the L2 flush's dirty lines.
constexpr double kLaunchUs = 6.7;
// A math warpgroup's serial chain per 128-K block (wait for the stage, 4 WGMMAs, wait, promote, release)
// takes at least this long however narrow the tile. Measured 0.27-0.31 us per k-block on the tuned decode tiles
// with a 2.5 us launch subtracted; the fit puts that time into the launch and per-tile terms instead (fitted).
constexpr double kKBlockFloorUs = 0.03;
// The same chain with one math warpgroup (64-row tiles) has nothing to overlap it: on the decode logs a 64-row tile
// took 0.26-0.30 us per k-block at every width from 16 to 128 (8x2112x7168, no split: 18.7 us at 64x16, 18.0 at
// 64x64), where the throughput term charges a 64x16 k-block 0.13 us. Fitted with the split-K term below on the mid-M,
// decode, tune40 and first held-out logs (eleventh session): the model's own pick on the decode log went 1.035x ->
// 1.018x of the best measured (worst 1.31x -> 1.14x, bench/score_picks.py), the other logs within 0.002x.
constexpr double kOneWgKBlockFloorUs = 0.144;  // fitted
// At the floor, widths that are not a multiple of 32 still ran slower per k-block: 64x16 / 64x32 and 64x48 / 64x64 at
// 8-32x2112x7168, one wave, no split: 1.02-1.07 (decode log), so floor-bound narrow tiles do not tie with the next
// width up (4x2048x1536: 64x16 ran 11.6 us, 64x32 10.0; bench/results/h100-2026-11-22-ab-model-session11.txt).
constexpr double kOneWgOddNFloorFactor = 1.06;
// Split-K candidates: only when the tiles leave SMs idle or run a short, ragged last wave.
constexpr int kSplitKChoices[] = {2, 3, 4, 6, 8};
constexpr int kMaxWavesForSplitK = 2;
// Predictions this close (relative) are a tie: the model cannot tell them apart.
constexpr double kModelTie = 0.005;
// Fixed cost of split-K: the tile's last split waits for the others' partials and sums them (fitted on the H100's
// decode shapes).
constexpr double kSplitKFusedFixedUs = 2.98;  // fitted
// The fused split that finishes last reads the other k_splits - 1 partial tiles (FP32), each math warpgroup its own
// rows: charged at this many times the SM ingress time of one warpgroup's share (fitted; 64x96 split 6 measured
// 3.1 us over 64x64 split 4 at 8x2112x7168, both one wave; 128x160 split 4 at 384x1536x16384 ran 34.0 us where
// charging the whole tile at that rate predicted 38.0).
// Since the twelfth session the last split loads every split's partials at once where registers allow (decode splits
// 2-7% faster); refits of these two constants to that (fixed 0.54 us) moved fresh picks for nothing (0.999, worst
// 1.128; bench/results/h100-2026-11-22-ab-model-session12-splitk-refit.txt), so they stay as fitted before it.
constexpr double kSplitKPartialsReadFactor = 2.27;
// Efficiency factors of mma_efficiency (fitted): tiles whose width is not a multiple of 32, and one or two
// consumer warpgroups.
constexpr double kOddNEfficiency = 0.77;
constexpr double kOneWgEfficiency = 0.45;
constexpr double kTwoWgEfficiency = 0.73;
// Three (192-row tiles): as two. Fitted alone on the twelfth session's re-measured decode/mid-M logs and heldout4 it
// came out 0.80 (their picks 1.022 -> 1.011 of the best measured), but on fresh shapes the 12 picks it moved, all to
// 192x128, ran new/old 1.016, worst 1.19 (bench/results/h100-2026-11-22-ab-model-session12-three-wgs.txt).
constexpr double kThreeWgEfficiency = 0.73;
// 1D1D (weight gradients: FP32 D, a scale per row and per column) against the 1D2D figures above: the promotion's
// two multiplies per element cost throughput, and FP32 widths that are not multiples of 32 (the tuned 144, 152, 88)
// lose nothing measurable. Fitted on 16 tuned wgrad shapes (2246 candidates, bench/results/h100-2026-11-22-tune-
// wgrad-confirmed.log) and checked on 8 held-out ones (h100-2026-11-22-heldout-wgrad-*): the model pick's measured
// time over the best went 1.109x -> 1.068x on the fitting set, 1.133x -> 1.083x (worst 1.29x -> 1.17x) held out.
constexpr double k1D1DEfficiency = 0.70;
constexpr double k1D1DOddNEfficiency = 1.0;
// 1D1D tiles whose column scales do not fit in registers (device::col_scales_in_regs: 256x120-128, 256x96 and
// 128x120-128 with their second accumulator set) read them from shared memory at every promotion (fitted).
constexpr double k1D1DColScalesInSmemEfficiency = 0.95;
// bench/fit_heuristics.py reads the constexpr doubles of this file as its current constants.

// Fraction of peak a warpgroup sustains for a 64 x block_n x 32 WGMMA: the tensor core needs
// block_n / 2 cycles, shared memory feeds 64*32 + block_n*32 bytes at 128 B/cycle.
double mma_efficiency(const Sm90Fp8GemmConfig& c) {
  const double math_cycles = c.block_n / 2.0;
  const double smem_cycles = (64.0 * 32.0 + c.block_n * 32.0) / 128.0;
  double eff = std::min(1.0, math_cycles / smem_cycles);
  // Measured on the H100 (docs/notes/fp8_gemm_kernel.md): 256x112 ran 25% slower than 256x128 at
  // 4096x7168x16384; tiles whose width is not a multiple of 32 lose on the B loads and epilogue.
  const bool is_1d1d = c.recipe == device::kRecipe1D1D;
  if (c.block_n % 32 != 0) eff *= is_1d1d ? k1D1DOddNEfficiency : kOddNEfficiency;
  // One consumer warpgroup cannot hide its own promotion and waits; two overlap each other. Three (192-row tiles)
  // ran at the per-tile rate of two on 256x128 (H100, 8192^3: 791 vs 802 us, about what the waves alone explain;
  // bench/results/h100-2026-11-22-bench-three-wgs-8192.txt).
  const int wgs = device::num_math_wgs(c);
  eff *= wgs == 3 ? kThreeWgEfficiency : wgs == 2 ? kTwoWgEfficiency : kOneWgEfficiency;
  if (is_1d1d) eff *= k1D1DEfficiency * (device::col_scales_in_regs(c) ? 1.0 : k1D1DColScalesInSmemEfficiency);
  return eff;
}

// The persistent grid: every SM, less those a cluster cannot pair.
int grid_sms(const Fp8GemmProblem& p, const Sm90Fp8GemmConfig& c) { return p.num_sms - p.num_sms % device::cluster_size(c); }

// Work units are (tile, split) pairs; a unit runs ceil(k_blocks / k_splits) k-blocks.
double predict_us(const Fp8GemmProblem& p, const Sm90Fp8GemmConfig& c, int& tiles_out, int& waves_out,
                  bool* dram_bound = nullptr) {
  // A cluster's CTAs run together: where the tile count along its axis is odd, the scheduler runs a phantom tile
  // (loads for its partner's multicast, no store) that takes an SM like a real one.
  const int64_t tiles_m = (p.m + c.block_m - 1) / c.block_m;
  const int64_t tiles_n = (p.n + c.block_n - 1) / c.block_n;
  const int64_t cluster_tiles = (tiles_m + c.cluster_m - 1) / c.cluster_m * c.cluster_m *
                                ((tiles_n + c.cluster_n - 1) / c.cluster_n * c.cluster_n);
  const int64_t tiles = tiles_m * tiles_n;
  const int64_t units = cluster_tiles * c.k_splits;
  const int num_sms = grid_sms(p, c);
  const int64_t waves = (units + num_sms - 1) / num_sms;
  tiles_out = static_cast<int>(tiles);
  waves_out = static_cast<int>(waves);
  const double k_blocks = std::ceil(p.k / 128.0);
  const double unit_k_blocks = std::ceil(k_blocks / c.k_splits);

  // Compute: every wave costs one unit's MMA time on one SM, at least the per-k-block floor.
  const double per_sm_tflops = kPeakTflops * p.tc_util / 100.0 / num_sms * mma_efficiency(c);
  const double k_block_us = 2.0 * c.block_m * c.block_n * 128.0 / (per_sm_tflops * 1e12) * 1e6;
  const double floor_us = device::num_math_wgs(c) == 1
                              ? kOneWgKBlockFloorUs * (c.block_n % 32 != 0 ? kOneWgOddNFloorFactor : 1.0)
                              : kKBlockFloorUs;
  const double compute_us = waves * (unit_k_blocks * std::max(k_block_us, floor_us) + kTileOverheadUs);

  // DRAM: each operand read once (L2 keeps the other tiles' reuse), D (or the FP32 partials) written once;
  // fewer busy SMs than needed to saturate HBM stretch it.
  const double d_bytes = (p.out_dtype == device::kOutFp32 ? 4.0 : 2.0) * p.m * p.n * (p.accumulate ? 2 : 1);
  const double partial_bytes = 4.0 * c.k_splits * p.m * p.n;
  const double out_bytes = c.k_splits > 1 ? partial_bytes : d_bytes;
  const double dram_bytes = double(p.m) * p.k + double(p.n) * p.k + out_bytes;
  const double busy_sms = std::min<double>(units, num_sms);
  const double dram_us = dram_bytes / (kDramGBps * 1e3 * std::min(1.0, busy_sms / kSmsForFullDram));

  // L2 -> SM: each unit streams its A and B slices out of the L2 (multicast halves the shared operand), and each SM
  // takes in its whole tiles, wave after wave.
  const double a_bytes = double(c.block_m) * unit_k_blocks * 128.0 / (c.cluster_n == 2 ? 2 : 1);
  const double b_bytes = double(c.block_n) * unit_k_blocks * 128.0 / (c.cluster_m == 2 ? 2 : 1);
  const double l2_rate = c.recipe == device::kRecipe1D1D ? k1D1DL2GBps : kL2GBps;
  const double l2_us = units * (a_bytes + b_bytes) / (l2_rate * 1e3);
  const double ingress_us = waves * unit_k_blocks * double(c.block_m + c.block_n) * 128.0 / (kSmIngressGBps * 1e3);

  // Split-K: the tile's last split reads the others' partials and writes D (reading it too when accumulating).
  const double wg_rows = double(c.block_m) / device::num_math_wgs(c);
  const double last_split_us = kSplitKPartialsReadFactor * (c.k_splits - 1) * wg_rows * c.block_n * 4.0 / (kSmIngressGBps * 1e3);
  const double reduce_us =
      c.k_splits > 1 ? kSplitKFusedFixedUs + last_split_us + (partial_bytes + d_bytes) / (kDramGBps * 1e3) : 0.0;

  if (dram_bound) *dram_bound = dram_us >= std::max({compute_us, l2_us, ingress_us});
  return kLaunchUs + std::max({compute_us, dram_us, l2_us, ingress_us}) + reduce_us;
}

}  // namespace

int max_stages(Sm90Fp8GemmConfig config) {
  for (int stages = 16; stages >= 2; --stages) {
    config.num_stages = stages;
    if (device::smem_bytes(config) <= device::kSm90SmemCapacity) return stages;
  }
  return 0;
}

std::vector<Fp8GemmChoice> rank_fp8_gemm_configs(const Fp8GemmProblem& p, size_t max_count, Candidates candidates) {
  std::vector<Fp8GemmChoice> ranked;
  const int n_step = p.recipe == device::kRecipe1D2D ? 16 : 8;
  // Cluster orders, the first winning the model's ties (within 0.5%): none, B shared (2x1), A shared (1x2). Where A
  // takes more than half the L2 (the rest holds B's and D's tiles) it is re-streamed from HBM for every band of tile
  // columns, which sharing it halves; the model's L2 terms cannot see that, so A-sharing pairs go first there (H100,
  // the same tile against 1x1, means of two runs: 8192x7168x7168 617 vs 636 us, 8192x1536x4096 81.5 vs 85.2,
  // 8192x1536x7168 135.2 vs 140.5, 16384x32768x8192 6577 vs 7588; with A in L2, 1x2 lost: 768x12288x7168 118.5 vs
  // 105.1; bench/results/h100-2026-11-22-ab-model-sm-ingress-c1x2.txt). Measured for 1D2D only.
  const bool a_outgrows_l2 = p.recipe == device::kRecipe1D2D && double(p.m) * double(p.k) > kL2Bytes / 2;
  const int cluster_order[3] = {a_outgrows_l2 ? 2 : 0, a_outgrows_l2 ? 0 : 1, a_outgrows_l2 ? 1 : 2};
  for (int cluster : cluster_order) {
    for (int block_m : {64, 128, 192, 256}) {
      for (int block_n = n_step; block_n <= 256; block_n += n_step) {
        // Three math warpgroups (192 rows): 1D2D 192x128 only. Where its tile count fills the waves better it took
        // 12-17% less time than the model's pick without it (2048x3072x7168, 4096x1536x7168, 6144x512x1536); 192x96
        // won and lost (1536x7168x16384: 8% slower), and 1D1D 192x96 was 8% slower than the 256-row picks
        // (bench/results/h100-2026-11-22-ab-three-wgs-model.txt, ...-try-three-wgs-wgrad.txt). Other 1D2D widths
        // remain open to the tuning table (4096x576x7168: 192x96, 22 x 6 = 132 tiles, 4.5% faster than 128x144).
        if (block_m == 192 && (p.recipe == device::kRecipe1D1D || (candidates == Candidates::kModel && block_n != 128)))
          continue;
        Sm90Fp8GemmConfig c;
        c.block_m = block_m;
        c.block_n = block_n;
        c.cluster_m = cluster == 1 ? 2 : 1;
        c.cluster_n = cluster == 2 ? 2 : 1;
        c.recipe = p.recipe;
        c.out_dtype = p.out_dtype;
        c.accumulate = p.accumulate;
        c.sfa_k_major = p.sfa_k_major;
        c.sfb_k_major = p.recipe == device::kRecipe1D1D ? p.sfb_k_major : 1;
        // Overlapping the next block's WGMMA with this block's promotion measured +3-4% where per-block
        // latency dominates (64-row tiles, 1D1D) and -7% on clustered 128x128: docs/notes/fp8_gemm_kernel.md.
        // 1D1D's promotion (two multiplies per element) is long enough that 256-row tiles pipeline their two
        // waves as well (block_n <= 96, where both accumulator sets fit).
        const bool is_1d1d = p.recipe == device::kRecipe1D1D;
        c.promote_overlap = ((block_m == 64 || is_1d1d) && block_m <= 128 && block_n <= 128) ||
                            (is_1d1d && block_m == 256 && block_n <= 96);
        // 1D2D at long K: the math warps hold the B scales (a chunk of 32 k-blocks loaded a chunk ahead) instead of
        // the producer copying them into every stage (H100, alternating rounds: -0.3 .. -1.7% at K >= 7168, +0.7% at
        // K = 2048, +10% at K = 512; bench/results/h100-2026-11-22-try-sfb-regs.txt).
        c.sfb_regs = !is_1d1d && p.k >= kSfbRegsMinK ? 1 : 0;
        // Row-major per-row scales with 16-byte-aligned rows: TMA boxes of 4 k-blocks into a chunk ring instead of the
        // producer's per-stage copies (1D1D: 19-33% slower than MN-major scales before; docs/notes/fp8_gemm_kernel.md).
        c.sf_chunks = is_1d1d && p.sf_rows_tma == 1 && (p.sfa_k_major == 1 || p.sfb_k_major == 1) ? 1 : 0;
        c.num_stages = max_stages(c);
        // Long K, 256x128 BF16: stage D in the last pipeline stage instead of a dedicated tile, for a 4th
        // stage (H100, harness: 4096x7168x16384 1288 -> 1313 TF, 8192^3 1277 -> 1287; at K = 1536 the two
        // exposed store waits per tile cost 2%, hence the K threshold). 1D2D 128x128 likewise gets a 6th stage,
        // without warpgroup turns: first at very long K (dgrad 4096x512x32768: 123.2 -> 120.1 us, turns kept 121.7;
        // bench/results/h100-2026-11-22-try-d-in-stage-128-rows.txt), then measured down to K = 2048 against the
        // turns with 5 stages: 0.956-0.987 of the time on 10 of 12 model picks, 1.000 and 1.010 on the other two (M =
        // 144, 160; alternating rounds; h100-2026-11-22-try-128x128-d-in-stage-mid-k{,-2}.txt); fresh shapes whose pick it
        // moves, new/old 0.976 over 10 (0.957-1.009; ...-ab-model-session13-d-in-stage-128.txt).
        const bool long_k_128 = !is_1d1d && block_m == 128 && block_n == 128 && p.k >= kDInStage128MinK;
        if ((block_m == 256 && p.k >= 8192) || long_k_128) {
          Sm90Fp8GemmConfig staged = c;
          staged.d_in_stage = 1;
          staged.d_passes = block_n * (p.out_dtype == device::kOutFp32 ? 4 : 2) / 128;
          staged.num_stages = max_stages(staged);
          // FP32 D += A B^T reduces from registers without a staging tile (reduces_from_registers), so staging in a
          // stage frees nothing there; at equal depth its TMA reduce-add still measured faster (1D1D 256x128, 4
          // stages, K = 8192: 1536x24576 656 vs 668 us, 512x32768 301 vs 307; h100-2026-11-22-red-epilogue.txt).
          const bool prefer_staged = staged.num_stages > c.num_stages ||
                                     (staged.num_stages == c.num_stages && device::reduces_from_registers(c));
          if (staged.d_passes >= 1 && prefer_staged && device::is_valid(staged)) c = staged;
        }
        // Pipelines shallower than 3 stages cannot keep TMA ahead of the tensor cores.
        if (c.num_stages < 3 || !device::is_valid(c)) continue;
        // 1D1D promotes with a scale per column: beyond 160 columns its consumers spill (ptxas report).
        if (p.recipe == device::kRecipe1D1D && block_n > 160) continue;
        // Tiles far larger than the problem waste the tensor cores on zero padding.
        if (block_m > 64 && (block_m / 2) >= p.m) continue;
        if (block_n > 16 && block_n - n_step >= p.n) continue;
        int tiles = 0, waves = 0;
        bool dram_bound = false;
        const double us = predict_us(p, c, tiles, waves, &dram_bound);
        // A pair of CTAs only pays off when each has a partner tile in most waves (the model's view; a measured
        // exception: dgrad 4096x512x32768, one wave of 128 tiles, A-sharing pairs 2% faster, in the tuning table).
        const Fp8GemmLaunch launch{grid_sms(p, c), kDefaultRasterBand};
        if (candidates == Candidates::kModel && device::cluster_size(c) > 1 && tiles < 2 * launch.num_sms) continue;
        ranked.push_back({c, launch, us, tiles, waves, dram_bound});
        // Split-K: more work units than tiles, FP32 partials plus a reduction (all in the model).
        if (device::cluster_size(c) > 1 || tiles > kMaxWavesForSplitK * launch.num_sms) continue;
        for (int k_splits : kSplitKChoices) {
          Sm90Fp8GemmConfig split = c;
          split.k_splits = k_splits;
          split.num_stages = max_stages(split);
          if (split.num_stages < 3 || !device::is_valid(split) || !device::k_splits_fit(p.k, k_splits)) continue;
          // At least two k-blocks per unit: shorter units are all prologue and epilogue.
          if (std::ceil(p.k / 128.0) < 2.0 * k_splits) continue;
          const double split_us = predict_us(p, split, tiles, waves, &dram_bound);
          ranked.push_back({split, launch, split_us, tiles, waves, dram_bound});
        }
      }
    }
  }
  // Fastest predicted first; within the model's tie (kModelTie) the earlier candidate (smaller cluster, tile) stays
  // ahead, unless one of the tie rules below reorders the leading ties.
  std::stable_sort(ranked.begin(), ranked.end(), [](const Fp8GemmChoice& x, const Fp8GemmChoice& y) {
    return x.predicted_us < y.predicted_us * (1.0 - kModelTie);
  });
  // How many candidates from the front are predicted within the tie of the front one and satisfy `also`.
  auto leading_ties = [&](auto&& also) {
    size_t n = 0;
    while (n < ranked.size() && ranked[n].predicted_us <= ranked.front().predicted_us * (1.0 + kModelTie) &&
           also(ranked[n])) {
      ++n;
    }
    return n;
  };
  // Three math warpgroups against two on the same tile area: 192x128 and 128x192 tie in the model (the same
  // throughput and, where both divide the problem, the same waves), but 192x128 ran faster. The tune logs (one pass
  // each): 24 of 27 such ties at K <= 8192 (0.93-0.99x; two equal, one 3% slower), 4 of 9 above it. Fresh shapes,
  // each pick timed twice in alternation: 12 of the 14 picks this moved at K <= 8192 (new/old 0.974; 1.003 at
  // 4096x1536x5120, 1.095 at 2560x2112x5120) and all 10 at K = 13824-16384 (0.958, 0.929-0.989;
  // bench/results/h100-2026-11-22-ab-model-session13-tie192{,-longk}.txt). So 192x128 goes first among the leading ties.
  if (p.recipe == device::kRecipe1D2D) {
    const auto ties = ranked.begin() + leading_ties([](const Fp8GemmChoice&) { return true; });
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
  // Where HBM bounds the fastest and its ties alike (small M, large N x K), the model sees every width as equal and the
  // narrowest won. Measured there, widths that straddle the 128-column B-scale blocks (48, 96: 64x48 at
  // 64x16384x5120 45.9 us, 64x96 46.0) ran 6-8% slower than those that tile them (64x64 43.2, 64x128 42.7), and of
  // the others the fewest waves ran fastest (32x28672x4096: 64x128 54.0 us, 64x32 55.3, 64x64 55.8;
  // bench/results/h100-2026-11-22-try-decode-widths.txt). So among such ties, within the tile height that already led
  // them (64-row tiles at M = 96 ran 5% faster than 128-row ones with half the waves): no straddle, then fewer waves.
  const size_t tied = leading_ties([](const Fp8GemmChoice& x) { return x.dram_bound; });
  auto straddles = [](const Fp8GemmChoice& x) { return x.config.block_n % 128 != 0 && 128 % x.config.block_n != 0; };
  std::stable_sort(ranked.begin(), ranked.begin() + tied, [&](const Fp8GemmChoice& x, const Fp8GemmChoice& y) {
    return std::tuple{x.config.block_m, straddles(x), x.num_waves} < std::tuple{y.config.block_m, straddles(y), y.num_waves};
  });
  if (ranked.size() > max_count) ranked.resize(max_count);
  return ranked;
}

namespace {

constexpr TunedFp8GemmEntry kTuned[] = {
#include "heuristics/sm90_fp8_gemm_tuned.inc"
};

}  // namespace

std::span<const TunedFp8GemmEntry> tuned_fp8_gemm_table() { return kTuned; }

std::optional<Fp8GemmChoice> tuned_fp8_gemm_choice(const Fp8GemmProblem& p) {
  for (const TunedFp8GemmEntry& e : kTuned) {
    if (e.m != p.m || e.n != p.n || e.k != p.k || e.recipe != p.recipe || e.out_dtype != p.out_dtype ||
        e.accumulate != p.accumulate || e.sfa_k_major != p.sfa_k_major || e.sfb_k_major != p.sfb_k_major ||
        e.num_sms != p.num_sms) {
      continue;
    }
    // Stages are not matched: a candidate always has as many as fit (max_stages), which is what tune measured,
    // and a shared-memory layout change since (e.g. a staging tile dropped) must not orphan the entry. Nor is the
    // raster band: candidates carry the default, and the order tiles are visited in is valid for any of them.
    for (Fp8GemmChoice candidate : rank_fp8_gemm_configs(p, SIZE_MAX, Candidates::kAll)) {
      if (same_tile(candidate.config, e)) {
        candidate.launch.raster_band = e.raster_band;
        return candidate;
      }
    }
  }
  return std::nullopt;
}

Fp8GemmChoice choose_fp8_gemm_config(const Fp8GemmProblem& p) {
  // The tuning table was measured with split-K among the candidates: a listed problem takes its winner.
  if (auto tuned = tuned_fp8_gemm_choice(p)) return *tuned;
  const auto ranked = rank_fp8_gemm_configs(p, 1);
  return ranked.empty() ? Fp8GemmChoice{} : ranked.front();
}

std::string describe(const Fp8GemmProblem& p) {
  char text[256];
  std::snprintf(text, sizeof(text),
                "Fp8GemmProblem(m=%lld, n=%lld, k=%lld, recipe=%s, out=%s, accumulate=%d, sfa=%s, sfb=%s, "
                "num_sms=%d, tc_util=%d%s)",
                static_cast<long long>(p.m), static_cast<long long>(p.n), static_cast<long long>(p.k),
                p.recipe == device::kRecipe1D2D ? "1D2D" : "1D1D", p.out_dtype == device::kOutFp32 ? "fp32" : "bf16",
                p.accumulate, p.sfa_k_major ? "k-major" : "mn-major", p.sfb_k_major ? "k-major" : "mn-major",
                p.num_sms, p.tc_util, p.sf_rows_tma ? ", sf_rows_tma=1" : "");
  return text;
}

std::string describe(const Fp8GemmChoice& choice) {
  const auto& c = choice.config;
  // The consumer schedule's fields where they differ from the defaults, spelled as `--config` takes them, so a
  // printed pick can be timed again as it is (hopgemm bench --config, bench/try_configs.py).
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
