#pragma once
// Heuristics of the SM90 BF16 GEMM family: Bf16GemmProblem -> Sm90Bf16GemmConfig and its launch. The family's
// candidate tiles, config builder and per-tile rates; the ranking loop and the time of a candidate are shared
// (ranker.hpp over cost_model.hpp). Pure and deterministic (no CUDA calls), tested on the CPU.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "heuristics/ranker.hpp"
#include "hopgemm/device/kernels/sm90_bf16_gemm_types.cuh"

namespace hopgemm::heuristics {

// Everything the choice depends on; a padding-free POD so it can key the memo table. Grouped GEMMs (grouping != none)
// are num_groups GEMMs of m x n x k each as the model sees them (m the expected rows per group for the M-grouped ones,
// k the mean K per group for the K-grouped one).
struct Bf16GemmProblem {
  int64_t m = 0, n = 0, k = 0;
  int64_t num_groups = 1;
  int32_t a_k_major = 1;
  int32_t b_k_major = 1;
  int32_t out_dtype = device::kOutBf16;
  int32_t accumulate = 0;
  int32_t num_sms = 132;
  int32_t tc_util = 100;  // percent (set_tc_util)
  int32_t grouping = device::kGroupingNone;  // device::Sm90Grouping
  int32_t group_align = 0;  // m_group_ids: the groups' row alignment, which the tile rows must divide
};

// The M-grouped ops' problems: `groups` experts of rows_per_group rows each as the model sees them (masked:
// expected_m; contiguous: the expected or mean rows per group), grouping m_group_ids (group_align: the layout's row
// alignment, which tile rows must divide) or m_group_ranges; A K-major, B K-major or MN-major (b_k_major: the
// contiguous layouts take either), BF16 D.
Bf16GemmProblem make_bf16_m_grouped_problem(int grouping, int64_t rows_per_group, int64_t n, int64_t k, int64_t groups,
                                            bool b_k_major, int group_align, int num_sms, int tc_util);

// The K-grouped op's problem (k_grouped_*_tn: MN-major A and B, FP32 D += A B^T): `groups` non-empty groups of mean K
// mean_k, grouping k_ranges.
Bf16GemmProblem make_bf16_k_grouped_problem(int64_t m, int64_t n, int64_t mean_k, int64_t groups, int num_sms,
                                            int tc_util);

// einsum's batched problems: `batches` GEMMs of m x n x k each (grouping batched), or one m x n GEMM summed over
// `batches` batches of K k each (grouping batch_sum: the model sees K = batches x k rounded up to whole k-blocks, over
// which split-K may split).
Bf16GemmProblem make_bf16_batched_problem(int grouping, int64_t m, int64_t n, int64_t k, int64_t batches,
                                          bool b_k_major, int out_dtype, bool accumulate, int num_sms, int tc_util);

using Bf16GemmChoice = GemmChoice<device::Sm90Bf16GemmConfig>;

// The configuration the family runs `tile` with for `problem` (as many stages as fit); none where that is invalid,
// shallower than 3 stages, or a split would be empty.
std::optional<device::Sm90Bf16GemmConfig> build_bf16_gemm_config(const Bf16GemmProblem& problem, const GemmTile& tile);
// The model's best configuration for `problem` (num_tiles == 0 when none fits).
Bf16GemmChoice choose_bf16_gemm_config(const Bf16GemmProblem& problem);
// Up to `max_count` of the model's candidates, fastest predicted first.
std::vector<Bf16GemmChoice> rank_bf16_gemm_configs(const Bf16GemmProblem& problem, size_t max_count);

std::string describe(const Bf16GemmProblem& problem);
std::string describe(const Bf16GemmChoice& choice);

}  // namespace hopgemm::heuristics
