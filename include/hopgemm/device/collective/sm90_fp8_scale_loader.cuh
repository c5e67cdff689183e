#pragma once
// The FP8 scale policy's producer side (the producer, collective/sm90_gemm_producer.cuh, calls it around its A and B
// loads): warp 0's lane 0 issues the TMA loads of the scales that come by TMA into each stage, warp 0 the chunk ring's
// loads (sf_chunks) and the cp.async copies of the B scales that are not TMA-loadable; with row-major A scales, the
// staging warps hold 8 k-blocks of them in registers and store one column per stage (SfaStager).

#include "hopgemm/device/collective/sm90_fp8_scale_chunks.cuh"
#include "hopgemm/device/collective/sm90_fp8_scale_facts.cuh"
#include "hopgemm/device/ptx/cp_async.cuh"
#include "hopgemm/device/ptx/ld_global.cuh"
#include "hopgemm/device/ptx/tma.cuh"

namespace hopgemm::device::collective {

// Row-major sfa staging in a producer warp: lane = 2 x (row in the warp's 16) + half (k-blocks 4 half .. +3 of a
// chunk); pass p covers tile rows [16 kSfaWarps p, 16 kSfaWarps (p + 1)). Loaded before the empty wait, so the
// loads' latency hides behind it.
template <Sm90Fp8GemmConfig kConfig>
struct SfaStager {
  using F = Sm90Fp8ScaleFacts<kConfig>;
  static constexpr int kPasses = F::kSfaPasses, kRowStep = 16 * F::kSfaWarps;
  const Sm90Fp8GemmParams& params;
  u32 half, row;
  bool vec;  // 16-byte loads: sfa 16-byte aligned, row-major (k-block stride 1), its row (and batch) strides multiples of 4
  float sv[kPasses][4];

  HOPGEMM_DEVICE SfaStager(const Sm90Fp8GemmParams& p, u32 staging_warp, u32 lane)
      : params(p), half(lane & 1), row(staging_warp * 16 + lane / 2),
        vec(reinterpret_cast<u64>(p.scales.sfa) % 16 == 0 && p.scales.sfa_ld % 4 == 0 && p.scales.sfa_kstride == 1 &&
            (kConfig.grouping != kGroupingBatched || p.scales.sfa_group_stride % 4 == 0)) {}

  HOPGEMM_DEVICE bool row_in_tile(int p) const { return F::kSfaFullPasses || p * kRowStep + static_cast<i32>(row) < F::kBlockM; }

  // k-blocks [c0, c0 + kSfaChunk) of the tile's rows from m0 (a batched GEMM's: of `batch`): this lane's half of
  // them.
  HOPGEMM_DEVICE void load(i32 m0, i32 c0, i32 num_k_blocks, i32 batch) {
    const i32 m = params.schedule.m, c = c0 + static_cast<i32>(half) * 4;
    const float* sfa = params.scales.sfa;
    if constexpr (kConfig.grouping == kGroupingBatched) sfa += batch * params.scales.sfa_group_stride;
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
      const i32 r = m0 + p * kRowStep + static_cast<i32>(row);
      const float* src = sfa + static_cast<i64>(min(r, m - 1)) * params.scales.sfa_ld +
                         static_cast<i64>(c) * params.scales.sfa_kstride;
      const bool valid = r < m && row_in_tile(p);
      if (valid && vec && c + 4 <= num_k_blocks) {
        ptx::ld_global_v4_f32(src, sv[p][0], sv[p][1], sv[p][2], sv[p][3]);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          sv[p][j] = valid && c + j < num_k_blocks ? ptx::ld_global_f32(src + j * params.scales.sfa_kstride) : 0.0f;
      }
    }
  }
  // k-block kb's column into the stage: the half that holds it stores its rows.
  HOPGEMM_DEVICE void store(float* stage_sfa, i32 kb) const {
    const u32 j = static_cast<u32>(kb) % F::kSfaChunk;
    if (j / 4 != half) return;
    float* dst = stage_sfa + row;
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
      const u32 q = j % 4;
      if (row_in_tile(p)) dst[p * kRowStep] = q == 0 ? sv[p][0] : q == 1 ? sv[p][1] : q == 2 ? sv[p][2] : sv[p][3];
    }
  }
};

// Where A's scales are MN-major or chunked, nothing is staged: the loader holds no stager (one it never used, held
// beside its other state, changed how the compiler laid out the producer loop: 840 -> 247 instructions at 256x128).
struct NoSfaStager {
  HOPGEMM_DEVICE NoSfaStager(const Sm90Fp8GemmParams&, u32, u32) {}
  HOPGEMM_DEVICE void load(i32, i32, i32, i32) {}
  HOPGEMM_DEVICE void store(float*, i32) const {}
};

// One producer warp's part in the scale loads (pwarp 0..3 of the producer warpgroup).
template <Sm90Fp8GemmConfig kConfig>
struct Sm90Fp8ScaleLoader {
  using F = Sm90Fp8ScaleFacts<kConfig>;
  static constexpr u32 kFirstSfaWarp = 4 - F::kSfaWarps;
  const Sm90Fp8GemmParams& params;
  const typename F::Storage& smem;
  u32 lane;
  bool sfa_warp;  // a staging warp of row-major sfa
  i32 n, num_k_blocks, num_sfb_rows;
  typename Conditional<F::kSfaStaged, SfaStager<kConfig>, NoSfaStager>::Type sfa_stager;
  SfChunkCounter chunk_counter;
  u32 sfa_addr, sfb_addr;
  i32 sfa_m0 = 0;  // the unit's first row of A scales

