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
    for (int dim : {32, 64, 128}) sources.push_back(api::render_sm90_fp8_mqa_logits(mqa_logits_config(false, heads, dim, 128 / heads, false)));
    for (int next_n = 1; next_n <= 4; ++next_n) {
      sources.push_back(api::render_sm90_fp8_paged_mqa_logits(mqa_logits_config(true, heads, 128, next_n, false)));
    }
  }
  sources.push_back(api::render_sm90_fp8_mqa_logits(mqa_logits_config(false, 32, 128, 4, true)));
  sources.push_back(api::render_sm90_fp8_paged_mqa_logits(mqa_logits_config(true, 64, 32, 3, true)));
  sources.push_back(api::render_sm90_fp8_paged_mqa_logits(mqa_logits_config(true, 128, 64, 4, true)));
  testing::compile_all_clean(sources);
}

TEST(MqaLogitsKernels, PtxScoresSlabsWithOneWgmmaPerK32) {
  const auto source = api::render_sm90_fp8_mqa_logits(mqa_logits_config(false, 64, 128, 2, false));
  const std::string include = "-I" + jit::include_dir();
  const char* options[] = {"--gpu-architecture=sm_90a", "-std=c++20", "-default-device", include.c_str()};
  nvrtcProgram program = nullptr;
  ASSERT_EQ(nvrtcCreateProgram(&program, source.code.c_str(), "kernel.cu", 0, nullptr, nullptr), NVRTC_SUCCESS);
  ASSERT_EQ(nvrtcCompileProgram(program, 4, options), NVRTC_SUCCESS);
  size_t size = 0;
  nvrtcGetPTXSize(program, &size);
  std::string ptx(size, '\0');
  nvrtcGetPTX(program, ptx.data());
  nvrtcDestroyProgram(&program);
  size_t count = 0;
  for (size_t at = 0; (at = ptx.find("wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3", at)) != std::string::npos; ++at) ++count;
  EXPECT_EQ(count, 4u);  // head dim 128 = 4 x k32, one chunk of 2 queries x 64 heads
  EXPECT_NE(ptx.find("st.global.v4.f32"), std::string::npos);  // full-width -inf fill outside the KV range
  EXPECT_NE(ptx.find("setmaxnreg.inc.sync.aligned.u32 112"), std::string::npos);
}

}  // namespace
}  // namespace hopgemm
