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
// group, the heads 2 (l % 4) and 2 (l % 4) + 1 of one query. relu(acc) * weight summed over the thread's heads, then
// over the 4 lanes of the quad (shfl_xor 1, 2), times the token's KV scale, is the logit. The lane whose l % 4 equals
// the query's index % 4 writes it into the warpgroup's staging tile [tokens][64] in shared memory; after a
// warpgroup barrier each row's 64 logits leave as 16-byte (FP32) or 8-byte (BF16) stores, the row's mask applied.
// Every value is summed in one fixed order: reruns are bitwise identical.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/kernels/sm90_fp8_mqa_logits_types.cuh"
#include "hopgemm/device/mma/sm90_smem_desc.cuh"
#include "hopgemm/device/pipeline/sm90_pipeline.cuh"
#include "hopgemm/device/ptx/barrier.cuh"
#include "hopgemm/device/ptx/convert.cuh"
#include "hopgemm/device/ptx/mbarrier.cuh"
#include "hopgemm/device/ptx/tma.cuh"
#include "hopgemm/device/ptx/wgmma.cuh"

namespace hopgemm::device::mqa {

// setmaxnreg moves registers only within the CTA's launch allocation: 640 threads get 65536 / 640 rounded down to a
// multiple of 8 = 96 each (61440), so the producer must give back at least what the math warpgroups take (with 40 and
// 112 the math warpgroups' setmaxnreg.inc waited forever: the first GPU run hung in both kernels).
inline constexpr int kProducerRegs = 32;
inline constexpr int kMathRegs = 112;
inline constexpr int kLaunchRegs = 65536 / kMqaThreads / 8 * 8;
static_assert(128 * kProducerRegs + 128 * kMqaMathWgs * kMathRegs <= kMqaThreads * kLaunchRegs,
              "register reallocation beyond the CTA's launch allocation deadlocks setmaxnreg.inc");
inline constexpr u32 kMathThreads = 128 * kMqaMathWgs;
inline constexpr u32 kReleaseArrivals = kMqaMathWgs * 4;  // one per math warp
inline constexpr u32 kBarrierWarpgroup0 = 1;              // named barriers 1..4: one per math warpgroup's staging

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
  HOPGEMM_DEVICE float* staging(u32 wg, u32 buf) const {
    return reinterpret_cast<float*>(base + kLayout.staging) + (wg * 2 + buf) * kConfig.tokens * kMqaSlabRows;
  }

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

// Scores one chunk of query tokens [kChunk * kTpc, ...) against the slab and writes the logits into `staging`.
// A single chunk calls release_slab() as soon as its WGMMAs are done: the epilogue reads registers, the Q slot's
// weights and staging only, so the producer may refill the KV stage while it runs (the scales are in registers).
// Several chunks release after the last one's epilogue.
template <Sm90MqaLogitsConfig kConfig, int kChunk, typename Release>
HOPGEMM_DEVICE void score_chunk(u32 slab_addr, u32 q_tile_addr, const LaneWeights<kConfig>& weights, float sf0,
                                float sf1, u32 lane, u32 r0, float* staging, const Release& release_slab) {
  constexpr int kH = kConfig.num_heads, kD = kConfig.head_dim;
  constexpr int kTpc = mqa_chunk_tokens(kConfig);
  constexpr int kFirst = kChunk * kTpc;
  constexpr int kTokens = kConfig.tokens - kFirst < kTpc ? kConfig.tokens - kFirst : kTpc;
  constexpr int kN = kTokens * kH;
  float acc[kN / 2];
#pragma unroll
  for (int i = 0; i < kN / 2; ++i) acc[i] = 0.0f;
  const u32 q_addr = q_tile_addr + kChunk * mqa_q_box_rows(kConfig) * kD;
  ptx::wgmma_fence_operand(acc);
  ptx::wgmma_fence();
#pragma unroll
  for (int k = 0; k < kD / 32; ++k) {
    ptx::WgmmaE4m3<kN>::mma(acc, mma::make_kmajor_desc(slab_addr + k * 32, kD), mma::make_kmajor_desc(q_addr + k * 32, kD),
                            k > 0 ? 1u : 0u);
  }
  ptx::wgmma_commit_group();
  ptx::wgmma_wait_group<0>();
  ptx::wgmma_fence_operand(acc);
  if constexpr (mqa_num_chunks(kConfig) == 1) release_slab();

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
    float v0 = s00 + s01, v1 = s10 + s11;
    v0 += __shfl_xor_sync(0xffffffffu, v0, 1);
    v1 += __shfl_xor_sync(0xffffffffu, v1, 1);
    v0 += __shfl_xor_sync(0xffffffffu, v0, 2);
    v1 += __shfl_xor_sync(0xffffffffu, v1, 2);
    const int t = kFirst + tl;
    if (static_cast<int>(lane % 4) == t % 4) {
      staging[t * kMqaSlabRows + r0] = v0 * sf0;
      staging[t * kMqaSlabRows + r0 + 8] = v1 * sf1;
    }
  }
  // With several chunks, releasing before the last chunk's epilogue made ptxas spill (H 128, next_n >= 2).
  if constexpr (mqa_num_chunks(kConfig) > 1 && kChunk + 1 == mqa_num_chunks(kConfig)) release_slab();
}

