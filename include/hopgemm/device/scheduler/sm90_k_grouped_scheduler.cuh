#pragma once
// Scheduler of the K-grouped GEMM (MoE weight gradients): G groups share M and N, group g has its own K (k_g, a
// multiple of the k-block, grouped_layout[g]); D[g] is rows [g M, (g + 1) M) of a [G M, N] output. Units walk the
// groups in order, each group's M x N tiles banded as the dense scheduler's; the units of a group with k_g = 0 are
// skipped whole (their D is C, which the host put there).
// grouped_layout is device memory the host validated only as its own list of ks: the scheduler takes group g's K as
// the value rounded down to a multiple of the k-block, at least 0 and at most what the buffers hold past the groups
// before it (k_blocks_total, the host's sum(ks) / block_k). So a value below a k-block makes an empty group (a unit
// with no k-blocks would leave its consumers waiting for a stage no producer fills), an unaligned one drops its tail,
// and a sum past the host's cannot read beyond A, B or their scales.
// A_g and B_g are separate K-major [M, k_g] / [N, k_g] matrices in flat buffers, so the producer loads them through
// descriptors patched for the group (its loader hook OperandMaps; group_k_begin / group_k say where and how long).
// The coordinates answer for the unit next() returned last. Sm90KRangesScheduler: the same walk over K ranges of one
// MN-major matrix per operand.

#include "hopgemm/device/ptx/ld_global.cuh"
#include "hopgemm/device/scheduler/sm90_operand_maps.cuh"
#include "hopgemm/device/scheduler/sm90_scheduler.cuh"

namespace hopgemm::device::scheduler {

template <Sm90TileGeometry kGeo>
struct Sm90KGroupedScheduler {
  static_assert(kGeo.k_splits == 1, "grouped GEMMs take no split-K");
  static constexpr int kBlockM = kGeo.block_m, kBlockN = kGeo.block_n, kBlockK = kGeo.block_k;
  static constexpr Sm90Grouping kGrouping = kGroupingK;
  template <int kStages>
  using OperandMaps = GroupPatchedMaps<kGeo.elem_bytes, kStages>;
  const Sm90ScheduleParams& params;
  i32 units_m, units_n, tile_units;
  ClusterWalk<kGeo> walk;
  i32 group = -1;  // the last group whose K was read (groups are visited in order)
  // The group's first k-block (the previous groups' k-blocks, at most k_blocks_total) and its K. Counted in k-blocks,
  // 32-bit: with the K itself in 64 bits (sum(ks) x M may pass 2^31 only in the descriptor's address) and the clamp in
  // 64 bits, the 1D1D 128x128 kernel spilled 8 bytes.
  i32 kb_begin = 0;
  i32 k = 0;

  HOPGEMM_DEVICE Sm90KGroupedScheduler(const Sm90ScheduleParams& p, u32 cta_rank) : params(p), walk(cta_rank) {
    units_m = ceil_div(ceil_div(p.group_rows, kBlockM), kGeo.cluster_m);
    units_n = ceil_div(ceil_div(p.n, kBlockN), kGeo.cluster_n);
    tile_units = units_m * units_n;
  }

  // Every group has tile_units units, found by a division; a group whose K is 0 (or clamped to 0) gives units with
  // no k-blocks (WorkUnit::skip_mainloop: nothing loaded, computed or stored). The prefix of the groups' k-blocks is
  // carried forward in a loop whose trip count is a division's, not a loaded value's: the walk that looped until a
  // group with units came (an exit on loaded data) took the consumer's WGMMA descriptors off the uniform datapath
  // (16 R2UR per k-block at 256x104; none so).
  HOPGEMM_DEVICE bool next(WorkUnit& u) {
    const i32 g = walk.unit / tile_units;
    const bool found = g < params.num_groups;
    if (found) {
      while (group < g) {
        kb_begin += k / kBlockK;
        ++group;
        k = min(max(ptx::ld_global_nc_i32(params.grouped_layout + group), 0) / kBlockK,
                params.k_blocks_total - kb_begin) * kBlockK;
      }
      walk.place(u, static_cast<u32>(walk.unit - g * tile_units), units_m, units_n, params.raster_band);
      u.group = g;
      u.split = 0;
      u.kb_begin = 0;
      u.kb_end = k / kBlockK;
      u.skip_mainloop = u.kb_end == 0;
      walk.advance();
    }
    return found;
  }

  // Where the group's A_g / B_g start along the flat K of their buffers (elements) and their K.
  HOPGEMM_DEVICE i64 group_k_begin() const { return static_cast<i64>(kb_begin) * kBlockK; }
  HOPGEMM_DEVICE i32 group_k() const { return k; }

  HOPGEMM_DEVICE i32 a_row(const WorkUnit& u) const { return u.m_block * kBlockM; }
  HOPGEMM_DEVICE i32 b_row(const WorkUnit& u) const { return u.n_block * kBlockN; }
  HOPGEMM_DEVICE i32 k_offset(const WorkUnit&, i32 kb) const { return kb * kBlockK; }
  HOPGEMM_DEVICE i32 d_row(const WorkUnit& u) const { return u.group * params.group_rows + a_row(u); }
  HOPGEMM_DEVICE i32 d_col(const WorkUnit& u) const { return b_row(u); }
  // A B-sharing pair's two tiles always take the same B rows.
  HOPGEMM_DEVICE bool shares_b(const WorkUnit&) const { return true; }
  HOPGEMM_DEVICE bool in_last_partial_row(const WorkUnit&) const { return false; }
  HOPGEMM_DEVICE bool stores(const WorkUnit& u) const {
    return a_row(u) < params.group_rows && u.n_block * kBlockN < params.n;
  }
  HOPGEMM_DEVICE i32 tile_index(const WorkUnit&) const { return 0; }  // no split-K
  static constexpr bool kRowMaskedTiles = false;  // D by pointer from registers, clipped per row
  HOPGEMM_DEVICE i32 d_row_end(const WorkUnit& u) const { return (u.group + 1) * params.group_rows; }
  HOPGEMM_DEVICE i32 d_cols() const { return params.n; }
};

// K-grouped over one matrix per operand: A [sum(ks), M] and B [sum(ks), N] MN-major (a 16-bit family's
// k_grouped_*_tn), group g the K range [off_g, off_g + k_g) of both. The K-grouped walk and clamps, without patched
// descriptors: the loads go through the kernel's own maps at the group's flat K. The host keeps every k_g a multiple
// of the k-block, so no k-block reads into the next group's rows.
template <Sm90TileGeometry kGeo>
struct Sm90KRangesScheduler : Sm90KGroupedScheduler<kGeo> {
  using Base = Sm90KGroupedScheduler<kGeo>;
  static constexpr Sm90Grouping kGrouping = kGroupingKRanges;
  template <int kStages>
  using OperandMaps = FixedOperandMaps;
  using Base::Base;
  HOPGEMM_DEVICE i32 k_offset(const WorkUnit&, i32 kb) const { return (Base::kb_begin + kb) * Base::kBlockK; }
};

}  // namespace hopgemm::device::scheduler
