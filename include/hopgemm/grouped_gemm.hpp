#pragma once
// MoE grouped FP8 GEMMs with fine-grained scaling (DeepGEMM's m_grouped_fp8_gemm_{nt,nn}_contiguous,
// m_grouped_fp8_gemm_nt_masked and k_grouped_fp8_gemm_nt_contiguous). A and B FP8 e4m3, K-major, FP32 scales.
//
// M-grouped (recipe (1, 128, 128)): G experts share N and K; expert g's rows of A meet B[g].
//   sfa per 1x128 of A (row-major or MN-major TMA-aligned), sfb per 128x128 block of each B[g]:
//   [G, ceil(N/128), ceil(K/128)] (row-major or MN-major per group). D BF16.
// K-grouped (recipe (1, 1, 128), MoE weight gradients): G groups share M and N, group g has its own K.
//   D[g] = C[g] + A_g @ B_g^T in FP32.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <span>

#include "hopgemm/gemm.hpp"
#include "hopgemm/tensor.hpp"

namespace hopgemm {

// How `grouped_layout` of an M-grouped contiguous GEMM describes the groups' rows of A [M_sum, K] and D [M_sum, N].
enum class ContiguousLayout {
  // int32 [M_sum]: the group of each row, -1 for padding. Every group's rows start at a multiple of
  // get_mk_alignment_for_contiguous_layout() (DeepGEMM's default layout). Only the first row of each tile (64 or 128
  // rows, dividing the alignment) is read: a tile whose id is -1 (or outside [0, G)) is a padding tile, never
  // computed (no loads, no MMA): its D rows receive zeros, as DeepGEMM writes them, or are left untouched with
  // MGroupedContiguousOptions::zero_padding_blocks = false. Padding rows inside a group's tile receive A_pad @ B[g]^T.
  kGroupIds,
  // int32 [G]: cumulative row ends (unaligned); group g starts at the end of group g-1 rounded up to the alignment
  // (DeepGEMM's use_psum_layout=True). D rows between a group's end and the next group's start are left untouched.
  // Ends (here and in kPacked) are read on the device and clamped: group g's rows are [start_g, max(start_g,
  // min(end_g, M_sum))) with start_g clamped to M_sum too, so an end below its start makes an empty group and no
  // value reaches past M_sum.
  kPsum,
  // int32 [G]: cumulative row ends; group g starts exactly where g-1 ends (no padding: a plain sort of tokens by
  // expert). Tiles that straddle two groups are computed once per group and each writes only its group's rows.
  kPacked,
};

struct MGroupedContiguousOptions : GemmOptions {
  ContiguousLayout layout = ContiguousLayout::kGroupIds;
  // kPsum / kPacked: the expected rows per group, for the heuristics (none: M_sum / G).
  std::optional<int64_t> expected_m;
  // kGroupIds: a tile of padding (id -1) gets zeros in D, stores only (DeepGEMM's behaviour); false: left untouched.
  bool zero_padding_blocks = true;
};

// D[rows of g] = A[rows of g] @ B[g]^T. a [M_sum, K], b [G, N, K], d [M_sum, N] BF16, sfa [M_sum, ceil(K/128)],
// sfb [G, ceil(N/128), ceil(K/128)], grouped_layout int32 on the device (see ContiguousLayout).
void m_grouped_fp8_gemm_nt_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                      const TensorView& sfb, const TensorView& d, const TensorView& grouped_layout,
                                      const MGroupedContiguousOptions& options, cudaStream_t stream);
// The same with B given as [G, K, N] (a transposed view of a K-major [G, N, K] buffer, as DeepGEMM's nn takes it).
void m_grouped_fp8_gemm_nn_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                      const TensorView& sfb, const TensorView& d, const TensorView& grouped_layout,
                                      const MGroupedContiguousOptions& options, cudaStream_t stream);

// d[g, :m_g] = a[g, :m_g] @ b[g]^T with m_g = min(masked_m[g], M_max), read on the device (no host sync; a CUDA graph
// replays correctly when masked_m changes). a [G, M_max, K], b [G, N, K], d [G, M_max, N] BF16,
// sfa [G, M_max, ceil(K/128)], sfb [G, ceil(N/128), ceil(K/128)], masked_m int32 [G] on the device.
// Exactly rows [0, m_g) of each d[g] are written; every other row of d is left untouched (a masked_m[g] above M_max
// or below 0 is clamped to [0, M_max]). expected_m > 0 steers the heuristics only.
void m_grouped_fp8_gemm_nt_masked(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                  const TensorView& sfb, const TensorView& d, const TensorView& masked_m,
                                  int64_t expected_m, const GemmOptions& options, cudaStream_t stream);

