#pragma once
// fp8_paged_mqa_logits (DeepSeek-V3.2 indexer, decode): for request b, query token t (row b * next_n + t) and KV
// token j < len(b, t): logits[row, j] = sum_h relu(q[b, t, h] . kv[j]) * weights[row, h] * kv_sf[j], where token j lives
// in physical block block_table[b, j / 64] of the fused cache (64 x head_dim FP8 values, then 64 FP32 scales).
// Persistent: CTA s walks run s of the schedule (scheduler/sm90_paged_mqa_scheduler.cuh): segments of 256 tokens, one
// 64-token block per math warpgroup. The producer looks each block up: a block past the request's longest token is
// not loaded (its logits are -inf with clean_logits, else untouched), a block of -1 (or out of range) is empty (its
// logits are -inf); the others arrive by TMA, values and scales. With clean_logits, the request's last segment also
// writes -inf from its end to max_context_len. Host contract: kernels/sm90_fp8_mqa_logits_types.cuh.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/kernels/sm90_fp8_mqa_logits_collective.cuh"
#include "hopgemm/device/kernels/sm90_fp8_mqa_logits_types.cuh"
#include "hopgemm/device/ptx/fence.cuh"
#include "hopgemm/device/ptx/griddepcontrol.cuh"
#include "hopgemm/device/ptx/ld_global.cuh"
#include "hopgemm/device/ptx/setmaxnreg.cuh"
#include "hopgemm/device/scheduler/sm90_paged_mqa_scheduler.cuh"

