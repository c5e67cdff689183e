#pragma once
// Heuristics for the SM90 FP8 GEMM: GemmProblem -> Sm90Fp8GemmConfig. Pure and deterministic (no CUDA
// calls), unit-tested on the CPU with golden tables (DESIGN.md §2.4).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hopgemm/device/kernels/sm90_fp8_gemm_types.cuh"

namespace hopgemm::heuristics {

// Everything the choice depends on; a padding-free POD so it can key the memo table.
struct Fp8GemmProblem {
  int64_t m = 0, n = 0, k = 0;
  int32_t recipe = device::kRecipe1D2D;
  int32_t out_dtype = device::kOutBf16;
  int32_t accumulate = 0;
  int32_t sfa_k_major = 1;
  int32_t sfb_k_major = 1;
  int32_t num_sms = 132;
  int32_t tc_util = 100;  // percent (set_tc_util)
  int32_t sf_rows_tma = 0;  // 1: the row-major per-row scales (sfa; 1D1D sfb) have 16-byte-aligned rows: sf_chunks
};

// What a launch of the kernel needs beyond its compile-time config: the device reads these at run time, so one
// cubin serves every SM count and raster band.
struct Fp8GemmLaunch {
  int num_sms = 132;      // persistent CTAs (a multiple of the cluster size)
  int raster_band = 16;   // L2 rasterisation band, in cluster units
};
inline constexpr int kDefaultRasterBand = 16;

struct Fp8GemmChoice {
  device::Sm90Fp8GemmConfig config;
  Fp8GemmLaunch launch;
  double predicted_us = 0.0;  // the model's estimate (for HOPGEMM_PRINT_CONFIGS and tests)
  int num_tiles = 0;
  int num_waves = 0;
  bool dram_bound = false;  // the model's HBM term is its largest
};

// Whether a row-major [rows, sf_k] FP32 scale tensor (row stride in elements, base address) can come by TMA in chunks
// of 4 k-blocks (sf_chunks): 16-byte rows and base, and a chunk's width of columns.
inline bool sf_rows_tma_ok(int64_t sf_k, int64_t row_stride, uintptr_t base) {
  return sf_k >= device::kSfChunkKBlocks && row_stride % 4 == 0 && base % 16 == 0;
}

// The configuration for `problem` (num_tiles == 0 when none fits).
Fp8GemmChoice choose_fp8_gemm_config(const Fp8GemmProblem& problem);
// Up to `max_count` valid configurations, fastest predicted first (what `hopgemm tune` measures). The model's own
// ranking leaves out configurations it does not expect to pay (clusters with fewer tiles than two waves);
// `Candidates::kAll` keeps them, for tuning-table entries measured against the model's pick.
enum class Candidates { kModel, kAll };
std::vector<Fp8GemmChoice> rank_fp8_gemm_configs(const Fp8GemmProblem& problem, size_t max_count,
                                                 Candidates candidates = Candidates::kModel);

// One row of the tuning table measured by `hopgemm tune` (sm90_fp8_gemm_tuned.inc): a problem and its winner.
struct TunedFp8GemmEntry {
  int64_t m, n, k;
  int recipe, out_dtype, accumulate, sfa_k_major, sfb_k_major, num_sms;
  int block_m, block_n, num_stages, cluster_m, cluster_n, raster_band, k_splits;
};
std::span<const TunedFp8GemmEntry> tuned_fp8_gemm_table();
// Whether two schedules (configs or table rows) name the same tile: block, cluster and splits, what a table row fixes
// (stages follow the tile; the raster band is carried apart).
template <class X, class Y>
bool same_tile(const X& x, const Y& y) {
  return x.block_m == y.block_m && x.block_n == y.block_n && x.cluster_m == y.cluster_m && x.cluster_n == y.cluster_n &&
         x.k_splits == y.k_splits;
}
// The table's measured configuration for exactly `problem`, if `hopgemm tune` recorded one (what
// choose_fp8_gemm_config returns ahead of the model).
std::optional<Fp8GemmChoice> tuned_fp8_gemm_choice(const Fp8GemmProblem& problem);

// Largest stage count that fits the shared-memory budget (0 if none does).
int max_stages(device::Sm90Fp8GemmConfig config);

std::string describe(const Fp8GemmProblem& problem);
std::string describe(const Fp8GemmChoice& choice);

}  // namespace hopgemm::heuristics
