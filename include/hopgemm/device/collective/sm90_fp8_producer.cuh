#pragma once
// The FP8 GEMM's producer warpgroup: warp 0's lane 0 issues the TMA loads of A and B (one half of a shared operand
// each, multicast to the pair) and of the scales that come by TMA; warp 0's lanes copy the B scales that are not
// TMA-loadable (cp.async); with row-major A scales, the staging warps hold 8 k-blocks of them in registers and store
// one column per stage (SfaStager). The scheduler answers every coordinate.

#include "hopgemm/device/collective/sm90_fp8_gemm_smem.cuh"
#include "hopgemm/device/collective/sm90_fp8_scale_chunks.cuh"
#include "hopgemm/device/collective/sm90_fp8_scale_coords.cuh"
#include "hopgemm/device/ptx/cp_async.cuh"
#include "hopgemm/device/ptx/griddepcontrol.cuh"
#include "hopgemm/device/ptx/ld_global.cuh"
#include "hopgemm/device/ptx/tma.cuh"
#include "hopgemm/device/scheduler/sm90_operand_maps.cuh"
#include "hopgemm/device/scheduler/sm90_scheduler.cuh"

namespace hopgemm::device::collective {

// Row-major sfa staging in a producer warp: lane = 2 x (row in the warp's 16) + half (k-blocks 4 half .. +3 of a
// chunk); pass p covers tile rows [16 kSfaWarps p, 16 kSfaWarps (p + 1)). Loaded before the empty wait, so the
// loads' latency hides behind it.
template <Sm90Fp8GemmConfig kConfig>
struct SfaStager {
  using T = Sm90Fp8GemmTraits<kConfig>;
  static constexpr int kPasses = T::kSfaPasses, kRowStep = 16 * T::kSfaWarps;
  const Sm90Fp8GemmParams& params;
  u32 half, row;
  bool vec;  // 16-byte loads: sfa 16-byte aligned and its row stride a multiple of 4
  float sv[kPasses][4];

  HOPGEMM_DEVICE SfaStager(const Sm90Fp8GemmParams& p, u32 staging_warp, u32 lane)
      : params(p), half(lane & 1), row(staging_warp * 16 + lane / 2),
        vec(reinterpret_cast<u64>(p.scales.sfa) % 16 == 0 && p.scales.sfa_ld % 4 == 0) {}

  HOPGEMM_DEVICE bool row_in_tile(int p) const { return T::kSfaFullPasses || p * kRowStep + static_cast<i32>(row) < T::kBlockM; }

  // k-blocks [c0, c0 + kSfaChunk) of the tile's rows from m0: this lane's half of them.
  HOPGEMM_DEVICE void load(i32 m0, i32 c0, i32 num_k_blocks) {
    const i32 m = params.schedule.m, c = c0 + static_cast<i32>(half) * 4;
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
      const i32 r = m0 + p * kRowStep + static_cast<i32>(row);
      const float* src = params.scales.sfa + static_cast<i64>(min(r, m - 1)) * params.scales.sfa_ld + c;
      const bool valid = r < m && row_in_tile(p);
      if (valid && vec && c + 4 <= num_k_blocks) {
        ptx::ld_global_v4_f32(src, sv[p][0], sv[p][1], sv[p][2], sv[p][3]);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) sv[p][j] = valid && c + j < num_k_blocks ? ptx::ld_global_f32(src + j) : 0.0f;
      }
    }
  }
  // k-block kb's column into the stage: the half that holds it stores its rows.
  HOPGEMM_DEVICE void store(float* stage_sfa, i32 kb) const {
    const u32 j = static_cast<u32>(kb) % T::kSfaChunk;
    if (j / 4 != half) return;
    float* dst = stage_sfa + row;
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
      const u32 q = j % 4;
      if (row_in_tile(p)) dst[p * kRowStep] = q == 0 ? sv[p][0] : q == 1 ? sv[p][1] : q == 2 ? sv[p][2] : sv[p][3];
    }
  }
};

