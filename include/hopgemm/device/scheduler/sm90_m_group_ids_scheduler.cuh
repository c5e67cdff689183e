#pragma once
// Scheduler of the M-grouped contiguous GEMM whose grouped_layout names the group of every row (-1: padding), each
// group's rows starting at a multiple of the tile rows: the dense order over the M_sum x N tiles, where a tile's
// group is that of its first row. A tile whose id is -1 or outside [0, G) is a padding tile: no loads, no MMA, and
// D's rows receive zeros (params.zero_padding_blocks, DeepGEMM's behaviour: WorkUnit::zero_d and skip_mainloop) or
// are left untouched (the tile is skipped). B is [G x N, K].
// Pairs: an A-sharing pair (cluster_n = 2) holds one m-block, so both CTAs treat it alike. A B-sharing pair
// (cluster_m = 2) holds two m-blocks that may belong to different groups: both are padding tiles only where both are
// padding; where one is, that CTA computes its peer's group for the pair's sake and stores zeros instead (or nothing);
// where the two groups differ, each CTA loads its own B whole instead of sharing halves (shares_b).

#include "hopgemm/device/ptx/ld_global.cuh"
#include "hopgemm/device/scheduler/sm90_dense_scheduler.cuh"

namespace hopgemm::device::scheduler {

template <Sm90TileGeometry kGeo>
struct Sm90MGroupIdsScheduler {
  static_assert(kGeo.k_splits == 1, "grouped GEMMs take no split-K");
  static constexpr int kBlockM = kGeo.block_m, kBlockN = kGeo.block_n;
  static constexpr Sm90Grouping kGrouping = kGroupingMIds;
  using Dense = Sm90DenseScheduler<kGeo>;
  Dense dense;
  bool own_block = true;  // the last unit's m-block belongs to its group (else it is computed for the peer's sake)
  bool same_groups = true;  // both m-blocks of the last B-sharing pair are of one group

  HOPGEMM_DEVICE Sm90MGroupIdsScheduler(const Sm90ScheduleParams& p, u32 cta_rank) : dense(p, cta_rank) {}

  // The group of m-block mb, or -1 for padding, an id outside [0, G) or a block past M.
  HOPGEMM_DEVICE i32 group_of(i32 mb) const {
    if (mb >= dense.num_m_blocks) return -1;
    const i32 g = ptx::ld_global_nc_i32(dense.params.grouped_layout + mb * kBlockM);
    return g >= 0 && g < dense.params.num_groups ? g : -1;
  }

  // Every padding tile comes out of the walk (WorkUnit::zero_d, skip_mainloop) in both modes; whether D receives its
  // zeros is decided at the store (stores(), params.zero_padding_blocks). With that launch parameter read here, in
  // the walk's loop, ptxas took the consumer's WGMMA descriptors off the uniform datapath (16 R2UR per k-block at
  // 128x128 and 128x192; none with the walk as it is now); an untouched-mode padding tile costs the walk a step and no
  // loads.
  HOPGEMM_DEVICE bool next(WorkUnit& u) {
    while (dense.next(u)) {
      const i32 g = group_of(u.m_block);
      // A block past M (a pair's phantom) is never stored, so it is never zeroed either.
      const bool zero_own = g < 0 && u.m_block < dense.num_m_blocks;
      if constexpr (kGeo.cluster_m == 1) {
        if (g < 0 && !zero_own) continue;
        u.group = g < 0 ? 0 : g;
        u.zero_d = u.skip_mainloop = g < 0;
        return true;
      } else {
        const i32 peer = group_of(u.m_block ^ 1);  // the pair's m-blocks are 2i and 2i + 1
        const bool zero_peer = peer < 0 && (u.m_block ^ 1) < dense.num_m_blocks;
        if (g < 0 && peer < 0 && !zero_own && !zero_peer) continue;
        own_block = g >= 0 || zero_own;
        same_groups = g < 0 || peer < 0 || g == peer;
        u.group = g >= 0 ? g : peer >= 0 ? peer : 0;
        u.zero_d = g < 0;
        // Both CTAs of the pair decide alike: neither loads (so no multicast waits on the other) where both blocks
        // are padding.
        u.skip_mainloop = g < 0 && peer < 0;
        return true;
      }
    }
    return false;
  }
  // Whether the pair shares B by multicast (one group for both CTAs).
  HOPGEMM_DEVICE bool shares_b(const WorkUnit&) const { return same_groups; }

  HOPGEMM_DEVICE i32 a_row(const WorkUnit& u) const { return dense.a_row(u); }
  HOPGEMM_DEVICE i32 b_row(const WorkUnit& u) const { return u.group * dense.params.n + u.n_block * kBlockN; }
  HOPGEMM_DEVICE i32 d_row(const WorkUnit& u) const { return dense.a_row(u); }
  HOPGEMM_DEVICE i32 d_col(const WorkUnit& u) const { return u.n_block * kBlockN; }
  HOPGEMM_DEVICE i32 k_offset(const WorkUnit& u, i32 kb) const { return dense.k_offset(u, kb); }
  HOPGEMM_DEVICE bool in_last_partial_row(const WorkUnit& u) const { return dense.in_last_partial_row(u); }
  HOPGEMM_DEVICE bool stores(const WorkUnit& u) const {
    return own_block && dense.stores(u) && (!u.zero_d || dense.params.zero_padding_blocks != 0);
  }
  HOPGEMM_DEVICE i32 tile_index(const WorkUnit& u) const { return dense.tile_index(u); }
  static constexpr bool kRowMaskedTiles = false;
  HOPGEMM_DEVICE i32 d_row_end(const WorkUnit& u) const { return dense.d_row_end(u); }
  HOPGEMM_DEVICE i32 d_cols() const { return dense.d_cols(); }
};

}  // namespace hopgemm::device::scheduler
