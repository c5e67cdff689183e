#pragma once
// Heuristics of the SM90 FP8 GEMM family: Fp8GemmProblem -> Sm90Fp8GemmConfig and its launch. The family's candidate
// tiles, schedule rules, per-tile rates and tie rules; the ranking loop and the time of a candidate are shared
// (ranker.hpp over cost_model.hpp), and a tuning table measured on the GPU (sm90_fp8_gemm_tuned.inc) answers the
// problems it lists. Pure and deterministic
// (no CUDA calls), tested on the CPU (DESIGN.md §2.4).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "heuristics/ranker.hpp"
#include "hopgemm/device/kernels/sm90_fp8_gemm_types.cuh"

namespace hopgemm::heuristics {

// Everything the choice depends on; a padding-free POD so it can key the memo table. Built by make_fp8_gemm_problem.
// Grouped GEMMs (grouping != none) are num_groups GEMMs of m x n x k each as the model sees them: m the (expected)
// rows per group for the M-grouped ones, k the (expected) K per group for the K-grouped one.
struct Fp8GemmProblem {
  int64_t m = 0, n = 0, k = 0;
  int64_t num_groups = 1;
  int32_t recipe = device::kRecipe1D2D;
  int32_t out_dtype = device::kOutBf16;
  int32_t accumulate = 0;
  int32_t sfa_k_major = 1;
  int32_t sfb_k_major = 1;
  int32_t num_sms = 132;
  int32_t tc_util = 100;  // percent (set_tc_util)
  int32_t sf_rows_tma = 0;  // 1: the row-major per-row scales (sfa; 1D1D sfb) have 16-byte-aligned rows: sf_chunks
  int32_t grouping = device::kGroupingNone;  // device::Sm90Grouping
  int32_t group_align = 0;  // m_group_ids: the groups' row alignment, which the tile rows must divide
};

// A per-row scale tensor [rows, ceil(K / 128)] as the caller passes it: row-major (k_major = 1) with its row stride in
// elements (none: contiguous) and base address, or MN-major TMA-aligned (k_major = 0).
struct ScaleRows {
  int k_major = 1;
  std::optional<int64_t> row_stride;
  uintptr_t base = 0;
};
// What an FP8 GEMM call brings to the choice: D[m, n] (+)= A[m, k] B[n, k]^T with the recipe's scales.
struct Fp8GemmCall {
  int64_t m = 0, n = 0, k = 0;
  int recipe = device::kRecipe1D2D;
  int out_dtype = device::kOutBf16;
  int accumulate = 0;
  ScaleRows sfa;
  ScaleRows sfb;  // 1D1D only: 1D2D's block scales run one kernel in either layout
  int num_sms = 132;
  int tc_util = 100;
};
// The problem of `call`: the one place an Fp8GemmProblem is built (validation, suites, tools, tests).
Fp8GemmProblem make_fp8_gemm_problem(const Fp8GemmCall& call);

// The grouped ops' problems (the one place they are built: the ops, suites, tools, tests).
// M-grouped (1D2D, BF16 D): `groups` experts of rows_per_group rows each as the model sees them (masked: expected_m;
// contiguous: the expected or mean rows per group), grouping m_group_ids (group_align: the layout's row alignment)
// or m_group_ranges.
Fp8GemmProblem make_m_grouped_problem(int grouping, int64_t rows_per_group, int64_t n, int64_t k, int64_t groups,
                                      int sfa_k_major, int group_align, int num_sms, int tc_util);
// K-grouped (1D1D, MN-major scales, FP32 D += A B^T): `groups` non-empty groups of mean K mean_k.
Fp8GemmProblem make_k_grouped_problem(int64_t m, int64_t n, int64_t mean_k, int64_t groups, int num_sms, int tc_util);

using Fp8GemmLaunch = GemmLaunch;
using Fp8GemmChoice = GemmChoice<device::Sm90Fp8GemmConfig>;
using Fp8GemmTile = GemmTile;

// The configuration the family runs `tile` with for `problem`: the problem's recipe, dtypes and scale layouts, the
// schedule rules (promote_overlap, sfb_regs, sf_chunks, D staged in the last stage) and as many stages as fit; none
// where that is invalid, shallower than 3 stages, or a split would be empty.
std::optional<device::Sm90Fp8GemmConfig> build_fp8_gemm_config(const Fp8GemmProblem& problem, const Fp8GemmTile& tile);
// `config` for `problem` with the model's prediction and the launch on the problem's SMs.
Fp8GemmChoice predict_fp8_gemm(const Fp8GemmProblem& problem, const device::Sm90Fp8GemmConfig& config,
                               int raster_band = kDefaultRasterBand);

// The configuration for `problem`: the tuning table's where it lists the problem, else the model's best
// (num_tiles == 0 when none fits).
Fp8GemmChoice choose_fp8_gemm_config(const Fp8GemmProblem& problem);
// Up to `max_count` of the model's candidates, fastest predicted first (what `hopgemm tune` measures).
std::vector<Fp8GemmChoice> rank_fp8_gemm_configs(const Fp8GemmProblem& problem, size_t max_count);

// One row of the tuning table written by `hopgemm tune` (sm90_fp8_gemm_tuned.inc): a problem as the op builds it,
// every field but tc_util (the measured best does not depend on what the model is told to expect), and the
// configuration and raster band measured fastest for it, as they are launched.
struct TunedFp8GemmEntry {
  int64_t m, n, k;
  int recipe, out_dtype, accumulate, sfa_k_major, sfb_k_major, sf_rows_tma, num_sms;
  device::Sm90Fp8GemmConfig config;
  int raster_band;
};
std::span<const TunedFp8GemmEntry> tuned_fp8_gemm_table();
// The table's row for exactly `problem`, as stored, with the model's prediction for it; none where no row lists it.
std::optional<Fp8GemmChoice> tuned_fp8_gemm_choice(const Fp8GemmProblem& problem);
// The row (without indent or comment) that lists `choice` for `problem`, as `hopgemm tune` writes it.
std::string tuned_fp8_gemm_row(const Fp8GemmProblem& problem, const Fp8GemmChoice& choice);

// Largest stage count that fits the shared-memory budget (0 if none does).
int max_stages(device::Sm90Fp8GemmConfig config);

std::string describe(const Fp8GemmProblem& problem);
std::string describe(const Fp8GemmChoice& choice);

}  // namespace hopgemm::heuristics
