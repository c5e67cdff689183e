#pragma once
// What the two indexer kernels share (kernels/sm90_fp8_mqa_logits.cuh, kernels/sm90_fp8_paged_mqa_logits.cuh):
//   MqaSmem         the shared-memory carve-up of mqa_smem_layout and the two barrier rings (Q + weights, KV + scales);
//   load_q_unit     the producer's TMA of one unit's Q tile and weights;
//   run_math        a math warpgroup's whole life: it consumes stages, each described by the MqaTask the producer wrote
//                   into it, scores its 64-token KV slab against the unit's Q tile, and writes the slab's logits.
// The kernels differ only in their producers: which KV rows a stage holds and which columns each query may see.
//
// Scoring one slab (score_chunk): WGMMA m64 nN k32 with A = the slab [64 tokens x head_dim] and B = up to 128 Q rows
// (query tokens x heads), so thread (warp w, lane l) holds tokens r0 = 16 w + l / 4 and r0 + 8 and, per 8-column
// group, the heads 2 (l % 4) and 2 (l % 4) + 1 of one query. relu(acc) * weight summed over the thread's heads, times
// the token's KV scale, then over the 4 lanes of the quad (a reduce-scatter: each lane ends with a quarter of the
// quad's logits), is the logit; the lane that holds it stores it, the row's mask applied. No shared-memory staging:
// a warpgroup barrier and a second pass over staged logits cost more issue slots than the math warps can spare
// (the prefill is issue-bound next to the tensor cores). Every value is summed in one fixed order: reruns are
// bitwise identical.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/kernels/sm90_fp8_mqa_logits_types.cuh"
#include "hopgemm/device/mma/sm90_smem_desc.cuh"
#include "hopgemm/device/pipeline/sm90_pipeline.cuh"
#include "hopgemm/device/ptx/convert.cuh"
#include "hopgemm/device/ptx/mbarrier.cuh"
#include "hopgemm/device/ptx/tma.cuh"
#include "hopgemm/device/ptx/wgmma.cuh"

namespace hopgemm::device::mqa {

// setmaxnreg moves registers only within the CTA's launch allocation: 640 threads get 65536 / 640 rounded down to a
// multiple of 8 = 96 each (61440), so the producer must give back at least what the math warpgroups take (with 40 and
// 112 the math warpgroups' setmaxnreg.inc waited forever: the first GPU run hung in both kernels). Producer 40, math
// 104 (DeepGEMM's paged split is 64 / 104): the paged producer is a warp that keeps a batch of block-table entries and
// the request's lengths, and spilled a register at 32; the math warps compile without spills at 104.
inline constexpr int kProducerRegs = 40;
inline constexpr int kMathRegs = 104;
inline constexpr int kLaunchRegs = 65536 / kMqaThreads / 8 * 8;
static_assert(128 * kProducerRegs + 128 * kMqaMathWgs * kMathRegs <= kMqaThreads * kLaunchRegs,
              "register reallocation beyond the CTA's launch allocation deadlocks setmaxnreg.inc");
inline constexpr u32 kMathThreads = 128 * kMqaMathWgs;
inline constexpr u32 kReleaseArrivals = 128 * kMqaMathWgs;  // one per math thread

template <Sm90MqaLogitsConfig kConfig>
struct MqaSmem {
  static constexpr MqaSmemLayout kLayout = mqa_smem_layout(kConfig);
  using QPipeline = pipeline::MbarrierPipeline<kMqaQStages>;
  using KvPipeline = pipeline::MbarrierPipeline<kConfig.kv_stages>;
  u8* base;       // 1024-aligned
  u32 base_addr;  // its shared-window address
  QPipeline q;
  KvPipeline kv;

