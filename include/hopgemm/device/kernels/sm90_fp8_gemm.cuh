#pragma once
// SM90 FP8 GEMM with fine-grained scaling (recipes 1D2D and 1D1D): D = A . B^T (+ D).
// Warp-specialised persistent kernel, composed from collectives:
//   scheduler   hands out work units and answers their coordinates (scheduler/sm90_dense_scheduler.cuh);
//   producer    one warpgroup: TMA of A and B (multicast over a CTA pair) and of the scale factors
//               (collective/sm90_fp8_producer.cuh);
//   mainloop    one to three math warpgroups: WGMMA m64nNk32 e4m3 from shared memory, promotion every 128 K on CUDA
//               cores with the row x column scales (collective/sm90_fp8_mainloop.cuh, sm90_fp8_scale_reader.cuh);
//   epilogue    swizzled TMA store or reduce-add (epilogue/sm90_store_tile.cuh), FP32 D += A B^T from registers
//               (epilogue/sm90_reduce_global.cuh), split-K's partials met by the last split
//               (epilogue/sm90_splitk_fused.cuh).
// Host contract (descriptors, launch): kernels/sm90_fp8_gemm_types.cuh.

#include "hopgemm/device/collective/sm90_fp8_mainloop.cuh"
#include "hopgemm/device/collective/sm90_fp8_producer.cuh"
#include "hopgemm/device/common.cuh"
#include "hopgemm/device/epilogue/sm90_reduce_global.cuh"
#include "hopgemm/device/epilogue/sm90_splitk_fused.cuh"
#include "hopgemm/device/epilogue/sm90_store_rows.cuh"
#include "hopgemm/device/epilogue/sm90_store_tile.cuh"
#include "hopgemm/device/kernels/sm90_fp8_gemm_types.cuh"
#include "hopgemm/device/pipeline/sm90_named_barriers.cuh"
#include "hopgemm/device/ptx/barrier.cuh"
#include "hopgemm/device/ptx/cluster.cuh"
#include "hopgemm/device/ptx/fence.cuh"
#include "hopgemm/device/ptx/griddepcontrol.cuh"
#include "hopgemm/device/ptx/setmaxnreg.cuh"
#include "hopgemm/device/ptx/tma.cuh"
#include "hopgemm/device/scheduler/sm90_dense_scheduler.cuh"
#include "hopgemm/device/scheduler/sm90_k_grouped_scheduler.cuh"
#include "hopgemm/device/scheduler/sm90_m_group_ids_scheduler.cuh"
#include "hopgemm/device/scheduler/sm90_m_group_ranges_scheduler.cuh"