  HOPGEMM_DEVICE Sm90Fp8ScaleLoader(const Sm90Fp8GemmParams& p, const typename F::Storage& s, u32 pwarp, u32 lane_)
      : params(p), smem(s), lane(lane_), sfa_warp(F::kSfaStaged && pwarp >= kFirstSfaWarp), n(p.schedule.n),
        num_k_blocks(ceil_div(p.schedule.k, kFp8ScaleBlockK)), num_sfb_rows(ceil_div(n, 128)),
        sfa_stager(p, pwarp - kFirstSfaWarp, lane_), sfa_addr(ptx::smem_addr(s.sfa)), sfb_addr(ptx::smem_addr(s.sfb)) {}

  // Whether this warp loads scales beside warp 0's operand loads (else a producer warp other than 0 has nothing to do).
  HOPGEMM_DEVICE bool loads() const { return sfa_warp; }

  template <class Scheduler>
  HOPGEMM_DEVICE void begin_unit(const Scheduler& sched, const scheduler::WorkUnit& u) {
    sfa_m0 = F::sfa_row(params.scales, sched, u);
    chunk_counter.kb_begin = u.kb_begin;
  }
  HOPGEMM_DEVICE void end_unit(const scheduler::WorkUnit& u) { chunk_counter.end_unit(u.kb_end); }
  // What the hooks below take for the unit's k-block kb in stage s: its scale column and the stage's scale slots.
  struct KBlock {
    i32 sf_kb;
    u32 sfa_dst, sfb_dst;
  };
  template <class Scheduler>
  HOPGEMM_DEVICE KBlock k_block(const Scheduler& sched, const scheduler::WorkUnit& u, i32 kb, u32 s) const {
    return {F::sf_k_block(params.scales, sched, u, kb), sfa_addr + s * F::kLayout.sfa_stage,
            sfb_addr + s * F::kLayout.sfb_stage};
  }

  // Before the wait for stage kb's slot: the staging warps load a chunk of row-major A scales.
  HOPGEMM_DEVICE void before_empty_wait(const scheduler::WorkUnit& u, i32 kb) {
    if constexpr (F::kSfaStaged)
      if (sfa_warp && (kb == u.kb_begin || kb % F::kSfaChunk == 0))
        sfa_stager.load(sfa_m0, kb / F::kSfaChunk * F::kSfaChunk, num_k_blocks, u.group);
  }

  // Lane 0 of warp 0, after the A and B loads of stage s (full barrier bar): the scales that come by TMA into it.
  HOPGEMM_DEVICE void issue_with_operands(const KBlock& k, u32 bar, i32 n0) const {
    if constexpr (F::kSfaTma) ptx::cp_async_bulk_tensor_2d_g2s(k.sfa_dst, &params.scales.tma_sfa, sfa_m0, k.sf_kb, bar);
    if constexpr (F::kSfbTma) ptx::cp_async_bulk_tensor_2d_g2s(k.sfb_dst, &params.scales.tma_sfb, n0, k.sf_kb, bar);
  }

  // Warp 0, after its lane 0's loads of the stage (full barrier `full`): the chunk ring's loads and the cp.async
  // copies.
  template <class Scheduler>
  HOPGEMM_DEVICE void issue_by_operand_warp(const KBlock& k, u64* full, const Scheduler& sched,
                                            const scheduler::WorkUnit& u, i32 kb, i32 n0) const {
    const Sm90Fp8ScaleParams& sp = params.scales;
    const i32 sf_kb = k.sf_kb;
    const u32 sfb_dst = k.sfb_dst;
    if constexpr (F::kSfChunks) {
      // A chunk's first k-block: its slot, once the math warps have read the chunk it held. The whole warp waits (as
      // for the stage) and lane 0 issues: with lane 0 alone waiting and the other lanes spinning on the next stages'
      // empty barriers, 64-row tiles hung.
      if (chunk_counter.starts(kb)) {
        const auto chunk = chunk_counter.ring_of(kb);
        smem.chunks.wait_empty(chunk);
        if (lane == 0) {
          u64* const sf_full = smem.chunks.full_barrier(chunk.stage);
          ptx::mbarrier_arrive_expect_tx(sf_full, F::kSfChunkTxBytes);
          const u32 dst = smem.chunk_slot(chunk.stage), sf_bar = ptx::smem_addr(sf_full);
          const i32 x = sf_kb / kSfChunkKBlocks * kSfChunkKBlocks;
          if constexpr (F::kSfaChunked) ptx::cp_async_bulk_tensor_2d_g2s(dst, &sp.tma_sfa, x, sfa_m0, sf_bar);
          if constexpr (F::kSfbChunked)
            ptx::cp_async_bulk_tensor_2d_g2s(dst + F::kLayout.sf_chunk_sfa, &sp.tma_sfb, x, n0, sf_bar);
        }
        __syncwarp();
      }
    }
    if constexpr (F::kUsesCpAsync) {
      if constexpr (!F::k1D1D) {
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
        for (i32 r = lane; r < F::kBlockN; r += 32) {
          const i32 row = n0 + r;
          ptx::cp_async_ca_4(sfb_dst + r * 4, sp.sfb + static_cast<i64>(min(row, n - 1)) * sp.sfb_ld + sf_kb, row < n);
        }
      }
      ptx::cp_async_mbarrier_arrive_noinc(full);
    }
  }

  // The staging warps, after stage s's slot is free: k-block kb's A scales into it, each lane arriving on the stage's
  // full barrier for its own stores.
  HOPGEMM_DEVICE void fill_stage(u32 s, u64* full, i32 kb) const {
    if (sfa_warp) {
      sfa_stager.store(smem.sfa_stage(s), kb);
      ptx::mbarrier_arrive(full);
    }
  }
};

}  // namespace hopgemm::device::collective