  HOPGEMM_DEVICE explicit MqaSmem(u8* raw) {
    const u32 raw_addr = ptx::smem_addr(raw);
    base_addr = (raw_addr + 1023u) & ~1023u;
    base = raw + (base_addr - raw_addr);
    u64* bars = reinterpret_cast<u64*>(base + kLayout.barriers);
    q = QPipeline{bars, bars + kMqaQStages};
    kv = KvPipeline{bars + 2 * kMqaQStages, bars + 2 * kMqaQStages + kConfig.kv_stages};
  }
  HOPGEMM_DEVICE u32 q_tile(u32 slot) const { return base_addr + kLayout.q + slot * kLayout.q_tile_bytes; }
  HOPGEMM_DEVICE u32 kv_tile(u32 stage) const { return base_addr + kLayout.kv + stage * kLayout.kv_tile_bytes; }
  HOPGEMM_DEVICE u32 weights_addr(u32 slot) const { return base_addr + kLayout.w + slot * kLayout.w_bytes; }
  HOPGEMM_DEVICE const float* weights(u32 slot) const {
    return reinterpret_cast<const float*>(base + kLayout.w + slot * kLayout.w_bytes);
  }
  HOPGEMM_DEVICE u32 sf_addr(u32 stage) const { return base_addr + kLayout.sf + stage * kMqaStageKv * 4; }
  HOPGEMM_DEVICE const float* sf(u32 stage) const {
    return reinterpret_cast<const float*>(base + kLayout.sf + stage * kMqaStageKv * 4);
  }
  HOPGEMM_DEVICE MqaTask* task(u32 stage) const { return reinterpret_cast<MqaTask*>(base + kLayout.task) + stage; }

  // By one thread, before the CTA barrier that publishes the barriers.
  HOPGEMM_DEVICE void init() const {
    q.init(1, kReleaseArrivals);
    kv.init(1, kReleaseArrivals);
  }
};

// ---- producer side -------------------------------------------------------------------------------------------------

// TMA of unit `unit`'s Q tile (its chunks of q_box_rows rows) and weights [tokens][heads] into the next Q slot.
template <Sm90MqaLogitsConfig kConfig>
HOPGEMM_DEVICE void load_q_unit(const Sm90MqaLogitsParams& p, const MqaSmem<kConfig>& smem,
                                pipeline::StageRing<kMqaQStages>& ring, i32 unit) {
  constexpr int kBoxRows = mqa_q_box_rows(kConfig), kChunks = mqa_num_chunks(kConfig);
  constexpr u32 kBytes = MqaSmem<kConfig>::kLayout.q_tile_bytes + kConfig.tokens * kConfig.num_heads * 4;
  smem.q.wait_empty(ring);
  u64* full = smem.q.full_barrier(ring.stage);
  ptx::mbarrier_arrive_expect_tx(full, kBytes);
  const i32 row0 = unit * kConfig.tokens * kConfig.num_heads;
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    ptx::cp_async_bulk_tensor_2d_g2s(smem.q_tile(ring.stage) + c * kBoxRows * kConfig.head_dim, &p.tma_q, 0,
                                     row0 + c * kBoxRows, ptx::smem_addr(full));
  }
  ptx::cp_async_bulk_tensor_2d_g2s(smem.weights_addr(ring.stage), &p.tma_w, 0, unit * kConfig.tokens,
                                   ptx::smem_addr(full));
  ring.advance();
}

// The producer's last stage: tells the math warpgroups to stop.
template <Sm90MqaLogitsConfig kConfig>
HOPGEMM_DEVICE void send_end(const MqaSmem<kConfig>& smem, pipeline::StageRing<kConfig.kv_stages>& ring) {
  smem.kv.wait_empty(ring);
  smem.task(ring.stage)->unit = -1;
  smem.kv.arrive_full(ring.stage);
}

// ---- math side -----------------------------------------------------------------------------------------------------

HOPGEMM_DEVICE float neg_inf() { return __int_as_float(0xff800000); }

