#pragma once
// Scheduler of the M-grouped GEMMs whose groups are row ranges of A and D:
//   from ends (contiguous psum / packed layouts): grouped_layout[g] = the cumulative end of group g's rows; group g
//     starts at the end of group g-1 rounded up to group_align (1: packed, no padding);
//   masked: group g's rows start at g x group_rows and masked_m[g] of them are valid.
// Values only the device sees are clamped so that no unit reads or writes outside [0, m) (ends) or outside its
// group's group_rows (masked): a group's rows are [begin, max(begin, min(end, limit))).
// Units walk the groups in order; group g's units are its cluster_m-block rows x the N tiles, banded as the dense
// scheduler's (sm90_raster.cuh). A tile that ends past its group's rows (a straddling or ragged last tile) still
// computes whole tiles but stores only its group's rows (kRowMaskedTiles). B is [G x N, K].
// The coordinates answer for the unit next() returned last (the current group's rows are scheduler state).

#include "hopgemm/device/ptx/ld_global.cuh"
#include "hopgemm/device/scheduler/sm90_scheduler.cuh"

namespace hopgemm::device::scheduler {

template <Sm90TileGeometry kGeo>
struct Sm90MGroupRangesScheduler {
  static_assert(kGeo.k_splits == 1, "grouped GEMMs take no split-K");
  static constexpr int kBlockM = kGeo.block_m, kBlockN = kGeo.block_n, kBlockK = kGeo.block_k;
  static constexpr Sm90Grouping kGrouping = kGroupingMRanges;
  const Sm90ScheduleParams& params;
  i32 units_n;                          // cluster units along N (every group)
  ClusterWalk<kGeo> walk;               // this CTA's next unit, over all groups
  // The last unit's group: its index, its first unit, its rows of A and D, and the previous group's row end (where a
  // group of the ends layout starts from).
  i32 group = 0, group_first_unit = 0, row_begin = 0, row_end = 0, prev_end = 0;

  HOPGEMM_DEVICE Sm90MGroupRangesScheduler(const Sm90ScheduleParams& p, u32 cta_rank) : params(p), walk(cta_rank) {
    units_n = ceil_div(ceil_div(p.n, kBlockN), kGeo.cluster_n);
  }

  struct Rows {
    i32 begin, end;
  };
  // Group g's rows, given the previous group's end.
  HOPGEMM_DEVICE Rows rows_of(i32 g, i32 previous_end) const {
    const i32 value = ptx::ld_global_nc_i32(params.grouped_layout + g);
    if (params.ranges_kind == kRangesMasked) {
      const i32 begin = g * params.group_rows;
      return Rows{begin, begin + min(max(value, 0), params.group_rows)};
    }
    // previous_end and align are below 2^31: rounded up in u32, the start cannot overflow before it is clamped.
    const u32 limit = static_cast<u32>(params.m), align = static_cast<u32>(params.group_align);
    const u32 aligned_end = (static_cast<u32>(previous_end) + align - 1) / align * align;
    const i32 begin = g == 0 ? 0 : static_cast<i32>(min(aligned_end, limit));
    return Rows{begin, max(begin, min(value, params.m))};
  }
  HOPGEMM_DEVICE i32 units_m_of(const Rows& r) const { return ceil_div(ceil_div(r.end - r.begin, kBlockM), kGeo.cluster_m); }

  // The walk resumes at the last unit's group in locals and writes its result back once: written as a loop that
  // updates the members group by group, ptxas took the consumer's WGMMA descriptors off the uniform datapath (R2UR
  // before every batch, 122 against the dense kernel's 96 at 256x128; this form: 96).
  HOPGEMM_DEVICE bool next(WorkUnit& u) {
    i32 g = group, first = group_first_unit, previous_end = prev_end;
    Rows r{};
    i32 units_m = 0;
    for (;; ++g) {
      if (g >= params.num_groups) return false;
      r = rows_of(g, previous_end);
      units_m = units_m_of(r);
      if (walk.unit < first + units_m * units_n) break;
      first += units_m * units_n;
      previous_end = r.end;
    }
    group = g;
    group_first_unit = first;
    prev_end = previous_end;
    row_begin = r.begin;
    row_end = r.end;
    walk.place(u, static_cast<u32>(walk.unit - first), units_m, units_n, params.raster_band);  // m_block: in the group
    u.group = g;
    u.split = 0;
    u.kb_begin = 0;
    u.kb_end = ceil_div(params.k, kBlockK);
    walk.advance();
    return true;
  }

  HOPGEMM_DEVICE i32 a_row(const WorkUnit& u) const { return row_begin + u.m_block * kBlockM; }
  // The tile's first row inside its group's rows.
  HOPGEMM_DEVICE i32 group_row(const WorkUnit& u) const { return u.m_block * kBlockM; }
  HOPGEMM_DEVICE i32 b_row(const WorkUnit& u) const { return u.group * params.n + u.n_block * kBlockN; }
  HOPGEMM_DEVICE i32 d_row(const WorkUnit& u) const { return a_row(u); }
  HOPGEMM_DEVICE i32 d_col(const WorkUnit& u) const { return u.n_block * kBlockN; }
  HOPGEMM_DEVICE i32 k_offset(const WorkUnit&, i32 kb) const { return kb * kBlockK; }
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
