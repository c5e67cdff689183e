// tf32_hc_prenorm_gemm's kernels (kernels/sm90_tf32_hc_prenorm_gemm.cuh): both widths (N up to 16, up to 32) compile
// for sm_90a under NVRTC without spills, and the TF32 WGMMA with A from registers is in their PTX form.
#include <gtest/gtest.h>

#include <vector>

#include "api/hc_prenorm_internal.hpp"
#include "compile/compiled_kernel_checks.hpp"

namespace hopgemm {
namespace {

TEST(HcPrenormKernels, BothWidthsCompileWithNvrtc) {
  std::vector<jit::KernelSource> sources;
  for (int block_n : {16, 32}) {
    const device::Sm90HcPrenormConfig c{.block_n = block_n, .num_stages = 12};
    ASSERT_TRUE(device::is_valid(c));
    sources.push_back(api::render_sm90_hc_prenorm(c));
  }
  testing::compile_all_clean(sources);
  EXPECT_FALSE(device::is_valid(device::Sm90HcPrenormConfig{.block_n = 24, .num_stages = 12}));
  EXPECT_FALSE(device::is_valid(device::Sm90HcPrenormConfig{.block_n = 32, .num_stages = 16}));  // 262 KB
}

}  // namespace
}  // namespace hopgemm