// T[i] for a run-time i < kCount without a local-memory array.
template <int kCount>
HOPGEMM_DEVICE i32 pick(const i32 (&values)[kMqaMaxTokens], int i) {
  i32 r = values[0];
#pragma unroll
  for (int k = 1; k < kCount; ++k) r = i == k ? values[k] : r;
  return r;
}

template <bool kBf16>
HOPGEMM_DEVICE void store1(void* row, i32 col, float v) {
  if constexpr (kBf16) {
    static_cast<u16*>(row)[col] = static_cast<u16>(ptx::cvt_bf16x2(v, 0.0f) & 0xffffu);
  } else {
    static_cast<float*>(row)[col] = v;
  }
}
// Four consecutive logits at col (a multiple of 4; rows are 16-byte aligned).
template <bool kBf16>
HOPGEMM_DEVICE void store4(void* row, i32 col, float a, float b, float c, float d) {
  if constexpr (kBf16) {
    uint2 v;
    v.x = ptx::cvt_bf16x2(a, b);
    v.y = ptx::cvt_bf16x2(c, d);
    *reinterpret_cast<uint2*>(static_cast<u16*>(row) + col) = v;
  } else {
    *reinterpret_cast<float4*>(static_cast<float*>(row) + col) = make_float4(a, b, c, d);
  }
}
template <bool kBf16>
HOPGEMM_DEVICE void* logits_row(const Sm90MqaLogitsParams& p, i32 row) {
  return static_cast<u8*>(p.logits) + (static_cast<i64>(row) * p.logits_ld) * (kBf16 ? 2 : 4);
}

// -inf over columns [lo, hi) of the unit's rows (lo a multiple of 4), `count` threads cooperating.
template <Sm90MqaLogitsConfig kConfig>
HOPGEMM_DEVICE void fill_neg_inf(const Sm90MqaLogitsParams& p, i32 unit, i32 lo, i32 hi, u32 thread, u32 count) {
  constexpr bool kBf16 = kConfig.bf16_logits == 1;
  hi = hi < p.logits_cols ? hi : p.logits_cols;
  const float x = neg_inf();
#pragma unroll
  for (int t = 0; t < kConfig.tokens; ++t) {
    const i32 row = unit * kConfig.tokens + t;
    if (row >= p.rows) break;
    void* out = logits_row<kBf16>(p, row);
    for (i32 j = lo + static_cast<i32>(thread) * 4; j < hi; j += static_cast<i32>(count) * 4) {
      if (j + 4 <= hi) {
        store4<kBf16>(out, j, x, x, x, x);
      } else {
        for (i32 e = j; e < hi; ++e) store1<kBf16>(out, e, x);
      }
    }
  }
}

// This lane's weights of the unit: for 8-column group G of the unit's [tokens x heads] columns, the heads
// 8 G + 2 (lane % 4) and the next. Held in registers (loaded once per unit, as DeepGEMM does) when they are at most
// 16 floats (tokens x heads <= 64: decode with next_n 1); read from the Q slot for every slab otherwise. The kernel
// compiles to 96 registers a thread (640 threads, one CTA an SM), and 32 floats of weights next to the 64
// accumulators of tokens x heads = 128 spilled (16-76 bytes, checked with ptxas -v).
template <Sm90MqaLogitsConfig kConfig>
struct LaneWeights {
  static constexpr int kGroups = kConfig.tokens * kConfig.num_heads / 8;
  static constexpr bool kInRegisters = kGroups <= 8;
  float2 regs[kInRegisters ? kGroups : 1];
  const float* slot;
  int head_lane;

  HOPGEMM_DEVICE void load(const float* weights, u32 lane) {
    slot = weights;
    head_lane = static_cast<int>(lane % 4) * 2;
    if constexpr (kInRegisters) {
#pragma unroll
      for (int g = 0; g < kGroups; ++g) {
        regs[g] = *reinterpret_cast<const float2*>(weights + g * 8 + head_lane);
      }
    }
  }
  HOPGEMM_DEVICE float2 group(int g) const {
    if constexpr (kInRegisters) return regs[g];
    return *reinterpret_cast<const float2*>(slot + g * 8 + head_lane);
  }
};

