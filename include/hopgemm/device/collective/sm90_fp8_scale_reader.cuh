#pragma once
// The FP8 scale policy's math-thread side: each thread's A scales (rows lane/4 and +8 of its warp's 16 in wave w) and
// the tile's B scales for a k-block, from wherever Sm90Fp8ScaleFacts says they come (the stage, a chunk slot, or
// registers), the chunk ring's waits and releases, and the promotion of a k-block's tensor-core sums with them. Read
// into registers before the WGMMA wait where registers allow, so the shared-memory latency hides behind the tensor
// cores.

#include "hopgemm/device/collective/sm90_fp8_scale_chunks.cuh"
#include "hopgemm/device/collective/sm90_fp8_scale_facts.cuh"
#include "hopgemm/device/mma/sm90_fp8_promote.cuh"
#include "hopgemm/device/ptx/ld_global.cuh"
#include "hopgemm/device/ptx/ld_shared.cuh"
#include "hopgemm/device/ptx/opaque.cuh"
#include "hopgemm/device/scheduler/sm90_scheduler.cuh"

namespace hopgemm::device::collective {

template <Sm90Fp8GemmConfig kConfig>
struct Sm90Fp8ScaleReader {
  using F = Sm90Fp8ScaleFacts<kConfig>;
  static constexpr int kBlockN = F::kBlockN;
  // A thread's two rows' scales (lane/4 and + 8) of one wave.
  struct RowScales {
    float sa0, sa1;
  };
  // 1D2D: the two 128-column blocks the tile can touch; 1D1D: one per column of the thread, float2 per 8-column group.
  struct ColScales {
    float2 sb[F::k1D1D ? kBlockN / 8 : 1];
  };
  // sfb_regs: k-block j of a chunk of 32 sits in lane j (x: the tile's first 128-column block, y: the next one).
  static constexpr i32 kSfbChunk = 32;

  const Sm90Fp8ScaleParams& params;
  const typename F::Storage& smem;
  u32 lane;
  i32 n0 = 0;  // the unit's first column (1D2D: which 8-column groups fall in which 128-column scale block)
  u32 sfa_thread;  // this thread's first A scale in stage 0 (or chunk slot 0)
  SfChunkCounter chunk_counter;
  // sfb_regs: the current and the next chunk of B scales, and the units they belong to (the next chunk may be the
  // CTA's next unit's first).
  float2 sfb_cur = make_float2(0.0f, 0.0f), sfb_next = make_float2(0.0f, 0.0f);
  i32 num_sfb_blocks;
  scheduler::WorkUnit sfb_unit{}, sfb_next_unit{};
  bool sfb_has_next = false, first_unit = true;

  HOPGEMM_DEVICE Sm90Fp8ScaleReader(const Sm90Fp8GemmParams& p, const typename F::Storage& s, u32 thread_row,
                                    u32 lane_)
      : params(p.scales), smem(s), lane(lane_), num_sfb_blocks(ceil_div(p.schedule.n, 128)) {
    sfa_thread = F::kSfaChunked ? smem.sf_chunks + thread_row * 16 : ptx::smem_addr(smem.sfa + thread_row);
    // Opaque: kept in a register instead of rebuilt from the shared-window base after every barrier wait.
    ptx::opaque(sfa_thread);
  }

  // sf_chunks: the byte offset of the unit's k-block kb (relative) in the chunk ring: its slot, its column in the rows.
  HOPGEMM_DEVICE u32 chunk_offset(i32 kb) const {
    kb += chunk_counter.kb_begin;
    return chunk_counter.ring_of(kb).stage * F::kLayout.sf_chunk + (static_cast<u32>(kb) % kSfChunkKBlocks) * 4;
  }

  HOPGEMM_DEVICE RowScales row_scales(u32 s, i32 kb, int w) const {
    if constexpr (F::kSfaChunked) {
      const u32 sfa_s = sfa_thread + chunk_offset(kb) + w * 64 * 16;
      return RowScales{ptx::ld_shared_f32(sfa_s), ptx::ld_shared_f32(sfa_s + 8 * 16)};
    } else {
      const u32 sfa_s = sfa_thread + (s * F::kLayout.sfa_stage / 4 + w * 64) * 4;
      return RowScales{ptx::ld_shared_f32(sfa_s), ptx::ld_shared_f32(sfa_s + 8 * 4)};
    }
  }

  // sf_chunks: a chunk's first k-block waits for the chunk too; its last one (or the unit's) hands the slot back
  // once every lane of the warp has read it.
  HOPGEMM_DEVICE void wait_chunk(i32 kb) const {
    if constexpr (F::kSfChunks) {
      kb += chunk_counter.kb_begin;
      if (chunk_counter.starts(kb)) smem.chunks.wait_full(chunk_counter.ring_of(kb));
    }
  }
  HOPGEMM_DEVICE void release_chunk(i32 kb, i32 unit_k_blocks) const {
    if constexpr (F::kSfChunks) {
      const i32 kb_abs = chunk_counter.kb_begin + kb;
      if (kb_abs % kSfChunkKBlocks == kSfChunkKBlocks - 1 || kb == unit_k_blocks - 1) {
        __syncwarp();
        if (lane == 0) smem.chunks.arrive_empty(chunk_counter.ring_of(kb_abs).stage);
      }
    }
  }