template <Sm90MqaLogitsConfig kConfig, int kChunk = 0, typename Release>
HOPGEMM_DEVICE void score_slab(u32 slab_addr, u32 q_tile_addr, const LaneWeights<kConfig>& weights, float sf0,
                               float sf1, u32 lane, u32 r0, float* staging, const Release& release_slab) {
  score_chunk<kConfig, kChunk>(slab_addr, q_tile_addr, weights, sf0, sf1, lane, r0, staging, release_slab);
  if constexpr (kChunk + 1 < mqa_num_chunks(kConfig))
    score_slab<kConfig, kChunk + 1>(slab_addr, q_tile_addr, weights, sf0, sf1, lane, r0, staging, release_slab);
}

// Writes the staged logits of slab `wg` of `task` (thread = index in the warpgroup).
template <Sm90MqaLogitsConfig kConfig>
HOPGEMM_DEVICE void store_slab(const Sm90MqaLogitsParams& p, const float* staging, const MqaTask& task, u32 wg,
                               u32 thread) {
  constexpr bool kBf16 = kConfig.bf16_logits == 1;
  constexpr int kT = kConfig.tokens;
  for (int v = static_cast<int>(thread); v < kT * 16; v += 128) {
    const int t = v / 16, c4 = (v % 16) * 4;
    const i32 row = task.unit * kT + t;
    if (row >= p.rows) continue;
    const float4 x = *reinterpret_cast<const float4*>(staging + t * kMqaSlabRows + c4);
    float vals[4] = {x.x, x.y, x.z, x.w};
    const i32 j0 = task.col + static_cast<i32>(wg) * kMqaSlabRows + c4;
    const i32 lo = pick<kT>(task.lo, t), hi = pick<kT>(task.hi, t);
    void* out = logits_row<kBf16>(p, row);
    if (p.compressed) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const i32 j = j0 + e;
        if (j >= lo && j < hi && j - lo < p.logits_cols) store1<kBf16>(out, j - lo, vals[e]);
      }
      continue;
    }
    if (p.clean) {
#pragma unroll
      for (int e = 0; e < 4; ++e) vals[e] = j0 + e >= lo && j0 + e < hi ? vals[e] : neg_inf();
    }
    if (j0 + 4 <= p.logits_cols) {
      store4<kBf16>(out, j0, vals[0], vals[1], vals[2], vals[3]);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (j0 + e < p.logits_cols) store1<kBf16>(out, j0 + e, vals[e]);
    }
  }
}

