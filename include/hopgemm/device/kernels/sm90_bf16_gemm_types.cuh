#pragma once
// Config and parameters of the SM90 BF16 GEMM (kernels/sm90_bf16_gemm.cuh).
// Compiles as device code (NVRTC, NVCC) and as plain host C++20: the host fills Sm90Bf16GemmParams.
//
// Computes D[M,N] (row-major) = A[M,K] . B[N,K]^T (+ D when accumulating); A, B BF16, each K-major or MN-major, FP32
// accumulation over all of K (no scales, no promotion), D BF16 or FP32.
//
// ---------------------------------------------------------------------------------------------
// Host contract. Every descriptor: cuTensorMapEncodeTiled, rank 2 (but where said), BFLOAT16 operands, INTERLEAVE_NONE,
// L2_PROMOTION_L2_256B, OOB_FILL_NONE (zeros), SWIZZLE_128B; dims/strides innermost first; global strides in bytes
// (multiples of 16); base addresses 16-byte aligned.
//   tma_a   K-major (a_k_major):  dims {K, M}  box {64, block_m / cluster_n}; MN-major: dims {M, K}  box {64, 64}
//   tma_a_tail (K-major A only) as tma_a, box {64, a_tail_rows}, when a_tail_rows > 0 (as the FP8 kernel's)
//   tma_b   K-major (b_k_major):  dims {K, N}  box {64, block_n / cluster_m} (the whole tile where that half is not
//           whole 8-row atoms: shared_operand_box_rows); MN-major: dims {N, K}  box {64, 64}; the M-grouped
//           schedules (grouping m_group_ids / m_group_ranges) stack a K-major B's groups along N (dims {K, G x N});
//           an MN-major B's groups are a rank-3 map's batches: dims {N, K, G}  box {64, 64, 1}
//   tma_d   as the FP8 kernel's (kernels/sm90_fp8_gemm_types.cuh): BFLOAT16 or FLOAT32 (out_dtype).
// An MN-major operand is loaded one 64-row box at a time (collective/sm90_operands.cuh: Sm90OperandTileLoad), so its
// tile rows (and a CTA pair's half of them) are whole multiples of 64.
// Launch, accumulation, split-K workspace and grouped schedules: as the FP8 kernel's.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/kernels/sm90_gemm_types.cuh"

namespace hopgemm::device {

// The config's fields, in declaration order: (name, default, tunable). Beside the fields every family declares
// (kernels/sm90_gemm_types.cuh: Sm90GemmConfig):
//   a_k_major, b_k_major  1: the operand is K-major (K contiguous), 0: MN-major (its M / N contiguous)
#define HOPGEMM_SM90_BF16_GEMM_FIELDS(X)                                                                        \
  X(block_m, 128, 1) X(block_n, 128, 1) X(num_stages, 4, 1) X(cluster_m, 1, 1) X(cluster_n, 1, 1)              \
  X(a_k_major, 1, 0) X(b_k_major, 1, 0) X(out_dtype, kOutBf16, 0) X(accumulate, 0, 0) X(d_passes, 1, 1)        \
  X(d_in_stage, 0, 1) X(k_splits, 1, 1) X(grouping, kGroupingNone, 0)

// All fields int: a structural C++20 NTTP, no padding, trivially hashable.
struct Sm90Bf16GemmConfig {
#define HOPGEMM_DECLARE_FIELD(name, default_value, tunable) int name = default_value;
  HOPGEMM_SM90_BF16_GEMM_FIELDS(HOPGEMM_DECLARE_FIELD)
#undef HOPGEMM_DECLARE_FIELD
};

// The BF16 family has no parameters of its own.
struct Sm90Bf16GemmParams : Sm90GemmParams {};

// Elements of K per k-block: one 128-byte row.
inline constexpr int kBf16BlockK = kSm90KBlockBytes / 2;

HOPGEMM_HOST_DEVICE constexpr Sm90GemmSmem smem_layout(const Sm90Bf16GemmConfig& c) { return gemm_smem_layout(c, 0, 0); }
HOPGEMM_HOST_DEVICE constexpr int smem_bytes(const Sm90Bf16GemmConfig& c) { return smem_layout(c).total; }

// The first rule `c` breaks, in words (for errors); nullptr when valid.
HOPGEMM_HOST_DEVICE constexpr const char* config_violation(const Sm90Bf16GemmConfig& c) {
  const bool flags_ok = (c.a_k_major == 0 || c.a_k_major == 1) && (c.b_k_major == 0 || c.b_k_major == 1) &&
                        (c.out_dtype == kOutBf16 || c.out_dtype == kOutFp32) && (c.accumulate == 0 || c.accumulate == 1);
  const bool tile_ok = (c.block_m == 64 || c.block_m == 128 || c.block_m == 256) && c.block_n >= 8 &&
                       c.block_n <= 256 && c.block_n % 8 == 0;
  // MN-major operands come in 64-row boxes: the tile's rows, and the half a CTA pair shares, whole boxes.
  const bool mn_major_ok = (c.a_k_major == 1 || c.cluster_n == 1 || c.block_m % 128 == 0) &&
                           (c.b_k_major == 1 || (c.block_n % (c.cluster_m == 2 ? 128 : 64) == 0));
  // Registers per consumer thread: waves x block_n / 2 FP32 sums (no separate tensor-core accumulator), at most 128
  // beside addresses and the epilogue (232 registers with two math warpgroups).
  const bool regs_ok = waves_per_wg(c) * c.block_n <= 256;
  // Grouped: no split-K; group-ids tiles lie inside one aligned group; row-masked tiles store BF16; K-grouped (K ranges
  // of MN-major operands: the BF16 ops have no patched-descriptor K-grouped form) adds FP32 D from registers (rows
  // clipped to the group).
  // Batched (einsum): a 3-D D stored, never accumulated; summed over batches: split-K over all the batches' K.
  const bool grouping_ok =
      c.grouping >= kGroupingNone && c.grouping <= kGroupingBatchSum && c.grouping != kGroupingK &&
      (c.grouping == kGroupingNone || c.grouping == kGroupingBatchSum || c.k_splits == 1) &&
      (c.grouping != kGroupingBatched || c.accumulate == 0) &&
      (c.grouping != kGroupingMIds || c.block_m == 64 || c.block_m == 128) &&
      (c.grouping != kGroupingMRanges || (c.out_dtype == kOutBf16 && c.accumulate == 0)) &&
      (c.grouping != kGroupingKRanges || reduces_from_registers(c));
  if (!flags_ok) return "a_k_major, b_k_major, out_dtype and accumulate take 0 or 1";
  if (!grouping_ok) return "grouping: none, group ids, row ranges, K ranges, batched or batch sum; split-K only ungrouped or summed over batches; group ids take 64/128-row tiles; row ranges a BF16 D; K ranges FP32 D accumulated from registers; batched no accumulation";
  if (!tile_ok) return "block_m is 64, 128 or 256; block_n is 8..256, a multiple of 8";
  if (!mn_major_ok) return "an MN-major operand's tile rows (a CTA pair's half of them) are a multiple of 64";
  if (!regs_ok) return "the sums do not fit the registers: waves x block_n <= 256";
  if (const char* rule = common_config_violation(c)) return rule;
  if (smem_bytes(c) > kSm90SmemCapacity) return "the stages and the D tile do not fit the 227 KB of shared memory";
  return nullptr;
}

HOPGEMM_HOST_DEVICE constexpr bool is_valid(const Sm90Bf16GemmConfig& c) { return config_violation(c) == nullptr; }

}  // namespace hopgemm::device
