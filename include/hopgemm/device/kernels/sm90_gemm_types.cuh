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
enum Sm90Grouping : int { kGroupingNone = 0, kGroupingMIds = 1, kGroupingMRanges = 2, kGroupingK = 3 };
// How kGroupingMRanges reads grouped_layout.
enum Sm90GroupRanges : int { kRangesFromEnds = 0, kRangesMasked = 1 };

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
  // Grouped GEMMs (grouping != none). B is [G x N, K] (its groups stacked along N) for the M-grouped layouts.
  const i32* grouped_layout;  // m_group_ids: [M_sum] group per row; m_group_ranges: [G] cumulative row ends or
                              // masked_m; k_groups: [G] K of each group
  i32 num_groups;
  i32 ranges_kind;  // m_group_ranges: Sm90GroupRanges
  i32 group_rows;   // masked: rows per group of A / D (M_max); k_groups: M
  i32 group_align;  // m_group_ranges from ends: a group starts at the previous end rounded up to this
  // k_groups: the k-blocks A's, B's (and the scales') buffers hold, sum(ks) / block_k of the host's ks: the scheduler
  // clamps the device's ks to it.
  i32 k_blocks_total;
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

// k_groups: descriptor slots per operand per CTA. A slot is rewritten only after every load that used it has landed:
// one more slot than pipeline stages, and each group switch takes at least one stage (scheduler/sm90_k_grouped_scheduler.cuh).
HOPGEMM_HOST_DEVICE constexpr int k_group_map_slots(int num_stages) { return num_stages + 1; }

}  // namespace hopgemm::device
