#pragma once
// Config and parameters of the SM90 FP8 fine-grained-scaled GEMM (kernels/sm90_fp8_gemm.cuh).
// Compiles as device code (NVRTC, NVCC) and as plain host C++20: the host fills Sm90Fp8GemmParams.
//
// Computes D[M,N] (row-major) = A[M,K] . B[N,K]^T (+ D when accumulating); A, B FP8 e4m3, K-major.
//   recipe 1D2D: sfa FP32 per (row, 128-K block), sfb FP32 per (128 x 128) block, [ceil(N/128), ceil(K/128)] row-major.
//   recipe 1D1D: sfa and sfb both FP32 per (row, 128-K block).
// Dequantisation: a = a_fp8 * sfa[m][k/128], b = b_fp8 * sfb[..][k/128]. K may end inside a 128-block:
// the partial last block uses scale column ceil(K/128)-1, TMA zero-fills the missing K.
//
// ---------------------------------------------------------------------------------------------
// Host contract. Every descriptor: cuTensorMapEncodeTiled, rank 2, INTERLEAVE_NONE,
// L2_PROMOTION_L2_256B, OOB_FILL_NONE (zeros), element strides {1, 1}; dims/strides innermost first;
// global strides in bytes (multiples of 16); base addresses 16-byte aligned.
//   tma_a   UINT8        dims {K, M}          stride {lda bytes}      box {128, block_m / cluster_n}   SWIZZLE_128B
//   tma_a_tail UINT8     as tma_a, box {128, a_tail_rows}: only when a_tail_rows > 0 (cluster_n == 1 and M not a
//           multiple of block_m; its last tile row loads from it). tma_a may be left zeroed when M < block_m.
//   tma_b   UINT8        dims {K, N}          stride {ldb bytes}      box {128, block_n / cluster_m}   SWIZZLE_128B
//   tma_sfa FLOAT32      dims {M, ceil(K/128)} stride {align(M,4)*4}  box {block_m, 1}                 SWIZZLE_NONE
//           only when sfa_k_major == 0 (MN-major "TMA-aligned" sfa, strides (1, align(M, 4)) elements).
//   tma_sfb FLOAT32      dims {N, ceil(K/128)} stride {align(N,4)*4}  box {block_n, 1}                 SWIZZLE_NONE
//           only for recipe 1D1D with sfb_k_major == 0.
//   tma_d   BFLOAT16 or FLOAT32 (out_dtype)  dims {N, M}  stride {ldd bytes}
//           box {d_swizzle_bytes(cfg) / elem_bytes, block_m / num_math_wgs(cfg)}, swizzle d_swizzle_bytes(cfg)
//           (128 -> SWIZZLE_128B, 64 -> 64B, 32 -> 32B, 16 -> SWIZZLE_NONE).
// Unused descriptors may be left zeroed. The multicast operand's box is half the tile (each CTA of the
// pair loads one half and multicasts it), hence the "/ cluster" in the box rows; where that half is not whole 8-row
// swizzle atoms (block_n of 8 mod 16 on a 2x1 pair) the box is the whole tile, which the first CTA loads
// (shared_operand_box_rows).
// Plain pointers: sfa when sfa_k_major == 1 ([M, ceil(K/128)], element (r, kb) at r * sfa_ld + kb * sfa_kstride:
// row-major, or MN-major where tiles start at rows TMA cannot (below); read with ld.global, 16-byte vectors when sfa
// is 16-byte aligned, sfa_kstride == 1 and sfa_ld % 4 == 0, else scalar); sfb (cp.async)
// for 1D2D ([ceil(N/128), ceil(K/128)], element (r, kb) at r * sfb_ld + kb * sfb_kstride: row-major or MN-major)
// and for 1D1D with sfb_k_major == 1
// ([N, ceil(K/128)], row stride sfb_ld).
// Launch: grid (num_sms, 1, 1) with num_sms a multiple of the cluster size, cluster (cluster_m * cluster_n, 1, 1) when > 1, block
// (num_threads(cfg), 1, 1), dynamic smem smem_bytes(cfg) (raise CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES),
// optionally CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION (the kernel calls griddepcontrol.wait
// before touching global memory). Accumulation: the kernel adds into D; when C is
// distinct from D the host copies C into D first. M >= 1 (return early on M == 0), N % 8 == 0 (BF16 D) / % 4 (FP32 D), K % 16 == 0.
// num_sms must not exceed the CTAs that can be co-resident (with clusters: 2 x cuOccupancyMaxActiveClusters),
// else the persistent grid runs in two waves. Launch through the driver from a cubin (NVRTC or nvcc -cubin):
// nvcc cannot emit host launch stubs for a kernel templated on a class-type NTTP.
// ---------------------------------------------------------------------------------------------

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/kernels/sm90_gemm_types.cuh"

