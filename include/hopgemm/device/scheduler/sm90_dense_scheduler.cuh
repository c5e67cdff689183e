#pragma once
// Persistent tile scheduler for a dense GEMM, cluster-aware, with L2 rasterisation.
//
// Work unit = one cluster's tiles: kClusterM adjacent m-blocks (sharing B) or kClusterN adjacent
// n-blocks (sharing A). The unit grid is rounded up, so both CTAs of a pair always get a tile: a
// tile past the matrix edge is a "phantom" (TMA zero-fills its loads, its store is skipped). This
// keeps the two CTAs' pipelines in lockstep, which multicast needs (same stage, same barrier offset).
// Units are visited in bands of `raster_band` units (sm90_raster.cuh).
// Bands run along N when the pair shares A (cluster_n == 2, as DeepGEMM does), else along M.
// Split-K (kSplits > 1): each unit is visited kSplits times in a row (split = 0..kSplits-1), so the
// splits of one tile run on neighbouring CTAs; both CTAs of a pair get the same split.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/scheduler/sm90_raster.cuh"
#include "hopgemm/device/scheduler/sm90_work_unit.cuh"

namespace hopgemm::device::scheduler {

// Params: the kernel's __grid_constant__ parameters (m, n, k, raster_band), referenced rather than copied so those
// values are read from the launch's constants instead of held in registers across the persistent loop.
template <int kBlockM, int kBlockN, int kClusterM, int kClusterN, int kSplits, class Params>
struct Sm90DenseScheduler {
  static constexpr bool kAlongN = kClusterN > 1;
  const Params& params;
  i32 num_m_blocks, num_n_blocks;  // real tiles
  i32 units_major, units_minor, num_units;  // units along the band's long axis (N where the pair shares A, else M),
                                            // along the other, in all
  i32 unit;
  i32 rank_m, rank_n;  // this CTA's offset inside its cluster's unit

  HOPGEMM_DEVICE Sm90DenseScheduler(const Params& p, u32 cta_rank) : params(p) {
    constexpr int kClusterSize = kClusterM * kClusterN;
    num_m_blocks = ceil_div(p.m, kBlockM);
    num_n_blocks = ceil_div(p.n, kBlockN);
    const i32 units_m = ceil_div(num_m_blocks, kClusterM), units_n = ceil_div(num_n_blocks, kClusterN);
    units_major = kAlongN ? units_n : units_m;
    units_minor = kAlongN ? units_m : units_n;
    num_units = units_m * units_n * kSplits;
    unit = static_cast<i32>(blockIdx.x) / kClusterSize;
    rank_m = kClusterM > 1 ? static_cast<i32>(cta_rank) : 0;
    rank_n = kClusterN > 1 ? static_cast<i32>(cta_rank) : 0;
  }

  // This CTA's next unit; false when done. Identical sequence on both CTAs of a cluster.
  HOPGEMM_DEVICE bool next(WorkUnit& u) {
    if (unit >= num_units) return false;
    const u32 tile_unit = static_cast<u32>(unit) / kSplits;
    u.split = unit - static_cast<i32>(tile_unit) * kSplits;
    const RasterCoords c = banded_coords(tile_unit, static_cast<u32>(units_major), static_cast<u32>(units_minor),
                                         static_cast<u32>(params.raster_band));
    const i32 u_major = c.major, u_minor = c.minor;
    u.m_block = (kAlongN ? u_minor : u_major) * kClusterM + rank_m;
    u.n_block = (kAlongN ? u_major : u_minor) * kClusterN + rank_n;
    u.group = 0;
    const i32 num_k_blocks = ceil_div(params.k, 128);  // the last block may be partial (TMA zero-fills)
    const i32 k_blocks_per_split = ceil_div(num_k_blocks, kSplits);  // the host keeps every split non-empty
    u.kb_begin = u.split * k_blocks_per_split;
    u.kb_end = min(u.kb_begin + k_blocks_per_split, num_k_blocks);
    // The grid's clusters, re-read from the launch's constants rather than held in a register.
    unit += static_cast<i32>(gridDim.x) / (kClusterM * kClusterN);
    return true;
  }
  // The unit after the one next() returned last, without consuming it.
  HOPGEMM_DEVICE bool peek(WorkUnit& u) const {
    Sm90DenseScheduler ahead = *this;
    return ahead.next(u);
  }

  // Coordinates of a unit. A (and its per-row scales, and D) rows start at a_row; B rows (D columns) at b_row;
  // k-block kb reads A and B at K offset k_offset and scale column sf_k_block.
  // sfa_row: the row of A's per-row scales (their TMA coordinate, or row-major row). d_row / d_col: the tile's first
  // row and column of D; d_col is also its column inside B's group (the 1D2D scale blocks it falls into).
  HOPGEMM_DEVICE i32 a_row(const WorkUnit& u) const { return u.m_block * kBlockM; }
  HOPGEMM_DEVICE i32 b_row(const WorkUnit& u) const { return u.n_block * kBlockN; }
  HOPGEMM_DEVICE i32 sfa_row(const WorkUnit& u) const { return a_row(u); }
  HOPGEMM_DEVICE i32 d_row(const WorkUnit& u) const { return a_row(u); }
  HOPGEMM_DEVICE i32 d_col(const WorkUnit& u) const { return b_row(u); }
  HOPGEMM_DEVICE i32 k_offset(const WorkUnit&, i32 kb) const { return kb * 128; }
  HOPGEMM_DEVICE i32 sf_k_block(const WorkUnit&, i32 kb) const { return kb; }
  // The last tile row may hold fewer than kBlockM rows of A: the producer then loads only those (tma_a_tail).
  // A B-sharing pair's two tiles always take the same B rows.
  HOPGEMM_DEVICE bool shares_b(const WorkUnit&) const { return true; }
  HOPGEMM_DEVICE bool in_last_partial_row(const WorkUnit& u) const { return u.m_block == params.m / kBlockM; }
  // Phantom tiles (past the edge) are computed for the pair's sake but never stored.
  HOPGEMM_DEVICE bool stores(const WorkUnit& u) const { return u.m_block < num_m_blocks && u.n_block < num_n_blocks; }
  // Split-K counter slot of the unit's tile.
  HOPGEMM_DEVICE i32 tile_index(const WorkUnit& u) const { return u.m_block * num_n_blocks + u.n_block; }
  // The rows of D the unit may write end at d_row_end (its tile is clipped there), its columns at d_cols. A
  // scheduler whose units end inside a tile (kRowMaskedTiles) has them stored row by row.
  static constexpr bool kRowMaskedTiles = false;
  HOPGEMM_DEVICE i32 d_row_end(const WorkUnit&) const { return params.m; }
  HOPGEMM_DEVICE i32 d_cols() const { return params.n; }
};

}  // namespace hopgemm::device::scheduler
