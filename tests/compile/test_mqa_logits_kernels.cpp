// The indexer kernels (prefill, paged, schedule metadata) compile for sm_90a under NVRTC without spills or a stack
// frame over the shapes they support beyond DeepGEMM (heads 32/64/128, head dim 32/64/128, next_n 1..4, FP32 and BF16
// logits), and the PTX holds the WGMMA shape the slab scoring rests on (m64 n128 k32 with 128 columns of Q).
#include <gtest/gtest.h>
#include <nvrtc.h>

#include <string>
#include <vector>

#include "api/mqa_logits_sources.hpp"
#include "compile/compiled_kernel_checks.hpp"
#include "jit/compiler.hpp"

namespace hopgemm {
namespace {

using api::mqa_logits_config;

TEST(MqaLogitsKernels, SuiteCompilesWithNvrtc) {
  const auto sources = api::mqa_logits_suite_sources();
  EXPECT_EQ(sources.size(), 7u);
  testing::compile_all_clean(sources);
}

TEST(MqaLogitsKernels, EveryHeadCountAndHeadDimCompile) {
  std::vector<jit::KernelSource> sources;
  for (int heads : {32, 64, 128}) {
    for (int dim : {32, 64, 128}) {
      // The op's unit (two 128-row chunks where the heads allow) and DeepGEMM's (one chunk: 128 / heads tokens).
      sources.push_back(api::render_sm90_fp8_mqa_logits(mqa_logits_config(false, heads, dim, device::mqa_prefill_tokens(heads), false)));
      if (128 / heads != device::mqa_prefill_tokens(heads)) {
        sources.push_back(api::render_sm90_fp8_mqa_logits(mqa_logits_config(false, heads, dim, 128 / heads, false)));
      }
    }
    for (int next_n = 1; next_n <= 4; ++next_n) {
      sources.push_back(api::render_sm90_fp8_paged_mqa_logits(mqa_logits_config(true, heads, 128, next_n, false)));
    }
  }
  sources.push_back(api::render_sm90_fp8_mqa_logits(mqa_logits_config(false, 32, 128, 4, true)));
  sources.push_back(api::render_sm90_fp8_paged_mqa_logits(mqa_logits_config(true, 64, 32, 3, true)));
  sources.push_back(api::render_sm90_fp8_paged_mqa_logits(mqa_logits_config(true, 128, 64, 4, true)));
  testing::compile_all_clean(sources);
}

// The PTX of a prefill kernel with `tokens` query tokens of 64 heads, head dim 128.
std::string prefill_ptx(int tokens) {
  const auto source = api::render_sm90_fp8_mqa_logits(mqa_logits_config(false, 64, 128, tokens, false));
  const std::string include = "-I" + jit::include_dir();
  const char* options[] = {"--gpu-architecture=sm_90a", "-std=c++20", "-default-device", include.c_str()};
  nvrtcProgram program = nullptr;
  EXPECT_EQ(nvrtcCreateProgram(&program, source.code.c_str(), "kernel.cu", 0, nullptr, nullptr), NVRTC_SUCCESS);
  EXPECT_EQ(nvrtcCompileProgram(program, 4, options), NVRTC_SUCCESS);
  size_t size = 0;
  nvrtcGetPTXSize(program, &size);
  std::string ptx(size, '\0');
  nvrtcGetPTX(program, ptx.data());
  nvrtcDestroyProgram(&program);
  return ptx;
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = 0; (at = text.find(what, at)) != std::string::npos; ++at) ++count;
  return count;
}

TEST(MqaLogitsKernels, PtxScoresSlabsWithOneWgmmaPerK32) {
  const std::string wgmma = "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3";
  const std::string one_chunk = prefill_ptx(2);
  EXPECT_EQ(count_of(one_chunk, wgmma), 4u);  // head dim 128 = 4 x k32, one chunk of 2 queries x 64 heads
  EXPECT_NE(one_chunk.find("st.global.v4.f32"), std::string::npos);  // full-width -inf fill outside the KV range
  EXPECT_NE(one_chunk.find("setmaxnreg.inc.sync.aligned.u32 104"), std::string::npos);
  // The op's unit at 64 heads: 4 queries, two chunks of 128 Q rows over each slab.
  ASSERT_EQ(device::mqa_prefill_tokens(64), 4);
  EXPECT_EQ(count_of(prefill_ptx(4), wgmma), 8u);
}

}  // namespace
}  // namespace hopgemm