namespace hopgemm::device {

namespace mqa {

// The producer (one warp): this CTA's run of segments, then the end task. The block table is read a batch of up to 8
// segments of one request at a time, lane l looking up block l of the batch (one load round trip per 8 stages, all
// 32 loads in flight together); lane 0 takes each stage's four blocks by shuffles, waits for the stage's slot and
// issues its TMAs. With one thread looking up each stage's blocks before issuing it, every stage waited a full load
// round trip, and at batch 4096 the ring ran dry: 73-77% of a device copy on the H200.
template <Sm90MqaLogitsConfig kConfig>
HOPGEMM_DEVICE void produce_paged(const Sm90MqaLogitsParams& p, const MqaSmem<kConfig>& smem, u32 lane) {
  constexpr int kT = kConfig.tokens;
  constexpr int kBatch = 32 / kMqaMathWgs;  // segments per block-table batch
  constexpr u32 kSlabBytes = kMqaSlabRows * kConfig.head_dim + kMqaSlabRows * 4;
  pipeline::StageRing<kConfig.kv_stages> kv_ring;  // lane 0's
  pipeline::StageRing<kMqaQStages> q_ring;         // lane 0's
  const i32* meta = p.schedule_meta + 2 * blockIdx.x;
  scheduler::PagedRunCursor run{ptx::ld_global_nc_i32(meta), ptx::ld_global_nc_i32(meta + 1),
                                ptx::ld_global_nc_i32(meta + 2), ptx::ld_global_nc_i32(meta + 3)};
  if (run.seg < 0) run.seg = 0;
  // Lane t < next_n holds token t's length (the producer has 32 registers: next_n lengths in every lane spilled).
  i32 b = -1, my_len = 0, max_len = 0, segments = 0, q_unit = -1;
  while (!run.done() && run.b >= 0 && run.b < p.batch) {
    if (run.b != b) {
      b = run.b;
      my_len = static_cast<i32>(lane) < kT ? scheduler::paged_token_len(p.context_lens, b, lane, kT, p.lens_2d) : 0;
      max_len = __reduce_max_sync(0xffffffffu, my_len);
      segments = scheduler::paged_segments(max_len);
    }
    const i32 seg0 = run.seg;
    if (seg0 >= segments) {  // a schedule made for other lengths: skip to the next request
      run.advance(segments);
      continue;
    }
    // This batch: segments [seg0, seg0 + count) of request b, within the request and the run.
    i32 count = segments - seg0 < kBatch ? segments - seg0 : kBatch;
    if (b == run.end_b && run.end_seg - seg0 < count) count = run.end_seg - seg0;
    const i32 my_k = static_cast<i32>(lane) / kMqaMathWgs;
    const i32 my_block = (seg0 + my_k) * kMqaMathWgs + static_cast<i32>(lane) % kMqaMathWgs;
    i32 my_phys = -1;
    if (my_k < count && my_block * kMqaSlabRows < max_len && my_block < p.max_blocks)
      my_phys = ptx::ld_global_nc_i32(p.block_table + static_cast<i64>(b) * p.block_table_ld + my_block);
    // The request's Q tile, with its first stage: the math warpgroups take a new Q slot only when a stage names
    // a new unit, so a Q tile loaded for a request whose segments were all skipped would shift every later
    // request onto its predecessor's slot.
    if (b != q_unit) {
      if (lane == 0) load_q_unit<kConfig>(p, smem, q_ring, b);
      q_unit = b;
    }
    for (i32 k = 0; k < count; ++k) {
      const i32 seg = seg0 + k;
      i32 phys[kMqaMathWgs];
      i32 slabs = 0;
#pragma unroll
      for (int g = 0; g < kMqaMathWgs; ++g) {
        phys[g] = __shfl_sync(0xffffffffu, my_phys, k * kMqaMathWgs + g);
        if ((seg * kMqaMathWgs + g) * kMqaSlabRows < max_len) {
          const bool valid = phys[g] >= 0 && phys[g] < p.num_blocks;
          slabs |= valid ? 1 << g : 1 << (4 + g);
        }
      }
      i32 len[kT];
#pragma unroll
      for (int t = 0; t < kT; ++t) len[t] = __shfl_sync(0xffffffffu, my_len, t);
      if (lane == 0) {
        smem.kv.wait_empty(kv_ring);
        MqaTask* task = smem.task(kv_ring.stage);
        task->unit = b;
        task->col = seg * kMqaStageKv;
        task->slabs = slabs;
        task->flags = (seg == 0 ? kMqaFirstTask : 0) | (seg == segments - 1 ? kMqaLastTask : 0);
#pragma unroll
        for (int t = 0; t < kT; ++t) {  // the math warps read the unit's tokens only
          task->lo[t] = 0;
          task->hi[t] = len[t];
        }
        const i32 loaded = __popc(slabs & 0xf);
        u64* full = smem.kv.full_barrier(kv_ring.stage);
        if (loaded == 0) {
          smem.kv.arrive_full(kv_ring.stage);
        } else {
          ptx::mbarrier_arrive_expect_tx(full, loaded * kSlabBytes);
#pragma unroll
          for (int g = 0; g < kMqaMathWgs; ++g) {
            if ((slabs >> g) & 1) {
              ptx::cp_async_bulk_tensor_2d_g2s(smem.kv_tile(kv_ring.stage) + g * kMqaSlabRows * kConfig.head_dim,
                                               &p.tma_kv, 0, static_cast<i32>(phys[g] * p.block_value_rows),
                                               ptx::smem_addr(full));
              ptx::cp_async_bulk_tensor_2d_g2s(smem.sf_addr(kv_ring.stage) + g * kMqaSlabRows * 4, &p.tma_kv_sf, 0,
                                               phys[g], ptx::smem_addr(full));
            }
          }
        }
        kv_ring.advance();
      }
      __syncwarp();
    }
    run.seg = seg0 + count;
    if (run.seg >= segments) {  // past the request's last segment: the next request
      run.seg = 0;
      ++run.b;
    }
  }
  if (lane == 0) send_end<kConfig>(smem, kv_ring);
}

}  // namespace mqa

template <Sm90MqaLogitsConfig kConfig>
__global__ void __launch_bounds__(kMqaThreads, 1)
    sm90_fp8_paged_mqa_logits_kernel(const __grid_constant__ Sm90MqaLogitsParams p) {
  // ---- setup ---------------------------------------------------------------------------------------------------
  static_assert(is_valid(kConfig) && kConfig.paged == 1, "invalid Sm90MqaLogitsConfig for fp8_paged_mqa_logits");
  extern __shared__ __align__(1024) u8 smem_raw[];
  const mqa::MqaSmem<kConfig> smem(smem_raw);
  if (threadIdx.x == mqa::kMathThreads) {
    smem.init();
    ptx::fence_mbarrier_init_release_cluster();
    ptx::prefetch_tensormap(&p.tma_q);
    ptx::prefetch_tensormap(&p.tma_w);
    ptx::prefetch_tensormap(&p.tma_kv);
    ptx::prefetch_tensormap(&p.tma_kv_sf);
  }
  __syncthreads();
  // PDL: the schedule and the lengths may come from the previous grid.
  ptx::griddepcontrol_wait();

  if (threadIdx.x >= mqa::kMathThreads) {
    // ---- producer role ---------------------------------------------------------------------------------------------
    ptx::setmaxnreg_dec<mqa::kProducerRegs>();
    if (threadIdx.x / 32 == mqa::kMathThreads / 32) mqa::produce_paged<kConfig>(p, smem, threadIdx.x % 32);
  } else {
    // ---- math warpgroups: block wg of every segment ------------------------------------------------------------------
    ptx::setmaxnreg_inc<mqa::kMathRegs>();
    mqa::run_math<kConfig>(p, smem, threadIdx.x / 128);
  }
}

}  // namespace hopgemm::device
