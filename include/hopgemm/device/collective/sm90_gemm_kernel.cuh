#pragma once
// The body of every SM90 GEMM kernel, composed from the collectives: setup, the producer role, the consumer role
// (mainloop and epilogue). A family's __global__ (kernels/sm90_*_gemm.cuh) is this body instantiated with its traits
// (config, operand policy, scale policy: collective/sm90_gemm_traits.cuh):
//   scheduler   hands out work units and answers their coordinates (scheduler/sm90_schedulers.cuh, by grouping);
//   producer    one warpgroup: TMA of A and B (multicast over a CTA pair), and the scale policy's loads
//               (collective/sm90_gemm_producer.cuh);
//   mainloop    one to three math warpgroups: WGMMA from shared memory, promoted by the scale policy
//               (collective/sm90_gemm_mainloop.cuh);
//   epilogue    swizzled TMA store or reduce-add (epilogue/sm90_store_tile.cuh), FP32 D += A B^T from registers
//               (epilogue/sm90_reduce_global.cuh), a grouped unit's rows (epilogue/sm90_store_rows.cuh), split-K's
//               partials met by the last split (epilogue/sm90_splitk_fused.cuh).

#include "hopgemm/device/collective/sm90_gemm_mainloop.cuh"
#include "hopgemm/device/collective/sm90_gemm_producer.cuh"
#include "hopgemm/device/common.cuh"
#include "hopgemm/device/epilogue/sm90_reduce_global.cuh"
#include "hopgemm/device/epilogue/sm90_splitk_fused.cuh"
#include "hopgemm/device/epilogue/sm90_store_rows.cuh"
#include "hopgemm/device/epilogue/sm90_store_tile.cuh"
#include "hopgemm/device/pipeline/sm90_named_barriers.cuh"
#include "hopgemm/device/ptx/barrier.cuh"
#include "hopgemm/device/ptx/cluster.cuh"
#include "hopgemm/device/ptx/fence.cuh"
#include "hopgemm/device/ptx/griddepcontrol.cuh"
#include "hopgemm/device/ptx/setmaxnreg.cuh"
#include "hopgemm/device/ptx/tma.cuh"
#include "hopgemm/device/scheduler/sm90_schedulers.cuh"

