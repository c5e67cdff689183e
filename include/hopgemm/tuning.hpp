#pragma once
// Hooks for tests, tuning and benchmarks: an FP8 GEMM run with its kernel configuration changed by field name, the
// configuration an op would run for a problem (no GPU needed), ahead-of-time compilation of chosen configurations, and
// the grouped GEMMs' configuration overridden for a thread. Not needed to compute anything the ops cannot.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hopgemm/gemm.hpp"
#include "hopgemm/jit.hpp"
#include "hopgemm/tensor.hpp"

namespace hopgemm {

// fp8_gemm_nt with the heuristics' configuration for the problem, then `overrides` applied by name: the kernel's
// schedule fields (block_m, block_n, num_stages, cluster_m, cluster_n, promote_overlap, d_passes, d_in_stage,
// k_splits, sfb_regs, sf_chunks) and the launch parameters num_sms and raster_band. num_stages follows a new tile
// unless overridden. Throws Error(kInvalidArgument) for an unknown or fixed name, or a configuration that does not
// fit the problem (nothing is written then).
void fp8_gemm_nt_with_overrides(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                                const TensorView& d, const TensorView* c, const GemmOptions& options,
                                const std::map<std::string, int>& overrides, cudaStream_t stream);

// Which FP8 GEMM op a problem is for (fp8_gemm_config).
enum class Fp8GemmOpKind {
  kGemm,            // fp8_gemm_nt and its layout aliases: D[m, n] (+)= A[m, k] B[n, k]^T
  kMGroupedIds,     // m_grouped_fp8_gemm_{nt,nn}_contiguous, group-ids layout: num_groups groups of m rows (mean)
  kMGroupedRanges,  // the psum and packed contiguous layouts (m: expected rows per group) and masked (m: expected_m)
  kKGrouped,        // k_grouped_fp8_gemm_nt_contiguous: num_groups non-empty groups of M = m, N = n and mean K = k
};
// An FP8 GEMM problem without tensors, as an op's call describes it to the heuristics.
struct Fp8GemmProblemSpec {
  Fp8GemmOpKind op = Fp8GemmOpKind::kGemm;
  int64_t m = 0, n = 0, k = 0;
  int64_t num_groups = 1;
  bool recipe_1d1d = false;  // kGemm: recipe (1, 1, 128), else (1, 128, 128)
  bool fp32_out = false;     // kGemm: FP32 D, else BF16
  bool accumulate = false;   // kGemm: D = C + A B^T with C given (else D = A B^T)
  bool sfa_row_major = true;  // A's scales row-major [rows, ceil(K/128)] (else MN-major TMA-aligned); not kKGrouped
  bool sfb_row_major = true;  // kGemm 1D1D: B's scales likewise
  bool scale_rows_aligned = true;  // kGemm: row-major scales with 16-byte-aligned rows and base (TMA-loadable)
  int group_align = 128;  // kMGroupedIds: get_mk_alignment_for_contiguous_layout()
  int num_sms = 132;
  int tc_util = 100;
};
// The kernel configuration the op runs for `spec` (its tuning-table row or the model's choice), by field name: every
// field of the configuration, then the launch parameters num_sms and raster_band; with `overrides` applied as
// fp8_gemm_nt_with_overrides applies them. Pure (no GPU). Throws Error(kUnsupported) where no configuration fits and
// Error(kInvalidArgument) for an unknown or fixed override name, an invalid result or splits of K left empty.
std::map<std::string, int> fp8_gemm_config(const Fp8GemmProblemSpec& spec,
                                           const std::map<std::string, int>& overrides = {});
// Compiles the FP8 GEMM kernels of `configs` (each as fp8_gemm_config returns it: every config field by name; launch
// parameters are ignored) into the disk cache on `jobs` threads (0 = hardware concurrency), as precompile_suite does
// (the report's num_stored is left 0: not counted). Needs no GPU. Throws Error(kInvalidArgument) for a missing or unknown field or an invalid configuration.
PrecompileReport precompile_fp8_gemm_configs(const std::vector<std::map<std::string, int>>& configs, int jobs = 0);

// bf16_gemm_<layout> (layout "nt", "nn", "tn" or "tt") with the heuristics' configuration for the problem, then
// `overrides` applied by name: block_m, block_n, num_stages, cluster_m, cluster_n, d_passes, d_in_stage, k_splits and
// the launch parameters num_sms and raster_band; num_stages follows a new tile unless overridden. Throws
// Error(kInvalidArgument) for an unknown or fixed name or a configuration that does not fit the problem (nothing is
// written then). The test hook behind Python's `_bf16_gemm_with_config`.
void bf16_gemm_with_overrides(const std::string& layout, const TensorView& a, const TensorView& b, const TensorView& d,
                              const TensorView* c, const std::map<std::string, int>& overrides, cudaStream_t stream);

// The grouped and batched GEMMs (m_grouped_*, k_grouped_*, FP8 and BF16, and einsum / fp8_einsum) called on this
// thread from now on run with their configuration changed by `overrides` as fp8_gemm_nt_with_overrides takes them
// (what HOPGEMM_GROUPED_CONFIG does for a whole process, which it replaces while set); an empty map restores the heuristics' choice. Throws Error(kInvalidArgument)
// for an unknown or fixed name (the previous overrides stay then); a call whose resulting configuration is invalid
// throws before any launch.
void set_grouped_config_overrides(const std::map<std::string, int>& overrides);

}  // namespace hopgemm
