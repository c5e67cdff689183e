#pragma once
// fp8_mqa_logits (DeepSeek-V3.2 indexer, prefill): logits[i, j] = sum_h relu(q[i, h] . kv[j]) * weights[i, h] * kv_sf[j]
// for j in [ks[i], ke[i]), over a contiguous KV [seq_len_kv, head_dim].
// Persistent: CTA c takes units (blocks of 128 / heads query tokens) c, c + grid, ... For each unit the producer computes
// the union of its queries' KV ranges, starts it at a multiple of 4 (16-byte aligned stores) and streams it in stages of
// 256 tokens (TMA of the KV rows and their scales); an empty union still gets one stage without loads, so that the
// unit's rows are written. The math warpgroups (kernels/sm90_fp8_mqa_logits_collective.cuh) write every column of the
// range with its row's mask and, with clean_logits, -inf over the rest of the row: each element is written once.
// Host contract: kernels/sm90_fp8_mqa_logits_types.cuh.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/kernels/sm90_fp8_mqa_logits_collective.cuh"
#include "hopgemm/device/kernels/sm90_fp8_mqa_logits_types.cuh"
#include "hopgemm/device/ptx/fence.cuh"
#include "hopgemm/device/ptx/griddepcontrol.cuh"
#include "hopgemm/device/ptx/ld_global.cuh"
#include "hopgemm/device/ptx/setmaxnreg.cuh"

namespace hopgemm::device {

namespace mqa {

// The producer (one thread): every unit of this CTA, then the end task.
template <Sm90MqaLogitsConfig kConfig>
HOPGEMM_DEVICE void produce_contiguous(const Sm90MqaLogitsParams& p, const MqaSmem<kConfig>& smem) {
  constexpr int kT = kConfig.tokens;
  constexpr u32 kStageBytes = kMqaStageKv * kConfig.head_dim + kMqaStageKv * 4;
  pipeline::StageRing<kConfig.kv_stages> kv_ring;
  pipeline::StageRing<kMqaQStages> q_ring;
  for (i32 unit = blockIdx.x; unit < p.num_units; unit += gridDim.x) {
    i32 lo[kMqaMaxTokens] = {}, hi[kMqaMaxTokens] = {};
    i32 start = p.seq_len_kv, end = 0;
#pragma unroll
    for (int t = 0; t < kT; ++t) {
      const i32 row = unit * kT + t;
      if (row < p.rows) {
        i32 l = ptx::ld_global_nc_i32(p.ks + row), h = ptx::ld_global_nc_i32(p.ke + row);
        l = l < 0 ? 0 : (l > p.seq_len_kv ? p.seq_len_kv : l);
        h = h < l ? l : (h > p.seq_len_kv ? p.seq_len_kv : h);
        lo[t] = l;
        hi[t] = h;
        if (h > l) {
          start = l < start ? l : start;
          end = h > end ? h : end;
        }
      }
    }
    const bool empty = end <= start;
    start = empty ? 0 : start & ~3;
    const i32 num_stages = empty ? 1 : ceil_div(end - start, kMqaStageKv);

    load_q_unit<kConfig>(p, smem, q_ring, unit);
    for (i32 s = 0; s < num_stages; ++s) {
      smem.kv.wait_empty(kv_ring);
      MqaTask* task = smem.task(kv_ring.stage);
      const i32 col = start + s * kMqaStageKv;
      task->unit = unit;
      task->col = col;
      task->slabs = empty ? 0 : 0xf;
      task->flags = (s == 0 ? kMqaFirstTask : 0) | (s == num_stages - 1 ? kMqaLastTask : 0);
#pragma unroll
      for (int t = 0; t < kMqaMaxTokens; ++t) {
        task->lo[t] = lo[t];
        task->hi[t] = hi[t];
      }
      u64* full = smem.kv.full_barrier(kv_ring.stage);
      if (empty) {
        smem.kv.arrive_full(kv_ring.stage);
      } else {
        ptx::mbarrier_arrive_expect_tx(full, kStageBytes);
        ptx::cp_async_bulk_tensor_2d_g2s(smem.kv_tile(kv_ring.stage), &p.tma_kv, 0, col, ptx::smem_addr(full));
        ptx::cp_async_bulk_tensor_2d_g2s(smem.sf_addr(kv_ring.stage), &p.tma_kv_sf, col, 0, ptx::smem_addr(full));
      }
      kv_ring.advance();
    }
  }
  send_end<kConfig>(smem, kv_ring);
}

}  // namespace mqa

template <Sm90MqaLogitsConfig kConfig>
__global__ void __launch_bounds__(kMqaThreads, 1) sm90_fp8_mqa_logits_kernel(const __grid_constant__ Sm90MqaLogitsParams p) {
  // ---- setup ---------------------------------------------------------------------------------------------------
  static_assert(is_valid(kConfig) && kConfig.paged == 0, "invalid Sm90MqaLogitsConfig for fp8_mqa_logits");
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
  // PDL: nothing global is read or written before the previous grid is done.
  ptx::griddepcontrol_wait();

  if (threadIdx.x >= mqa::kMathThreads) {
    // ---- producer role ---------------------------------------------------------------------------------------------
    ptx::setmaxnreg_dec<mqa::kProducerRegs>();
    if (threadIdx.x == mqa::kMathThreads) mqa::produce_contiguous<kConfig>(p, smem);
  } else {
    // ---- math warpgroups: KV slab wg of every stage ------------------------------------------------------------------
    ptx::setmaxnreg_inc<mqa::kMathRegs>();
    mqa::run_math<kConfig>(p, smem, threadIdx.x / 128);
  }
}

}  // namespace hopgemm::device