// Scores one chunk of query tokens [kChunk * kTpc, ...) against the slab and hands each logit to `store_logit`.
// A single chunk calls release_slab() as soon as its WGMMAs are done: the epilogue reads registers and the Q slot's
// weights only, so the producer may refill the KV stage while it runs (the scales are in registers).
// Several chunks release after the last one's epilogue.
//
// The quad's reduction is a reduce-scatter: before it, each of the 4 lanes holds partial sums of the same 2 kTokens
// logits (tokens x rows r0, r0 + 8); two shuffle rounds (xor 1, then xor 2) each halve the values a lane keeps, so
// that lane q ends with the full sums of logits 4 m + q: token 2 m + q / 2, row r0 + 8 (q % 2). Each logit is then
// summed by one lane in one fixed order (bitwise reproducible) and stored once, 3 shuffles for 2 tokens instead of 8
// (the butterfly left all 4 lanes with every sum). A warp's store covers its 16 rows of two tokens: two runs of 16
// consecutive columns.
template <Sm90MqaLogitsConfig kConfig, int kChunk, typename Release, typename Store>
HOPGEMM_DEVICE void score_chunk(u64 slab_desc, u64 q_tile_desc, const LaneWeights<kConfig>& weights, float sf0,
                                float sf1, u32 lane, u32 r0, const Release& release_slab, const Store& store_logit) {
  constexpr int kH = kConfig.num_heads, kD = kConfig.head_dim;
  constexpr int kTpc = mqa_chunk_tokens(kConfig);
  constexpr int kFirst = kChunk * kTpc;
  constexpr int kTokens = kConfig.tokens - kFirst < kTpc ? kConfig.tokens - kFirst : kTpc;
  constexpr int kN = kTokens * kH;
  constexpr int kSums = align_up(2 * kTokens, 4);  // logits of the quad, padded to the 4 lanes
  float acc[kN / 2];
#pragma unroll
  for (int i = 0; i < kN / 2; ++i) acc[i] = 0.0f;
  const u64 q_desc = mma::advance_desc_bytes(q_tile_desc, kChunk * mqa_q_box_rows(kConfig) * kD);
  ptx::wgmma_fence_operand(acc);
  ptx::wgmma_fence();
#pragma unroll
  for (int k = 0; k < kD / 32; ++k) {
    ptx::WgmmaE4m3<kN>::mma(acc, mma::advance_desc_bytes(slab_desc, k * 32), mma::advance_desc_bytes(q_desc, k * 32),
                            k > 0 ? 1u : 0u);
  }
  ptx::wgmma_commit_group();
  ptx::wgmma_wait_group<0>();
  ptx::wgmma_fence_operand(acc);
  if constexpr (mqa_num_chunks(kConfig) == 1) release_slab();

  // x[2 t + h]: this lane's part of token t's logit at row r0 + 8 h (heads 2 (lane % 4) and the next of each group).
  float x[kSums];
#pragma unroll
  for (int tl = 0; tl < kTokens; ++tl) {
    // Two partial sums per row (even and odd heads) keep the dependent FMA chains short; the order is fixed.
    float s00 = 0.0f, s01 = 0.0f, s10 = 0.0f, s11 = 0.0f;
#pragma unroll
    for (int gh = 0; gh < kH / 8; ++gh) {
      const int g = tl * (kH / 8) + gh;  // 8-column group of the chunk
      const float2 w = weights.group(kFirst * kH / 8 + g);
      s00 = fmaf(fmaxf(acc[4 * g + 0], 0.0f), w.x, s00);
      s01 = fmaf(fmaxf(acc[4 * g + 1], 0.0f), w.y, s01);
      s10 = fmaf(fmaxf(acc[4 * g + 2], 0.0f), w.x, s10);
      s11 = fmaf(fmaxf(acc[4 * g + 3], 0.0f), w.y, s11);
    }
    x[2 * tl] = (s00 + s01) * sf0;
    x[2 * tl + 1] = (s10 + s11) * sf1;
  }
#pragma unroll
  for (int i = 2 * kTokens; i < kSums; ++i) x[i] = 0.0f;
  const bool odd = lane & 1u, upper = lane & 2u;
  float y[kSums / 2];
#pragma unroll
  for (int i = 0; i < kSums / 2; ++i) {
    const float keep = odd ? x[2 * i + 1] : x[2 * i], give = odd ? x[2 * i] : x[2 * i + 1];
    y[i] = keep + __shfl_xor_sync(0xffffffffu, give, 1);
  }
#pragma unroll
  for (int m = 0; m < kSums / 4; ++m) {
    const float keep = upper ? y[2 * m + 1] : y[2 * m], give = upper ? y[2 * m] : y[2 * m + 1];
    const float z = keep + __shfl_xor_sync(0xffffffffu, give, 2);
    const int tl = 2 * m + (upper ? 1 : 0);
    if (kTokens % 2 == 0 || tl < kTokens) store_logit(kFirst + tl, r0 + (odd ? 8u : 0u), z);
  }
  // With several chunks, releasing before the last chunk's epilogue made ptxas spill (H 128, next_n >= 2).
  if constexpr (mqa_num_chunks(kConfig) > 1 && kChunk + 1 == mqa_num_chunks(kConfig)) release_slab();
}

