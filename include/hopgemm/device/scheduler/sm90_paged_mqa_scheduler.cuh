#pragma once
// The schedule of the paged indexer kernel (kernels/sm90_fp8_paged_mqa_logits.cuh), shared by the metadata kernel
// that writes it (kernels/sm90_fp8_paged_mqa_logits_metadata.cuh), the kernel's producer that walks it and the host
// tests. Compiles as device code and as plain host C++20.
//
// Work is cut into segments: request b owns segments(max_len_b) of 256 KV tokens (at least one, so that a request of
// no tokens still gets its row written). The segments of all requests, in request order, are split into num_sms
// contiguous runs whose sizes differ by at most one (the first total % num_sms runs are one longer). The schedule is
// meta[s] = (request, segment within it) of run s's first segment, meta[num_sms] = (batch, 0): run s covers
// [meta[s], meta[s + 1]).

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::scheduler {

inline constexpr int kPagedSplitKv = 256;  // KV tokens per segment: 4 math warpgroups x one 64-token block

// The valid KV length of query token t of a request (lens_2d: its own entry; else the 1-D form, where the request's
// next_n tokens are its last ones: ctx - next_n + t + 1), never negative.
HOPGEMM_HOST_DEVICE i32 paged_token_len(const i32* lens, i32 b, i32 t, i32 next_n, i32 lens_2d) {
  const i32 len = lens_2d ? lens[static_cast<i64>(b) * next_n + t] : lens[b] - next_n + t + 1;
  return len > 0 ? len : 0;
}
// The longest of request b's tokens.
HOPGEMM_HOST_DEVICE i32 paged_request_len(const i32* lens, i32 b, i32 next_n, i32 lens_2d) {
  if (!lens_2d) return paged_token_len(lens, b, next_n - 1, next_n, 0);
  i32 len = 0;
  for (i32 t = 0; t < next_n; ++t) {
    const i32 l = paged_token_len(lens, b, t, next_n, 1);
    len = l > len ? l : len;
  }
  return len;
}
HOPGEMM_HOST_DEVICE i32 paged_segments(i32 max_len) {
  const i32 s = ceil_div(max_len, kPagedSplitKv);
  return s > 1 ? s : 1;
}
// First segment (global index) of run s of `total` segments over num_sms runs.
HOPGEMM_HOST_DEVICE i32 paged_run_start(i32 s, i32 total, i32 num_sms) {
  const i32 q = total / num_sms, r = total % num_sms;
  return s * q + (s < r ? s : r);
}
// The first run s in [0, num_sms] whose start is at or after segment x (0 <= x <= total; run num_sms starts at
// total), in closed form: runs 0..r start every q + 1 segments, the rest every q after run r's start r (q + 1).
HOPGEMM_HOST_DEVICE i32 paged_first_run_at(i32 x, i32 total, i32 num_sms) {
  const i32 q = total / num_sms, r = total % num_sms;
  const i32 long_runs_end = r * (q + 1);  // start of run r
  if (x <= long_runs_end) return ceil_div(x, q + 1);
  const i32 s = r + ceil_div(x - long_runs_end, q);  // x > r (q + 1) implies q > 0 (x <= total)
  return s < num_sms ? s : num_sms;
}

// The producer's walk over one run: (request, segment) from meta[s] up to meta[s + 1].
struct PagedRunCursor {
  i32 b, seg;          // current
  i32 end_b, end_seg;  // one past the last
  HOPGEMM_HOST_DEVICE bool done() const { return b > end_b || (b == end_b && seg >= end_seg); }
  // Moves to the next segment; `segments` is the current request's segment count.
  HOPGEMM_HOST_DEVICE void advance(i32 segments) {
    if (++seg >= segments) {
      seg = 0;
      ++b;
    }
  }
};

}  // namespace hopgemm::device::scheduler