namespace hopgemm::device::collective {

template <int kWaves, int kCols>
HOPGEMM_DEVICE void zero_tile(float (&fin)[kWaves][kCols]) {
#pragma unroll
  for (int w = 0; w < kWaves; ++w)
#pragma unroll
    for (int i = 0; i < kCols; ++i) fin[w][i] = 0.0f;
}

template <class K>  // Sm90GemmTraits
HOPGEMM_DEVICE void sm90_gemm(const typename K::Params& params, u8* smem_base) {
  // ---- setup ---------------------------------------------------------------------------------------------------
  using Scheduler = typename scheduler::SchedulerFor<K::kGrouping, K::kGeometry>::Type;
  static_assert(scheduler::TileScheduler<Scheduler>);
  constexpr int kBlockN = K::kBlockN, kWaves = K::kWaves;

  const Sm90GemmSharedStorage<K> smem(smem_base);
  const u32 warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const u32 cta_rank = K::kClusterSize > 1 ? ptx::cluster_ctarank() : 0;
  const bool has_a_tail = !K::kMulticastA && params.a_tail_rows > 0;
  if (threadIdx.x == K::kMathThreads) {
    smem.stages.init(K::kFullArrivals, K::kEmptyArrivals);
    smem.scales.init();
    ptx::fence_mbarrier_init_release_cluster();
  } else if (threadIdx.x == K::kMathThreads + 32) {
    if (params.schedule.m >= K::kBlockM || !has_a_tail) ptx::prefetch_tensormap(&params.tma_a);
    if (has_a_tail) ptx::prefetch_tensormap(&params.tma_a_tail);
    ptx::prefetch_tensormap(&params.tma_b);
    ptx::prefetch_tensormap(&params.tma_d);
    K::Scales::prefetch(params);
  }
  if constexpr (K::kClusterSize > 1)
    ptx::cluster_sync();
  else
    __syncthreads();
  // PDL: nothing global is read or written before the previous grid is done.
  ptx::griddepcontrol_wait();
  Scheduler sched(params.schedule, cta_rank);

  if (threadIdx.x >= K::kMathThreads) {
    // ---- producer role ---------------------------------------------------------------------------------------------
    ptx::setmaxnreg_dec<K::kProducerRegs>();
    run_producer<K>(params, smem, sched, warp - K::kMathWgs * 4, lane, cta_rank);
  } else {
    // ---- consumer role: math warpgroup wg owns tile rows [wg * kWgRows, (wg + 1) * kWgRows) -----------------------
    ptx::setmaxnreg_inc<K::kConsumerRegs>();
    const u32 wg = threadIdx.x / 128;
    const u32 thread_row = wg * K::kWgRows + (warp % 4) * 16 + lane / 4;  // in wave 0; the other row is 8 below
    typename K::Scales::Reader scales(params, smem.scales, thread_row, lane);
    Sm90GemmMainloop<K> mainloop(smem, scales, wg, lane);
    using Mainloop = decltype(mainloop);
    float fin[kWaves][kBlockN / 2];                            // promoted accumulators, wgmma layout per wave
    float acc[Mainloop::kAccSets][kBlockN / 2];                // tensor-core partial sums of one k-block

    scheduler::WorkUnit u;
    while (sched.next(u)) {
      const i32 m0 = sched.d_row(u), n0 = sched.d_col(u);
      if constexpr (K::kGrouping == kGroupingMIds) {
        if (u.skip_mainloop) {
          // A padding tile whose pair holds no group: zeros stored from registers (no stage is held to stage them
          // in, and the producers load nothing for it).
          zero_tile(fin);
          if (sched.stores(u))
            epilogue::store_tile_rows_bf16<kBlockN, K::kWgRows>(fin, static_cast<u16*>(params.d), params.ldd,
                                                                sched.d_row_end(u), sched.d_cols(), wg, m0, n0);
          continue;
        }
      }
      if constexpr (K::kGrouping == kGroupingK || K::kGrouping == kGroupingKRanges) {
        // A group with no k-blocks (the K walk's units cover every group: its D is C, which the host put there).
        if (u.skip_mainloop) continue;
      }
      scales.begin_unit(u, sched);
      mainloop.run(fin, acc, u.num_k_blocks());
      scales.end_unit(u);
      if constexpr (K::kGrouping == kGroupingMIds) {
        if (u.zero_d) zero_tile(fin);  // computed for the pair's sake: D's padding rows get zeros instead
      }

      // ---- epilogue --------------------------------------------------------------------------------------------
      // No D store for a phantom tile, nor for a split that did not finish its tile last.
      bool store = sched.stores(u);
      if constexpr (K::kSplits > 1) {
        // Registers a math thread has beside its accumulator sets and promoted sums, less a reserve for addresses
        // and the scheduler's state, for the other splits' partials in flight. More than 4 splits keep more state
        // live (ptxas: a reserve of 80 spilled 8 bytes at 64x64 and 24 at 64x80 with 8 splits); a larger reserve
        // everywhere made 1x2112x7168 (64x64, 4 splits) 4.7% slower on an H200.
        constexpr int kReserve = K::kSplits > 4 ? 104 : 80;
        constexpr int kLoadFloats = K::kConsumerRegs - Mainloop::kAccSets * kBlockN / 2 - kWaves * kBlockN / 2 - kReserve;
        store = epilogue::splitk_fused_reduce<kWaves, kBlockN / 2, K::kSplits, K::kMathThreads, kLoadFloats>(
            fin, params.partials, params.tile_counters, sched.tile_index(u), u.split, pipeline::kBarrierMathThreads);
      }
      if constexpr (K::kReducesFromRegisters) {
        if (store)
          epilogue::reduce_tile_global<kBlockN, K::kWgRows>(fin, static_cast<float*>(params.d), params.ldd,
                                                            sched.d_row_end(u), sched.d_cols(), wg, m0, n0);
      } else if (Scheduler::kRowMaskedTiles && store && m0 + K::kBlockM > sched.d_row_end(u)) {
        epilogue::store_tile_rows_bf16<kBlockN, K::kWgRows>(fin, static_cast<u16*>(params.d), params.ldd,
                                                            sched.d_row_end(u), sched.d_cols(), wg, m0, n0);
      } else if (store) {
        const u32 d_buf = Mainloop::kDInStage ? smem.a_stage(mainloop.last_stage) : smem.d;
        epilogue::store_tile<K::kBlockM, kBlockN, K::kWgRows, K::kStoresFp32, K::kAccumulate, K::kDSwizzleBytes,
                             K::kDPasses, typename K::Columns, scheduler::kBatchedStores<Scheduler>>(
            fin, d_buf, &params.tma_d, wg, m0, n0, scheduler::d_batch(sched, u));
      }
      if constexpr (Mainloop::kDInStage) {
        // This warpgroup's stores must have read the stage before the producers may refill it.
        if (store) {
          if (threadIdx.x % 128 == 0) ptx::cp_async_bulk_wait_group_read<0>();
          ptx::bar_sync(pipeline::kBarrierWarpgroup0 + wg, 128);
        }
        mainloop.release(mainloop.last_stage);
      }
    }
    // The last TMA store must land before the CTA exits.
    if (threadIdx.x % 128 == 0) ptx::cp_async_bulk_wait_group<0>();
  }

  // No CTA may exit while its peer can still arrive on its barriers.
  if constexpr (K::kClusterSize > 1) ptx::cluster_sync();
}

}  // namespace hopgemm::device::collective
