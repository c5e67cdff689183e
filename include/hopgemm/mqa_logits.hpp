#pragma once
// The DeepSeek-V3.2 indexer kernels, with DeepGEMM's semantics (its fp8_mqa_logits / fp8_paged_mqa_logits):
//   logits[i, j] = sum_h relu(q[i, h, :] . kv_fp8[j, :]) * weights[i, h] * kv_sf[j]
// for every query token i and KV token j it may see. Callers allocate the logits (FP32 or BF16, inner stride 1,
// 16-byte aligned rows); the Python package returns DeepGEMM's padded views (mqa_logits_row_stride). Heads 32, 64 or
// 128; head dim 32, 64 or 128. Every op is stream-ordered, allocation-free and CUDA-graph capturable.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "hopgemm/tensor.hpp"

namespace hopgemm {

// Prefill, contiguous KV. q [S, H, D] e4m3 contiguous; kv [S_kv, D] e4m3 (inner stride 1, 16-byte row stride);
// kv_sf [S_kv] FP32 contiguous, 16-byte aligned; weights [S, H] FP32 (inner stride 1, 16-byte aligned rows);
// ks, ke [S] int32 contiguous: query i sees KV tokens [ks[i], ke[i]) (clamped to [0, S_kv)).
// max_seqlen_k == 0: logits [S, S_kv]; with clean_logits every other column is -inf (each element written once),
//   without it the columns outside the query block's union of ranges are left untouched.
// max_seqlen_k > 0 (compressed): logits [S, max_seqlen_k], logit j of row i at column j - ks[i]; needs
//   clean_logits == false.
void fp8_mqa_logits(const TensorView& q, const TensorView& kv, const TensorView& kv_sf, const TensorView& weights,
                    const TensorView& ks, const TensorView& ke, const TensorView& logits, bool clean_logits,
                    int max_seqlen_k, cudaStream_t stream);

// The schedule of fp8_paged_mqa_logits for these context lengths: context_lens [B] or [B, next_n] int32 contiguous,
// block_kv == 64, schedule_meta [num_sms + 1, 2] int32 contiguous (num_sms: the SMs the decode kernel will use).
void get_paged_mqa_logits_metadata(const TensorView& context_lens, int block_kv, const TensorView& schedule_meta,
                                   cudaStream_t stream);

// Decode, paged KV. q [B, next_n, H, D] e4m3 contiguous (next_n 1..4); kv_cache uint8 [num_blocks, 64, 1, D + 4]
// (stride(1) == D + 4, stride(3) == 1; each block holds 64 x D FP8 values then 64 FP32 scales; block stride a
// multiple of D and of 16 bytes); weights [B * next_n, H] FP32 (inner stride 1, 16-byte aligned rows); context_lens
// [B] (query t of request b sees tokens j <= ctx[b] - next_n + t) or [B, next_n] (it sees j < ctx[b, t]) int32
// contiguous; block_table [B, max_blocks] int32, inner stride 1 (entries of -1, or past num_blocks, are empty blocks
// whose logits are -inf); schedule_meta from get_paged_mqa_logits_metadata over the same context_lens; logits
// [B * next_n, max_context_len]. clean_logits: -inf at every column a query may not see, else those are untouched
// (or hold computed values up to the segment of 256 tokens that holds the request's last token).
void fp8_paged_mqa_logits(const TensorView& q, const TensorView& kv_cache, const TensorView& weights,
                          const TensorView& context_lens, const TensorView& block_table,
                          const TensorView& schedule_meta, const TensorView& logits, bool clean_logits,
                          cudaStream_t stream);

// The row stride (elements) of DeepGEMM's padded logits buffer: align(cols, 1024 bytes), with cols =
// S_kv + 256 (prefill), align(max_seqlen_k, 256) (compressed) or align(max_context_len, 256) (paged).
int64_t mqa_logits_row_stride(int64_t cols, bool bf16);

}  // namespace hopgemm
