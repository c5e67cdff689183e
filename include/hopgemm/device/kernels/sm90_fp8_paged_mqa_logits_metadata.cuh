#pragma once
// The schedule of the paged indexer kernel (scheduler/sm90_paged_mqa_scheduler.cuh): one CTA of 1024 threads.
//   1. each thread sums the segments of a contiguous chunk of requests;
//   2. a CTA-wide exclusive scan gives every chunk its first global segment and the total;
//   3. each thread walks its chunk again and writes meta[s] for every run s that starts inside one of its requests
//      (the first such run in closed form, scheduler::paged_first_run_at);
//      runs that start at the total (no work left) get the end marker (batch, 0), as does meta[num_sms].
// Reads context_lens only: no other memory, no atomics, so reruns are identical.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/kernels/sm90_fp8_mqa_logits_types.cuh"
#include "hopgemm/device/ptx/griddepcontrol.cuh"
#include "hopgemm/device/scheduler/sm90_paged_mqa_scheduler.cuh"

namespace hopgemm::device {

template <Sm90PagedMqaMetadataConfig kConfig>
__global__ void __launch_bounds__(kConfig.threads, 1)
    sm90_paged_mqa_logits_metadata_kernel(const __grid_constant__ Sm90PagedMqaMetadataParams p) {
  static_assert(is_valid(kConfig), "invalid Sm90PagedMqaMetadataConfig");
  constexpr int kWarps = kConfig.threads / 32;
  __shared__ i32 warp_sums[kWarps];
  ptx::griddepcontrol_wait();
  const i32 tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const i32 per_thread = ceil_div(p.batch, kConfig.threads);
  const i32 b_begin = tid * per_thread < p.batch ? tid * per_thread : p.batch;
  const i32 b_end = b_begin + per_thread < p.batch ? b_begin + per_thread : p.batch;

  i32 own = 0;
#pragma unroll 4
  for (i32 b = b_begin; b < b_end; ++b)
    own += scheduler::paged_segments(scheduler::paged_request_len(p.context_lens, b, p.next_n, p.lens_2d));

  // Inclusive scan within the warp, then over the warp totals.
  i32 incl = own;
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const i32 v = __shfl_up_sync(0xffffffffu, incl, d);
    if (lane >= d) incl += v;
  }
  if (lane == 31) warp_sums[warp] = incl;
  __syncthreads();
  if (warp == 0) {
    i32 w = lane < kWarps ? warp_sums[lane] : 0;
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      const i32 v = __shfl_up_sync(0xffffffffu, w, d);
      if (lane >= d) w += v;
    }
    if (lane < kWarps) warp_sums[lane] = w;  // inclusive over warps
  }
  __syncthreads();
  const i32 total = warp_sums[kWarps - 1];
  i32 prefix = incl - own + (warp > 0 ? warp_sums[warp - 1] : 0);

  for (i32 b = b_begin; b < b_end; ++b) {
    const i32 segs = scheduler::paged_segments(scheduler::paged_request_len(p.context_lens, b, p.next_n, p.lens_2d));
    // The runs that start inside this request: from the first run starting at or after `prefix` (closed form: a binary
    // search over the runs, a division per probe, was most of the kernel's 9.5 us at batch 4096).
    const i32 lo = scheduler::paged_first_run_at(prefix, total, p.num_sms);
    for (i32 s = lo; s < p.num_sms; ++s) {
      const i32 start = scheduler::paged_run_start(s, total, p.num_sms);
      if (start >= prefix + segs) break;
      p.meta[2 * s] = b;
      p.meta[2 * s + 1] = start - prefix;
    }
    prefix += segs;
  }
  for (i32 s = tid; s <= p.num_sms; s += kConfig.threads) {
    if (scheduler::paged_run_start(s, total, p.num_sms) >= total) {
      p.meta[2 * s] = p.batch;
      p.meta[2 * s + 1] = 0;
    }
  }
}

}  // namespace hopgemm::device