// The task of a full stage, read from shared memory by lane 0 alone and handed to the rest of the warp by shuffles.
// The producer rewrites the slot once the stage's empty barrier completes, and that barrier orders only the
// accesses of the threads that arrive on it (and what those threads' own program order puts before the arrival).
// When all 32 lanes read the slot and lane 0 arrived for them, lanes 1..31's reads were ordered before the
// producer's next write only through __syncwarp: compute-sanitizer's racecheck counted them as racing with that
// write (8 hazards in the paged kernel, whose test wraps the KV ring). With one reader, the reader is the arriver.
template <int kTokens>
HOPGEMM_DEVICE MqaTask take_task(const MqaTask* slot, u32 lane) {
  MqaTask task{};
  if (lane == 0) {
    task.unit = slot->unit;
    task.col = slot->col;
    task.slabs = slot->slabs;
    task.flags = slot->flags;
#pragma unroll
    for (int t = 0; t < kTokens; ++t) {
      task.lo[t] = slot->lo[t];
      task.hi[t] = slot->hi[t];
    }
  }
  task.unit = __shfl_sync(0xffffffffu, task.unit, 0);
  task.col = __shfl_sync(0xffffffffu, task.col, 0);
  task.slabs = __shfl_sync(0xffffffffu, task.slabs, 0);
  task.flags = __shfl_sync(0xffffffffu, task.flags, 0);
#pragma unroll
  for (int t = 0; t < kTokens; ++t) {
    task.lo[t] = __shfl_sync(0xffffffffu, task.lo[t], 0);
    task.hi[t] = __shfl_sync(0xffffffffu, task.hi[t], 0);
  }
  return task;
}

// A math warpgroup: consume stages until the producer's end task.
template <Sm90MqaLogitsConfig kConfig>
HOPGEMM_DEVICE void run_math(const Sm90MqaLogitsParams& p, const MqaSmem<kConfig>& smem, u32 wg) {
  const u32 thread = threadIdx.x % 128, lane = thread % 32;
  const u32 r0 = (thread / 32) * 16 + lane / 4;  // slab rows r0 and r0 + 8
  pipeline::StageRing<kConfig.kv_stages> kv_ring;
  pipeline::StageRing<kMqaQStages> q_ring;
  i32 unit = -1;
  u32 buf = 0;
  LaneWeights<kConfig> weights;
  while (true) {
    smem.kv.wait_full(kv_ring);
    const MqaTask task = take_task<kConfig.tokens>(smem.task(kv_ring.stage), lane);
    if (task.unit < 0) break;
    if (task.unit != unit) {
      if (unit >= 0) {
        smem.q.template release_by_warp<1>(q_ring.stage, lane);
        q_ring.advance();
      }
      smem.q.wait_full(q_ring);
      unit = task.unit;
      weights.load(smem.weights(q_ring.stage), lane);
    }
    const bool loaded = (task.slabs >> wg) & 1;
    float* staging = smem.staging(wg, buf);
    // Every lane's reads of the stage (scales, WGMMA operands) are done before lane 0 arrives for the warp.
    const u32 stage = kv_ring.stage;
    const auto release_stage = [kv = smem.kv, stage, lane] {
      __syncwarp();
      kv.template release_by_warp<1>(stage, lane);
    };
    if (loaded) {
      const float* sf = smem.sf(stage) + wg * kMqaSlabRows;
      const float sf0 = sf[r0], sf1 = sf[r0 + 8];
      score_slab<kConfig>(smem.kv_tile(stage) + wg * kMqaSlabRows * kConfig.head_dim, smem.q_tile(q_ring.stage),
                          weights, sf0, sf1, lane, r0, staging, release_stage);
    } else {
      release_stage();
    }
    kv_ring.advance();

    const i32 slab_col = task.col + static_cast<i32>(wg) * kMqaSlabRows;
    if (loaded) {
      ptx::bar_sync(kBarrierWarpgroup0 + wg, 128);
      store_slab<kConfig>(p, staging, task, wg, thread);
      buf ^= 1;
    } else if (!p.compressed && (p.clean || ((task.slabs >> (4 + wg)) & 1))) {
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
