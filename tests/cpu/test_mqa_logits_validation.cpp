// The indexer ops' validation (one test per kind of bad input: fake device pointers, validation precedes any CUDA call)
// and the paged schedule's arithmetic (scheduler/sm90_paged_mqa_scheduler.cuh, also host C++): every segment of every
// request lands in exactly one run, runs differ by at most one segment, and the producer's walk visits them in order.
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "hopgemm/device/kernels/sm90_fp8_mqa_logits_types.cuh"
#include "hopgemm/device/scheduler/sm90_paged_mqa_scheduler.cuh"
#include "hopgemm/error.hpp"
#include "hopgemm/mqa_logits.hpp"
#include "hopgemm/tensor.hpp"

namespace hopgemm {
namespace {

void* fake(int i) { return reinterpret_cast<void*>((uintptr_t{1} << 32) + (uintptr_t(i) << 28)); }

std::string error_of(const std::function<void()>& fn, ErrorKind kind = ErrorKind::kInvalidArgument) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error was raised";
  return "";
}
#define EXPECT_MSG(msg, text) EXPECT_NE((msg).find(text), std::string::npos) << (msg)

// ---- fp8_mqa_logits ----------------------------------------------------------------------------------------------

struct Prefill {
  int64_t s = 8, h = 64, d = 128, s_kv = 100;
  TensorView q = make_tensor(fake(1), DType::kFloat8E4M3, {s, h, d});
  TensorView kv = make_tensor(fake(2), DType::kFloat8E4M3, {s_kv, d});
  TensorView kv_sf = make_tensor(fake(3), DType::kFloat32, {s_kv});
  TensorView w = make_tensor(fake(4), DType::kFloat32, {s, h});
  TensorView ks = make_tensor(fake(5), DType::kInt32, {s});
  TensorView ke = make_tensor(fake(6), DType::kInt32, {s});
  TensorView logits = make_tensor(fake(7), DType::kFloat32, {s, s_kv}, {512, 1});
  bool clean = true;
  int max_seqlen_k = 0;
  std::string run() {
    return error_of([&] { fp8_mqa_logits(q, kv, kv_sf, w, ks, ke, logits, clean, max_seqlen_k, nullptr); });
  }
};

TEST(MqaLogitsValidation, Dtypes) {
  Prefill a;
  a.q.dtype = DType::kBFloat16;
  EXPECT_MSG(a.run(), "fp8_mqa_logits");
  Prefill b;
  b.kv_sf.dtype = DType::kBFloat16;
  EXPECT_MSG(b.run(), "kv_sf");
  Prefill c;
  c.logits.dtype = DType::kFloat16;
  EXPECT_MSG(c.run(), "logits");
  Prefill d;
  d.ks.dtype = DType::kInt64;
  EXPECT_MSG(d.run(), "cu_seq_len_k_start");
}

TEST(MqaLogitsValidation, HeadsAndDimOutsideTheSupportedSet) {
  Prefill a;
  a.q = make_tensor(fake(1), DType::kFloat8E4M3, {8, 16, 128});
  a.w = make_tensor(fake(4), DType::kFloat32, {8, 16});
  EXPECT_MSG(error_of([&] { fp8_mqa_logits(a.q, a.kv, a.kv_sf, a.w, a.ks, a.ke, a.logits, true, 0, nullptr); },
                      ErrorKind::kUnsupported),
             "heads");
  Prefill b;
  b.q = make_tensor(fake(1), DType::kFloat8E4M3, {8, 64, 96});
  EXPECT_MSG(error_of([&] { fp8_mqa_logits(b.q, b.kv, b.kv_sf, b.w, b.ks, b.ke, b.logits, true, 0, nullptr); },
                      ErrorKind::kUnsupported),
             "head dim");
}

TEST(MqaLogitsValidation, ShapesAndLayouts) {
  Prefill a;
  a.kv = make_tensor(fake(2), DType::kFloat8E4M3, {a.s_kv, 64});
  EXPECT_MSG(a.run(), "kv");
  Prefill b;
  b.w = make_tensor(fake(4), DType::kFloat32, {b.s, b.h}, {1, b.s});
  EXPECT_MSG(b.run(), "weights");
  Prefill c;
  c.logits = make_tensor(fake(7), DType::kFloat32, {c.s, c.s_kv}, {101, 1});  // rows not 16-byte aligned
  EXPECT_MSG(c.run(), "logits");
  Prefill d;
  d.logits = make_tensor(fake(7), DType::kFloat32, {d.s, d.s_kv + 1}, {512, 1});
  EXPECT_MSG(d.run(), "logits");
  Prefill e;
  e.kv_sf = make_tensor(reinterpret_cast<uint8_t*>(fake(3)) + 4, DType::kFloat32, {e.s_kv});
  EXPECT_MSG(e.run(), "kv_sf");
  Prefill f;
  f.logits = make_tensor(fake(1), DType::kFloat32, {f.s, f.s_kv}, {512, 1});  // aliases q
  EXPECT_MSG(f.run(), "logits");
}

// Arguments sized for another batch (S) or another KV sequence (S_kv) than q and kv.
TEST(MqaLogitsValidation, ArgumentsOfAnotherSize) {
  Prefill a;
  a.ke = make_tensor(fake(6), DType::kInt32, {a.s + 1});
  EXPECT_MSG(a.run(), "cu_seq_len_k_end");
  Prefill b;
  b.kv_sf = make_tensor(fake(3), DType::kFloat32, {b.s_kv - 1});
  EXPECT_MSG(b.run(), "kv_sf");
  Prefill c;
  c.w = make_tensor(fake(4), DType::kFloat32, {c.s, 32});
  EXPECT_MSG(c.run(), "weights");
  Prefill d;
  d.ks = make_tensor(fake(5), DType::kInt32, {d.s, 1});
  EXPECT_MSG(d.run(), "cu_seq_len_k_start");
}

TEST(MqaLogitsValidation, CompressedNeedsNoClean) {
  Prefill a;
  a.max_seqlen_k = 64;
  a.logits = make_tensor(fake(7), DType::kFloat32, {a.s, 64}, {256, 1});
  EXPECT_MSG(a.run(), "clean_logits");
  Prefill b;
  b.max_seqlen_k = -1;
  EXPECT_MSG(b.run(), "max_seqlen_k");
}

TEST(MqaLogitsValidation, RowStride) {
  EXPECT_EQ(mqa_logits_row_stride(8192 + 256, false), 8448);
  EXPECT_EQ(mqa_logits_row_stride(100, false), 256);
  EXPECT_EQ(mqa_logits_row_stride(100, true), 512);
  EXPECT_EQ(mqa_logits_row_stride(0, true), 512);
}

// ---- paged ---------------------------------------------------------------------------------------------------------

struct Paged {
  int64_t b = 4, n = 2, h = 64, d = 128, blocks = 16, max_blocks = 8, cols = 500;
  TensorView q = make_tensor(fake(1), DType::kFloat8E4M3, {b, n, h, d});
  TensorView cache = make_tensor(fake(2), DType::kUInt8, {blocks, 64, 1, d + 4});
  TensorView w = make_tensor(fake(3), DType::kFloat32, {b * n, h});
  TensorView lens = make_tensor(fake(4), DType::kInt32, {b, n});
  TensorView table = make_tensor(fake(5), DType::kInt32, {b, max_blocks});
  TensorView meta = make_tensor(fake(6), DType::kInt32, {133, 2});
  TensorView logits = make_tensor(fake(7), DType::kFloat32, {b * n, cols}, {512, 1});
  std::string run(ErrorKind kind = ErrorKind::kInvalidArgument) {
    return error_of([&] { fp8_paged_mqa_logits(q, cache, w, lens, table, meta, logits, true, nullptr); }, kind);
  }
};

TEST(PagedMqaLogitsValidation, FusedCacheLayout) {
  Paged a;
  a.cache = make_tensor(fake(2), DType::kUInt8, {a.blocks, 64, 1, a.d});
  EXPECT_MSG(a.run(), "kv_cache");
  Paged b;
  b.cache = make_tensor(fake(2), DType::kUInt8, {b.blocks, 32, 1, b.d + 4});
  EXPECT_MSG(b.run(ErrorKind::kUnsupported), "block_kv");
  Paged c;  // values and scales interleaved per token: not the fused layout
  c.cache = make_tensor(fake(2), DType::kUInt8, {c.blocks, 64, 1, c.d + 4}, {64 * (c.d + 4), c.d + 4, c.d + 4, 1});
  c.cache.strides[1] = c.d + 8;
  EXPECT_MSG(c.run(), "fused");
  Paged d;  // block stride not a multiple of 16 bytes
  d.cache = make_tensor(fake(2), DType::kUInt8, {d.blocks, 64, 1, d.d + 4}, {64 * (d.d + 4) + 4, d.d + 4, d.d + 4, 1});
  EXPECT_MSG(d.run(), "block stride");
  Paged e;
  e.cache.dtype = DType::kFloat32;
  EXPECT_MSG(e.run(), "kv_cache");
}

TEST(PagedMqaLogitsValidation, NextNHeadsDim) {
  Paged a;
  a.q = make_tensor(fake(1), DType::kFloat8E4M3, {a.b, 5, a.h, a.d});
  EXPECT_MSG(a.run(ErrorKind::kUnsupported), "next_n");
  Paged b;
  b.q = make_tensor(fake(1), DType::kFloat8E4M3, {b.b, b.n, 48, b.d});
  EXPECT_MSG(b.run(ErrorKind::kUnsupported), "heads");
}

TEST(PagedMqaLogitsValidation, HeadDimOutsideTheSupportedSet) {
  for (const int64_t d : {16, 96, 256}) {
    Paged a;
    a.q = make_tensor(fake(1), DType::kFloat8E4M3, {a.b, a.n, a.h, d});
    a.cache = make_tensor(fake(2), DType::kUInt8, {a.blocks, 64, 1, d + 4});
    EXPECT_MSG(a.run(ErrorKind::kUnsupported), "head dim " + std::to_string(d));
  }
  Paged b;
  b.q.dtype = DType::kBFloat16;
  EXPECT_MSG(b.run(), "argument 'q'");
}

// The schedule is [num_sms + 1, 2] int32 whatever the batch (its rows say where each CTA starts); a tensor of another
// shape or dtype is not one. A schedule of the right shape made for another batch cannot be told apart on the host:
// the kernel stops at request `batch` (it never reads past q, context_lens or block_table).
TEST(PagedMqaLogitsValidation, ScheduleOfTheWrongShape) {
  for (const TensorView& meta : {make_tensor(fake(6), DType::kInt32, {133}), make_tensor(fake(6), DType::kInt32, {1, 2}),
                                  make_tensor(fake(6), DType::kInt32, {0, 2}),
                                  make_tensor(fake(6), DType::kInt32, {133, 2, 1}),
                                  make_tensor(fake(6), DType::kInt32, {2, 133})}) {
    Paged a;
    a.meta = meta;
    EXPECT_MSG(a.run(), "schedule_meta");
  }
  Paged b;
  b.meta.dtype = DType::kInt64;
  EXPECT_MSG(b.run(), "schedule_meta");
  Paged c;  // transposed: [2, num_sms + 1] viewed as [num_sms + 1, 2]
  c.meta = make_tensor(fake(6), DType::kInt32, {133, 2}, {1, 133});
  EXPECT_MSG(c.run(), "schedule_meta");
  Paged d;  // the schedule is an input: it may not overlap the logits
  d.meta = make_tensor(reinterpret_cast<uint8_t*>(d.logits.data) + 64, DType::kInt32, {133, 2});
  EXPECT_MSG(d.run(), "logits");
}

TEST(PagedMqaLogitsValidation, OtherArguments) {
  Paged a;
  a.lens = make_tensor(fake(4), DType::kInt32, {a.b, a.n + 1});
  EXPECT_MSG(a.run(), "context_lens");
  Paged b;
  b.table = make_tensor(fake(5), DType::kInt32, {b.b + 1, b.max_blocks});
  EXPECT_MSG(b.run(), "block_table");
  Paged c;
  c.meta = make_tensor(fake(6), DType::kInt32, {133, 3});
  EXPECT_MSG(c.run(), "schedule_meta");
  Paged d;
  d.logits = make_tensor(fake(7), DType::kFloat32, {d.b * d.n + 1, d.cols}, {512, 1});
  EXPECT_MSG(d.run(), "logits");
  Paged e;
  e.w = make_tensor(fake(3), DType::kFloat32, {e.b, e.h});
  EXPECT_MSG(e.run(), "weights");
  Paged f;
  f.table.dtype = DType::kInt64;
  EXPECT_MSG(f.run(), "block_table");
}

TEST(PagedMqaLogitsValidation, Metadata) {
  const TensorView lens = make_tensor(fake(1), DType::kInt32, {4, 2});
  const TensorView meta = make_tensor(fake(2), DType::kInt32, {133, 2});
  EXPECT_MSG(error_of([&] { get_paged_mqa_logits_metadata(lens, 32, meta, nullptr); }, ErrorKind::kUnsupported),
             "block_kv");
  const TensorView bad_meta = make_tensor(fake(2), DType::kInt32, {1, 2});
  EXPECT_MSG(error_of([&] { get_paged_mqa_logits_metadata(lens, 64, bad_meta, nullptr); }), "schedule_meta");
  const TensorView lens5 = make_tensor(fake(1), DType::kInt32, {4, 5});
  EXPECT_MSG(error_of([&] { get_paged_mqa_logits_metadata(lens5, 64, meta, nullptr); }, ErrorKind::kUnsupported),
             "next_n");
  const TensorView lens64 = make_tensor(fake(1), DType::kInt64, {4});
  EXPECT_MSG(error_of([&] { get_paged_mqa_logits_metadata(lens64, 64, meta, nullptr); }), "context_lens");
  const TensorView lens3d = make_tensor(fake(1), DType::kInt32, {4, 2, 1});
  EXPECT_MSG(error_of([&] { get_paged_mqa_logits_metadata(lens3d, 64, meta, nullptr); }), "context_lens");
  const TensorView meta64 = make_tensor(fake(2), DType::kInt64, {133, 2});
  EXPECT_MSG(error_of([&] { get_paged_mqa_logits_metadata(lens, 64, meta64, nullptr); }), "schedule_meta");
  const TensorView meta_t = make_tensor(fake(2), DType::kInt32, {133, 2}, {1, 133});
  EXPECT_MSG(error_of([&] { get_paged_mqa_logits_metadata(lens, 64, meta_t, nullptr); }), "schedule_meta");
  const TensorView lens0 = make_tensor(fake(1), DType::kInt32, {4, 0});
  EXPECT_MSG(error_of([&] { get_paged_mqa_logits_metadata(lens0, 64, meta, nullptr); }, ErrorKind::kUnsupported),
             "next_n");
}

// ---- the schedule --------------------------------------------------------------------------------------------------

namespace sched = device::scheduler;

TEST(PagedMqaSchedule, TokenLengths) {
  const int32_t lens1d[] = {10, 0, 1};
  EXPECT_EQ(sched::paged_token_len(lens1d, 0, 0, 2, 0), 9);  // ctx - next_n + t + 1
  EXPECT_EQ(sched::paged_token_len(lens1d, 0, 1, 2, 0), 10);
  EXPECT_EQ(sched::paged_token_len(lens1d, 1, 1, 2, 0), 0);
  EXPECT_EQ(sched::paged_token_len(lens1d, 2, 0, 2, 0), 0);  // never negative
  EXPECT_EQ(sched::paged_request_len(lens1d, 0, 2, 0), 10);
  const int32_t lens2d[] = {5, 300, 7, 2};
  EXPECT_EQ(sched::paged_request_len(lens2d, 0, 2, 1), 300);  // the longest token, not the last
  EXPECT_EQ(sched::paged_request_len(lens2d, 1, 2, 1), 7);
  EXPECT_EQ(sched::paged_segments(0), 1);
  EXPECT_EQ(sched::paged_segments(256), 1);
  EXPECT_EQ(sched::paged_segments(257), 2);
}

// The metadata kernel's closed form for the first run at or after a segment equals the linear search over the runs.
TEST(PagedMqaSchedule, FirstRunAtMatchesTheSearch) {
  for (int num_sms : {1, 2, 7, 78, 132, 133}) {
    for (int total : {0, 1, 5, 77, 131, 132, 133, 264, 1000, 131071}) {
      int s = 0;
      for (int x = 0; x <= total; ++x) {
        while (s < num_sms && sched::paged_run_start(s, total, num_sms) < x) ++s;
        ASSERT_EQ(sched::paged_first_run_at(x, total, num_sms), s) << "x " << x << " total " << total << " sms " << num_sms;
      }
    }
  }
}

// The schedule as the metadata kernel defines it, built the plain way: run s starts at global segment
// paged_run_start(s); that segment's (request, index), or (batch, 0) past the end.
std::vector<std::pair<int, int>> reference_meta(const std::vector<int>& segs, int num_sms) {
  int total = 0;
  for (int s : segs) total += s;
  std::vector<std::pair<int, int>> meta;
  for (int s = 0; s <= num_sms; ++s) {
    int start = sched::paged_run_start(s, total, num_sms), b = 0;
    while (b < int(segs.size()) && start >= segs[b]) start -= segs[b++];
    meta.push_back(b < int(segs.size()) ? std::pair{b, start} : std::pair{int(segs.size()), 0});
  }
  return meta;
}

TEST(PagedMqaSchedule, RunsCoverEverySegmentOnceAndBalance) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int batch = int(rng() % 300), num_sms = 1 + int(rng() % 140);
    std::vector<int> segs(batch);
    for (auto& s : segs) s = sched::paged_segments(int32_t(rng() % 5000));
    const auto meta = reference_meta(segs, num_sms);
    ASSERT_EQ(meta.back(), (std::pair{batch, 0}));
    std::vector<int> seen;
    int lo = 1 << 30, hi = 0;
    for (int s = 0; s < num_sms; ++s) {
      sched::PagedRunCursor run{meta[s].first, meta[s].second, meta[s + 1].first, meta[s + 1].second};
      int count = 0;
      while (!run.done()) {
        seen.push_back(run.b * 100 + run.seg);
        run.advance(segs[run.b]);
        ++count;
      }
      lo = std::min(lo, count);
      hi = std::max(hi, count);
    }
    std::vector<int> expected;
    for (int b = 0; b < batch; ++b)
      for (int s = 0; s < segs[b]; ++s) expected.push_back(b * 100 + s);
    EXPECT_EQ(seen, expected);
    EXPECT_LE(hi - lo, 1);
  }
}

TEST(MqaLogitsConfig, SharedMemoryFitsEverySupportedShape) {
  for (int paged : {0, 1})
    for (int h : {32, 64, 128})
      for (int d : {32, 64, 128})
        for (int t = 1; t <= 4; ++t) {
          device::Sm90MqaLogitsConfig c{.paged = paged, .num_heads = h, .head_dim = d, .tokens = paged ? t : 128 / h};
          c.kv_stages = device::mqa_max_kv_stages(c);
          EXPECT_TRUE(device::is_valid(c)) << h << " " << d << " " << t;
          EXPECT_LE(device::mqa_smem_bytes(c), device::kMqaSmemLimit) << h << " " << d << " " << t;
          EXPECT_EQ(device::mqa_num_chunks(c) * device::mqa_chunk_tokens(c) >= c.tokens, true);
        }
}

}  // namespace
}  // namespace hopgemm