namespace hopgemm::device {

enum Sm90Fp8Recipe : int { kRecipe1D2D = 0, kRecipe1D1D = 1 };

// The config's fields, declared once: X(name, default, tunable). The struct below, the JIT's rendering of an
// instantiation, the kernel-cache key, printing and the override-by-name hook are all derived from this list.
// Tunable fields are a kernel's schedule (what `hopgemm tune` and `--config` may set); the others follow from the
// problem (recipe, dtypes, scale layouts).
//   block_m          64 (1 math warpgroup), 128 or 256 (2), 192 (3)
//   block_n          multiple of 8, <= 256 (1D2D: multiple of 16)
//   num_stages       shared-memory pipeline depth
//   cluster_m/_n     2: a CTA pair sharing B (adjacent m-blocks) / A (adjacent n-blocks) by TMA multicast
//   accumulate       1: D += result (red.global from registers, or TMA reduce-add: reduces_from_registers)
//   sfa_k_major      0: sfa MN-major TMA-aligned (TMA), 1: row-major [M, ceil(K/128)] (ld.global)
//   sfb_k_major      1D1D only: 0 MN-major TMA-aligned (TMA), 1 row-major (cp.async)
//   promote_overlap  1: two accumulator sets. One 64-row wave per math warpgroup (block_n <= 128): block kb+1's
//                    WGMMA overlaps kb's promotion. Two waves (block_n <= 96): both waves are issued together
//                    and wave 0 is promoted while wave 1 runs
//   d_passes         epilogue passes over the tile's columns (2 frees half the D staging tile)
//   d_in_stage       1: no dedicated D tile; D is staged in the A slot of the tile's last pipeline stage
//   k_splits         > 1: split-K; each split counts itself on its tile's counter and the last one sums every
//                    split's FP32 partial in split order and stores D (epilogue/sm90_splitk_fused.cuh)
//   sfb_regs         1 (1D2D): the math warps hold the B block scales in registers, 32 k-blocks per chunk
//   sf_chunks        1: the row-major per-row scales come by TMA, 4 k-blocks of every row per box, into a ring of
//                    their own instead of every stage (the host checks 16-byte rows: sf_rows_tma_ok)
//   grouping         which scheduler hands out the tiles (Sm90Grouping): dense, or one of the MoE grouped layouts
//   head_left/_mid/_right  fp8_gemm_nt_skip_head_mid's head splits: D holds heads of left + mid + right columns and
//                    the GEMM's heads of left + right columns are stored around the middle ones (the epilogue's
//                    column map, epilogue/sm90_column_map.cuh); head_mid == 0: every column where it is
// The SM count and the raster band are launch parameters (Sm90Fp8GemmParams): one cubin serves every device size.
#define HOPGEMM_SM90_FP8_GEMM_FIELDS(X)                                                                         \
  X(block_m, 128, 1) X(block_n, 128, 1) X(num_stages, 4, 1) X(cluster_m, 1, 1) X(cluster_n, 1, 1)              \
  X(recipe, kRecipe1D2D, 0) X(out_dtype, kOutBf16, 0) X(accumulate, 0, 0) X(sfa_k_major, 0, 0)                 \
  X(sfb_k_major, 1, 0) X(promote_overlap, 0, 1) X(d_passes, 1, 1) X(d_in_stage, 0, 1) X(k_splits, 1, 1)         \
  X(sfb_regs, 0, 1) X(sf_chunks, 0, 1) X(grouping, kGroupingNone, 0) X(head_left, 0, 0) X(head_mid, 0, 0)           \
  X(head_right, 0, 0)

// All fields int: a structural C++20 NTTP, no padding, trivially hashable.
struct Sm90Fp8GemmConfig {
#define HOPGEMM_DECLARE_FIELD(name, default_value, tunable) int name = default_value;
  HOPGEMM_SM90_FP8_GEMM_FIELDS(HOPGEMM_DECLARE_FIELD)
#undef HOPGEMM_DECLARE_FIELD
};

// sf_chunks: k-blocks per chunk (one 16-byte TMA row of FP32 scales) and slots in the chunk ring. The producer runs
// at most num_stages k-blocks ahead; two 4-k-block slots let it fill the next chunk while one is read.
inline constexpr int kSfChunkKBlocks = 4;
inline constexpr int kSfChunkSlots = 2;
// Whether a row-major [rows, sf_k] FP32 scale tensor (row stride in elements, base address) can come by TMA in
// chunks (sf_chunks): 16-byte rows and base, and at least a chunk's width of columns.
HOPGEMM_HOST_DEVICE constexpr bool sf_rows_tma_ok(i64 sf_k, i64 row_stride, u64 base) {
  return sf_k >= kSfChunkKBlocks && row_stride % 4 == 0 && base % 16 == 0;
}

// The FP8 family's scale factors (the producer's and the scale reader's inputs; collective/sm90_fp8_scales.cuh).
struct Sm90Fp8ScaleParams {
  TmaDescriptor tma_sfa;
  TmaDescriptor tma_sfb;
  const float* sfa;  // row-major sfa (sfa_k_major == 1)
  const float* sfb;  // 1D2D block sfb, or row-major 1D1D sfb
  i32 sfa_ld;        // row stride (elements) of sfa read by pointer (staged): row-major ld, or 1 (MN-major, staged)
  i32 sfa_kstride;   // k-block stride (elements) of sfa read by pointer: 1 row-major, its column stride MN-major
  i32 sfb_ld;        // row stride (elements) of sfb when read by pointer
  i32 sfb_kstride;   // k-block stride (elements) of 1D2D sfb: 1 row-major, align(ceil(N/128), 4) MN-major
  i32 sfa_group_k_blocks;  // MN-major masked sfa ([G x ceil(K/128)] columns of M_max rows): ceil(K/128); else 0
  i64 sfb_group_stride;    // 1D2D sfb: elements between the groups' block scales
  i64 sfa_group_stride;    // batched, row-major sfa read by pointer: elements between the batches' scales
};

struct Sm90Fp8GemmParams : Sm90GemmParams {
  Sm90Fp8ScaleParams scales;
};
// 1D1D column scales (block_n / 4 registers) held across a k-block's waves where they fit beside the promoted and
// tensor-core accumulators; else each promotion reads them from shared memory (the kernel and the cost model ask).
// 256x128 1D1D (224 registers of accumulators and scales) spilled 4 bytes with them in registers; 128x160 (200) and
// the pipelined 256x80 (180) do not.
HOPGEMM_HOST_DEVICE constexpr bool col_scales_in_regs(const Sm90Fp8GemmConfig& c) {
  const int waves = waves_per_wg(c), acc_sets = c.promote_overlap == 1 ? 2 : 1;
  return c.recipe != kRecipe1D1D || waves * c.block_n / 2 + acc_sets * c.block_n / 2 + c.block_n / 4 <= 200;
}

// The FP8 scales' shared memory, inside the family-neutral carve-up (Sm90GemmSmem: its `scales` and `scale_barriers`
// regions): [SFA x stages][SFB x stages][scale chunk slots] and the chunk ring's barriers. Scale regions are 128-aligned
// (TMA boxes).
struct Sm90Fp8GemmSmem : Sm90GemmSmem {
  int sfa_stage, sfb_stage;     // bytes of one stage's scale regions
  int sf_chunk_sfa, sf_chunk;   // sf_chunks: bytes of a chunk slot's sfa part and of the whole slot
  int sfa, sfb, sf_chunks, sf_full, sf_empty;  // offsets
};
// sf_chunks: which scales come in chunks (the row-major per-row ones).
HOPGEMM_HOST_DEVICE constexpr bool sfa_chunked(const Sm90Fp8GemmConfig& c) { return c.sf_chunks == 1 && c.sfa_k_major == 1; }
HOPGEMM_HOST_DEVICE constexpr bool sfb_chunked(const Sm90Fp8GemmConfig& c) {
  return c.sf_chunks == 1 && c.recipe == kRecipe1D1D && c.sfb_k_major == 1;
}
HOPGEMM_HOST_DEVICE constexpr Sm90Fp8GemmSmem smem_layout(const Sm90Fp8GemmConfig& c) {
  const int sfa_stage = sfa_chunked(c) ? 0 : align_up(c.block_m * 4, 128);
  const int sfb_stage = sfb_chunked(c) ? 0 : align_up((c.recipe == kRecipe1D2D ? 2 : c.block_n) * 4, 128);
  // A chunk slot: [block_m rows][4 k-blocks] of sfa, then [block_n rows][4 k-blocks] of sfb (TMA boxes, 128-aligned).
  const int sf_chunk_sfa = sfa_chunked(c) ? align_up(c.block_m * 4 * kSfChunkKBlocks, 128) : 0;
  const int sf_chunk = sf_chunk_sfa + (sfb_chunked(c) ? align_up(c.block_n * 4 * kSfChunkKBlocks, 128) : 0);
  const bool chunks = sfa_chunked(c) || sfb_chunked(c);
  const int scale_bytes = c.num_stages * (sfa_stage + sfb_stage) + (chunks ? kSfChunkSlots * sf_chunk : 0);
  Sm90Fp8GemmSmem s{};
  static_cast<Sm90GemmSmem&>(s) = gemm_smem_layout(c, scale_bytes, chunks ? 2 * kSfChunkSlots * 8 : 0);
  s.sfa_stage = sfa_stage;
  s.sfb_stage = sfb_stage;
  s.sf_chunk_sfa = sf_chunk_sfa;
  s.sf_chunk = sf_chunk;
  s.sfa = s.scales;
  s.sfb = s.sfa + c.num_stages * s.sfa_stage;
  s.sf_chunks = s.sfb + c.num_stages * s.sfb_stage;
  s.sf_full = s.scale_barriers;
  s.sf_empty = s.sf_full + kSfChunkSlots * 8;
  return s;
}
HOPGEMM_HOST_DEVICE constexpr int smem_bytes(const Sm90Fp8GemmConfig& c) { return smem_layout(c).total; }

// Split-K needs every split non-empty: the FP8 k-block is 128 K.
HOPGEMM_HOST_DEVICE constexpr bool k_splits_fit(i64 k, int k_splits) { return k_splits_fit(k, 128, k_splits); }

// The first rule `c` breaks, in words (for errors: `fp8_gemm_nt_with_config`, `--config`); nullptr when valid.
HOPGEMM_HOST_DEVICE constexpr const char* config_violation(const Sm90Fp8GemmConfig& c) {
  const int mma_n_multiple = c.recipe == kRecipe1D2D ? 16 : 8;
  // 1D2D: a tile may straddle at most two 128-column B-scale blocks: its worst offset inside a block is
  // 128 - gcd(block_n, 128), so block_n <= 128 or 144, 160, 192, 256.
  int g = 128, r = c.block_n;
  while (r != 0) {
    const int t = g % r;
    g = r;
    r = t;
  }
  const bool straddle_ok = c.recipe != kRecipe1D2D || c.block_n + 128 - g <= 256;
  const bool tile_ok = (c.block_m == 64 || c.block_m == 128 || c.block_m == 192 || c.block_m == 256) && c.block_n >= 8 &&
                       c.block_n <= 256 && c.block_n % mma_n_multiple == 0 && straddle_ok;
  // Registers per consumer thread: block_n / 2 tensor-core accumulators plus waves x block_n / 2
  // promoted ones (a wave = 64 rows of the warpgroup); kept <= 192 so ~232 registers suffice.
  const int waves = waves_per_wg(c);
  // Three math warpgroups get 152 registers each (the producer keeps 40 of the 128 x 512 the CTA launches with):
  // one accumulator set and one promoted set of block_n / 2 fit up to block_n 128 (1D1D: 96, its column scales
  // beside them), with no room for a second accumulator set (ptxas, sm_90a: highest register R143 at 192x128).
  // Under split-K the last split sums the partials in place, one split at a time (ptxas: no spill at 192x128).
  const bool three_wgs_regs_ok = c.block_n <= (c.recipe == kRecipe1D2D ? 128 : 96) && c.promote_overlap == 0;
  const bool regs_ok = num_math_wgs(c) == 3 ? three_wgs_regs_ok : (waves + 1) * c.block_n <= 384;
  const bool flags_ok = (c.recipe == kRecipe1D2D || c.recipe == kRecipe1D1D) &&
                        (c.out_dtype == kOutBf16 || c.out_dtype == kOutFp32) && (c.accumulate == 0 || c.accumulate == 1) &&
                        (c.sfa_k_major == 0 || c.sfa_k_major == 1) && (c.sfb_k_major == 0 || c.sfb_k_major == 1);
  // Two accumulator sets: one wave and block_n <= 128 (blocks kb and kb+1), or two waves and block_n <= 96
  // (both waves of one block: 2 x 2 x 96 / 2 = 192 accumulator registers).
  const bool overlap_ok = c.promote_overlap == 0 ||
                          (c.promote_overlap == 1 && ((waves == 1 && c.block_n <= 128) || (waves == 2 && c.block_n <= 96)));
  // D staged in the last stage needs that stage kept: run_overlap releases every stage as it goes.
  const bool in_stage_ok = c.d_in_stage == 0 || c.promote_overlap == 0;
  // The producer of a two-warpgroup tile has 40 registers: staging 256 rows of row-major sfa (16 per thread)
  // next to 1D1D's per-row sfb copies spills there (ptxas, 4 bytes), so that pair is not offered unless both come in
  // chunks (sf_chunks).
  // The row-range scheduler's state beside 256 rows of staged sfa spilled there too (ptxas: 32 bytes at 256x128).
  const bool producer_regs_ok =
      !(c.block_m == 256 && c.sfa_k_major == 1 && c.recipe == kRecipe1D1D && c.sfb_k_major == 1 && !sfa_chunked(c)) &&
      !(c.block_m == 256 && c.sfa_k_major == 1 && c.grouping == kGroupingMRanges && !sfa_chunked(c));
  const bool sf_chunks_ok = c.sf_chunks == 0 || (c.sf_chunks == 1 && (sfa_chunked(c) || sfb_chunked(c)));
  const bool sfb_regs_ok = c.sfb_regs == 0 || (c.sfb_regs == 1 && c.recipe == kRecipe1D2D);
  // Grouped: no split-K; group-ids tiles lie inside one aligned group (64 or 128 rows); row-masked tiles store BF16, and not from three math warpgroups (152 registers each: the row-range
  // scheduler and the row-masked store spilled 24-52 bytes at 192x128); K-grouped reads MN-major scales by TMA (their columns per group) and adds
  // FP32 D from registers (rows clipped to the group).
  // Batched (fp8_einsum): 1D2D, a stored D, the per-row scales staged or MN-major (not chunked: a chunk would
  // straddle two batches' scales).
  const bool grouping_ok =
      ((c.grouping >= kGroupingNone && c.grouping <= kGroupingK) || c.grouping == kGroupingBatched) &&
      (c.grouping == kGroupingNone || c.k_splits == 1) &&
      (c.grouping != kGroupingBatched || (c.recipe == kRecipe1D2D && c.accumulate == 0 && c.sf_chunks == 0)) &&
      (c.grouping != kGroupingMIds || c.block_m == 64 || c.block_m == 128) &&
      (c.grouping != kGroupingMRanges || (c.out_dtype == kOutBf16 && c.accumulate == 0 && c.block_m != 192)) &&
      (c.grouping != kGroupingK ||
       (c.recipe == kRecipe1D1D && c.sfa_k_major == 0 && c.sfb_k_major == 0 && reduces_from_registers(c)));
  // Head splits: each TMA store box of D (one swizzle atom of columns) inside one part of one head, so the column map
  // moves whole boxes; only the dense scheduler's stores go through it.
  const int d_box_cols = d_swizzle_bytes(c) / out_elem_bytes(c);
  const bool head_splits_ok =
      c.head_mid == 0 ? c.head_left == 0 && c.head_right == 0
                      : c.head_mid > 0 && c.head_left >= 0 && c.head_right >= 0 && c.head_left + c.head_right > 0 &&
                            c.head_left % d_box_cols == 0 && c.head_mid % d_box_cols == 0 &&
                            c.head_right % d_box_cols == 0 && c.grouping == kGroupingNone && c.accumulate == 0;
  if (!flags_ok) return "recipe, out_dtype, accumulate, sfa_k_major and sfb_k_major take 0 or 1";
  if (!grouping_ok) return "grouping: no split-K; group ids take 64/128-row tiles; row ranges a BF16 D and no 192-row tile; K groups recipe 1D1D, MN-major scales, FP32 D accumulated from registers; batched 1D2D, no accumulation, no scale chunks";
  if (!tile_ok) return "block_m is 64, 128, 192 or 256; block_n is 8..256, a multiple of 16 (1D2D; 8 for 1D1D) straddling at most two 128-column scale blocks";
  if (!regs_ok) return "the accumulators do not fit the registers (three math warpgroups: block_n <= 128 (1D1D 96), no promote_overlap; else (waves + 1) x block_n <= 384)";
  if (!overlap_ok) return "promote_overlap needs one wave and block_n <= 128, or two waves and block_n <= 96";
  if (!in_stage_ok) return "d_in_stage needs no promote_overlap";
  if (const char* rule = common_config_violation(c)) return rule;
  if (!producer_regs_ok) return "256-row 1D1D (or row-range grouped) tiles with row-major scales need sf_chunks";
  if (!head_splits_ok) return "head splits: all 0, or left, mid, right multiples of D's store box, mid > 0, no grouping or accumulation";
  if (!sfb_regs_ok) return "sfb_regs is for recipe 1D2D";
  if (!sf_chunks_ok) return "sf_chunks needs row-major per-row scales";
  if (smem_bytes(c) > kSm90SmemCapacity) return "the stages and the D tile do not fit the 227 KB of shared memory";
  return nullptr;
}

HOPGEMM_HOST_DEVICE constexpr bool is_valid(const Sm90Fp8GemmConfig& c) { return config_violation(c) == nullptr; }

}  // namespace hopgemm::device
