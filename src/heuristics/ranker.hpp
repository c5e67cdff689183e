#pragma once
// The family-neutral ranking of GEMM configurations over the shared cost model (cost_model.hpp). A family supplies its
// candidates (tiles in the order that wins the model's ties), the config it runs a tile with, what its kernel sustains
// on a config (TileRates) and its own tie rules; the loop that builds, predicts, filters CTA pairs, adds split-K
// variants, sorts and truncates is this one, for every family. Pure: no CUDA calls.
#include <cmath>
#include <cstddef>
#include <optional>
#include <vector>

#include "heuristics/cost_model.hpp"
#include "hopgemm/device/kernels/sm90_gemm_types.cuh"

namespace hopgemm::heuristics {

// What a launch of a kernel needs beyond its compile-time config: the device reads these at run time, so one cubin
// serves every SM count and raster band.
struct GemmLaunch {
  int num_sms = 132;     // persistent CTAs (a multiple of the cluster size)
  int raster_band = 16;  // L2 rasterisation band, in cluster units
};
inline constexpr int kDefaultRasterBand = 16;

// A configuration with the model's prediction and its launch on the problem's SMs.
template <class Config>
struct GemmChoice {
  Config config;
  GemmLaunch launch;
  double predicted_us = 0.0;  // the model's estimate (for HOPGEMM_PRINT_CONFIGS and tests)
  int num_tiles = 0;
  int num_waves = 0;
  bool dram_bound = false;  // the model's HBM term is its largest
};

// A candidate's tile: block, CTA pair (cluster_m = 2 shares B, cluster_n = 2 shares A) and K splits.
struct GemmTile {
  int block_m = 128, block_n = 128;
  int cluster_m = 1, cluster_n = 1;
  int k_splits = 1;
};

// `config` (any family's: block_m, block_n, cluster_m, cluster_n, k_splits) for the model's `gemm` with its k-block
// and the family's rates on it.
template <class Config>
GemmChoice<Config> predict_config(const ModelGemm& gemm, const Config& config, int block_k, const TileRates& rates,
                                  int raster_band) {
  const ModelTile tile{config.block_m, config.block_n, block_k, config.cluster_m, config.cluster_n, config.k_splits};
  const Prediction pred = predict(gemm, tile, rates);
  const GemmLaunch launch{grid_sms(gemm.num_sms, config.cluster_m * config.cluster_n), raster_band};
  return {config, launch, pred.us, static_cast<int>(pred.tiles), static_cast<int>(pred.waves), pred.dram_bound};
}

// The deepest pipeline of `config` (any family's, sized by its device::smem_bytes) that fits the shared memory; 0 if
// none does.
template <class Config>
int deepest_stages(Config config) {
  for (int stages = 16; stages >= 2; --stages) {
    config.num_stages = stages;
    if (smem_bytes(config) <= device::kSm90SmemCapacity) return stages;  // the family's, found by ADL
  }
  return 0;
}

// A family F of GEMM kernels, as the ranker asks it:
//   using Problem, Config;
//   ModelGemm model(p)                            the problem as the cost model sees it
//   int block_k(p)                                K per pipeline stage
//   std::vector<GemmTile> candidates(p)           unsplit tiles, in the order that wins the model's ties
//   std::optional<Config> build(p, tile)          the config the family runs the tile with (tile.k_splits honoured)
//   TileRates rates(config)                       what its kernel sustains on the config
//   void tie_rules(p, ranked)                     its reorderings of the front of the sorted ranking
template <class F>
std::vector<GemmChoice<typename F::Config>> rank_configs(const typename F::Problem& p, size_t max_count) {
  using Choice = GemmChoice<typename F::Config>;
  const ModelGemm gemm = F::model(p);
  const int block_k = F::block_k(p);
  auto choice_of = [&](const typename F::Config& c) {
    return predict_config(gemm, c, block_k, F::rates(c), kDefaultRasterBand);
  };
  std::vector<Choice> ranked;
  for (GemmTile tile : F::candidates(p)) {
    // A CTA pair on fewer than two SMs (set_num_sms(1)) has no grid to run on (and the model would divide by it).
    if (grid_sms(gemm.num_sms, tile.cluster_m * tile.cluster_n) <= 0) continue;
    const auto c = F::build(p, tile);
    if (!c) continue;
    const Choice choice = choice_of(*c);
    // A CTA pair pays only where each CTA has a partner tile in most waves (dgrad 4096x512x32768, one wave of 128
    // tiles, ran 2% faster with A-sharing pairs: the tuning table has it).
    const int64_t grid = choice.launch.num_sms;  // 64-bit: 2 * grid of a num_sms near INT_MAX (fp8_gemm_config)
    const bool paired = c->cluster_m * c->cluster_n > 1;
    if (paired && choice.num_tiles < 2 * grid) continue;
    ranked.push_back(choice);
    if (paired || choice.num_tiles > kMaxWavesForSplitK * grid) continue;
    const double k_blocks = std::ceil(double(gemm.k) / block_k);
    for (int k_splits : kSplitKChoices) {
      if (k_blocks < double(kMinKBlocksPerSplit) * k_splits) continue;
      if (k_splits > kMaxShortSplits && (k_blocks < double(kMinKBlocksPerWideSplit) * k_splits ||
                                         tile.block_m * tile.block_n < kMinWideSplitTileArea)) {
        continue;
      }
      tile.k_splits = k_splits;
      if (const auto split = F::build(p, tile)) ranked.push_back(choice_of(*split));
    }
  }
  sort_by_prediction(ranked);
  F::tie_rules(p, ranked);
  if (ranked.size() > max_count) ranked.resize(max_count);
  return ranked;
}

}  // namespace hopgemm::heuristics
