#pragma once
// The producer warpgroup of a GEMM kernel: warp 0's lane 0 issues the TMA loads of A and B (one half of a shared
// operand each, or the first CTA all of it, multicast to the pair; the operand policy's boxes) through the
// descriptors the scheduler's loader hook names; the scale policy's loader adds its own loads around them (the FP8
// scales: collective/sm90_fp8_scale_loader.cuh) and may keep more producer warps busy. The scheduler answers every
// coordinate.

#include "hopgemm/device/collective/sm90_gemm_smem.cuh"
#include "hopgemm/device/ptx/griddepcontrol.cuh"
#include "hopgemm/device/ptx/tma.cuh"
#include "hopgemm/device/scheduler/sm90_operand_maps.cuh"
#include "hopgemm/device/scheduler/sm90_scheduler.cuh"

namespace hopgemm::device::collective {

// Producer warp pwarp (0..3 of the producer warpgroup). Warp 0 loads the operands; the scale loader says which of the
// others load scales; the rest have nothing to do.
template <class K, scheduler::TileScheduler Scheduler>
HOPGEMM_DEVICE void run_producer(const typename K::Params& params, const Sm90GemmSharedStorage<K>& smem,
                                 Scheduler& sched, u32 pwarp, u32 lane, u32 cta_rank) {
  constexpr int kBlockM = K::kBlockM, kBlockN = K::kBlockN, kRowBytes = kSm90KBlockBytes;
  // A's and B's TMA by the operand policy (K-major: one box; MN-major: one per 64 rows). A's tail box is K-major only
  // (the host encodes none for an MN-major A).
  using LoadA = typename K::Operands::LoadA;
  using LoadB = typename K::Operands::LoadB;
  // A batched scheduler's operands are 3-D maps, the batch their third coordinate.
  constexpr bool kBatched = scheduler::kBatchedLoads<Scheduler>;
  // B's groups as a 3-D map's batches (K::kBGroupsBatched): the tile's columns inside its group, the group its batch.
  constexpr bool kBatchedB = kBatched || K::kBGroupsBatched;
  typename K::Scales::Loader scales(params, smem.scales, pwarp, lane);
  if (pwarp != 0 && !scales.loads()) return;

  // The A and B descriptors the loads use: the kernel parameters' own, or the scheduler's (its loader hook).
  typename scheduler::OperandMapsOf<Scheduler, K::kStages>::Type maps(params);
  // A's last tile row, where M leaves it partly empty (no A-sharing pair), loads only M's rows (rounded up to 8) from
  // tma_a_tail: TMA's zero fill past M is slow, and the stage's other rows are never stored.
  const bool has_a_tail = !K::kMulticastA && params.a_tail_rows > 0;
  const u32 a_tail_tx_bytes = K::kTxBytes - static_cast<u32>(kBlockM - params.a_tail_rows) * kRowBytes;
  typename pipeline::MbarrierPipeline<K::kStages>::Ring ring;

  scheduler::WorkUnit u;
  while (sched.next(u)) {
    if (u.skip_mainloop) continue;  // a padding tile of zeros (m_group_ids) or a group with no K: nothing to load
    const i32 m0 = sched.a_row(u), n0 = K::kBGroupsBatched ? sched.d_col(u) : sched.b_row(u);
    const bool a_tail = has_a_tail && sched.in_last_partial_row(u);
    if (pwarp == 0) maps.enter(params, smem.tensor_maps, sched, u, lane);
    scales.begin_unit(sched, u);
    for (i32 kb = u.kb_begin; kb < u.kb_end; ++kb, ring.advance()) {
      const u32 s = ring.stage;
      scales.before_empty_wait(u, kb);
      smem.stages.wait_empty(ring);
      u64* const full = smem.stages.full_barrier(s);
      const u32 bar = ptx::smem_addr(full);
      const u32 a_dst = smem.a_stage(s), b_dst = smem.b_stage(s);
      const i32 k0 = sched.k_offset(u, kb);
      const i32 batch = scheduler::load_batch(sched, u, kb), b_batch = K::kBGroupsBatched ? u.group : batch;
      const auto scale_k = scales.k_block(sched, u, kb, s);
      if (pwarp == 0) {
        if (lane == 0) {
          ptx::mbarrier_arrive_expect_tx(full, a_tail ? a_tail_tx_bytes : K::kTxBytes);
          // The shared operand: each CTA of the pair loads one half and multicasts it to both (or the first CTA all
          // of it, where a half is not whole swizzle atoms: shared_operand_box_rows).
          if constexpr (K::kMulticastA) {
            constexpr int kHalf = kBlockM / 2;
            static_assert(shared_operand_box_rows(kBlockM) == kHalf, "A's halves are whole swizzle atoms");
            LoadA::template load_multicast<kHalf, kBatched>(a_dst + cta_rank * kHalf * kRowBytes, maps.a(params), k0,
                                                            m0 + cta_rank * kHalf, batch, bar, 0b11);
          } else {
            LoadA::template load<kBlockM, kBatched>(a_dst, a_tail ? &params.tma_a_tail : maps.a(params), k0, m0,
                                                    batch, bar);
          }
          if constexpr (K::kMulticastB) {
            constexpr int kBox = shared_operand_box_rows(kBlockN);  // the rows of tma_b's box (the host's map)
            if (sched.shares_b(u)) {
              if constexpr (kBox < kBlockN) {
                LoadB::template load_multicast<kBox, kBatchedB>(b_dst + cta_rank * kBox * kRowBytes, maps.b(params),
                                                                k0, n0 + cta_rank * kBox, b_batch, bar, 0b11);
              } else if (cta_rank == 0) {
                LoadB::template load_multicast<kBox, kBatchedB>(b_dst, maps.b(params), k0, n0, b_batch, bar,
                                                                0b11);
              }
            } else {  // the pair's tiles take different B rows: each CTA loads all of its own (both halves)
              LoadB::template load<kBox, kBatchedB>(b_dst, maps.b(params), k0, n0, b_batch, bar);
              if constexpr (kBox < kBlockN)
                LoadB::template load<kBox, kBatchedB>(b_dst + kBox * kRowBytes, maps.b(params), k0, n0 + kBox,
                                                      b_batch, bar);
            }
          } else {
            LoadB::template load<kBlockN, kBatchedB>(b_dst, maps.b(params), k0, n0, b_batch, bar);
          }
          scales.issue_with_operands(scale_k, bar, n0);
        }
        scales.issue_by_operand_warp(scale_k, full, sched, u, kb, n0);
      }
      scales.fill_stage(s, full, kb);
    }
    scales.end_unit(u);
  }
  ptx::griddepcontrol_launch_dependents();
}

}  // namespace hopgemm::device::collective
