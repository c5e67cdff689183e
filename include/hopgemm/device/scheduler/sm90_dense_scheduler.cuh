#pragma once
// Persistent tile scheduler for a dense GEMM, cluster-aware, with L2 rasterisation.
//
// Work unit = one cluster's tiles: cluster_m adjacent m-blocks (sharing B) or cluster_n adjacent n-blocks (sharing
// A). The unit grid is rounded up, so both CTAs of a pair always get a tile: a tile past the matrix edge is a
// "phantom" (TMA zero-fills its loads, its store is skipped). This keeps the two CTAs' pipelines in lockstep, which
// multicast needs (same stage, same barrier offset).
// Units are visited in bands of `raster_band` units (sm90_raster.cuh).
// Bands run along N when the pair shares A (cluster_n == 2, as DeepGEMM does), else along M.
// Split-K (k_splits > 1): each unit is visited k_splits times in a row (split = 0..k_splits-1), so the splits of one
// tile run on neighbouring CTAs; both CTAs of a pair get the same split.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/scheduler/sm90_scheduler.cuh"

namespace hopgemm::device::scheduler {

template <Sm90TileGeometry kGeo>
struct Sm90DenseScheduler {
  static constexpr int kBlockM = kGeo.block_m, kBlockN = kGeo.block_n, kBlockK = kGeo.block_k;
  static constexpr int kSplits = kGeo.k_splits;
  static constexpr Sm90Grouping kGrouping = kGroupingNone;
  const Sm90ScheduleParams& params;
  i32 num_m_blocks, num_n_blocks;  // real tiles
  i32 units_m, units_n, num_units;  // cluster units along M and N, and (tile, split) units in all
  ClusterWalk<kGeo> walk;

  HOPGEMM_DEVICE Sm90DenseScheduler(const Sm90ScheduleParams& p, u32 cta_rank) : params(p), walk(cta_rank) {
    num_m_blocks = ceil_div(p.m, kBlockM);
    num_n_blocks = ceil_div(p.n, kBlockN);
    units_m = ceil_div(num_m_blocks, kGeo.cluster_m);
    units_n = ceil_div(num_n_blocks, kGeo.cluster_n);
    num_units = units_m * units_n * kSplits;
  }

  // This CTA's next unit; false when done. Identical sequence on both CTAs of a cluster.
  HOPGEMM_DEVICE bool next(WorkUnit& u) {
    if (walk.unit >= num_units) return false;
    const u32 tile_unit = static_cast<u32>(walk.unit) / kSplits;
    u.split = walk.unit - static_cast<i32>(tile_unit) * kSplits;
    walk.place(u, tile_unit, units_m, units_n, params.raster_band);
    u.group = 0;
    const i32 num_k_blocks = ceil_div(params.k, kBlockK);  // the last block may be partial (TMA zero-fills)
    const i32 k_blocks_per_split = ceil_div(num_k_blocks, kSplits);  // the host keeps every split non-empty
    u.kb_begin = u.split * k_blocks_per_split;
    u.kb_end = min(u.kb_begin + k_blocks_per_split, num_k_blocks);
    walk.advance();
    return true;
  }

  // Coordinates of a unit (sm90_scheduler.cuh). d_col is also the tile's column inside B's group.
  HOPGEMM_DEVICE i32 a_row(const WorkUnit& u) const { return u.m_block * kBlockM; }
  HOPGEMM_DEVICE i32 b_row(const WorkUnit& u) const { return u.n_block * kBlockN; }
  HOPGEMM_DEVICE i32 d_row(const WorkUnit& u) const { return a_row(u); }
  HOPGEMM_DEVICE i32 d_col(const WorkUnit& u) const { return b_row(u); }
  HOPGEMM_DEVICE i32 k_offset(const WorkUnit&, i32 kb) const { return kb * kBlockK; }
  // A B-sharing pair's two tiles always take the same B rows.
  HOPGEMM_DEVICE bool shares_b(const WorkUnit&) const { return true; }
  // The last tile row may hold fewer than kBlockM rows of A: the producer then loads only those (tma_a_tail).
  HOPGEMM_DEVICE bool in_last_partial_row(const WorkUnit& u) const { return u.m_block == params.m / kBlockM; }
  // Phantom tiles (past the edge) are computed for the pair's sake but never stored.
  HOPGEMM_DEVICE bool stores(const WorkUnit& u) const { return u.m_block < num_m_blocks && u.n_block < num_n_blocks; }
  HOPGEMM_DEVICE i32 tile_index(const WorkUnit& u) const { return u.m_block * num_n_blocks + u.n_block; }
  static constexpr bool kRowMaskedTiles = false;
  HOPGEMM_DEVICE i32 d_row_end(const WorkUnit&) const { return params.m; }
  HOPGEMM_DEVICE i32 d_cols() const { return params.n; }
};

}  // namespace hopgemm::device::scheduler
