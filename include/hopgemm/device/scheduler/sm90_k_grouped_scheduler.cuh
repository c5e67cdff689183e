#pragma once
// Scheduler of the K-grouped GEMM (MoE weight gradients): G groups share M and N, group g has its own K (k_g, a
// multiple of 128, grouped_layout[g]); D[g] is rows [g M, (g + 1) M) of a [G M, N] output. Units walk the groups in
// order, each group's M x N tiles banded as the dense scheduler's; groups with k_g = 0 have no units (their D is C,
// which the host put there).
// grouped_layout is device memory the host validated only as its own list of ks: the scheduler takes group g's K as
// the value rounded down to a multiple of 128, at least 0 and at most what the buffers hold past the groups before it
// (k_blocks_total, the host's sum(ks) / 128). So a value of 1-127 makes an empty group (a unit with no k-blocks
// would leave its consumers waiting for a stage no producer fills), an unaligned one drops its tail, and a sum past
// the host's cannot read beyond A, B or their scales.
// A_g and B_g are separate K-major [M, k_g] / [N, k_g] matrices in flat buffers, so the producer loads them through
// descriptors patched for the group (kPatchesMaps; group_k_begin / group_k say where and how long); their per-row
// scales are one MN-major map each, the group's columns from group_k_begin / 128.
// The coordinates answer for the unit next() returned last.

#include "hopgemm/device/ptx/ld_global.cuh"
#include "hopgemm/device/scheduler/sm90_raster.cuh"
#include "hopgemm/device/scheduler/sm90_work_unit.cuh"

namespace hopgemm::device::scheduler {

template <int kBlockM, int kBlockN, int kClusterM, int kClusterN, class Params>
struct Sm90KGroupedScheduler {
  static constexpr bool kAlongN = kClusterN > 1;
  static constexpr bool kPatchesMaps = true;
  const Params& params;
  i32 units_m, units_n, tile_units;
  i32 unit;
  i32 rank_m, rank_n;
  i32 group = -1;
  i32 group_first_unit = 0, group_units = 0;
  i32 kb_begin = 0;  // the group's first k-block (the previous groups' K / 128; K itself times M may pass 2^31)
  i32 k = 0;         // the group's K

  HOPGEMM_DEVICE Sm90KGroupedScheduler(const Params& p, u32 cta_rank) : params(p) {
    units_m = ceil_div(ceil_div(p.group_rows, kBlockM), kClusterM);
    units_n = ceil_div(ceil_div(p.n, kBlockN), kClusterN);
    tile_units = units_m * units_n;
    unit = static_cast<i32>(blockIdx.x) / (kClusterM * kClusterN);
    rank_m = kClusterM > 1 ? static_cast<i32>(cta_rank) : 0;
    rank_n = kClusterN > 1 ? static_cast<i32>(cta_rank) : 0;
  }

  HOPGEMM_DEVICE bool next(WorkUnit& u) {
    while (unit >= group_first_unit + group_units) {
      if (group + 1 >= params.num_groups) return false;
      kb_begin += k / 128;
      ++group;
      const i32 value = ptx::ld_global_nc_i32(params.grouped_layout + group);
      k = min(max(value, 0) / 128, params.k_blocks_total - kb_begin) * 128;
      group_first_unit += group_units;
      group_units = k > 0 ? tile_units : 0;
    }
    const RasterCoords c = banded_coords(static_cast<u32>(unit - group_first_unit),
                                         static_cast<u32>(kAlongN ? units_n : units_m),
                                         static_cast<u32>(kAlongN ? units_m : units_n),
                                         static_cast<u32>(params.raster_band));
    u.m_block = (kAlongN ? c.minor : c.major) * kClusterM + rank_m;
    u.n_block = (kAlongN ? c.major : c.minor) * kClusterN + rank_n;
    u.group = group;
    u.split = 0;
    u.kb_begin = 0;
    u.kb_end = k / 128;
    unit += static_cast<i32>(gridDim.x) / (kClusterM * kClusterN);
    return true;
  }
  HOPGEMM_DEVICE bool peek(WorkUnit& u) const {
    Sm90KGroupedScheduler ahead = *this;
    return ahead.next(u);
  }

  // Where the group's A_g / B_g start in their flat buffers (elements = bytes) and their K.
  HOPGEMM_DEVICE i64 group_k_begin() const { return static_cast<i64>(kb_begin) * 128; }
  HOPGEMM_DEVICE i32 group_k() const { return k; }

  HOPGEMM_DEVICE i32 a_row(const WorkUnit& u) const { return u.m_block * kBlockM; }
  HOPGEMM_DEVICE i32 b_row(const WorkUnit& u) const { return u.n_block * kBlockN; }
  HOPGEMM_DEVICE i32 sfa_row(const WorkUnit& u) const { return a_row(u); }
  HOPGEMM_DEVICE i32 k_offset(const WorkUnit&, i32 kb) const { return kb * 128; }
  HOPGEMM_DEVICE i32 sf_k_block(const WorkUnit&, i32 kb) const { return kb_begin + kb; }
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

}  // namespace hopgemm::device::scheduler
