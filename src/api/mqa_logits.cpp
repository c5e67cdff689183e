// The DeepSeek-V3.2 indexer ops (include/hopgemm/mqa_logits.hpp): validate -> config -> kernel cache -> tensor maps ->
// launch. One config per (prefill | paged, heads, head dim, tokens, logits dtype): sizes are run-time parameters.
#include "hopgemm/mqa_logits.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "api/mqa_logits_sources.hpp"
#include "api/validate.hpp"
#include "hopgemm/device/kernels/sm90_fp8_mqa_logits_types.cuh"
#include "hopgemm/device/scheduler/sm90_paged_mqa_scheduler.cuh"
#include "hopgemm/error.hpp"
#include "hopgemm/runtime.hpp"
#include "jit/kernel_cache.hpp"
#include "jit/loader.hpp"
#include "runtime/env.hpp"
#include "tma/tensor_map.hpp"

namespace hopgemm {
namespace {

using device::Sm90MqaLogitsConfig;
using device::Sm90MqaLogitsParams;
using device::Sm90PagedMqaMetadataConfig;
using device::Sm90PagedMqaMetadataParams;

jit::KernelCache<Sm90MqaLogitsConfig>& prefill_cache() {
  static jit::KernelCache<Sm90MqaLogitsConfig> cache(&api::render_sm90_fp8_mqa_logits);
  return cache;
}
jit::KernelCache<Sm90MqaLogitsConfig>& paged_cache() {
  static jit::KernelCache<Sm90MqaLogitsConfig> cache(&api::render_sm90_fp8_paged_mqa_logits);
  return cache;
}
jit::KernelCache<Sm90PagedMqaMetadataConfig>& metadata_cache() {
  static jit::KernelCache<Sm90PagedMqaMetadataConfig> cache(&api::render_sm90_paged_mqa_logits_metadata);
  return cache;
}

std::string str(int64_t v) { return std::to_string(v); }

// Query tokens per prefill unit: device::mqa_prefill_tokens, or as many 128-row Q chunks as HOPGEMM_MQA_PREFILL_CHUNKS
// says (1: DeepGEMM's unit of 128 / heads tokens, 2: the default; a tuning hook for same-run A/B timings, read once),
// at most 4 tokens.
int prefill_tokens(const api::Validator& v, int heads) {
  static const int chunks = [] {
    const char* value = std::getenv("HOPGEMM_MQA_PREFILL_CHUNKS");
    return value && *value ? runtime::parse_int("HOPGEMM_MQA_PREFILL_CHUNKS", value) : 0;
  }();
  if (chunks == 0) return device::mqa_prefill_tokens(heads);
  if (chunks != 1 && chunks != 2) v.unsupported("HOPGEMM_MQA_PREFILL_CHUNKS = " + str(chunks) + "; supported: 1 or 2");
  return std::min(chunks * 128 / heads, device::kMqaMaxTokens);
}

void check_heads_dim(const api::Validator& v, int64_t heads, int64_t dim) {
  if (heads != 32 && heads != 64 && heads != 128) v.unsupported("q has " + str(heads) + " heads; supported: 32, 64, 128");
  if (dim != 32 && dim != 64 && dim != 128) v.unsupported("q has head dim " + str(dim) + "; supported: 32, 64, 128");
}

// Logits [rows, cols] FP32 / BF16 with 16-byte aligned rows (the kernels' vector stores), apart from every input.
void check_logits(const api::Validator& v, const TensorView& logits, int64_t rows, int64_t cols,
                  std::initializer_list<std::pair<const TensorView*, const char*>> inputs) {
  v.on_device(logits, "logits");
  v.dtype(logits, "logits", {DType::kFloat32, DType::kBFloat16});
  v.rank(logits, "logits", {2});
  v.shape(logits, "logits", {rows, cols});
  v.inner_contiguous(logits, "logits");
  v.tma_aligned(logits, "logits");
  if (rows > 1 && logits.stride(0) < cols) {
    v.fail("logits", "has overlapping rows (row stride " + str(logits.stride(0)) + " < " + str(cols) + " columns)");
  }
  for (const auto& [t, name] : inputs) {
    v.same_device(*t, name, logits, "logits");
    v.no_overlap(logits, "logits", *t, name);
  }
}

// A launch of a persistent indexer kernel: `ctas` CTAs of kMqaThreads threads.
void launch_mqa(const jit::LoadedKernel& kernel, const Sm90MqaLogitsConfig& config, const Sm90MqaLogitsParams& params,
                int ctas, int device, cudaStream_t stream) {
  jit::LaunchGeometry geometry;
  geometry.grid_x = static_cast<unsigned>(ctas);
  geometry.block_x = device::kMqaThreads;
  geometry.smem_bytes = device::mqa_smem_bytes(config);
  geometry.device = device;
  jit::launch(kernel, geometry, &params, stream);
}

tma::Swizzle swizzle_of(int64_t head_dim) { return tma::swizzle_for_bytes(static_cast<int>(head_dim)); }

}  // namespace

int64_t mqa_logits_row_stride(int64_t cols, bool bf16) {
  const int64_t per_kb = bf16 ? 512 : 256;
  return device::align_up<int64_t>(std::max<int64_t>(cols, 1), per_kb);
}

void fp8_mqa_logits(const TensorView& q, const TensorView& kv, const TensorView& kv_sf, const TensorView& weights,
                    const TensorView& ks, const TensorView& ke, const TensorView& logits, bool clean_logits,
                    int max_seqlen_k, cudaStream_t stream) {
  const api::Validator v("fp8_mqa_logits");
  v.on_device(q, "q");
  v.dtype(q, "q", {DType::kFloat8E4M3});
  v.rank(q, "q", {3});
  v.contiguous(q, "q");
  const int64_t s = q.size(0), heads = q.size(1), dim = q.size(2);
  check_heads_dim(v, heads, dim);
  v.on_device(kv, "kv");
  v.dtype(kv, "kv", {DType::kFloat8E4M3});
  v.rank(kv, "kv", {2});
  v.shape(kv, "kv", {-1, dim});
  v.inner_contiguous(kv, "kv");
  v.tma_aligned(kv, "kv");
  const int64_t s_kv = kv.size(0);
  v.on_device(kv_sf, "kv_sf");
  v.dtype(kv_sf, "kv_sf", {DType::kFloat32});
  v.rank(kv_sf, "kv_sf", {1});
  v.shape(kv_sf, "kv_sf", {s_kv});
  v.contiguous(kv_sf, "kv_sf");
  v.tma_aligned(kv_sf, "kv_sf");
  v.on_device(weights, "weights");
  v.dtype(weights, "weights", {DType::kFloat32});
  v.rank(weights, "weights", {2});
  v.shape(weights, "weights", {s, heads});
  v.inner_contiguous(weights, "weights");
  v.tma_aligned(weights, "weights");
  for (const auto& [t, name] : {std::pair{&ks, "cu_seq_len_k_start"}, std::pair{&ke, "cu_seq_len_k_end"}}) {
    v.on_device(*t, name);
    v.dtype(*t, name, {DType::kInt32});
    v.rank(*t, name, {1});
    v.shape(*t, name, {s});
    v.contiguous(*t, name);
  }
  if (max_seqlen_k < 0) v.fail("max_seqlen_k", "must be >= 0, got " + str(max_seqlen_k));
  const bool compressed = max_seqlen_k > 0;
  if (compressed && clean_logits) v.fail("clean_logits", "must be false with max_seqlen_k > 0 (compressed logits)");
  const int64_t cols = compressed ? max_seqlen_k : s_kv;
  check_logits(v, logits, s, cols,
               {{&q, "q"}, {&kv, "kv"}, {&kv_sf, "kv_sf"}, {&weights, "weights"}, {&ks, "cu_seq_len_k_start"},
                {&ke, "cu_seq_len_k_end"}});
  for (const auto& [t, name] : {std::pair{&kv, "kv"}, std::pair{&kv_sf, "kv_sf"}, std::pair{&weights, "weights"},
                                std::pair{&ks, "cu_seq_len_k_start"}, std::pair{&ke, "cu_seq_len_k_end"}}) {
    v.same_device(q, "q", *t, name);
  }
  if (s * heads > INT32_MAX || s_kv > INT32_MAX - device::kMqaStageKv || cols > INT32_MAX) {
    v.fail("q", "is too large: q " + api::shape_string(q) + ", kv " + api::shape_string(kv));
  }
  if (s == 0 || cols == 0) return;

  const bool bf16 = logits.dtype == DType::kBFloat16;
  const Sm90MqaLogitsConfig config = api::mqa_logits_config(false, int(heads), int(dim), prefill_tokens(v, int(heads)), bf16);
  const int tokens = config.tokens;

  Sm90MqaLogitsParams p{};
  const auto swizzle = swizzle_of(dim);
  p.tma_q = tma::encode_2d({DType::kFloat8E4M3, q.data, uint64_t(dim), uint64_t(s * heads), uint64_t(dim),
                            uint32_t(dim), uint32_t(device::mqa_q_box_rows(config)), swizzle},
                           "fp8_mqa_logits: q");
  p.tma_w = tma::encode_2d({DType::kFloat32, weights.data, uint64_t(heads), uint64_t(s), uint64_t(weights.stride(0) * 4),
                            uint32_t(heads), uint32_t(tokens)},
                           "fp8_mqa_logits: weights");
  if (s_kv > 0) {
    p.tma_kv = tma::encode_2d({DType::kFloat8E4M3, kv.data, uint64_t(dim), uint64_t(s_kv), uint64_t(kv.stride(0)),
                               uint32_t(dim), uint32_t(device::kMqaStageKv), swizzle},
                              "fp8_mqa_logits: kv");
    p.tma_kv_sf = tma::encode_2d({DType::kFloat32, kv_sf.data, uint64_t(s_kv), 1,
                                  uint64_t(device::align_up<int64_t>(s_kv * 4, 16)), uint32_t(device::kMqaStageKv), 1},
                                 "fp8_mqa_logits: kv_sf");
  }
  p.logits = logits.data;
  p.logits_ld = logits.stride(0);
  p.logits_cols = static_cast<int32_t>(cols);
  p.rows = static_cast<int32_t>(s);
  p.clean = clean_logits ? 1 : 0;
  p.compressed = compressed ? 1 : 0;
  p.ks = static_cast<const int32_t*>(ks.data);
  p.ke = static_cast<const int32_t*>(ke.data);
  p.seq_len_kv = static_cast<int32_t>(s_kv);
  p.num_units = static_cast<int32_t>(device::ceil_div<int64_t>(s, tokens));

  const jit::LoadedKernel& kernel = prefill_cache().get(config, v.op(), stream);
  const int ctas = std::min<int64_t>(get_num_sms(q.device), p.num_units);
  launch_mqa(kernel, config, p, ctas, q.device, stream);
}

void get_paged_mqa_logits_metadata(const TensorView& context_lens, int block_kv, const TensorView& schedule_meta,
                                   cudaStream_t stream) {
  const api::Validator v("get_paged_mqa_logits_metadata");
  if (block_kv != 64) v.unsupported("block_kv = " + str(block_kv) + "; SM90 supports 64");
  v.on_device(context_lens, "context_lens");
  v.dtype(context_lens, "context_lens", {DType::kInt32});
  v.rank(context_lens, "context_lens", {1, 2});
  v.contiguous(context_lens, "context_lens");
  v.on_device(schedule_meta, "schedule_meta");
  v.dtype(schedule_meta, "schedule_meta", {DType::kInt32});
  v.rank(schedule_meta, "schedule_meta", {2});
  v.shape(schedule_meta, "schedule_meta", {-1, 2});
  v.contiguous(schedule_meta, "schedule_meta");
  if (schedule_meta.size(0) < 2) v.fail("schedule_meta", "must have num_sms + 1 >= 2 rows, got " + api::shape_string(schedule_meta));
  v.same_device(context_lens, "context_lens", schedule_meta, "schedule_meta");
  v.no_overlap(schedule_meta, "schedule_meta", context_lens, "context_lens");
  const bool lens_2d = context_lens.rank == 2;
  const int64_t batch = context_lens.size(0), next_n = lens_2d ? context_lens.size(1) : 1;
  if (lens_2d && (next_n < 1 || next_n > device::kMqaMaxTokens)) {
    v.unsupported("context_lens has next_n = " + str(next_n) + " columns; supported: 1 to 4");
  }
  if (batch * next_n > INT32_MAX || schedule_meta.size(0) > INT32_MAX) v.fail("context_lens", "is too large");

  Sm90PagedMqaMetadataParams p{};
  p.context_lens = static_cast<const int32_t*>(context_lens.data);
  p.meta = static_cast<int32_t*>(schedule_meta.data);
  p.batch = static_cast<int32_t>(batch);
  p.next_n = static_cast<int32_t>(next_n);
  p.lens_2d = lens_2d ? 1 : 0;
  p.num_sms = static_cast<int32_t>(schedule_meta.size(0) - 1);
  const Sm90PagedMqaMetadataConfig config{};
  const jit::LoadedKernel& kernel = metadata_cache().get(config, v.op(), stream);
  jit::LaunchGeometry geometry;
  geometry.block_x = static_cast<unsigned>(config.threads);
  geometry.device = context_lens.device;
  jit::launch(kernel, geometry, &p, stream);
}

void fp8_paged_mqa_logits(const TensorView& q, const TensorView& kv_cache, const TensorView& weights,
                          const TensorView& context_lens, const TensorView& block_table,
                          const TensorView& schedule_meta, const TensorView& logits, bool clean_logits,
                          cudaStream_t stream) {
  const api::Validator v("fp8_paged_mqa_logits");
  v.on_device(q, "q");
  v.dtype(q, "q", {DType::kFloat8E4M3});
  v.rank(q, "q", {4});
  v.contiguous(q, "q");
  const int64_t batch = q.size(0), next_n = q.size(1), heads = q.size(2), dim = q.size(3);
  check_heads_dim(v, heads, dim);
  if (next_n < 1 || next_n > device::kMqaMaxTokens) v.unsupported("q has next_n = " + str(next_n) + "; supported: 1 to 4");
  v.on_device(kv_cache, "kv_cache");
  v.dtype(kv_cache, "kv_cache", {DType::kUInt8, DType::kFloat8E4M3});
  v.rank(kv_cache, "kv_cache", {4});
  const int64_t num_blocks = kv_cache.size(0), block_kv = kv_cache.size(1);
  if (block_kv != 64) v.unsupported("kv_cache has block_kv = " + str(block_kv) + "; SM90 supports 64");
  v.shape(kv_cache, "kv_cache", {-1, 64, 1, dim + 4});
  const int64_t block_stride = kv_cache.stride(0);
  if (kv_cache.stride(1) != dim + 4 || kv_cache.stride(3) != 1) {
    v.fail("kv_cache", "must be the fused layout (stride(1) == head_dim + 4 = " + str(dim + 4) +
                           ", stride(3) == 1), got strides " + api::stride_string(kv_cache));
  }
  if (block_stride < 64 * (dim + 4) || block_stride % 16 != 0 || block_stride % dim != 0 ||
      reinterpret_cast<uintptr_t>(kv_cache.data) % 16 != 0) {
    v.fail("kv_cache", "must have a 16-byte aligned base and a block stride of at least 64 * (head_dim + 4) bytes, a "
                       "multiple of 16 and of head_dim; got stride(0) = " + str(block_stride));
  }
  v.on_device(weights, "weights");
  v.dtype(weights, "weights", {DType::kFloat32});
  v.rank(weights, "weights", {2});
  v.shape(weights, "weights", {batch * next_n, heads});
  v.inner_contiguous(weights, "weights");
  v.tma_aligned(weights, "weights");
  v.on_device(context_lens, "context_lens");
  v.dtype(context_lens, "context_lens", {DType::kInt32});
  v.rank(context_lens, "context_lens", {1, 2});
  if (context_lens.rank == 1) v.shape(context_lens, "context_lens", {batch});
  else v.shape(context_lens, "context_lens", {batch, next_n});
  v.contiguous(context_lens, "context_lens");
  v.on_device(block_table, "block_table");
  v.dtype(block_table, "block_table", {DType::kInt32});
  v.rank(block_table, "block_table", {2});
  v.shape(block_table, "block_table", {batch, -1});
  if (block_table.size(1) > 1 && block_table.stride(1) != 1) v.fail("block_table", "must have stride(1) == 1");
  v.non_negative_strides(block_table, "block_table");
  v.on_device(schedule_meta, "schedule_meta");
  v.dtype(schedule_meta, "schedule_meta", {DType::kInt32});
  v.rank(schedule_meta, "schedule_meta", {2});
  v.shape(schedule_meta, "schedule_meta", {-1, 2});
  v.contiguous(schedule_meta, "schedule_meta");
  if (schedule_meta.size(0) < 2) v.fail("schedule_meta", "must have num_sms + 1 >= 2 rows, got " + api::shape_string(schedule_meta));
  v.rank(logits, "logits", {2});
  const int64_t cols = logits.size(1);
  check_logits(v, logits, batch * next_n, cols,
               {{&q, "q"}, {&kv_cache, "kv_cache"}, {&weights, "weights"}, {&context_lens, "context_lens"},
                {&block_table, "block_table"}, {&schedule_meta, "schedule_meta"}});
  for (const auto& [t, name] : {std::pair{&kv_cache, "kv_cache"}, std::pair{&weights, "weights"},
                                std::pair{&context_lens, "context_lens"}, std::pair{&block_table, "block_table"},
                                std::pair{&schedule_meta, "schedule_meta"}}) {
    v.same_device(q, "q", *t, name);
  }
  const int64_t value_rows = num_blocks > 0 ? ((num_blocks - 1) * block_stride + 64 * dim) / dim : 0;
  if (batch * next_n * heads > INT32_MAX || value_rows > INT32_MAX || cols > INT32_MAX ||
      schedule_meta.size(0) > INT32_MAX || block_table.size(1) > INT32_MAX) {
    v.fail("kv_cache", "is too large: q " + api::shape_string(q) + ", kv_cache " + api::shape_string(kv_cache));
  }
  if (batch == 0 || cols == 0) return;

  const bool bf16 = logits.dtype == DType::kBFloat16;
  const Sm90MqaLogitsConfig config = api::mqa_logits_config(true, int(heads), int(dim), int(next_n), bf16);

  Sm90MqaLogitsParams p{};
  const auto swizzle = swizzle_of(dim);
  p.tma_q = tma::encode_2d({DType::kFloat8E4M3, q.data, uint64_t(dim), uint64_t(batch * next_n * heads), uint64_t(dim),
                            uint32_t(dim), uint32_t(device::mqa_q_box_rows(config)), swizzle},
                           "fp8_paged_mqa_logits: q");
  p.tma_w = tma::encode_2d({DType::kFloat32, weights.data, uint64_t(heads), uint64_t(batch * next_n),
                            uint64_t(weights.stride(0) * 4), uint32_t(heads), uint32_t(next_n)},
                           "fp8_paged_mqa_logits: weights");
  if (num_blocks > 0) {
    p.tma_kv = tma::encode_2d({DType::kFloat8E4M3, kv_cache.data, uint64_t(dim), uint64_t(value_rows), uint64_t(dim),
                               uint32_t(dim), uint32_t(device::kMqaSlabRows), swizzle},
                              "fp8_paged_mqa_logits: kv_cache values");
    p.tma_kv_sf = tma::encode_2d({DType::kFloat32, static_cast<uint8_t*>(kv_cache.data) + 64 * dim, 64,
                                  uint64_t(num_blocks), uint64_t(block_stride), uint32_t(device::kMqaSlabRows), 1},
                                 "fp8_paged_mqa_logits: kv_cache scales");
  }
  p.logits = logits.data;
  p.logits_ld = logits.stride(0);
  p.logits_cols = static_cast<int32_t>(cols);
  p.rows = static_cast<int32_t>(batch * next_n);
  p.clean = clean_logits ? 1 : 0;
  p.context_lens = static_cast<const int32_t*>(context_lens.data);
  p.block_table = static_cast<const int32_t*>(block_table.data);
  p.schedule_meta = static_cast<const int32_t*>(schedule_meta.data);
  p.block_table_ld = block_table.stride(0);
  p.block_value_rows = block_stride / dim;
  p.lens_2d = context_lens.rank == 2 ? 1 : 0;
  p.max_blocks = static_cast<int32_t>(block_table.size(1));
  p.num_blocks = static_cast<int32_t>(num_blocks);
  p.batch = static_cast<int32_t>(batch);

  const jit::LoadedKernel& kernel = paged_cache().get(config, v.op(), stream);
  launch_mqa(kernel, config, p, static_cast<int>(schedule_meta.size(0) - 1), q.device, stream);
}

}  // namespace hopgemm

