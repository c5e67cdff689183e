#pragma once
// Persistent tile scheduler for a dense GEMM, cluster-aware, with L2 rasterisation.
//
// Work unit = one cluster's tiles: kClusterM adjacent m-blocks (sharing B) or kClusterN adjacent
// n-blocks (sharing A). The unit grid is rounded up, so both CTAs of a pair always get a tile: a
// tile past the matrix edge is a "phantom" (TMA zero-fills its loads, its store is skipped). This
// keeps the two CTAs' pipelines in lockstep, which multicast needs (same stage, same barrier offset).
// Units are visited in bands of kBand units: inside a band consecutive units walk the band's short
// side first, so the ~num_sms concurrent tiles reuse a few A row-panels and B column-panels from L2.
// Bands run along N when the pair shares A (cluster_n == 2, as DeepGEMM does), else along M.
// Split-K (kSplits > 1): each unit is visited kSplits times in a row (k_split = 0..kSplits-1), so the
// splits of one tile run on neighbouring CTAs; both CTAs of a pair get the same split.

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::scheduler {

template <int kBlockM, int kBlockN, int kClusterM, int kClusterN, int kBand, int kSplits = 1>
struct Sm90DenseScheduler {
  i32 num_m_blocks, num_n_blocks;  // real tiles
  i32 units_m, units_n, num_units;
  i32 unit, unit_stride;
  i32 rank_m, rank_n;  // this CTA's offset inside its cluster's unit
  i32 k_split = 0;     // the split of the tile last returned by next()

  HOPGEMM_DEVICE Sm90DenseScheduler(i32 m, i32 n, u32 cta_rank) {
    constexpr int kClusterSize = kClusterM * kClusterN;
    num_m_blocks = ceil_div(m, kBlockM);
    num_n_blocks = ceil_div(n, kBlockN);
    units_m = ceil_div(num_m_blocks, kClusterM);
    units_n = ceil_div(num_n_blocks, kClusterN);
    num_units = units_m * units_n * kSplits;
    unit = static_cast<i32>(blockIdx.x) / kClusterSize;
    unit_stride = static_cast<i32>(gridDim.x) / kClusterSize;
    rank_m = kClusterM > 1 ? static_cast<i32>(cta_rank) : 0;
    rank_n = kClusterN > 1 ? static_cast<i32>(cta_rank) : 0;
  }

  // Next tile of this CTA; false when done. Identical sequence on both CTAs of a cluster.
  HOPGEMM_DEVICE bool next(i32& m_block, i32& n_block) {
    if (unit >= num_units) return false;
    constexpr bool kAlongN = kClusterN > 1;
    const i32 units_major = kAlongN ? units_n : units_m, units_minor = kAlongN ? units_m : units_n;
    const i32 band_units = kBand * units_minor;
    const i32 tile_unit = unit / kSplits;
    k_split = unit - tile_unit * kSplits;
    const i32 band = tile_unit / band_units;
    const i32 first = band * kBand;
    const i32 band_size = min(kBand, units_major - first);
    const i32 in_band = tile_unit - band * band_units;
    const i32 u_major = first + in_band % band_size, u_minor = in_band / band_size;
    m_block = (kAlongN ? u_minor : u_major) * kClusterM + rank_m;
    n_block = (kAlongN ? u_major : u_minor) * kClusterN + rank_n;
    unit += unit_stride;
    return true;
  }

  HOPGEMM_DEVICE bool is_phantom(i32 m_block, i32 n_block) const {
    return m_block >= num_m_blocks || n_block >= num_n_blocks;
  }
};

}  // namespace hopgemm::device::scheduler
