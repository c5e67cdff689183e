// Warm-up (include/hopgemm/warmup.hpp) against the ops: after warming up a dense GEMM for every token count up to a
// bound, each fp8_gemm_nt call in that range finds its kernel in the disk cache under error_on_miss (it gets past the
// kernel lookup and stops only at loading, which needs a GPU) and a call that was not warmed up is refused as a miss;
// the M-grouped GEMMs' problems likewise. Also the shape syntax and a model's GEMMs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "cpu/validation_matrix.hpp"
#include "hopgemm/gemm.hpp"
#include "hopgemm/grouped_gemm.hpp"
#include "hopgemm/jit.hpp"
#include "hopgemm/layout.hpp"
#include "hopgemm/warmup.hpp"
#include "api/gemm_sources.hpp"
#include "heuristics/sm90_fp8_gemm.hpp"
#include "jit/compiler.hpp"
#include "jit/disk_cache.hpp"

namespace hopgemm {
namespace {

using testing::fake_address;

constexpr int kNumSms = 132;

// A private cache directory, error_on_miss and an SM count (no GPU to ask), restored afterwards.
class WarmupScope : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("hopgemm_warmup_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    set_cache_dir(dir_.string());
    before_ = get_jit_policy();
    set_num_sms(kNumSms);
  }
  void TearDown() override {
    set_jit_policy(before_);
    set_num_sms(0);
    set_cache_dir("");
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  static WarmupOptions options(int64_t max_tokens, WarmupScales scales) {
    WarmupOptions o;
    o.max_tokens = max_tokens;
    o.num_sms = kNumSms;
    o.scales = scales;
    o.utility_kernels = false;
    return o;
  }

  std::filesystem::path dir_;
  JitPolicy before_ = JitPolicy::kAllow;
};

// Runs `call`, which must get past the kernel lookup: any error but a cache miss (a load without a GPU fails later).
template <class Call>
bool finds_its_kernel(Call call, std::string& message) {
  try {
    call();
    return true;  // a GPU ran it
  } catch (const Error& e) {
    message = e.what();
    return message.find("is not in the kernel cache") == std::string::npos;
  }
}

void dense_call(int64_t m, int64_t n, int64_t k, bool sfa_mn_major, DType out = DType::kBFloat16) {
  const int64_t sf_k = (k + 127) / 128, aligned_m = (m + 3) / 4 * 4;
  const TensorView sfa = sfa_mn_major ? make_tensor(fake_address(1), DType::kFloat32, {m, sf_k}, {1, aligned_m})
                                      : make_tensor(fake_address(1), DType::kFloat32, {m, sf_k});
  fp8_gemm_nt(make_tensor(fake_address(0), DType::kFloat8E4M3, {m, k}), sfa,
              make_tensor(fake_address(2), DType::kFloat8E4M3, {n, k}),
              make_tensor(fake_address(3), DType::kFloat32, {(n + 127) / 128, sf_k}),
              make_tensor(fake_address(4), out, {m, n}), nullptr, {}, nullptr);
}

TEST_F(WarmupScope, EveryDenseCallUpToTheBoundFindsItsKernel) {
  constexpr int64_t kN = 512, kK = 1024, kMax = 300;
  const PrecompileReport report = warmup({parse_warmup_gemm("*x512x1024")}, options(kMax, WarmupScales::kBoth));
  ASSERT_TRUE(report.errors.empty()) << report.errors.front();
  EXPECT_EQ(report.num_stored, report.num_kernels);
  EXPECT_EQ(plan_warmup({parse_warmup_gemm("*x512x1024")}, options(kMax, WarmupScales::kBoth)).problems, 2 * kMax);

  set_jit_policy(JitPolicy::kErrorOnMiss);
  for (int64_t m = 1; m <= kMax; ++m) {
    for (bool mn_major : {true, false}) {
      std::string message;
      EXPECT_TRUE(finds_its_kernel([&] { dense_call(m, kN, kK, mn_major); }, message)) << "M = " << m << ": " << message;
    }
  }
  // Beyond what was warmed up (FP32 D: other kernels): a miss, refused.
  std::string message;
  EXPECT_FALSE(finds_its_kernel([&] { dense_call(64, kN, kK, true, DType::kFloat32); }, message)) << message;
}

// The M-grouped ops encode their tensor maps (which needs a driver) before they look their kernel up, so here each call's
// problem comes from the builder the ops use (heuristics::make_m_grouped_problem, as in src/api/grouped_gemm.cpp), its
// kernel from the heuristics, and the disk cache must hold it.
bool grouped_kernel_cached(int grouping, int64_t rows_per_group, int64_t n, int64_t k, int64_t groups, int align,
                           int sfa_k_major = 0) {
  const auto choice = heuristics::choose_fp8_gemm_config(heuristics::make_m_grouped_problem(
      grouping, rows_per_group, n, k, groups, sfa_k_major, align, kNumSms, get_tc_util()));
  return jit::disk_cache_contains(api::render_sm90_fp8_gemm(choice.config), jit::default_compiler());
}

TEST_F(WarmupScope, EveryGroupedProblemUpToTheBoundIsCached) {
  constexpr int64_t kG = 4, kN = 256, kK = 512;
  const int align = get_mk_alignment_for_contiguous_layout();
  const int64_t max_rows = 8 * align;
  const PrecompileReport report = warmup({parse_warmup_gemm("m-grouped:4x*x256x512"), parse_warmup_gemm("masked:4x*x256x512")},
                                         options(max_rows, WarmupScales::kMnMajor));
  ASSERT_TRUE(report.errors.empty()) << report.errors.front();
  // Contiguous, group ids: M_sum a multiple of the alignment, the op's expected rows per group ceil(M_sum / G).
  for (int64_t rows = align; rows <= max_rows; rows += align) {
    EXPECT_TRUE(grouped_kernel_cached(device::kGroupingMIds, (rows + kG - 1) / kG, kN, kK, kG, align)) << rows;
  }
  // Masked: every expected_m.
  for (int64_t expected_m = 1; expected_m <= max_rows; ++expected_m) {
    EXPECT_TRUE(grouped_kernel_cached(device::kGroupingMRanges, expected_m, kN, kK, kG, 0)) << expected_m;
  }
  // Row-major A scales were not warmed up: their kernel is missing.
  EXPECT_FALSE(grouped_kernel_cached(device::kGroupingMIds, align, kN, kK, kG, align, /*sfa_k_major=*/1));
}

TEST(WarmupShapes, ParseAndPrint) {
  EXPECT_EQ(to_string(parse_warmup_gemm("*x2112x7168")), "gemm:*x2112x7168");
  EXPECT_EQ(to_string(parse_warmup_gemm("dgrad:64x7168x2112")), "gemm:64x7168x2112");
  EXPECT_EQ(to_string(parse_warmup_gemm("wgrad:7168x2112x0")), "wgrad:7168x2112x*");
  EXPECT_EQ(to_string(parse_warmup_gemm("m-grouped-psum:8x*x4096x7168")), "m-grouped-psum:8x*x4096x7168");
  EXPECT_EQ(to_string(parse_warmup_gemm("k-grouped:8x7168x2048x*")), "k-grouped:8x7168x2048x*");
  for (const char* bad : {"*x2112", "dense:*x64x128", "masked:*x64x128", "*x64x100", "*x60x128", "gemm:*x*x128",
                          "wgrad:*x64x128", "-1x64x128", "m-grouped:0x*x64x128"}) {
    EXPECT_THROW(parse_warmup_gemm(bad), Error) << bad;
  }
}

// The problems each op's token dimension runs over: M = 1..max; wgrad's K over the multiples of 16; masked's expected
// rows 1..max; k-grouped's every count of non-empty groups with every total K (multiples of 128) that count allows.
TEST(WarmupShapes, ProblemsPerTokenDimension) {
  WarmupOptions o;
  o.num_sms = kNumSms;
  o.utility_kernels = false;
  o.max_tokens = 256;
  auto problems = [&](const char* shape) { return plan_warmup({parse_warmup_gemm(shape)}, o).problems; };
  EXPECT_EQ(problems("*x512x1024"), 256);
  EXPECT_EQ(problems("64x512x1024"), 1);
  EXPECT_EQ(problems("wgrad:512x256x*"), 256 / 16);
  EXPECT_EQ(problems("masked:4x*x256x512"), 256);
  o.max_tokens = 1024;
  EXPECT_EQ(problems("k-grouped:4x256x512x*"), 8 + 7 + 6 + 5);
  o.scales = WarmupScales::kBoth;
  EXPECT_EQ(problems("wgrad:512x256x*"), 1024 / 16 * 4);  // both layouts of A's and of B's per-row scales
  EXPECT_EQ(problems("*x512x1024"), 1024 * 2);
}

TEST(WarmupModels, DeepSeekV3OnEightRanks) {
  ModelDeployment deployment;
  deployment.tp = 8;
  deployment.ep = 8;
  std::vector<std::string> gemms;
  for (const auto& g : model_gemms(model_preset("deepseek-v3"), deployment)) gemms.push_back(to_string(g));
  // MLA's fused down-projection, q_b, kv_b, o_proj; the dense and shared-expert MLPs; 32 local experts each way.
  const std::vector<std::string> expected = {
      "gemm:*x2112x7168", "gemm:*x3072x1536", "gemm:*x4096x512", "gemm:*x7168x2048", "gemm:*x4608x7168",
      "gemm:*x7168x2304", "gemm:*x512x7168", "gemm:*x7168x256", "m-grouped:32x*x4096x7168", "masked:32x*x4096x7168",
      "m-grouped:32x*x7168x2048", "masked:32x*x7168x2048"};
  EXPECT_EQ(gemms, expected);
  deployment.tp = 3;
  EXPECT_THROW(model_gemms(model_preset("deepseek-v3"), deployment), Error);  // 128 heads do not split over 3
}

}  // namespace
}  // namespace hopgemm
