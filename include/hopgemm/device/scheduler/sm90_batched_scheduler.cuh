#pragma once
// Tile schedulers of batched GEMMs (DeepGEMM's einsum forms): A, B (and D) are 3-D tensors whose outermost coordinate
// is the batch, loaded and stored through 3-D descriptors (box depth 1), so a batch's rows and K end where its
// matrices end (TMA zero-fills past them) whatever the strides between batches.
//   Sm90BatchedScheduler (grouping batched): num_groups independent m x n x k GEMMs, D 3-D too ("bhr,hdr->bhd":
//     batch h, D[b, h, d] per head). The dense scheduler's walk and coordinates inside each batch, batches in turn,
//     so a CTA pair's two tiles are always in one batch.
//   Sm90BatchSumScheduler (grouping batch_sum): one m x n GEMM summed over the batches ("bmk,bnk->mn"): a tile's
//     k-blocks run over every batch's K (the batch of k-block kb is kb / k-blocks per batch), D 2-D; split-K splits
//     that whole range.
// Both answer load_batch(u, kb), the batch coordinate of k-block kb's loads; the batched one also d_batch(u), D's
// (sm90_scheduler.cuh: kBatchedLoads, kBatchedStores).

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/scheduler/sm90_dense_scheduler.cuh"

namespace hopgemm::device::scheduler {

template <Sm90TileGeometry kGeo>
struct Sm90BatchedScheduler : Sm90DenseScheduler<kGeo> {
  static_assert(kGeo.k_splits == 1, "batched GEMMs take no split-K");
  using Base = Sm90DenseScheduler<kGeo>;
  static constexpr Sm90Grouping kGrouping = kGroupingBatched;
  using Base::Base;

  HOPGEMM_DEVICE bool next(WorkUnit& u) {
    const i32 batch_units = Base::units_m * Base::units_n;
    if (Base::walk.unit >= batch_units * Base::params.num_groups) return false;
    u.group = Base::walk.unit / batch_units;
    Base::walk.place(u, static_cast<u32>(Base::walk.unit - u.group * batch_units), Base::units_m, Base::units_n,
                     Base::params.raster_band);
    u.split = 0;
    u.kb_begin = 0;
    u.kb_end = ceil_div(Base::params.k, Base::kBlockK);
    Base::walk.advance();
    return true;
  }
  // The 3-D descriptors take the batch as their own coordinate: rows start at the batch's first.
  HOPGEMM_DEVICE bool in_last_partial_row(const WorkUnit&) const { return false; }
  HOPGEMM_DEVICE i32 tile_index(const WorkUnit& u) const {
    return (u.group * Base::num_m_blocks + u.m_block) * Base::num_n_blocks + u.n_block;
  }
  HOPGEMM_DEVICE i32 load_batch(const WorkUnit& u, i32) const { return u.group; }
  HOPGEMM_DEVICE i32 d_batch(const WorkUnit& u) const { return u.group; }
};

template <Sm90TileGeometry kGeo>
struct Sm90BatchSumScheduler : Sm90DenseScheduler<kGeo> {
  using Base = Sm90DenseScheduler<kGeo>;
  static constexpr Sm90Grouping kGrouping = kGroupingBatchSum;
  i32 batch_k_blocks;  // k-blocks of one batch's K

  HOPGEMM_DEVICE Sm90BatchSumScheduler(const Sm90ScheduleParams& p, u32 cta_rank)
      : Base(p, cta_rank), batch_k_blocks(ceil_div(p.k, Base::kBlockK)) {}

  // The dense walk over (tile, split) units, with K = every batch's k-blocks one after another, split-major: the
  // tiles of one split are neighbouring units, so the CTAs that read the same batches' rows of A (or of B) run side by
  // side and the second read finds them in L2. Tile-major (a tile's splits side by side), 4096 x 256 x 256 x 256 at
  // 128x128 x 32 splits read A and B at 2.4 TB/s (445 us); split-major 3.7 TB/s (292 us; DeepGEMM, whose CTA index is
  // split-major too, 264 us), H200, bench/results/h200-2026-11-28-s5-gpu-checks-moe-ep-einsum.txt.
  HOPGEMM_DEVICE bool next(WorkUnit& u) {
    if (Base::walk.unit >= Base::num_units) return false;
    const u32 num_tiles = static_cast<u32>(Base::units_m * Base::units_n);
    u.split = static_cast<i32>(static_cast<u32>(Base::walk.unit) / num_tiles);
    const u32 tile_unit = static_cast<u32>(Base::walk.unit) - static_cast<u32>(u.split) * num_tiles;
    Base::walk.place(u, tile_unit, Base::units_m, Base::units_n, Base::params.raster_band);
    u.group = 0;
    const i32 num_k_blocks = batch_k_blocks * Base::params.num_groups;
    const i32 k_blocks_per_split = ceil_div(num_k_blocks, Base::kSplits);  // the host keeps every split non-empty
    u.kb_begin = u.split * k_blocks_per_split;
    u.kb_end = min(u.kb_begin + k_blocks_per_split, num_k_blocks);
    Base::walk.advance();
    return true;
  }
  HOPGEMM_DEVICE i32 k_offset(const WorkUnit&, i32 kb) const { return kb % batch_k_blocks * Base::kBlockK; }
  HOPGEMM_DEVICE bool in_last_partial_row(const WorkUnit&) const { return false; }
  HOPGEMM_DEVICE i32 load_batch(const WorkUnit&, i32 kb) const { return kb / batch_k_blocks; }
};

}  // namespace hopgemm::device::scheduler