  // sfb_regs: a chunk of 32 k-blocks of unit u's B scales (in its group's), issued now and waited for at first use.
  HOPGEMM_DEVICE float2 load_sfb_chunk(const scheduler::WorkUnit& u, i32 kb0) const {
    const i32 row = u.n_block * kBlockN / 128, kb = kb0 + static_cast<i32>(lane);
    const float* src = params.sfb + u.group * params.sfb_group_stride +
                       static_cast<i64>(min(kb, u.kb_end - 1)) * params.sfb_kstride;
    float2 v = make_float2(0.0f, 0.0f);
    if (kb < u.kb_end) {
      v.x = ptx::ld_global_f32(src + static_cast<i64>(min(row, num_sfb_blocks - 1)) * params.sfb_ld);
      v.y = ptx::ld_global_f32(src + static_cast<i64>(min(row + 1, num_sfb_blocks - 1)) * params.sfb_ld);
      if (row >= num_sfb_blocks) v.x = 0.0f;
      if (row + 1 >= num_sfb_blocks) v.y = 0.0f;
    }
    return v;
  }
  // After chunk c of this unit became current: the next one, or the next unit's first.
  HOPGEMM_DEVICE void prefetch_sfb(i32 c) {
    if (sfb_unit.kb_begin + (c + 1) * kSfbChunk < sfb_unit.kb_end)
      sfb_next = load_sfb_chunk(sfb_unit, sfb_unit.kb_begin + (c + 1) * kSfbChunk);
    else if (sfb_has_next)
      sfb_next = load_sfb_chunk(sfb_next_unit, sfb_next_unit.kb_begin);
  }

  // At the start of a unit (the scheduler for its first column and the sfb_regs look-ahead at the CTA's next unit).
  template <class Scheduler>
  HOPGEMM_DEVICE void begin_unit(const scheduler::WorkUnit& u, const Scheduler& sched) {
    n0 = sched.d_col(u);
    chunk_counter.kb_begin = u.kb_begin;
    if constexpr (F::kSfbInRegs) {
      sfb_unit = u;
      // The first unit's first chunk now (its latency overlaps the first full-barrier wait); later units' were
      // prefetched during the previous unit.
      sfb_cur = first_unit ? load_sfb_chunk(u, u.kb_begin) : sfb_next;
      first_unit = false;
      sfb_has_next = scheduler::peek(sched, sfb_next_unit);
      prefetch_sfb(0);
    }
  }
  HOPGEMM_DEVICE void end_unit(const scheduler::WorkUnit& u) { chunk_counter.end_unit(u.kb_end); }

  // Column scales of the unit's k-block kb in stage s (k-block order, once each; kb only matters with sfb_regs).
  HOPGEMM_DEVICE ColScales col_scales(u32 s, i32 kb) {
    ColScales c;
    const float* sfb_s = smem.sfb_stage(s);
    if constexpr (F::kSfbChunked) {
      mma::load_col_scales_1d1d_chunked<kBlockN>(c.sb, smem.sf_chunks + F::kLayout.sf_chunk_sfa + chunk_offset(kb), lane);
    } else if constexpr (F::k1D1D) {
      mma::load_col_scales_1d1d<kBlockN>(c.sb, sfb_s, lane);
    } else if constexpr (F::kSfbInRegs) {
      if (kb % kSfbChunk == 0 && kb > 0) {
        sfb_cur = sfb_next;
        prefetch_sfb(kb / kSfbChunk);
      }
      const int src_lane = kb % kSfbChunk;
      c.sb[0] = make_float2(__shfl_sync(0xffffffffu, sfb_cur.x, src_lane), __shfl_sync(0xffffffffu, sfb_cur.y, src_lane));
    } else {
      c.sb[0] = make_float2(sfb_s[0], sfb_s[1]);
    }
    return c;
  }

  // fin += row scale x column scale x acc (one wave's k-block sums, wgmma accumulator layout).
  HOPGEMM_DEVICE void promote(float (&f)[kBlockN / 2], const float (&a)[kBlockN / 2], const RowScales& r,
                              const ColScales& c) const {
    if constexpr (F::k1D1D) {
      mma::promote_1d1d<kBlockN>(f, a, r.sa0, r.sa1, c.sb);
    } else {
      mma::dispatch_former_groups<kBlockN>(static_cast<u32>(n0) % 128, [&]<int kFormer>() {
        mma::promote_1d2d<kBlockN, kFormer>(f, a, r.sa0, r.sa1, c.sb[0].x, c.sb[0].y);
      });
    }
  }
};

}  // namespace hopgemm::device::collective
