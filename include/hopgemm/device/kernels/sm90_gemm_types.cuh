#pragma once
// What every SM90 GEMM family shares with the host: the problem's grouping (which scheduler hands out the tiles), the
// tile geometry the schedulers are instantiated with, and the family-neutral kernel parameters (operand and output
// descriptors, the schedule, the epilogue's pointers, the K-grouped descriptor slots). A family's parameter struct
// derives from Sm90GemmParams and adds its own (the FP8 family: its scale factors, kernels/sm90_fp8_gemm_types.cuh).
// Compiles as device code (NVRTC, NVCC) and as plain host C++20.

#include "hopgemm/device/common.cuh"

namespace hopgemm::device {

// The problem's grouping, i.e. its scheduler (scheduler/sm90_*_scheduler.cuh):
//   none            one GEMM (Sm90DenseScheduler)
//   m_group_ids     M-grouped contiguous, grouped_layout = the group of every row, -1 padding, groups aligned to the
//                   tile rows (Sm90MGroupIdsScheduler)
//   m_group_ranges  M-grouped with each group's rows a range: contiguous psum / packed layouts (grouped_layout =
//                   cumulative row ends) and masked (masked_m per group, rows at g x group_rows)
//                   (Sm90MGroupRangesScheduler)
//   k_groups        K-grouped: every group its own K, A and B maps patched per group (Sm90KGroupedScheduler)
//   k_ranges        K-grouped over one MN-major A [sum(ks), M] and B [sum(ks), N]: every group a range of the flat K,
//                   loaded through the kernel's own maps (Sm90KRangesScheduler)
//   batched         num_groups m x n x k GEMMs through 3-D descriptors of A, B and D, the batch outermost
//                   (Sm90BatchedScheduler: einsum "bhr,hdr->bhd", "bhd,hdr->bhr")
//   batch_sum       one m x n GEMM summed over num_groups batches of A and B (3-D descriptors), D 2-D
//                   (Sm90BatchSumScheduler: einsum "bmk,bnk->mn")
enum Sm90Grouping : int {
  kGroupingNone = 0,
  kGroupingMIds = 1,
  kGroupingMRanges = 2,
  kGroupingK = 3,
  kGroupingKRanges = 4,
  kGroupingBatched = 5,
  kGroupingBatchSum = 6
};
// How kGroupingMRanges reads grouped_layout.
enum Sm90GroupRanges : int { kRangesFromEnds = 0, kRangesMasked = 1 };
enum Sm90OutDtype : int { kOutBf16 = 0, kOutFp32 = 1 };

// The fields every GEMM family's config declares (among its own; each config is a struct of int fields), from which
// the shared collectives, the launch and the shared-memory layout are derived:
//   block_m          64 (1 math warpgroup), 128 or 256 (2), 192 (3)
//   block_n          columns of the tile, <= 256
//   num_stages       shared-memory pipeline depth
//   cluster_m/_n     2: a CTA pair sharing B (adjacent m-blocks) / A (adjacent n-blocks) by TMA multicast
//   out_dtype        Sm90OutDtype of D
//   accumulate       1: D += result (red.global from registers, or TMA reduce-add)
//   d_passes         epilogue passes over the tile's columns (2 frees half the D staging tile)
//   d_in_stage       1: no dedicated D tile; D is staged in the A slot of the tile's last pipeline stage
//   k_splits         > 1: split-K, the last split of a tile sums the others' FP32 partials
//   grouping         Sm90Grouping: which scheduler hands out the tiles
template <class C>
concept Sm90GemmConfig = requires(const C& c) {
  { c.block_m } -> ConvertibleToInt;
  { c.block_n } -> ConvertibleToInt;
  { c.num_stages } -> ConvertibleToInt;
  { c.cluster_m } -> ConvertibleToInt;
  { c.cluster_n } -> ConvertibleToInt;
  { c.out_dtype } -> ConvertibleToInt;
  { c.accumulate } -> ConvertibleToInt;
  { c.d_passes } -> ConvertibleToInt;
  { c.d_in_stage } -> ConvertibleToInt;
  { c.k_splits } -> ConvertibleToInt;
  { c.grouping } -> ConvertibleToInt;
};

// Math warpgroups: one per 64 rows up to three (block_m 192: each runs one m64 wave per k-block, so while one promotes
// the other two keep WGMMA batches in flight); block_m 256: two, of two waves each.
template <Sm90GemmConfig C>
HOPGEMM_HOST_DEVICE constexpr int num_math_wgs(const C& c) {
  return c.block_m == 64 ? 1 : c.block_m == 192 ? 3 : 2;
}
template <Sm90GemmConfig C>
HOPGEMM_HOST_DEVICE constexpr int num_threads(const C& c) { return 128 * (1 + num_math_wgs(c)); }
// m64 WGMMA row blocks (waves) each math warpgroup runs per k-block: 1, or 2 for 256-row tiles.
template <Sm90GemmConfig C>
HOPGEMM_HOST_DEVICE constexpr int waves_per_wg(const C& c) { return c.block_m / num_math_wgs(c) / 64; }
template <Sm90GemmConfig C>
HOPGEMM_HOST_DEVICE constexpr int cluster_size(const C& c) { return c.cluster_m * c.cluster_n; }
// Rows of a CTA pair's shared operand (A of a 1x2 pair, B of a 2x1 pair) that one CTA loads and multicasts: half the
// tile where that half is whole 8-row swizzle atoms (1024 bytes, the 128-byte swizzle's period), each CTA loading one;
// else (widths of 8 mod 16 rows, as DeepGEMM's 1D1D 128x152 weight-gradient tile) the pair's first CTA loads the whole
// tile, as DeepGEMM does for every shared operand. A's halves (32..128 rows) always are whole atoms. An MN-major
// operand (BF16) loads 64-row boxes: its family's rules keep a pair's half of it whole boxes, so its half applies.
HOPGEMM_HOST_DEVICE constexpr int shared_operand_box_rows(int block_rows) {
  return (block_rows / 2) % 8 == 0 ? block_rows / 2 : block_rows;
}
// A B-sharing pair whose first CTA loads the whole B tile (shared_operand_box_rows).
template <Sm90GemmConfig C>
HOPGEMM_HOST_DEVICE constexpr bool pair_loads_whole_b(const C& c) {
  return c.cluster_m == 2 && shared_operand_box_rows(c.block_n) == c.block_n;
}
template <Sm90GemmConfig C>
HOPGEMM_HOST_DEVICE constexpr bool stores_fp32(const C& c) { return c.out_dtype == kOutFp32; }
template <Sm90GemmConfig C>
HOPGEMM_HOST_DEVICE constexpr int out_elem_bytes(const C& c) { return stores_fp32(c) ? 4 : 2; }

// D += A B^T in FP32 with one unit per tile: each math thread adds its values into D with vector red.global.add.v2.f32
// (two adjacent columns, 8 bytes; a warp instruction covers 8 rows x 32 bytes), no staging tile and no TMA: the TMA
// reduce-add cost the FP8 1D1D kernels 11-16% more than a plain store of the same bytes (docs/DESIGN_NOTES.md). Needs
// D's row stride even (8-byte aligned pairs).
template <Sm90GemmConfig C>
HOPGEMM_HOST_DEVICE constexpr bool reduces_from_registers(const C& c) {
  return c.accumulate == 1 && stores_fp32(c) && c.k_splits == 1 && c.d_in_stage == 0;
}

// Swizzle of the staged D tile / the D descriptor: widest of 128/64/32 bytes dividing a tile row, else 16 (none).
template <Sm90GemmConfig C>
HOPGEMM_HOST_DEVICE constexpr int d_swizzle_bytes(const C& c) {
  const int row_bytes = c.block_n * out_elem_bytes(c);
  return row_bytes % 128 == 0 ? 128 : row_bytes % 64 == 0 ? 64 : row_bytes % 32 == 0 ? 32 : 16;
}

// Bytes of one operand row of a k-block in shared memory: one 128-byte swizzle row (128 FP8 or 64 BF16 elements).
inline constexpr int kSm90KBlockBytes = 128;
inline constexpr int kSm90SmemCapacity = 232448;  // 227 KiB per block on H100/H200

// Shared memory carve-up, one struct for host (smem_bytes) and device (the kernel's addresses): sizes of the regions
// and the byte offset of each from the dynamic shared-memory base, in this order:
//   [D tile][A x stages][B x stages][the family's scale regions][K-group descriptors][stage barriers][scale barriers]
// The D tile and every A/B stage start 1024-aligned (SW128 atoms). A family without scales has none of their bytes.
struct Sm90GemmSmem {
  int d, a_stage, b_stage;  // bytes of the D tile and of one stage's A and B
  int a, b, scales, tensor_maps, full, empty, scale_barriers;  // offsets
  int total;
};
template <Sm90GemmConfig C>
HOPGEMM_HOST_DEVICE constexpr Sm90GemmSmem gemm_smem_layout(const C& c, int scale_bytes, int scale_barrier_bytes) {
  Sm90GemmSmem s{};
  // No staging tile where D is staged in a pipeline stage or reduced into straight from registers.
  s.d = c.d_in_stage == 1 || reduces_from_registers(c)
            ? 0
            : align_up(c.block_m * c.block_n * out_elem_bytes(c) / (c.d_passes >= 1 ? c.d_passes : 1), 1024);
  s.a_stage = c.block_m * kSm90KBlockBytes;
  s.b_stage = c.block_n * kSm90KBlockBytes;
  s.a = s.d;
  s.b = s.a + c.num_stages * s.a_stage;
  s.scales = s.b + c.num_stages * s.b_stage;
  // k_groups: A's and B's descriptors, patched in shared memory before they are copied to their global slots.
  s.tensor_maps = s.scales + scale_bytes;
  s.full = s.tensor_maps + (c.grouping == kGroupingK ? 2 * 128 : 0);
  s.empty = s.full + c.num_stages * 8;
  s.scale_barriers = s.empty + c.num_stages * 8;
  s.total = s.scale_barriers + scale_barrier_bytes;
  return s;
}

// Split-K needs every split non-empty (an empty unit would leave its consumers waiting on a stage no producer fills):
// with kps = ceil(k_blocks / k_splits), (k_splits - 1) * kps < k_blocks.
HOPGEMM_HOST_DEVICE constexpr bool k_splits_fit(i64 k, int block_k, int k_splits) {
  const i64 k_blocks = ceil_div<i64>(k, block_k);
  return k_splits >= 1 && (k_splits - 1) * ceil_div<i64>(k_blocks, k_splits) < k_blocks;
}

// What a scheduler is instantiated with: the tile (block_m x block_n, k-blocks of block_k elements of elem_bytes
// each), the CTA pair (cluster_m = 2: two m-blocks share B; cluster_n = 2: two n-blocks share A) and the K splits.
struct Sm90TileGeometry {
  int block_m, block_n, block_k, elem_bytes;
  int cluster_m = 1, cluster_n = 1;
  int k_splits = 1;
};

// What the schedulers read at run time: the problem and its grouping. Held inside the kernel's __grid_constant__
// parameters and referenced from there, so the values are read from the launch's constants instead of being held in
// registers across the persistent loop.
struct Sm90ScheduleParams {
  i32 m, n, k;
  i32 raster_band;  // L2 rasterisation: bands of this many cluster units, along N if cluster_n == 2 else M (>= 1)
  // Grouped GEMMs (grouping != none). B is [G x N, K] (its groups stacked along N) for the M-grouped layouts, or where
  // MN-major G batches of a 3-D map (collective/sm90_gemm_traits.cuh: kBGroupsBatched).
  const i32* grouped_layout;  // m_group_ids: [M_sum] group per row; m_group_ranges: [G] cumulative row ends or
                              // masked_m; k_groups: [G] K of each group
  i32 num_groups;  // batched, batch_sum: the batches
  i32 ranges_kind;  // m_group_ranges: Sm90GroupRanges
  i32 group_rows;   // masked: rows per group of A / D (M_max); k_groups: M
  i32 group_align;  // m_group_ranges from ends: a group starts at the previous end rounded up to this
  // k_groups: the k-blocks A's, B's (and the scales') buffers hold, sum(ks) / block_k of the host's ks: the scheduler
  // clamps the device's ks to it.
  i32 k_blocks_total;
  // m_group_ids: 1 = a tile whose first row's id is -1 (or outside [0, G)) gets zeros in D, stores only (DeepGEMM's
  // behaviour); 0 = such a tile is skipped and its D rows left untouched.
  i32 zero_padding_blocks;
};

// The family-neutral kernel parameters. Descriptors: cuTensorMapEncodeTiled, rank 2 (the family's types header gives
// each one's dtype, box and swizzle); unused ones may be left zeroed.
struct Sm90GemmParams {
  TmaDescriptor tma_a;       // A [M, K] as the family's operand policy loads it
  TmaDescriptor tma_b;       // B [N, K]
  TmaDescriptor tma_a_tail;  // A's last tile row when a_tail_rows > 0
  TmaDescriptor tma_d;       // D, the epilogue's staging tile's boxes
  Sm90ScheduleParams schedule;
  i32 a_tail_rows;  // rows of tma_a_tail's box, from which the last tile row loads A when M leaves it partly empty
                    // (no A-sharing pair): M % block_m rounded up to 8; 0: every tile row is loaded whole from
                    // tma_a. Rows past the box keep whatever the stage held: their D rows are never stored.
  // D by pointer: FP32 for reduces_from_registers; BF16 for the row-masked tiles of the m_group_ranges grouping.
  void* d;
  i64 ldd;             // its row stride (elements, even)
  float* partials;     // k_splits > 1: [tile][split][fragment float4 chunk][math thread] FP32 partials
  u32* tile_counters;  // k_splits > 1: one per tile, zero between calls (the last split resets its tile's)
  // k_groups: the base of A's and B's flat buffers and the per-CTA global slots of the patched descriptors
  // (k_group_map_slots per operand per CTA, 128-byte aligned).
  const u8* a_base;
  const u8* b_base;
  TmaDescriptor* tensor_map_slots;
};

// The rules on the fields every family declares that do not depend on the family (the epilogue passes, D staged in a
// stage, split-K, the CTA pair, the stage count); the first one `c` breaks, in words, or nullptr. A family's
// config_violation adds its own (tiles, registers, schedules, groupings, shared memory).
template <Sm90GemmConfig C>
HOPGEMM_HOST_DEVICE constexpr const char* common_config_violation(const C& c) {
  // Each epilogue pass covers whole 8-column groups and whole swizzle atoms (one TMA box each).
  const bool passes_ok = (c.d_passes == 1 || c.d_passes == 2 || c.d_passes == 4) && c.block_n % (8 * c.d_passes) == 0 &&
                         (c.block_n / c.d_passes * out_elem_bytes(c)) % d_swizzle_bytes(c) == 0;
  // d_in_stage: one pass = one 128-byte swizzle atom of all block_m rows = exactly the stage's A slot, and each
  // warpgroup's rows of D land on its own A rows (which only it reads), so neither waits for the other.
  // Under split-K the split that stores D stages it.
  const bool in_stage_ok = c.d_in_stage == 0 || (c.d_in_stage == 1 && passes_ok && d_swizzle_bytes(c) == 128 &&
                                                  c.block_n * out_elem_bytes(c) == 128 * c.d_passes);
  // Fused split-K counts the splits of a tile per CTA (no cluster: split-K never pairs CTAs) and writes each
  // thread's fragment as float4 chunks.
  // The last split sums the partials in place in its accumulators' registers (ptxas: no spill at 256x128, 128x192
  // or 256x112 since; a second set of sums beside them spilled 24-548 bytes there).
  const bool splits_ok = c.k_splits >= 1 && c.k_splits <= 32 && (c.k_splits == 1 || cluster_size(c) == 1);
  // A pair's shared operand whose half is not whole swizzle atoms is loaded whole by the first CTA
  // (shared_operand_box_rows).
  const bool cluster_ok = c.cluster_m >= 1 && c.cluster_n >= 1 && cluster_size(c) <= 2;
  if (!passes_ok) return "d_passes is 1, 2 or 4 and each pass covers whole 8-column groups and swizzle atoms";
  if (!in_stage_ok) return "d_in_stage needs one 128-byte swizzle atom per pass";
  if (!splits_ok) return "k_splits is 1..32, and split-K takes no cluster";
  if (!cluster_ok) return "a cluster is 1x1, 1x2 or 2x1";
  if (c.num_stages < 2 || c.num_stages > 16) return "num_stages is 2..16";
  return nullptr;
}

// k_groups: descriptor slots per operand per CTA. A slot is rewritten only after every load that used it has landed:
// one more slot than pipeline stages, and each group switch takes at least one stage (scheduler/sm90_k_grouped_scheduler.cuh).
HOPGEMM_HOST_DEVICE constexpr int k_group_map_slots(int num_stages) { return num_stages + 1; }

}  // namespace hopgemm::device
