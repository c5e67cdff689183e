// The DeepSeek-V3.2 indexer ops. Logits and the schedule are allocated by hopgemm/_mqa_logits.py (DeepGEMM's padded
// views); these take them as outputs.
#include <nanobind/nanobind.h>

#include "bindings.hpp"
#include "hopgemm/mqa_logits.hpp"
#include "tensor_arg.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace hopgemm::python {
namespace {

void mqa_logits(nb::handle q, nb::handle kv, nb::handle kv_sf, nb::handle weights, nb::handle ks, nb::handle ke,
                nb::handle logits, bool clean_logits, int max_seqlen_k, nb::handle stream) {
  CallContext ctx;
  const TensorView tq = tensor_arg(q, "q", ctx, kArgFp8Bytes), tkv = tensor_arg(kv, "kv", ctx, kArgFp8Bytes),
                   tsf = tensor_arg(kv_sf, "kv_sf", ctx), tw = tensor_arg(weights, "weights", ctx),
                   tks = tensor_arg(ks, "cu_seq_len_k_start", ctx), tke = tensor_arg(ke, "cu_seq_len_k_end", ctx),
                   out = tensor_arg(logits, "logits", ctx);
  launch(ctx, stream, [&](cudaStream_t s) {
    fp8_mqa_logits(tq, tkv, tsf, tw, tks, tke, out, clean_logits, max_seqlen_k, s);
  });
}

void paged_metadata(nb::handle context_lens, int block_kv, nb::handle schedule_meta, nb::handle stream) {
  CallContext ctx;
  const TensorView lens = tensor_arg(context_lens, "context_lens", ctx),
                   meta = tensor_arg(schedule_meta, "schedule_meta", ctx);
  launch(ctx, stream, [&](cudaStream_t s) { get_paged_mqa_logits_metadata(lens, block_kv, meta, s); });
}

void paged_mqa_logits(nb::handle q, nb::handle kv_cache, nb::handle weights, nb::handle context_lens,
                      nb::handle block_table, nb::handle schedule_meta, nb::handle logits, bool clean_logits,
                      nb::handle stream) {
  CallContext ctx;
  const TensorView tq = tensor_arg(q, "q", ctx, kArgFp8Bytes), cache = tensor_arg(kv_cache, "kv_cache", ctx),
                   tw = tensor_arg(weights, "weights", ctx), lens = tensor_arg(context_lens, "context_lens", ctx),
                   table = tensor_arg(block_table, "block_table", ctx),
                   meta = tensor_arg(schedule_meta, "schedule_meta", ctx), out = tensor_arg(logits, "logits", ctx);
  launch(ctx, stream, [&](cudaStream_t s) {
    fp8_paged_mqa_logits(tq, cache, tw, lens, table, meta, out, clean_logits, s);
  });
}

}  // namespace

void bind_mqa_logits(nb::module_& m) {
  m.def("fp8_mqa_logits", &mqa_logits, "q"_a, "kv"_a, "kv_sf"_a, "weights"_a, "cu_seq_len_k_start"_a,
        "cu_seq_len_k_end"_a, "logits"_a, "clean_logits"_a, "max_seqlen_k"_a, "stream"_a.none() = nb::none(),
        "Prefill indexer logits into `logits` [S, S_kv] (or [S, max_seqlen_k] compressed).");
  m.def("get_paged_mqa_logits_metadata", &paged_metadata, "context_lens"_a, "block_kv"_a, "schedule_meta"_a,
        "stream"_a.none() = nb::none(), "The paged indexer's schedule into `schedule_meta` [num_sms + 1, 2] int32.");
  m.def("fp8_paged_mqa_logits", &paged_mqa_logits, "q"_a, "kv_cache"_a, "weights"_a, "context_lens"_a,
        "block_table"_a, "schedule_meta"_a, "logits"_a, "clean_logits"_a, "stream"_a.none() = nb::none(),
        "Decode indexer logits into `logits` [B * next_n, max_context_len].");
  m.def("mqa_logits_row_stride", &mqa_logits_row_stride, "cols"_a, "bf16"_a,
        "Row stride (elements) of DeepGEMM's padded logits buffer for `cols` columns: a multiple of 1024 bytes.");
}

}  // namespace hopgemm::python