// Producer warp pwarp (0..3 of the producer warpgroup). Warp 0 loads the operands; the sfa staging warps (row-major
// sfa) stage the A scales; the others have nothing to do.
template <Sm90Fp8GemmConfig kConfig, class Scheduler>
HOPGEMM_DEVICE void run_producer(const Sm90Fp8GemmParams& params, const Sm90Fp8GemmSharedStorage<kConfig>& smem,
                                 Scheduler& sched, u32 pwarp, u32 lane, u32 cta_rank) {
  using T = Sm90Fp8GemmTraits<kConfig>;
  constexpr int kBlockM = T::kBlockM, kBlockN = T::kBlockN, kBlockK = T::kBlockK;
  constexpr u32 kFirstSfaWarp = 4 - T::kSfaWarps;
  const bool sfa_warp = T::kSfaStaged && pwarp >= kFirstSfaWarp;
  if (pwarp != 0 && !sfa_warp) return;

  const Sm90Fp8ScaleParams& sp = params.scales;
  const i32 n = params.schedule.n;
  const i32 num_k_blocks = ceil_div(params.schedule.k, kBlockK);
  const i32 num_sfb_rows = ceil_div(n, 128);
  // The A and B descriptors the loads use: the kernel parameters' own, or the scheduler's (its loader hook).
  typename scheduler::OperandMapsOf<Scheduler, T::kStages>::Type maps(params);
  // A's last tile row, where M leaves it partly empty (no A-sharing pair), loads only M's rows (rounded up to 8) from
  // tma_a_tail: TMA's zero fill past M is slow, and the stage's other rows are never stored.
  const bool has_a_tail = !T::kMulticastA && params.a_tail_rows > 0;
  const u32 a_tail_tx_bytes = T::kTxBytes - static_cast<u32>(kBlockM - params.a_tail_rows) * kBlockK;
  SfaStager<kConfig> sfa_stager(params, pwarp - kFirstSfaWarp, lane);
  SfChunkCounter chunk_counter;
  typename pipeline::MbarrierPipeline<T::kStages>::Ring ring;
  const u32 sfa_addr = ptx::smem_addr(smem.sfa), sfb_addr = ptx::smem_addr(smem.sfb);

  scheduler::WorkUnit u;
  while (sched.next(u)) {
    const i32 m0 = sched.a_row(u), n0 = sched.b_row(u), sfa_m0 = fp8_sfa_row(sp, sched, u);
    const bool a_tail = has_a_tail && sched.in_last_partial_row(u);
    if (pwarp == 0) maps.enter(params, smem.tensor_maps, sched, u, lane);
    chunk_counter.kb_begin = u.kb_begin;
    for (i32 kb = u.kb_begin; kb < u.kb_end; ++kb, ring.advance()) {
      const u32 s = ring.stage;
      if constexpr (T::kSfaStaged)
        if (sfa_warp && (kb == u.kb_begin || kb % T::kSfaChunk == 0)) sfa_stager.load(sfa_m0, kb / T::kSfaChunk * T::kSfaChunk, num_k_blocks);
      smem.stages.wait_empty(ring);
      u64* const full = smem.stages.full_barrier(s);
      const u32 bar = ptx::smem_addr(full);
      const u32 a_dst = smem.a_stage(s), b_dst = smem.b_stage(s);
      const u32 sfa_dst = sfa_addr + s * T::kSmem.sfa_stage, sfb_dst = sfb_addr + s * T::kSmem.sfb_stage;
      const i32 k0 = sched.k_offset(u, kb), sf_kb = fp8_sf_k_block(sp, sched, u, kb);
      if (pwarp == 0) {
        if (lane == 0) {
          ptx::mbarrier_arrive_expect_tx(full, a_tail ? a_tail_tx_bytes : T::kTxBytes);
          // The shared operand: each CTA of the pair loads one half and multicasts it to both.
          if constexpr (T::kMulticastA) {
            constexpr int kHalf = kBlockM / 2;
            ptx::cp_async_bulk_tensor_2d_g2s_multicast(a_dst + cta_rank * kHalf * 128, maps.a(params), k0,
                                                       m0 + cta_rank * kHalf, bar, 0b11);
          } else {
            ptx::cp_async_bulk_tensor_2d_g2s(a_dst, a_tail ? &params.tma_a_tail : maps.a(params), k0, m0, bar);
          }
          if constexpr (T::kMulticastB) {
            constexpr int kHalf = kBlockN / 2;
            if (sched.shares_b(u)) {
              ptx::cp_async_bulk_tensor_2d_g2s_multicast(b_dst + cta_rank * kHalf * 128, maps.b(params), k0,
                                                         n0 + cta_rank * kHalf, bar, 0b11);
            } else {  // the pair's tiles take different B rows: each CTA loads both halves of its own
              ptx::cp_async_bulk_tensor_2d_g2s(b_dst, maps.b(params), k0, n0, bar);
              ptx::cp_async_bulk_tensor_2d_g2s(b_dst + kHalf * 128, maps.b(params), k0, n0 + kHalf, bar);
            }
          } else {
            ptx::cp_async_bulk_tensor_2d_g2s(b_dst, maps.b(params), k0, n0, bar);
          }
          if constexpr (T::kSfaTma) ptx::cp_async_bulk_tensor_2d_g2s(sfa_dst, &sp.tma_sfa, sfa_m0, sf_kb, bar);
          if constexpr (T::kSfbTma) ptx::cp_async_bulk_tensor_2d_g2s(sfb_dst, &sp.tma_sfb, n0, sf_kb, bar);
        }
        if constexpr (T::kSfChunks) {
          // A chunk's first k-block: its slot, once the math warps have read the chunk it held. The whole warp
          // waits (as for the stage) and lane 0 issues: with lane 0 alone waiting and the other lanes spinning on
          // the next stages' empty barriers, 64-row tiles hung.
          if (chunk_counter.starts(kb)) {
            const auto chunk = chunk_counter.ring_of(kb);
            smem.chunks.wait_empty(chunk);
            if (lane == 0) {
              u64* const sf_full = smem.chunks.full_barrier(chunk.stage);
              ptx::mbarrier_arrive_expect_tx(sf_full, T::kSfChunkTxBytes);
              const u32 dst = smem.chunk_slot(chunk.stage), sf_bar = ptx::smem_addr(sf_full);
              const i32 x = sf_kb / kSfChunkKBlocks * kSfChunkKBlocks;
              if constexpr (T::kSfaChunked) ptx::cp_async_bulk_tensor_2d_g2s(dst, &sp.tma_sfa, x, sfa_m0, sf_bar);
              if constexpr (T::kSfbChunked)
                ptx::cp_async_bulk_tensor_2d_g2s(dst + T::kSmem.sf_chunk_sfa, &sp.tma_sfb, x, n0, sf_bar);
            }
            __syncwarp();
          }
        }
        if constexpr (T::kUsesCpAsync) {
          if constexpr (!T::k1D1D) {
            // The (at most two) 128x128 B-scale blocks this tile's columns fall into (in its group's scales).
            const i32 row = sched.d_col(u) / 128 + static_cast<i32>(lane);
            if (lane < 2)
              ptx::cp_async_ca_4(sfb_dst + lane * 4,
                                 sp.sfb + u.group * sp.sfb_group_stride +
                                     static_cast<i64>(min(row, num_sfb_rows - 1)) * sp.sfb_ld +
                                     static_cast<i64>(kb) * sp.sfb_kstride,
                                 row < num_sfb_rows);
          } else {
            // Row-major scales: one strided 4-byte copy per row; rows past the edge read as zero.
#pragma unroll 1  // keeps the producer within its 40 registers
            for (i32 r = lane; r < kBlockN; r += 32) {
              const i32 row = n0 + r;
              ptx::cp_async_ca_4(sfb_dst + r * 4, sp.sfb + static_cast<i64>(min(row, n - 1)) * sp.sfb_ld + sf_kb,
                                 row < n);
            }
          }
          ptx::cp_async_mbarrier_arrive_noinc(full);
        }
      }
      if (sfa_warp) {
        sfa_stager.store(smem.sfa_stage(s), kb);
        smem.stages.arrive_full(s);  // every lane, for its own stores
      }
    }
    chunk_counter.end_unit(u.kb_end);
  }
  ptx::griddepcontrol_launch_dependents();
}

}  // namespace hopgemm::device::collective
