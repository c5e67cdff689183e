#pragma once
// Kernel sources of the indexer families (src/api/mqa_logits.cpp): rendering for their kernel caches, the config an op
// uses, and the set precompile builds (DeepSeek-V3.2's shapes: 64 heads of dim 128, next_n 1 and 2, FP32 and BF16
// logits, and the metadata kernel). Sizes are run-time parameters: one kernel serves every sequence length.
#include <vector>

#include "hopgemm/device/kernels/sm90_fp8_mqa_logits_types.cuh"
#include "jit/kernel_source.hpp"

namespace hopgemm::api {

jit::KernelSource render_sm90_fp8_mqa_logits(const device::Sm90MqaLogitsConfig& config);
jit::KernelSource render_sm90_fp8_paged_mqa_logits(const device::Sm90MqaLogitsConfig& config);
jit::KernelSource render_sm90_paged_mqa_logits_metadata(const device::Sm90PagedMqaMetadataConfig& config);

// The config of a call: prefill (tokens = device::mqa_prefill_tokens(heads)) or paged (tokens = next_n), the deepest KV
// ring that fits.
device::Sm90MqaLogitsConfig mqa_logits_config(bool paged, int heads, int head_dim, int tokens, bool bf16);

std::vector<jit::KernelSource> mqa_logits_suite_sources();

}  // namespace hopgemm::api