namespace hopgemm::api {

namespace {
void write_mqa_fields(jit::ConfigWriter& w, const device::Sm90MqaLogitsConfig& c) {
  w.field("paged", c.paged)
      .field("num_heads", c.num_heads)
      .field("head_dim", c.head_dim)
      .field("tokens", c.tokens)
      .field("kv_stages", c.kv_stages)
      .field("bf16_logits", c.bf16_logits);
}
}  // namespace

jit::KernelSource render_sm90_fp8_mqa_logits(const device::Sm90MqaLogitsConfig& c) {
  static constexpr jit::KernelFamily kFamily{"sm90_fp8_mqa_logits", "hopgemm/device/kernels/sm90_fp8_mqa_logits.cuh",
                                             "hopgemm::device::sm90_fp8_mqa_logits_kernel",
                                             "hopgemm::device::Sm90MqaLogitsConfig"};
  return jit::render_kernel(kFamily, [&](jit::ConfigWriter& w) { write_mqa_fields(w, c); });
}

jit::KernelSource render_sm90_fp8_paged_mqa_logits(const device::Sm90MqaLogitsConfig& c) {
  static constexpr jit::KernelFamily kFamily{"sm90_fp8_paged_mqa_logits",
                                             "hopgemm/device/kernels/sm90_fp8_paged_mqa_logits.cuh",
                                             "hopgemm::device::sm90_fp8_paged_mqa_logits_kernel",
                                             "hopgemm::device::Sm90MqaLogitsConfig"};
  return jit::render_kernel(kFamily, [&](jit::ConfigWriter& w) { write_mqa_fields(w, c); });
}

jit::KernelSource render_sm90_paged_mqa_logits_metadata(const device::Sm90PagedMqaMetadataConfig& c) {
  static constexpr jit::KernelFamily kFamily{"sm90_paged_mqa_logits_metadata",
                                             "hopgemm/device/kernels/sm90_fp8_paged_mqa_logits_metadata.cuh",
                                             "hopgemm::device::sm90_paged_mqa_logits_metadata_kernel",
                                             "hopgemm::device::Sm90PagedMqaMetadataConfig"};
  return jit::render_kernel(kFamily, [&](jit::ConfigWriter& w) { w.field("threads", c.threads); });
}

device::Sm90MqaLogitsConfig mqa_logits_config(bool paged, int heads, int head_dim, int tokens, bool bf16) {
  device::Sm90MqaLogitsConfig c{.paged = paged ? 1 : 0,
                                .num_heads = heads,
                                .head_dim = head_dim,
                                .tokens = tokens,
                                .kv_stages = 2,
                                .bf16_logits = bf16 ? 1 : 0};
  c.kv_stages = device::mqa_max_kv_stages(c);
  return c;
}

std::vector<jit::KernelSource> mqa_logits_suite_sources() {
  std::vector<jit::KernelSource> sources{render_sm90_paged_mqa_logits_metadata({})};
  for (const bool bf16 : {false, true}) {
    sources.push_back(render_sm90_fp8_mqa_logits(mqa_logits_config(false, 64, 128, device::mqa_prefill_tokens(64), bf16)));
    for (const int next_n : {1, 2}) {
      sources.push_back(render_sm90_fp8_paged_mqa_logits(mqa_logits_config(true, 64, 128, next_n, bf16)));
    }
  }
  return sources;
}

}  // namespace hopgemm::api
