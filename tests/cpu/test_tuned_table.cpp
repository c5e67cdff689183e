// Every row of the tuning table (src/heuristics/sm90_fp8_gemm_tuned.inc) is what the op runs, as stored, for its
// problem when it is called the way the row was measured: the problem built by the API's own validation
// (api::fp8_gemm_problem) from the tensors the suites and `hopgemm tune` pass (row-major scales contiguous, MN-major
// ones TMA-aligned, C aliasing D when accumulating), so the lookup sees every field the op fills in, sf_rows_tma
// included. A row the op cannot reach falls back to the model silently; this test names it.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <fstream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "api/gemm_internal.hpp"
#include "cpu/validation_matrix.hpp"
#include "heuristics/sm90_fp8_gemm.hpp"
#include "hopgemm/gemm.hpp"
#include "hopgemm/layout.hpp"
#include "runtime/pod_key.hpp"

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

TEST(TunedTable, EveryRowIsRunAsStoredForItsProblemAsTheOpBuildsIt) {
  ASSERT_FALSE(heuristics::tuned_fp8_gemm_table().empty());
  using ConfigKey = runtime::PodKey<device::Sm90Fp8GemmConfig>;
  std::set<std::tuple<int64_t, int64_t, int64_t, int, int, int, int, int, int, int>> problems;
  for (const TunedFp8GemmEntry& e : heuristics::tuned_fp8_gemm_table()) {
    const testing::ScopedNumSms sms(e.num_sms);
    const heuristics::Fp8GemmProblem p = problem_as_called(e);
    SCOPED_TRACE(heuristics::describe(p));
    EXPECT_TRUE(problems.insert({e.m, e.n, e.k, e.recipe, e.out_dtype, e.accumulate, e.sfa_k_major, e.sfb_k_major,
                                 e.sf_rows_tma, e.num_sms})
                    .second)
        << "a problem listed twice: the first row wins";
    ASSERT_EQ(p.recipe, e.recipe);
    ASSERT_EQ(p.accumulate, e.accumulate);
    ASSERT_EQ(p.sfa_k_major, e.sfa_k_major);
    ASSERT_EQ(p.sfb_k_major, e.sfb_k_major);
    if (p.sf_rows_tma != e.sf_rows_tma) {
      ADD_FAILURE() << "the row is unreachable (sf_rows_tma " << e.sf_rows_tma << "): the op falls back to the model";
      continue;
    }
    const auto choice = heuristics::choose_fp8_gemm_config(p);
    const auto& c = choice.config;
    EXPECT_TRUE(ConfigKey{c} == ConfigKey{e.config}) << heuristics::describe(choice);
    EXPECT_EQ(choice.launch.raster_band, e.raster_band);
    // Valid, and fitting the problem the way fp8_gemm_nt_with_config checks a config.
    EXPECT_TRUE(device::is_valid(c)) << device::config_violation(c);
    EXPECT_EQ(c.recipe, p.recipe);
    EXPECT_EQ(c.out_dtype, p.out_dtype);
    EXPECT_EQ(c.accumulate, p.accumulate);
    EXPECT_EQ(c.sfa_k_major, p.sfa_k_major);
    if (p.recipe == device::kRecipe1D1D) EXPECT_EQ(c.sfb_k_major, p.sfb_k_major);
    EXPECT_TRUE(c.sf_chunks == 0 || p.sf_rows_tma == 1);
    EXPECT_TRUE(device::k_splits_fit(p.k, c.k_splits));
    EXPECT_GE(e.raster_band, 1);
  }
}

// What `hopgemm tune` writes for a row's problem and the op's choice is the row itself, so the writer and the table
// agree on the format (field order included) and merge_tuned.py's rows are the ones the table holds.
TEST(TunedTable, TuneWritesEachRowAsTheTableHoldsIt) {
  std::ifstream file(HOPGEMM_SOURCE_DIR "/src/heuristics/sm90_fp8_gemm_tuned.inc");
  ASSERT_TRUE(file) << "cannot read the table's source";
  std::vector<std::string> rows;
  for (std::string line; std::getline(file, line);) {
    const size_t start = line.find_first_not_of(' ');
    if (start != std::string::npos && line[start] == '{') rows.push_back(line.substr(start, line.find("  //") - start));
  }
  const auto table = heuristics::tuned_fp8_gemm_table();
  ASSERT_EQ(rows.size(), table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    const testing::ScopedNumSms sms(table[i].num_sms);
    const heuristics::Fp8GemmProblem p = problem_as_called(table[i]);
    EXPECT_EQ(heuristics::tuned_fp8_gemm_row(p, heuristics::choose_fp8_gemm_config(p)), rows[i]);
  }
}

}  // namespace
}  // namespace hopgemm
