#pragma once
// The FP8 scale policy's compile-time facts (where each scale factor comes from, what a stage and the chunk ring take),
// its shared memory, and where a unit's scales are from the scheduler's coordinates. The producer side is
// collective/sm90_fp8_scale_loader.cuh, the math threads' side collective/sm90_fp8_scale_reader.cuh; the policy that
// the shared collectives are instantiated with, collective/sm90_fp8_scales.cuh.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/kernels/sm90_fp8_gemm_types.cuh"
#include "hopgemm/device/pipeline/sm90_pipeline.cuh"
#include "hopgemm/device/ptx/mbarrier.cuh"
#include "hopgemm/device/ptx/tma.cuh"
#include "hopgemm/device/scheduler/sm90_scheduler.cuh"

namespace hopgemm::device::collective {

// Scales per 128 K (both recipes): the FP8 k-block.
inline constexpr int kFp8ScaleBlockK = 128;

template <Sm90Fp8GemmConfig kConfig>
struct Sm90Fp8ScaleFacts {
  using Params = Sm90Fp8GemmParams;
  static constexpr int kBlockM = kConfig.block_m, kBlockN = kConfig.block_n;
  static constexpr int kMathWgs = num_math_wgs(kConfig);
  static constexpr int kMathThreads = kMathWgs * 128;
  static constexpr bool k1D1D = kConfig.recipe == kRecipe1D1D;
  static constexpr Sm90Fp8GemmSmem kLayout = smem_layout(kConfig);

  // Where the scales come from.
  // sfa: MN-major by TMA into each stage; row-major staged by producer warps (kSfaStaged); or row-major by TMA in
  // chunks of 4 k-blocks into a ring of their own (sf_chunks).
  static constexpr bool kSfaTma = kConfig.sfa_k_major == 0;
  static constexpr bool kSfaChunked = sfa_chunked(kConfig);
  static constexpr bool kSfaStaged = !kSfaTma && !kSfaChunked;
  // sfb, 1D1D: MN-major by TMA into each stage, row-major by cp.async into each stage, or in chunks.
  // sfb, 1D2D (the two 128x128 blocks a tile's columns fall into, per k-block): copied into each stage by cp.async,
  // or held in the math warps' registers 32 k-blocks at a time (sfb_regs: no per-stage copy, which cost 1-3% on
  // big tiles).
  static constexpr bool kSfbTma = k1D1D && kConfig.sfb_k_major == 0;
  static constexpr bool kSfbChunked = sfb_chunked(kConfig);
  static constexpr bool kSfbInRegs = !k1D1D && kConfig.sfb_regs == 1;
  static constexpr bool kSfChunks = kSfaChunked || kSfbChunked;
  static constexpr bool kUsesCpAsync = !kSfbTma && !kSfbInRegs && !kSfbChunked;
  // 1D2D: every math thread reads the stage's B block scales (which the producer refills by cp.async) and arrives
  // on its CTA's empty barrier for its own read: racecheck credits only a thread's own arrival.
  static constexpr bool kReadersArrive = !k1D1D;

  // Row-major sfa staging: the last kSfaWarps producer warps each hold 4 consecutive k-blocks of kSfaPasses x 16
  // rows, loaded once per kSfaChunk k-blocks (one full 32-byte sector per row instead of a 4-byte read per row and
  // k-block). Warp 0 (TMA) stays out where it can: its wait for the loads would delay the A/B issue. With two or
  // three math warpgroups the producer has 40 registers and three warps' passes would spill, so all four stage.
  static constexpr int kSfaChunk = 8, kSfaWarps = kMathWgs == 1 ? 3 : 4;
  static constexpr int kSfaPasses = ceil_div(kBlockM, 16 * kSfaWarps);
  static constexpr bool kSfaFullPasses = kBlockM % (16 * kSfaWarps) == 0;  // else the last pass is partial
  static constexpr int kProducerWarps = kSfaStaged ? kSfaWarps : 0;

  // The promotion every 128 K, and its schedules (collective/sm90_gemm_mainloop.cuh).
  static constexpr bool kPromotes = true;
  static constexpr int kPromoteOverlap = kConfig.promote_overlap;
  // 1D1D promotes with a scale per column (their registers are many: with two accumulator sets they are read during the
  // promotion); column scales held across a k-block's waves where they fit (col_scales_in_regs).
  static constexpr bool kPerColumnScales = k1D1D;
  // K-blocks per trip of the math loop (collective/sm90_gemm_mainloop.cuh). 1D2D: four. Eight (DeepGEMM's `#pragma
  // unroll 8`) took ptxas 1.65 s for the 256x128 pair kernel against 0.63 s at four (its whole compile 2.62 against
  // 1.40 s, the H200 machine under load), and ran no faster: 12 compute-bound rows against DeepGEMM in alternating processes, geomean 0.936x
  // at eight, 0.933x and 0.933x at four (H200, bench/results/h200-2026-11-28-s5-gpu-checks-moe-ep-einsum.txt, call P).
  // 1D1D: none, their promotion's registers leave no room: eight (even four, with scale chunks) spilled at 168 registers
  // (k-grouped 256x104 44 bytes, 128x128 248 bytes; dense chunked 256x88 148 bytes).
  static constexpr int kKUnroll = k1D1D ? 1 : 4;
  static constexpr bool kColScalesInRegs = col_scales_in_regs(kConfig);

