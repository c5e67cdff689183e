#pragma once
// Scheduler of the M-grouped GEMMs whose groups are row ranges of A and D:
//   from ends (contiguous psum / packed layouts): grouped_layout[g] = the cumulative end of group g's rows; group g
//     starts at the end of group g-1 rounded up to group_align (1: packed, no padding);
//   masked: group g's rows start at g x group_rows and masked_m[g] of them are valid.
// Values only the device sees are clamped so that no unit reads or writes outside [0, m) (ends) or outside its
// group's group_rows (masked): a group's rows are [begin, max(begin, min(end, limit))).
// Units walk the groups in order; group g's units are its kClusterM-block rows x the N tiles, banded as the dense
// scheduler's (sm90_raster.cuh). A tile that ends past its group's rows (a straddling or ragged last tile) still
// computes whole tiles but stores only its group's rows (kRowMaskedTiles). B is [G x N, K].
// The coordinates answer for the unit next() returned last (the current group's rows are scheduler state).

#include "hopgemm/device/ptx/ld_global.cuh"
#include "hopgemm/device/scheduler/sm90_raster.cuh"
#include "hopgemm/device/scheduler/sm90_work_unit.cuh"

namespace hopgemm::device::scheduler {

template <int kBlockM, int kBlockN, int kClusterM, int kClusterN, class Params>
struct Sm90MGroupRangesScheduler {
  static constexpr bool kAlongN = kClusterN > 1;
  const Params& params;
  i32 units_n;                          // cluster units along N (every group)
  i32 unit;                             // this CTA's next unit, over all groups
  i32 rank_m, rank_n;
  i32 group = -1;                       // the group of the last unit
  i32 group_first_unit = 0, group_units = 0;  // its units [first, first + units)
  i32 units_m = 0;                      // its cluster units along M
  i32 row_begin = 0, row_end = 0;       // its rows of A and D

  HOPGEMM_DEVICE Sm90MGroupRangesScheduler(const Params& p, u32 cta_rank) : params(p) {
    units_n = ceil_div(ceil_div(p.n, kBlockN), kClusterN);
    unit = static_cast<i32>(blockIdx.x) / (kClusterM * kClusterN);
    rank_m = kClusterM > 1 ? static_cast<i32>(cta_rank) : 0;
    rank_n = kClusterN > 1 ? static_cast<i32>(cta_rank) : 0;
  }

  // Group g's rows, from the previous group's end.
  HOPGEMM_DEVICE void enter_group(i32 g) {
    const i32 value = ptx::ld_global_nc_i32(params.grouped_layout + g);
    if (params.ranges_kind == kRangesMasked) {
      row_begin = g * params.group_rows;
      row_end = row_begin + min(max(value, 0), params.group_rows);
    } else {
      const i32 limit = params.m, align = params.group_align;
      row_begin = min(g == 0 ? 0 : (row_end + align - 1) / align * align, limit);
      row_end = max(row_begin, min(value, limit));
    }
    units_m = ceil_div(ceil_div(row_end - row_begin, kBlockM), kClusterM);
    group_first_unit += group_units;
    group_units = units_m * units_n;
    group = g;
  }

  HOPGEMM_DEVICE bool next(WorkUnit& u) {
    while (unit >= group_first_unit + group_units) {
      if (group + 1 >= params.num_groups) return false;
      enter_group(group + 1);
    }
    const u32 units_major = static_cast<u32>(kAlongN ? units_n : units_m);
    const u32 units_minor = static_cast<u32>(kAlongN ? units_m : units_n);
    const RasterCoords c = banded_coords(static_cast<u32>(unit - group_first_unit), units_major, units_minor,
                                         static_cast<u32>(params.raster_band));
    u.m_block = (kAlongN ? c.minor : c.major) * kClusterM + rank_m;  // inside the group
    u.n_block = (kAlongN ? c.major : c.minor) * kClusterN + rank_n;
    u.group = group;
    u.split = 0;
    u.kb_begin = 0;
    u.kb_end = ceil_div(params.k, 128);
    unit += static_cast<i32>(gridDim.x) / (kClusterM * kClusterN);
    return true;
  }
  HOPGEMM_DEVICE bool peek(WorkUnit& u) const {
    Sm90MGroupRangesScheduler ahead = *this;
    return ahead.next(u);
  }

  HOPGEMM_DEVICE i32 a_row(const WorkUnit& u) const { return row_begin + u.m_block * kBlockM; }
  HOPGEMM_DEVICE i32 b_row(const WorkUnit& u) const { return u.group * params.n + u.n_block * kBlockN; }
  // MN-major masked sfa is one [G x ceil(K/128)] x M_max map: the row inside the group, the group's columns.
  HOPGEMM_DEVICE i32 sfa_row(const WorkUnit& u) const {
    return params.sfa_group_k_blocks != 0 ? u.m_block * kBlockM : a_row(u);
  }
  HOPGEMM_DEVICE i32 sf_k_block(const WorkUnit& u, i32 kb) const { return u.group * params.sfa_group_k_blocks + kb; }
  HOPGEMM_DEVICE i32 d_row(const WorkUnit& u) const { return a_row(u); }
  HOPGEMM_DEVICE i32 d_col(const WorkUnit& u) const { return u.n_block * kBlockN; }
  HOPGEMM_DEVICE i32 k_offset(const WorkUnit&, i32 kb) const { return kb * 128; }
  // A B-sharing pair's two tiles always take the same B rows.
  HOPGEMM_DEVICE bool shares_b(const WorkUnit&) const { return true; }
  HOPGEMM_DEVICE bool in_last_partial_row(const WorkUnit&) const { return false; }
  HOPGEMM_DEVICE bool stores(const WorkUnit& u) const {
    return a_row(u) < row_end && u.n_block * kBlockN < params.n;
  }
  HOPGEMM_DEVICE i32 tile_index(const WorkUnit&) const { return 0; }  // no split-K
  static constexpr bool kRowMaskedTiles = true;
  HOPGEMM_DEVICE i32 d_row_end(const WorkUnit&) const { return row_end; }
  HOPGEMM_DEVICE i32 d_cols() const { return params.n; }
};

}  // namespace hopgemm::device::scheduler
