// The scale-factor layout and FP8 quantisation kernels: every config the suites use (plus the other
// granularities) compiles for sm_90a under NVRTC without spills, and the PTX of the quantiser holds the
// exactly-rounded instructions its bit-exactness rests on (no .ftz, no approximate division, no FMA).
#include <gtest/gtest.h>
#include <nvrtc.h>

#include <set>
#include <string>
#include <vector>

#include "api/suite_sources.hpp"
#include "compile/compiled_kernel_checks.hpp"
#include "jit/compiler.hpp"

namespace hopgemm {
namespace {

// Distinct sources, compiled on every core through the compile tests' disk cache without spills.
void compile_all(const std::vector<jit::KernelSource>& sources) {
  std::set<std::string> distinct;
  for (const auto& s : sources) EXPECT_TRUE(distinct.insert(s.code).second) << "duplicate source " << s.code;
  testing::compile_all_clean(sources);
}

TEST(LayoutKernels, SuiteConfigsCompileWithNvrtc) {
  const auto sources = api::layout_suite_sources();
  EXPECT_EQ(sources.size(), 3u);
  compile_all(sources);
}

TEST(QuantizeKernels, SuiteConfigsCompileWithNvrtc) {
  const auto sources = api::quantize_suite_sources();
  EXPECT_EQ(sources.size(), 12u);
  compile_all(sources);
}

TEST(QuantizeKernels, OtherGranularitiesCompileWithNvrtc) {
  std::vector<jit::KernelSource> sources;
  for (auto c : api::quantize_suite_configs()) {
    for (int gran : {32, 64}) {
      c.gran = gran;
      sources.push_back(api::render_sm90_quantize_fp8(c));
    }
  }
  compile_all(sources);
}

// PTX of one rendered source, compiled the way the JIT does (sm_90a, C++20, -default-device).
std::string ptx_of(const jit::KernelSource& source) {
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

TEST(QuantizeKernels, PtxUsesExactlyRoundedInstructions) {
  const auto configs = api::quantize_suite_configs();
  std::vector<std::string> ptxs(configs.size());
  testing::parallel_for(configs.size(), [&](size_t i) { ptxs[i] = ptx_of(api::render_sm90_quantize_fp8(configs[i])); });
  for (size_t i = 0; i < configs.size(); ++i) {
    const auto& c = configs[i];
    const std::string& ptx = ptxs[i];
    SCOPED_TRACE(api::render_sm90_quantize_fp8(c).code);
    EXPECT_NE(ptx.find("max.NaN.f32"), std::string::npos);  // NaN-propagating amax (torch.amax semantics)
    EXPECT_NE(ptx.find("cvt.rn.satfinite.e4m3x2.f32"), std::string::npos);
    EXPECT_NE(ptx.find("rcp.rn.f32"), std::string::npos);   // IEEE 1 / sf
    EXPECT_NE(ptx.find("mul.rn.f32"), std::string::npos);   // IEEE x * inv, never contracted
    EXPECT_EQ(ptx.find(".ftz"), std::string::npos);
    EXPECT_EQ(ptx.find("fma.rn.f32"), std::string::npos);
    EXPECT_EQ(ptx.find(".approx"), std::string::npos);
    if (c.kind == device::kQuantPerToken || c.kind == device::kQuantPerBlock) {
      EXPECT_NE(ptx.find("ld.global.nc.L1::no_allocate.v4.u32"), std::string::npos);  // 16-byte loads
    }
  }
}

}  // namespace
}  // namespace hopgemm
