#pragma once
// Config, parameters and shared-memory layout of the DeepSeek-V3.2 indexer kernels (kernels/sm90_fp8_mqa_logits.cuh:
// contiguous KV, prefill; kernels/sm90_fp8_paged_mqa_logits.cuh: paged KV cache, decode). Compiles as device code
// (NVRTC, NVCC) and as plain host C++20: the host fills Sm90MqaLogitsParams and sizes the launch from the layout.
//
// Both compute, for query token i and KV token j,
//   logits[i, j] = sum_h relu(q[i, h, :] . kv_fp8[j, :]) * weights[i, h] * kv_sf[j]
// A "unit" is the set of query tokens that share one Q tile: kTokens = 128 / heads consecutive queries (prefill) or
// the next_n tokens of one request (decode). The Q tile [kTokens * heads, head_dim] is the WGMMA's B operand and a
// 64-token KV slab its A operand (m64 nN k32, swapped so that heads run along N and reduce within a thread quad).
//
// Launch: grid = SMs (persistent), block = 128 * (kMathWgs + 1) threads: math warpgroups 0..3, then one producer
// warpgroup whose first thread issues every TMA; dynamic shared memory mqa_smem_bytes(config).

#include "hopgemm/device/common.cuh"

namespace hopgemm::device {

// All fields int: a structural C++20 NTTP, no padding.
struct Sm90MqaLogitsConfig {
  int paged = 0;        // 0: fp8_mqa_logits (contiguous KV), 1: fp8_paged_mqa_logits (block table, fused cache)
  int num_heads = 64;   // 32, 64 or 128
  int head_dim = 128;   // 32, 64 or 128 (also the TMA/WGMMA swizzle width in bytes)
  int tokens = 2;       // query tokens per unit: 128 / num_heads (prefill) or next_n 1..4 (decode)
  int kv_stages = 3;    // KV ring depth (each stage: 256 tokens)
  int bf16_logits = 0;  // 1: BF16 logits, 0: FP32
};

inline constexpr int kMqaMathWgs = 4;                   // math warpgroups, 64 KV tokens each
inline constexpr int kMqaSlabRows = 64;                 // KV tokens per math warpgroup per stage (= the paged block)
inline constexpr int kMqaStageKv = kMqaMathWgs * kMqaSlabRows;  // KV tokens per stage (the paged split)
inline constexpr int kMqaThreads = 128 * (kMqaMathWgs + 1);
inline constexpr int kMqaMaxTokens = 4;
inline constexpr int kMqaQStages = 2;

// Query tokens per WGMMA chunk (at most 128 columns of N), the chunks of a unit, and the Q rows one TMA box holds.
HOPGEMM_HOST_DEVICE constexpr int mqa_chunk_tokens(const Sm90MqaLogitsConfig& c) {
  return c.tokens < 128 / c.num_heads ? c.tokens : 128 / c.num_heads;
}
HOPGEMM_HOST_DEVICE constexpr int mqa_num_chunks(const Sm90MqaLogitsConfig& c) {
  return ceil_div(c.tokens, mqa_chunk_tokens(c));
}
HOPGEMM_HOST_DEVICE constexpr int mqa_q_box_rows(const Sm90MqaLogitsConfig& c) { return mqa_chunk_tokens(c) * c.num_heads; }

// Query tokens per prefill unit: two chunks of 128 Q rows where kMqaMaxTokens allows (heads 64: 4 tokens, 128: 2),
// so each KV slab a stage brings from L2 feeds two WGMMA chunks instead of one. Every CTA streams its units' whole KV
// range: with one chunk (DeepGEMM's 128 / heads tokens) the KV reads at DeepGEMM's ~1000 TFLOPS are ~3.9 TB/s from L2,
// near what L2 delivers, and the stage's fixed costs (barriers, task, scales, descriptors) are paid once per chunk.
HOPGEMM_HOST_DEVICE constexpr int mqa_prefill_tokens(int heads) {
  return 256 / heads < kMqaMaxTokens ? 256 / heads : kMqaMaxTokens;
}

HOPGEMM_HOST_DEVICE constexpr bool is_valid(const Sm90MqaLogitsConfig& c) {
  const bool heads = c.num_heads == 32 || c.num_heads == 64 || c.num_heads == 128;
  const bool dim = c.head_dim == 32 || c.head_dim == 64 || c.head_dim == 128;
  // Prefill units are whole WGMMA chunks of 128 Q rows; decode units are a request's next_n tokens.
  const bool tokens = c.tokens >= 1 && c.tokens <= kMqaMaxTokens && (c.paged || (c.tokens * c.num_heads) % 128 == 0);
  return (c.paged == 0 || c.paged == 1) && heads && dim && tokens && c.kv_stages >= 2 && c.kv_stages <= 8 &&
         (c.bf16_logits == 0 || c.bf16_logits == 1);
}

// What the producer tells the math warpgroups about one stage (written into the stage before its full barrier).
struct MqaTask {
  i32 unit;       // query unit (Q tile) of the stage; -1: no more work
  i32 col;        // KV column of the stage's first token (slab g covers [col + 64 g, col + 64 g + 64))
  i32 slabs;      // bits 0..3: slab g was loaded; bits 4..7: slab g is an empty block (-1 in the block table): -inf
  i32 flags;      // kMqaFirstTask, kMqaLastTask of the unit
  i32 lo[kMqaMaxTokens];  // per query token: valid KV columns [lo, hi)
  i32 hi[kMqaMaxTokens];
};
static_assert(sizeof(MqaTask) == 48, "MqaTask is 48 bytes");
inline constexpr i32 kMqaFirstTask = 1, kMqaLastTask = 2;

struct Sm90MqaLogitsParams {
  TmaDescriptor tma_q;      // [units * tokens * heads, head_dim] e4m3, box {head_dim, q_box_rows}, swizzle head_dim
  TmaDescriptor tma_w;      // [rows, heads] FP32, box {heads, tokens}
  TmaDescriptor tma_kv;     // prefill: [seq_len_kv, head_dim] box {head_dim, 256}; paged: value rows [*, head_dim] box {head_dim, 64}
  TmaDescriptor tma_kv_sf;  // prefill: [1, seq_len_kv] box {256, 1}; paged: [num_blocks, 64] (row stride = block stride) box {64, 1}
  void* logits;             // [rows, cols] FP32 / BF16, row stride logits_ld elements (16-byte rows)
  i64 logits_ld;
  i32 logits_cols;          // columns of the logits view (seq_len_kv, max_seqlen_k or max_context_len)
  i32 rows;                 // query rows: seq_len (prefill) or batch * next_n (paged)
  i32 clean;                // 1: -inf outside each row's valid range (every column of the view is written)
  i32 compressed;           // prefill only: logit j of row i at column j - ks[i]
  // prefill
  const i32* ks;            // [seq_len] KV range start per query token
  const i32* ke;            // [seq_len] KV range end
  i32 seq_len_kv;
  i32 num_units;            // ceil(seq_len / tokens)
  // paged
  const i32* context_lens;  // [batch] (lens_2d == 0) or [batch, next_n]
  const i32* block_table;   // [batch, max_blocks], row stride block_table_ld
  const i32* schedule_meta; // [num_sms + 1, 2] from the metadata kernel
  i64 block_table_ld;
  i64 block_value_rows;     // head_dim-byte rows between consecutive blocks of the fused cache (block stride / head_dim)
  i32 lens_2d;
  i32 max_blocks;
  i32 num_blocks;
  i32 batch;
};

// Shared-memory layout (byte offsets from a 1024-aligned base): Q stages, KV stages, weights, KV scales, tasks,
// then the barriers.
struct MqaSmemLayout {
  int q_tile_bytes, kv_tile_bytes, w_bytes;
  int q, kv, w, sf, task, barriers, total;
};
HOPGEMM_HOST_DEVICE constexpr MqaSmemLayout mqa_smem_layout(const Sm90MqaLogitsConfig& c) {
  MqaSmemLayout l{};
  l.q_tile_bytes = mqa_num_chunks(c) * mqa_q_box_rows(c) * c.head_dim;
  l.kv_tile_bytes = kMqaStageKv * c.head_dim;
  l.w_bytes = align_up(c.tokens * c.num_heads * 4, 128);
  l.q = 0;
  l.kv = l.q + kMqaQStages * l.q_tile_bytes;
  l.w = l.kv + c.kv_stages * l.kv_tile_bytes;
  l.sf = l.w + kMqaQStages * l.w_bytes;
  l.task = l.sf + c.kv_stages * kMqaStageKv * 4;
  l.barriers = align_up(l.task + c.kv_stages * static_cast<int>(sizeof(MqaTask)), 8);
  l.total = l.barriers + (kMqaQStages + c.kv_stages) * 2 * 8;
  return l;
}
// Dynamic shared memory to request (the layout plus slack to align the base to 1024 bytes).
HOPGEMM_HOST_DEVICE constexpr int mqa_smem_bytes(const Sm90MqaLogitsConfig& c) { return mqa_smem_layout(c).total + 1024; }
inline constexpr int kMqaSmemLimit = 232448;

// The deepest KV ring (2..8 stages) that fits the shared memory of an SM90 CTA: the paged decode streams every KV
// byte once from HBM, and only the free stages are loads in flight (at 4 stages, B 4096 reached 87-90% of a device
// copy on the H100); 64 heads of dim 128 get 5 (prefill, next_n 2) or 6 (next_n 1).
HOPGEMM_HOST_DEVICE constexpr int mqa_max_kv_stages(Sm90MqaLogitsConfig c) {
  for (int s = 8; s > 2; --s) {
    c.kv_stages = s;
    if (mqa_smem_bytes(c) <= kMqaSmemLimit) return s;
  }
  return 2;
}

// The schedule metadata kernel (kernels/sm90_fp8_paged_mqa_logits_metadata.cuh): one CTA.
struct Sm90PagedMqaMetadataConfig {
  int threads = 1024;
};

struct Sm90PagedMqaMetadataParams {
  const i32* context_lens;  // [batch] or [batch, next_n]
  i32* meta;                // [num_sms + 1, 2]
  i32 batch, next_n, lens_2d, num_sms;
};

HOPGEMM_HOST_DEVICE constexpr bool is_valid(const Sm90PagedMqaMetadataConfig& c) { return c.threads == 1024; }

}  // namespace hopgemm::device
