#pragma once
// The tile-scheduler interface every SM90 GEMM kernel composes (scheduler/sm90_*_scheduler.cuh implement it): a
// scheduler hands out work units (WorkUnit: tile, group, split, K range) and answers every coordinate of them, so the
// producer, the mainloop and the epilogue never compute a global coordinate. Schedulers are templated on the tile
// geometry only (Sm90TileGeometry) and read the problem from Sm90ScheduleParams; what a family does with the
// coordinates (its scale factors' rows and columns, ...) is the family's.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/kernels/sm90_gemm_types.cuh"
#include "hopgemm/device/scheduler/sm90_raster.cuh"
#include "hopgemm/device/scheduler/sm90_work_unit.cuh"

namespace hopgemm::device::scheduler {

// The members a scheduler S provides. Units and coordinates:
//   next(u)              the CTA's next unit into u; false when done (the same sequence on both CTAs of a pair)
//   a_row(u), b_row(u)   the unit's first row of A and of B (B's groups stacked along N for the M-grouped layouts;
//                        an MN-major B's groups are batches instead: the producer's kBGroupsBatched)
//   k_offset(u, kb)      the K element at which k-block kb of the unit starts in its group's A and B
//   d_row(u), d_col(u)   the tile's first row and column of D (d_col: also its column inside B's group)
//   d_row_end(u), d_cols()  where the unit's rows of D end (its tile is clipped there) and D's columns
//   shares_b(u)          whether a B-sharing pair's two tiles take the same B rows (multicast), else each loads its own
//   in_last_partial_row(u)  the unit's tile row is M's last and partly empty (the producer loads A's rows only)
//   stores(u)            the unit's D is stored (phantom tiles of a pair, skipped splits are not)
//   tile_index(u)        split-K counter slot of the unit's tile
//   kRowMaskedTiles      units may end inside a tile (stored row by row where they do)
//   kGrouping            the Sm90Grouping it serves
template <class S>
concept TileScheduler = requires(S& s, const S& cs, WorkUnit& u, const WorkUnit& cu, i32 kb) {
  { s.next(u) } -> SameAs<bool>;
  { cs.a_row(cu) } -> SameAs<i32>;
  { cs.b_row(cu) } -> SameAs<i32>;
  { cs.k_offset(cu, kb) } -> SameAs<i32>;
  { cs.d_row(cu) } -> SameAs<i32>;
  { cs.d_col(cu) } -> SameAs<i32>;
  { cs.d_row_end(cu) } -> SameAs<i32>;
  { cs.d_cols() } -> SameAs<i32>;
  { cs.shares_b(cu) } -> SameAs<bool>;
  { cs.in_last_partial_row(cu) } -> SameAs<bool>;
  { cs.stores(cu) } -> SameAs<bool>;
  { cs.tile_index(cu) } -> SameAs<i32>;
  { S::kRowMaskedTiles } -> ConvertibleToBool;
  { S::kGrouping } -> ConvertibleToInt;
};

// Batched schedulers (sm90_batched_scheduler.cuh) load through 3-D descriptors, the batch of k-block kb their third
// coordinate (load_batch(u, kb)), and may store D through one too (d_batch(u)). Every other scheduler's loads and
// stores are 2-D: batch 0, never passed to an instruction.
template <class S>
inline constexpr bool kBatchedLoads = requires(const S& s, const WorkUnit& u) {
  { s.load_batch(u, 0) } -> SameAs<i32>;
};
template <class S>
inline constexpr bool kBatchedStores = requires(const S& s, const WorkUnit& u) {
  { s.d_batch(u) } -> SameAs<i32>;
};
template <class S>
HOPGEMM_DEVICE i32 load_batch(const S& sched, const WorkUnit& u, i32 kb) {
  if constexpr (kBatchedLoads<S>)
    return sched.load_batch(u, kb);
  else
    return 0;
}
template <class S>
HOPGEMM_DEVICE i32 d_batch(const S& sched, const WorkUnit& u) {
  if constexpr (kBatchedStores<S>)
    return sched.d_batch(u);
  else
    return 0;
}

// The next unit after the one next() returned last that runs the mainloop (a padding tile of zeros,
// WorkUnit::skip_mainloop, loads nothing and reads no scales), without consuming it (a copy of the scheduler walks
// ahead). Look-aheads that prefetch a unit's data (the scale reader's sfb_regs) must use this one.
template <TileScheduler S>
HOPGEMM_DEVICE bool peek(const S& sched, WorkUnit& u) {
  S ahead = sched;
  while (ahead.next(u))
    if (!u.skip_mainloop) return true;
  return false;
}

// The first CTA-pair unit of this CTA and this CTA's offset inside its pair: the walk every scheduler starts with.
template <Sm90TileGeometry kGeo>
struct ClusterWalk {
  static constexpr int kClusterSize = kGeo.cluster_m * kGeo.cluster_n;
  static constexpr bool kAlongN = kGeo.cluster_n > 1;  // bands along N where the pair shares A (as DeepGEMM does)
  i32 unit;            // this CTA's next unit (in cluster units)
  i32 rank_m, rank_n;  // this CTA's offset inside its cluster's unit

  HOPGEMM_DEVICE explicit ClusterWalk(u32 cta_rank)
      : unit(static_cast<i32>(blockIdx.x) / kClusterSize),
        rank_m(kGeo.cluster_m > 1 ? static_cast<i32>(cta_rank) : 0),
        rank_n(kGeo.cluster_n > 1 ? static_cast<i32>(cta_rank) : 0) {}
  // Unit `index` of a units_m x units_n grid of cluster units in the banded order (sm90_raster.cuh): this CTA's
  // tile of it into u.m_block, u.n_block.
  HOPGEMM_DEVICE void place(WorkUnit& u, u32 index, i32 units_m, i32 units_n, i32 band) const {
    const RasterCoords c = banded_coords(index, static_cast<u32>(kAlongN ? units_n : units_m),
                                         static_cast<u32>(kAlongN ? units_m : units_n), static_cast<u32>(band));
    u.m_block = (kAlongN ? c.minor : c.major) * kGeo.cluster_m + rank_m;
    u.n_block = (kAlongN ? c.major : c.minor) * kGeo.cluster_n + rank_n;
  }
  // The grid's clusters, re-read from the launch's constants rather than held in a register.
  HOPGEMM_DEVICE void advance() { unit += static_cast<i32>(gridDim.x) / kClusterSize; }
};

}  // namespace hopgemm::device::scheduler