template <Sm90MqaLogitsConfig kConfig, int kChunk = 0, typename Release, typename Store>
HOPGEMM_DEVICE void score_slab(u64 slab_desc, u64 q_tile_desc, const LaneWeights<kConfig>& weights, float sf0,
                               float sf1, u32 lane, u32 r0, const Release& release_slab, const Store& store_logit) {
  score_chunk<kConfig, kChunk>(slab_desc, q_tile_desc, weights, sf0, sf1, lane, r0, release_slab, store_logit);
  if constexpr (kChunk + 1 < mqa_num_chunks(kConfig))
    score_slab<kConfig, kChunk + 1>(slab_desc, q_tile_desc, weights, sf0, sf1, lane, r0, release_slab, store_logit);
}

// Writes logit `v` of token t (run-time, < tokens) at KV column j of the stage's unit, with the row's mask: in the
// compressed view at j - lo when j is in [lo, hi); otherwise at j, -inf outside [lo, hi) when cleaning.
template <Sm90MqaLogitsConfig kConfig>
HOPGEMM_DEVICE void store_logit(const Sm90MqaLogitsParams& p, const MqaTask& task, int t, i32 j, float v) {
  constexpr bool kBf16 = kConfig.bf16_logits == 1;
  constexpr int kT = kConfig.tokens;
  const i32 row = task.unit * kT + t;
  if (row >= p.rows) return;
  const i32 lo = pick<kT>(task.lo, t), hi = pick<kT>(task.hi, t);
  const bool valid = j >= lo && j < hi;
  void* out = logits_row<kBf16>(p, row);
  if (p.compressed) {
    if (valid && j - lo < p.logits_cols) store1<kBf16>(out, j - lo, v);
    return;
  }
  if (j < p.logits_cols) store1<kBf16>(out, j, p.clean && !valid ? neg_inf() : v);
}

