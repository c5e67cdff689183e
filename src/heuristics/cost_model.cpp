#include "heuristics/cost_model.hpp"

#include <algorithm>
#include <cmath>

namespace hopgemm::heuristics {
namespace {

// The fitted constants come from bench/fit_heuristics.py (which reads this file's and the families' constexpr
// doubles) on `hopgemm tune` logs, checked on shapes outside the fit (docs/DESIGN_NOTES.md, the cost model).
constexpr double kE4m3PeakTflops = 1979.0;
constexpr double kBf16PeakTflops = 989.0;
constexpr double kDramGBps = 3000.0;     // a device-to-device copy
constexpr double kSmsForFullDram = 66.0;  // fewer SMs' TMA streams do not saturate HBM
// What one SM takes in from the L2 (its whole A and B tiles, multicast or not; fitted). Without it the L2 output
// alone made narrow tiles and clusters look L2-bound: held-out picks 1.044x of the best measured, 1.003x with it.
constexpr double kSmIngressGBps = 73.5;
constexpr double kTileOverheadUs = 1.89;  // a unit's prologue, epilogue and last promotion (fitted)
// Launch and ramp, plus (in the fitted timings) the write-back of the L2 flush's dirty lines (fitted).
constexpr double kLaunchUs = 6.7;
// Fused split-K: the split that counts last waits for the others and sums their partials (fitted on decode shapes).
constexpr double kSplitKFusedFixedUs = 2.98;
// It reads the other k_splits - 1 partial tiles (FP32), each math warpgroup its own rows, at this many times the
// SM-ingress time of those bytes (fitted: 128x160 split 4 at 384x1536x16384 ran 34.0 us; charging the whole tile at
// the ingress rate predicted 38.0).
constexpr double kSplitKPartialsReadFactor = 2.27;
constexpr double kPartialBytes = 4.0;  // FP32 partials

}  // namespace

double peak_tflops(MmaDtype dtype) { return dtype == MmaDtype::kBf16 ? kBf16PeakTflops : kE4m3PeakTflops; }

int operand_bytes(MmaDtype dtype) { return dtype == MmaDtype::kBf16 ? 2 : 1; }

double wgmma_smem_efficiency(int block_n) {
  const double math_cycles = block_n / 2.0;
  const double smem_cycles = (64.0 * 32.0 + block_n * 32.0) / 128.0;
  return std::min(1.0, math_cycles / smem_cycles);
}

Prediction predict(const ModelGemm& g, const ModelTile& t, const TileRates& rates) {
  // Work units are (tile, split) pairs; a unit runs ceil(k_blocks / k_splits) k-blocks. A CTA pair's tiles run
  // together: where the tile count along its axis is odd, the scheduler runs a phantom tile (loads for its partner's
  // multicast, no store) that takes an SM like a real one (384x16384x16384: 290.2 -> 186.4 us once the model saw it).
  const int64_t tiles_m = (g.m + t.block_m - 1) / t.block_m;
  const int64_t tiles_n = (g.n + t.block_n - 1) / t.block_n;
  const int64_t cluster_tiles = (tiles_m + t.cluster_m - 1) / t.cluster_m * t.cluster_m *
                                ((tiles_n + t.cluster_n - 1) / t.cluster_n * t.cluster_n);
  const int64_t units = g.groups * cluster_tiles * t.k_splits;
  const int num_sms = grid_sms(g.num_sms, t.cluster_m * t.cluster_n);
  Prediction out;
  out.tiles = g.groups * tiles_m * tiles_n;
  out.waves = (units + num_sms - 1) / num_sms;
  const double waves = static_cast<double>(out.waves);
  const double k_blocks = std::ceil(static_cast<double>(g.k) / t.block_k);
  const double unit_k_blocks = std::ceil(k_blocks / t.k_splits);
  const double k_block_bytes = static_cast<double>(t.block_k * operand_bytes(g.dtype));  // per operand row

  // Compute: every wave costs one unit's MMA time on one SM, each k-block at least the floor.
  const double per_sm_tflops = peak_tflops(g.dtype) * g.tc_util / 100.0 / num_sms * rates.mma_efficiency;
  const double k_block_us = 2.0 * t.block_m * t.block_n * t.block_k / (per_sm_tflops * 1e12) * 1e6;
  const double compute_us = waves * (unit_k_blocks * std::max(k_block_us, rates.k_block_floor_us) + kTileOverheadUs);

  // HBM: each operand read once (the L2 keeps the other tiles' reuse), D (or the partials) written once; fewer busy
  // SMs than saturate HBM stretch it.
  const double d_bytes = static_cast<double>(g.out_bytes) * g.m * g.n * (g.accumulate ? 2 : 1);
  const double partial_bytes = kPartialBytes * t.k_splits * g.m * g.n;
  const double out_bytes = t.k_splits > 1 ? partial_bytes : d_bytes;
  const double operand_bytes_total = (double(g.m) * g.k + double(g.n) * g.k) * operand_bytes(g.dtype);
  const double dram_bytes = g.groups * (operand_bytes_total + out_bytes);
  const double busy_sms = std::min<double>(units, num_sms);
  const double dram_us = dram_bytes / (kDramGBps * 1e3 * std::min(1.0, busy_sms / kSmsForFullDram));

  // L2 -> SM: each unit streams its A and B slices out of the L2 (a CTA pair's shared operand once), and each SM
  // takes in its whole tiles, wave after wave.
  const double a_bytes = double(t.block_m) * unit_k_blocks * k_block_bytes / t.cluster_n;
  const double b_bytes = double(t.block_n) * unit_k_blocks * k_block_bytes / t.cluster_m;
  const double l2_us = units * (a_bytes + b_bytes) / (rates.l2_gbps * 1e3);
  const double ingress_us = waves * unit_k_blocks * double(t.block_m + t.block_n) * k_block_bytes / (kSmIngressGBps * 1e3);

  // Split-K: the tile's last split reads the others' partials and writes D (reading it too when accumulating).
  const double wg_rows = double(t.block_m) / rates.math_wgs;
  const double last_split_us =
      kSplitKPartialsReadFactor * (t.k_splits - 1) * wg_rows * t.block_n * kPartialBytes / (kSmIngressGBps * 1e3);
  const double reduce_us =
      t.k_splits > 1 ? kSplitKFusedFixedUs + last_split_us + g.groups * (partial_bytes + d_bytes) / (kDramGBps * 1e3)
                     : 0.0;

  out.dram_bound = dram_us >= std::max({compute_us, l2_us, ingress_us});
  out.us = kLaunchUs + std::max({compute_us, dram_us, l2_us, ingress_us}) + reduce_us;
  return out;
}

}  // namespace hopgemm::heuristics
