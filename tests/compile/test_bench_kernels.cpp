// The benchmark's own device kernel (the L2 sweep of the clean flush) compiles for sm_90a under NVRTC.
#include <gtest/gtest.h>

#include "bench/timer.hpp"
#include "compile/compiled_kernel_checks.hpp"
#include "jit/compiler.hpp"

namespace hopgemm {
namespace {

TEST(BenchKernels, L2SweepCompilesWithNvrtc) {
  const auto s = bench::render_l2_sweep({});
  const auto k = jit::make_nvrtc_compiler()->compile(s, "");
  testing::expect_clean(k, s);
}

}  // namespace
}  // namespace hopgemm
