// fp8_gemm_nt_skip_head_mid's kernels: the dense FP8 GEMM's config (what the heuristics pick for the plain GEMM of that
// M, N, K) with head splits, so only the epilogue's column map differs (epilogue/sm90_column_map.cuh). The configs of
// DeepGEMM's own test shapes and of an FP32 D compile for sm_90a under NVRTC without spills, and the config rule
// accepts exactly the head splits whose parts hold whole TMA store boxes of D.
#include <gtest/gtest.h>

#include <vector>

#include "api/gemm_sources.hpp"
#include "compile/compiled_kernel_checks.hpp"
#include "heuristics/sm90_fp8_gemm.hpp"

namespace hopgemm {
namespace {

device::Sm90Fp8GemmConfig with_head_splits(device::Sm90Fp8GemmConfig c, int left, int mid, int right) {
  c.head_left = left;
  c.head_mid = mid;
  c.head_right = right;
  return c;
}

// The plain GEMM's pick for m x n x k (1D2D, row-major scales as quantised, 132 SMs).
device::Sm90Fp8GemmConfig dense_pick(int64_t m, int64_t n, int64_t k, int out_dtype) {
  heuristics::Fp8GemmCall call;
  call.m = m;
  call.n = n;
  call.k = k;
  call.out_dtype = out_dtype;
  call.sfa.k_major = 1;
  const auto choice = heuristics::choose_fp8_gemm_config(heuristics::make_fp8_gemm_problem(call));
  EXPECT_GT(choice.num_tiles, 0);
  return choice.config;
}

TEST(SkipHeadMidKernels, DeepGemmShapesCompileWithNvrtc) {
  // DeepGEMM's test_gemm_skip_head_mid: head splits (128, 64, 128), M 128 / 4096, N 32768 / 8192, K 512; and an FP32 D
  // with 32-column parts, and a head of only right columns.
  std::vector<jit::KernelSource> sources;
  for (int64_t m : {128, 4096}) {
    for (int64_t n : {32768, 8192}) {
      const auto c = with_head_splits(dense_pick(m, n, 512, device::kOutBf16), 128, 64, 128);
      ASSERT_EQ(device::config_violation(c), nullptr) << device::config_violation(c);
      sources.push_back(api::render_sm90_fp8_gemm(c));
    }
  }
  for (auto [left, mid, right, out] : {std::tuple{32, 32, 64, device::kOutFp32}, {0, 64, 128, device::kOutBf16}}) {
    const auto c = with_head_splits(dense_pick(300, 3072, 1024, out), left, mid, right);
    ASSERT_EQ(device::config_violation(c), nullptr) << device::config_violation(c);
    sources.push_back(api::render_sm90_fp8_gemm(c));
  }
  testing::compile_all_clean(sources);
}

TEST(SkipHeadMidKernels, ConfigRuleTakesWholeStoreBoxes) {
  device::Sm90Fp8GemmConfig c;  // 128 x 128, BF16 D: 128-byte swizzle, boxes of 64 columns
  EXPECT_EQ(device::config_violation(with_head_splits(c, 128, 64, 128)), nullptr);
  EXPECT_EQ(device::config_violation(with_head_splits(c, 0, 64, 64)), nullptr);
  EXPECT_NE(device::config_violation(with_head_splits(c, 96, 64, 128)), nullptr);   // a box across left and mid
  EXPECT_NE(device::config_violation(with_head_splits(c, 128, 0, 128)), nullptr);   // no mid: no head splits at all
  EXPECT_NE(device::config_violation(with_head_splits(c, 0, 64, 0)), nullptr);      // heads of no columns
  c.block_n = 160;  // 320-byte rows: 64-byte swizzle, boxes of 32 columns
  EXPECT_EQ(device::config_violation(with_head_splits(c, 96, 32, 32)), nullptr);
  c.block_n = 128;
  c.accumulate = 1;  // skip_head_mid takes no C
  c.out_dtype = device::kOutFp32;
  EXPECT_NE(device::config_violation(with_head_splits(c, 128, 64, 128)), nullptr);
}

}  // namespace
}  // namespace hopgemm