// D[g] = C[g] + A_g @ B_g^T (FP32), g = 0..G-1, recipe (1, 1, 128). `ks` (host) and `ks_tensor` (int32 [G] on the
// device, the same values) give each group's K, a multiple of 128 (0 allowed: D[g] = C[g]). The kernel reads
// ks_tensor, which no host check sees: group g's K is ks_tensor[g] rounded down to a multiple of 128, at least 0 and
// at most sum(ks) less the K taken by the groups before it (ks_tensor == ks: exactly ks), so values that disagree
// with ks compute with those clamped K and never read past a, b or the scales.
// a: FP8 holding sum(ks) x M elements, group g at [off_g * M, (off_g + k_g) * M) as a K-major [M, k_g] matrix
// (off_g = k_0 + ... + k_{g-1}); b likewise with N. sfa [M, sum(ks) / 128] and sfb [N, sum(ks) / 128] FP32, MN-major
// TMA-aligned (strides (1, align(M, 4)): deep_gemm passes sf.T of a [sum(ks) / 128, M] tensor; a row-major one is
// refused with a pointer to get_mn_major_tma_aligned_tensor).
// d [G, M, N] FP32 contiguous; c [G, M, N] FP32 contiguous or d itself (null: D[g] = A_g @ B_g^T).
void k_grouped_fp8_gemm_nt_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                      const TensorView& sfb, const TensorView& d, std::span<const int64_t> ks,
                                      const TensorView& ks_tensor, const TensorView* c, const GemmOptions& options,
                                      cudaStream_t stream);
// Always throws kUnsupported on SM90: A and B would be MN-major, which SM90's FP8 WGMMA cannot read without a
// transposed copy (use k_grouped_fp8_gemm_nt_contiguous with K-major operands).
void k_grouped_fp8_gemm_tn_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                      const TensorView& sfb, const TensorView& d, std::span<const int64_t> ks,
                                      const TensorView& ks_tensor, const TensorView* c, const GemmOptions& options,
                                      cudaStream_t stream);

// BF16 (no scales): D[rows of g] = A[rows of g] @ B[g]^T with a [M_sum, K] K-major and b [G, N, K] BF16, d [M_sum, N]
// BF16, grouped_layout as the FP8 op's (ContiguousLayout); K a multiple of 8. B's major is read from its strides, as
// DeepGEMM reads it: K-major (stride(2) == 1; its groups stacked densely along N: stride(0) == N * stride(1)) or
// MN-major (stride(1) == 1, e.g. strides (N * K, 1, N); K and group strides multiples of 16 bytes, the group stride
// positive where G > 1), both read in place.
void m_grouped_bf16_gemm_nt_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                       const TensorView& grouped_layout, const MGroupedContiguousOptions& options,
                                       cudaStream_t stream);
// The same with B given as [G, K, N]: the nt op on b's transposed view, as DeepGEMM's nn (a contiguous [G, K, N] is an
// MN-major B; a transposed view of a K-major [G, N, K] buffer a K-major one).
void m_grouped_bf16_gemm_nn_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                       const TensorView& grouped_layout, const MGroupedContiguousOptions& options,
                                       cudaStream_t stream);
// BF16 masked: d[g, :m_g] = a[g, :m_g] @ b[g]^T with m_g = min(masked_m[g], M_max) read on the device, as the FP8 op;
// a [G, M_max, K], b [G, N, K] BF16 K-major, d [G, M_max, N] BF16.
void m_grouped_bf16_gemm_nt_masked(const TensorView& a, const TensorView& b, const TensorView& d,
                                   const TensorView& masked_m, int64_t expected_m, const GemmOptions& options,
                                   cudaStream_t stream);
// BF16 K-grouped (weight gradients): D[g] = C[g] + A_g @ B_g^T in FP32 with a [sum(ks), M] and b [sum(ks), N] BF16
// (rows contiguous: MN-major operands, as DeepGEMM's tn takes them; row strides multiples of 8 elements), group g
// the rows [off_g, off_g + ks[g]) of both; ks multiples of 64 (0 allowed: D[g] = C[g]), ks_tensor the same as int32
// [G] on the device; d [G, M, N] FP32 contiguous; c null (D[g] = A_g B_g^T), d itself, or a distinct [G, M, N] FP32
// (copied first).
void k_grouped_bf16_gemm_tn_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                       std::span<const int64_t> ks, const TensorView& ks_tensor, const TensorView* c,
                                       const GemmOptions& options, cudaStream_t stream);

// Row alignment of the groups in the M-grouped contiguous layouts (kGroupIds, kPsum): 128 unless set. Settable to a
// positive multiple of 64 (the tile rows of the kGroupIds kernels divide it); process-wide.
void set_mk_alignment_for_contiguous_layout(int alignment);

}  // namespace hopgemm