namespace hopgemm::device {

// The config's scheduler (its grouping), over the FP8 tile: k-blocks of 128 one-byte elements.
template <Sm90Fp8GemmConfig kConfig>
inline constexpr Sm90TileGeometry kSm90Fp8TileGeometry{kConfig.block_m, kConfig.block_n, 128, 1, kConfig.cluster_m,
                                                       kConfig.cluster_n, kConfig.k_splits};
template <Sm90Fp8GemmConfig kConfig, Sm90TileGeometry kGeo = kSm90Fp8TileGeometry<kConfig>>
struct Sm90Fp8GemmScheduler {
  using Type = scheduler::Sm90DenseScheduler<kGeo>;
};
template <Sm90Fp8GemmConfig kConfig, Sm90TileGeometry kGeo>
  requires(kConfig.grouping == kGroupingMIds)
struct Sm90Fp8GemmScheduler<kConfig, kGeo> {
  using Type = scheduler::Sm90MGroupIdsScheduler<kGeo>;
};
template <Sm90Fp8GemmConfig kConfig, Sm90TileGeometry kGeo>
  requires(kConfig.grouping == kGroupingMRanges)
struct Sm90Fp8GemmScheduler<kConfig, kGeo> {
  using Type = scheduler::Sm90MGroupRangesScheduler<kGeo>;
};
template <Sm90Fp8GemmConfig kConfig, Sm90TileGeometry kGeo>
  requires(kConfig.grouping == kGroupingK)
struct Sm90Fp8GemmScheduler<kConfig, kGeo> {
  using Type = scheduler::Sm90KGroupedScheduler<kGeo>;
};

template <Sm90Fp8GemmConfig kConfig>
__global__ void __launch_bounds__(num_threads(kConfig), 1)
    sm90_fp8_gemm_kernel(const __grid_constant__ Sm90Fp8GemmParams params) {
  // ---- setup ---------------------------------------------------------------------------------------------------
  static_assert(is_valid(kConfig), "invalid Sm90Fp8GemmConfig (see is_valid)");
  using T = collective::Sm90Fp8GemmTraits<kConfig>;
  using Scheduler = typename Sm90Fp8GemmScheduler<kConfig>::Type;
  static_assert(scheduler::TileScheduler<Scheduler>);
  constexpr int kBlockN = T::kBlockN, kWaves = T::kWaves;

  extern __shared__ __align__(1024) u8 smem_base[];
  const collective::Sm90Fp8GemmSharedStorage<kConfig> smem(smem_base);
  const u32 warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const u32 cta_rank = T::kClusterSize > 1 ? ptx::cluster_ctarank() : 0;
  const bool has_a_tail = !T::kMulticastA && params.a_tail_rows > 0;
  if (threadIdx.x == T::kMathThreads) {
    smem.stages.init(T::kFullArrivals, T::kEmptyArrivals);
    // Chunk slots: the producer's expect_tx arrival fills one; one arrival per math warp of this CTA empties it.
    if constexpr (T::kSfChunks) smem.chunks.init(1, T::kMathWgs * 4);
    ptx::fence_mbarrier_init_release_cluster();
  } else if (threadIdx.x == T::kMathThreads + 32) {
    if (params.schedule.m >= T::kBlockM || !has_a_tail) ptx::prefetch_tensormap(&params.tma_a);
    if (has_a_tail) ptx::prefetch_tensormap(&params.tma_a_tail);
    ptx::prefetch_tensormap(&params.tma_b);
    ptx::prefetch_tensormap(&params.tma_d);
    if constexpr (T::kSfaTma) ptx::prefetch_tensormap(&params.scales.tma_sfa);
    if constexpr (T::kSfbTma) ptx::prefetch_tensormap(&params.scales.tma_sfb);
  }
  if constexpr (T::kClusterSize > 1)
    ptx::cluster_sync();
  else
    __syncthreads();
  // PDL: nothing global is read or written before the previous grid is done.
  ptx::griddepcontrol_wait();
  Scheduler sched(params.schedule, cta_rank);

  if (threadIdx.x >= T::kMathThreads) {
    // ---- producer role ---------------------------------------------------------------------------------------------
    ptx::setmaxnreg_dec<T::kProducerRegs>();
    collective::run_producer<kConfig>(params, smem, sched, warp - T::kMathWgs * 4, lane, cta_rank);
  } else {
    // ---- consumer role: math warpgroup wg owns tile rows [wg * kWgRows, (wg + 1) * kWgRows) -----------------------
    ptx::setmaxnreg_inc<T::kConsumerRegs>();
    const u32 wg = threadIdx.x / 128;
    const u32 thread_row = wg * T::kWgRows + (warp % 4) * 16 + lane / 4;  // in wave 0; the other row is 8 below
    collective::Sm90Fp8ScaleReader<kConfig> scales(params, smem, thread_row, lane);
    collective::Sm90Fp8Mainloop<kConfig> mainloop(smem, scales, wg, lane);
    using Mainloop = decltype(mainloop);
    float fin[kWaves][kBlockN / 2];                            // promoted accumulators, wgmma layout per wave
    float acc[Mainloop::kAccSets][kBlockN / 2];                // tensor-core partial sums of one 128-K block

    scheduler::WorkUnit u;
    while (sched.next(u)) {
      const i32 m0 = sched.d_row(u), n0 = sched.d_col(u);
      scales.begin_unit(u, sched);
      mainloop.n0 = n0;
      mainloop.run(fin, acc, u.num_k_blocks());
      scales.end_unit(u.kb_end);

      // ---- epilogue --------------------------------------------------------------------------------------------
      // No D store for a phantom tile, nor for a split that did not finish its tile last.
      bool store = sched.stores(u);
      if constexpr (T::kSplits > 1) {
        // Registers a math thread has beside its accumulator sets and promoted sums, less a reserve for addresses
        // and the scheduler's state, for the other splits' partials in flight. More than 4 splits keep more state
        // live (ptxas: a reserve of 80 spilled 8 bytes at 64x64 and 24 at 64x80 with 8 splits); a larger reserve everywhere made
        // 1x2112x7168 (64x64, 4 splits) 4.7% slower on an H200.
        constexpr int kReserve = T::kSplits > 4 ? 104 : 80;
        constexpr int kLoadFloats = T::kConsumerRegs - Mainloop::kAccSets * kBlockN / 2 - kWaves * kBlockN / 2 - kReserve;
        store = epilogue::splitk_fused_reduce<kWaves, kBlockN / 2, T::kSplits, T::kMathThreads, kLoadFloats>(
            fin, params.partials, params.tile_counters, sched.tile_index(u), u.split, pipeline::kBarrierMathThreads);
      }
      if constexpr (reduces_from_registers(kConfig)) {
        if (store)
          epilogue::reduce_tile_global<kBlockN, T::kWgRows>(fin, static_cast<float*>(params.d), params.ldd,
                                                            sched.d_row_end(u), sched.d_cols(), wg, m0, n0);
      } else if (Scheduler::kRowMaskedTiles && store && m0 + T::kBlockM > sched.d_row_end(u)) {
        epilogue::store_tile_rows_bf16<kBlockN, T::kWgRows>(fin, static_cast<u16*>(params.d), params.ldd,
                                                            sched.d_row_end(u), sched.d_cols(), wg, m0, n0);
      } else if (store) {
        const u32 d_buf = Mainloop::kDInStage ? smem.a_stage(mainloop.last_stage) : smem.d;
        epilogue::store_tile<T::kBlockM, kBlockN, T::kWgRows, stores_fp32(kConfig), kConfig.accumulate == 1,
                             d_swizzle_bytes(kConfig), kConfig.d_passes>(fin, d_buf, &params.tma_d, wg, m0, n0);
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
  if constexpr (T::kClusterSize > 1) ptx::cluster_sync();
}

}  // namespace hopgemm::device
