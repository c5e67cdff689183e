// Every row of the tuning table (src/heuristics/sm90_fp8_gemm_tuned.inc) is what the op runs for its problem when it is
// called the way the row was measured: the problem built by the API's own validation (api::fp8_gemm_problem) from the
// tensors the suites and `hopgemm tune` pass (row-major scales contiguous, MN-major ones TMA-aligned, C aliasing D when
// accumulating), so the table lookup sees every field the op fills in, sf_rows_tma included. A row the op cannot reach
// falls back to the model silently; this test names it.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>

#include "api/gemm_internal.hpp"
#include "cpu/validation_matrix.hpp"
#include "heuristics/sm90_fp8_gemm.hpp"
#include "hopgemm/gemm.hpp"
#include "hopgemm/layout.hpp"

namespace hopgemm {
namespace {

using heuristics::TunedFp8GemmEntry;
using testing::fake_address;

// [rows, sf_k] FP32 scales: row-major contiguous (k_major) or MN-major TMA-aligned.
TensorView scales(int region, int64_t rows, int64_t sf_k, int k_major) {
  if (k_major) return make_tensor(fake_address(region), DType::kFloat32, {rows, sf_k});
  return make_tensor(fake_address(region), DType::kFloat32, {rows, sf_k}, {1, get_tma_aligned_size(rows, 4)});
}

heuristics::Fp8GemmProblem problem_as_called(const TunedFp8GemmEntry& e) {
  const int64_t sf_k = (e.k + 127) / 128;
  const bool is_1d1d = e.recipe == device::kRecipe1D1D;
  const TensorView a = make_tensor(fake_address(0), DType::kFloat8E4M3, {e.m, e.k});
  const TensorView b = make_tensor(fake_address(2), DType::kFloat8E4M3, {e.n, e.k});
  const TensorView sfa = scales(1, e.m, sf_k, e.sfa_k_major);
  const TensorView sfb = is_1d1d ? scales(3, e.n, sf_k, e.sfb_k_major) : scales(3, (e.n + 127) / 128, sf_k, 1);
  const TensorView d = make_tensor(fake_address(4), e.out_dtype == device::kOutFp32 ? DType::kFloat32 : DType::kBFloat16,
                                   {e.m, e.n});
  GemmOptions options;
  options.recipe = is_1d1d ? std::array<int, 3>{1, 1, 128} : std::array<int, 3>{1, 128, 128};
  return api::fp8_gemm_problem(a, sfa, b, sfb, d, e.accumulate ? &d : nullptr, options);
}

TEST(TunedTable, EveryEntryIsChosenForItsProblemAsTheOpBuildsIt) {
  ASSERT_FALSE(heuristics::tuned_fp8_gemm_table().empty());
  for (const TunedFp8GemmEntry& e : heuristics::tuned_fp8_gemm_table()) {
    const testing::ScopedNumSms sms(e.num_sms);
    const heuristics::Fp8GemmProblem p = problem_as_called(e);
    SCOPED_TRACE(heuristics::describe(p));
    ASSERT_EQ(p.recipe, e.recipe);
    ASSERT_EQ(p.accumulate, e.accumulate);
    ASSERT_EQ(p.sfa_k_major, e.sfa_k_major);
    if (!heuristics::tuned_fp8_gemm_choice(p)) {
      ADD_FAILURE() << "the table's entry is unreachable: the op falls back to the model";
      continue;
    }
    const auto choice = heuristics::choose_fp8_gemm_config(p);
    const auto& c = choice.config;
    EXPECT_TRUE(heuristics::same_tile(c, e)) << heuristics::describe(choice);
    // As many stages as fit: what tune measured, or more where the shared-memory layout has since shrunk.
    EXPECT_GE(c.num_stages, e.num_stages);
    EXPECT_EQ(c.num_stages, heuristics::max_stages(c));
    EXPECT_TRUE(device::is_valid(c)) << device::config_violation(c);
  }
}

}  // namespace
}  // namespace hopgemm