  // The scales' regions inside the family-neutral carve-up, bytes TMA brings into a stage and into a chunk slot.
  static constexpr int kSmemBytes = kLayout.tensor_maps - kLayout.scales;
  static constexpr int kBarrierBytes = kLayout.total - kLayout.scale_barriers;
  static constexpr u32 kStageTxBytes = (kSfaTma ? kBlockM * 4 : 0) + (kSfbTma ? kBlockN * 4 : 0);
  static constexpr u32 kSfChunkTxBytes = ((kSfaChunked ? kBlockM : 0) + (kSfbChunked ? kBlockN : 0)) * 4 * kSfChunkKBlocks;
  // Stage barrier arrivals: full, one cp.async arrival per lane of producer warp 0 + one per lane of the sfa warps (each
  // for its own stores); empty, 1D2D: one per math thread of this CTA (kReadersArrive).
  static constexpr u32 kFullArrivals = (kUsesCpAsync ? 32 : 0) + (kSfaStaged ? kSfaWarps * 32 : 0);
  static constexpr u32 kEmptyArrivals = kReadersArrive ? kMathThreads : 0;

  // The scales' shared memory as the kernel addresses it: the per-stage regions, the chunk slots and the chunk ring.
  struct Storage {
    u32 sf_chunks;  // shared-window address of chunk slot 0
    float* sfa;     // stage 0's A scales (generic pointer: the staging warps store through it)
    float* sfb;     // stage 0's B scales (1D2D: 2 floats, 1D1D: kBlockN)
    pipeline::MbarrierPipeline<kSfChunkSlots> chunks;  // sf_chunks only

    HOPGEMM_DEVICE explicit Storage(u8* base) {
      sf_chunks = ptx::smem_addr(base) + kLayout.sf_chunks;
      sfa = reinterpret_cast<float*>(base + kLayout.sfa);
      sfb = reinterpret_cast<float*>(base + kLayout.sfb);
      chunks = {reinterpret_cast<u64*>(base + kLayout.sf_full), reinterpret_cast<u64*>(base + kLayout.sf_empty)};
    }
    // By the thread that initialises the stage barriers: a chunk slot is filled by the producer's expect_tx arrival
    // and emptied by one arrival per math warp of this CTA.
    HOPGEMM_DEVICE void init() const {
      if constexpr (kSfChunks) chunks.init(1, kMathWgs * 4);
    }
    HOPGEMM_DEVICE float* sfa_stage(u32 s) const { return sfa + s * kLayout.sfa_stage / 4; }
    HOPGEMM_DEVICE float* sfb_stage(u32 s) const { return sfb + s * kLayout.sfb_stage / 4; }
    HOPGEMM_DEVICE u32 chunk_slot(u32 slot) const { return sf_chunks + slot * kLayout.sf_chunk; }
  };

  // The scale descriptors the kernel prefetches.
  HOPGEMM_DEVICE static void prefetch(const Params& params) {
    if constexpr (kSfaTma) ptx::prefetch_tensormap(&params.scales.tma_sfa);
    if constexpr (kSfbTma) ptx::prefetch_tensormap(&params.scales.tma_sfb);
  }

  // The row of A's per-row scales of unit u: A's row, except for the masked layout's MN-major scales, one
  // [G x ceil(K/128)] x M_max map (sfa_group_k_blocks != 0), where it is the row inside the group.
  template <scheduler::TileScheduler Scheduler>
  HOPGEMM_DEVICE static i32 sfa_row(const Sm90Fp8ScaleParams& sp, const Scheduler& sched, const scheduler::WorkUnit& u) {
    if constexpr (Scheduler::kGrouping == kGroupingMRanges)
      return sp.sfa_group_k_blocks != 0 ? sched.group_row(u) : sched.a_row(u);
    else
      return sched.a_row(u);
  }
  // The scale column of the unit's k-block kb: the masked (and batched) MN-major sfa's group columns come one after
  // another; the K-grouped scales are one map over the groups' flat K.
  template <scheduler::TileScheduler Scheduler>
  HOPGEMM_DEVICE static i32 sf_k_block(const Sm90Fp8ScaleParams& sp, const Scheduler& sched,
                                       const scheduler::WorkUnit& u, i32 kb) {
    if constexpr (Scheduler::kGrouping == kGroupingMRanges || Scheduler::kGrouping == kGroupingBatched)
      return u.group * sp.sfa_group_k_blocks + kb;
    else if constexpr (Scheduler::kGrouping == kGroupingK)
      return static_cast<i32>(sched.group_k_begin() / kFp8ScaleBlockK) + kb;
    else
      return kb;
  }
};

}  // namespace hopgemm::device::collective
