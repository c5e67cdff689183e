#pragma once
// Scheduler of the M-grouped contiguous GEMM whose grouped_layout names the group of every row (-1: padding), each
// group's rows starting at a multiple of the tile rows: the dense order over the M_sum x N tiles, where a tile's
// group is that of its first row. A tile whose id is -1 or outside [0, G) is skipped whole (no loads, no MMA, its D
// rows untouched); both CTAs of an A-sharing pair hold the same m-block, so they skip together. B is [G x N, K].

#include "hopgemm/device/ptx/ld_global.cuh"
#include "hopgemm/device/scheduler/sm90_dense_scheduler.cuh"

namespace hopgemm::device::scheduler {

template <int kBlockM, int kBlockN, int kClusterN, class Params>
struct Sm90MGroupIdsScheduler {
  using Dense = Sm90DenseScheduler<kBlockM, kBlockN, 1, kClusterN, 1, Params>;
  Dense dense;

  HOPGEMM_DEVICE Sm90MGroupIdsScheduler(const Params& p, u32 cta_rank) : dense(p, cta_rank) {}

  HOPGEMM_DEVICE bool next(WorkUnit& u) {
    while (dense.next(u)) {
      const i32 g = ptx::ld_global_nc_i32(dense.params.grouped_layout + dense.a_row(u));
      if (g >= 0 && g < dense.params.num_groups) {
        u.group = g;
        return true;
      }
    }
    return false;
  }
  HOPGEMM_DEVICE bool peek(WorkUnit& u) const {
    Sm90MGroupIdsScheduler ahead = *this;
    return ahead.next(u);
  }

  HOPGEMM_DEVICE i32 a_row(const WorkUnit& u) const { return dense.a_row(u); }
  HOPGEMM_DEVICE i32 b_row(const WorkUnit& u) const { return u.group * dense.params.n + u.n_block * kBlockN; }
  HOPGEMM_DEVICE i32 sfa_row(const WorkUnit& u) const { return dense.a_row(u); }
  HOPGEMM_DEVICE i32 d_row(const WorkUnit& u) const { return dense.a_row(u); }
  HOPGEMM_DEVICE i32 d_col(const WorkUnit& u) const { return u.n_block * kBlockN; }
  HOPGEMM_DEVICE i32 k_offset(const WorkUnit& u, i32 kb) const { return dense.k_offset(u, kb); }
  HOPGEMM_DEVICE i32 sf_k_block(const WorkUnit& u, i32 kb) const { return dense.sf_k_block(u, kb); }
  HOPGEMM_DEVICE bool in_last_partial_row(const WorkUnit& u) const { return dense.in_last_partial_row(u); }
  HOPGEMM_DEVICE bool stores(const WorkUnit& u) const { return dense.stores(u); }
  HOPGEMM_DEVICE i32 tile_index(const WorkUnit& u) const { return dense.tile_index(u); }
  static constexpr bool kRowMaskedTiles = false;
  HOPGEMM_DEVICE i32 d_row_end(const WorkUnit& u) const { return dense.d_row_end(u); }
  HOPGEMM_DEVICE i32 d_cols() const { return dense.d_cols(); }
};

}  // namespace hopgemm::device::scheduler