// The task of a full stage, read by every lane from the same address (ptxas sees a warp-uniform value, so the loop it
// controls, the ring stages and the WGMMA descriptors stay on the uniform datapath; with lane 0 reading and
// shuffles, they were rebuilt in vector registers and moved by R2UR for every WGMMA). Every math thread then
// arrives on the stage's empty barrier itself (kReleaseArrivals), which orders its own reads before the producer's
// next write: the ordering compute-sanitizer's racecheck asks for (lanes ordered only through __syncwarp and lane
// 0's arrival were counted as racing with that write, 8 hazards in the paged kernel).
template <int kTokens>
HOPGEMM_DEVICE MqaTask take_task(const MqaTask* slot) {
  MqaTask task{};
  task.unit = slot->unit;
  task.col = slot->col;
  task.slabs = slot->slabs;
  task.flags = slot->flags;
#pragma unroll
  for (int t = 0; t < kTokens; ++t) {
    task.lo[t] = slot->lo[t];
    task.hi[t] = slot->hi[t];
  }
  return task;
}

// A math warpgroup: consume stages until the producer's end task.
template <Sm90MqaLogitsConfig kConfig>
HOPGEMM_DEVICE void run_math(const Sm90MqaLogitsParams& p, const MqaSmem<kConfig>& smem, u32 wg_index) {
  // The warpgroup index through a shuffle from lane 0: ptxas then keeps it, and the slab addresses built from it, in
  // uniform registers.
  const u32 wg = __shfl_sync(0xffffffffu, wg_index, 0);
  const u32 thread = threadIdx.x % 128, lane = thread % 32;
  const u32 r0 = (thread / 32) * 16 + lane / 4;  // slab rows r0 and r0 + 8
  pipeline::StageRing<kConfig.kv_stages> kv_ring;
  pipeline::StageRing<kMqaQStages> q_ring;
  i32 unit = -1;
  LaneWeights<kConfig> weights;
  while (true) {
    smem.kv.wait_full(kv_ring);
    const MqaTask task = take_task<kConfig.tokens>(smem.task(kv_ring.stage));
    if (task.unit < 0) break;
    if (task.unit != unit) {
      if (unit >= 0) {
        smem.q.arrive_empty(q_ring.stage);
        q_ring.advance();
      }
      smem.q.wait_full(q_ring);
      unit = task.unit;
      weights.load(smem.weights(q_ring.stage), lane);
    }
    const bool loaded = (task.slabs >> wg) & 1;
    const i32 slab_col = task.col + static_cast<i32>(wg) * kMqaSlabRows;
    // Each thread releases the stage after its own reads of it (task, scales, WGMMA operands).
    const u32 stage = kv_ring.stage;
    const auto release_stage = [kv = smem.kv, stage] { kv.arrive_empty(stage); };
    if (loaded) {
      constexpr int kD = kConfig.head_dim;
      const float* sf = smem.sf(stage) + wg * kMqaSlabRows;
      const float sf0 = sf[r0], sf1 = sf[r0 + 8];
      const auto store = [&](int t, u32 row, float v) {
        store_logit<kConfig>(p, task, t, slab_col + static_cast<i32>(row), v);
      };
      score_slab<kConfig>(mma::make_kmajor_desc(smem.kv_tile(stage) + wg * kMqaSlabRows * kD, kD),
                          mma::make_kmajor_desc(smem.q_tile(q_ring.stage), kD), weights, sf0, sf1, lane, r0,
                          release_stage, store);
    } else {
      release_stage();
    }
    kv_ring.advance();

    if (!loaded && !p.compressed && (p.clean || ((task.slabs >> (4 + wg)) & 1))) {
      fill_neg_inf<kConfig>(p, task.unit, slab_col, slab_col + kMqaSlabRows, thread, 128);
    }
    if (p.clean && !p.compressed) {
      const u32 math_thread = wg * 128 + thread;
      if (task.flags & kMqaFirstTask) fill_neg_inf<kConfig>(p, task.unit, 0, task.col, math_thread, kMathThreads);
      if (task.flags & kMqaLastTask)
        fill_neg_inf<kConfig>(p, task.unit, task.col + kMqaStageKv, p.logits_cols, math_thread, kMathThreads);
    }
  }
}

}  // namespace hopgemm::device::mqa
