// bench::confirm_fastest: which candidates become finalists, and that ranking by time relative to each round's
// fastest picks the truly fastest candidate through drift between rounds and a misread sweep.
#include <gtest/gtest.h>

#include <vector>

#include "bench/confirm.hpp"

namespace {

using hopgemm::bench::confirm_fastest;
using hopgemm::bench::ConfirmOptions;

TEST(BenchConfirm, FinalistsAreTheCloseOnesUpToTheCap) {
  const std::vector<double> sweep = {100, 130, 104, 107, 109, 1e30, 101};
  std::vector<size_t> timed;
  const auto winner = confirm_fastest(sweep, [&](size_t i) {
    timed.push_back(i);
    return sweep[i];
  });
  // Within 8% of 100: 100, 101, 104, 107 (not 109, 130, or the refused one); each timed in 5 rounds.
  EXPECT_EQ(timed.size(), 4u * 5u);
  for (size_t i : timed) EXPECT_TRUE(i == 0 || i == 6 || i == 2 || i == 3) << i;
  EXPECT_EQ(winner.index, 0u);
  EXPECT_DOUBLE_EQ(winner.us, 100);
  EXPECT_DOUBLE_EQ(winner.score, 1.0);

  ConfirmOptions two;
  two.max_finalists = 2;
  timed.clear();
  confirm_fastest(sweep, [&](size_t i) {
    timed.push_back(i);
    return sweep[i];
  }, two);
  for (size_t i : timed) EXPECT_TRUE(i == 0 || i == 6) << i;
}

TEST(BenchConfirm, RankingCancelsDriftBetweenRounds) {
  // True times: candidate 1 is 3% faster than candidate 0. The sweep misread candidate 1 by 7% (it ran later, on
  // a warmer GPU), and every round runs at a different speed (up to 20% slower), but within a round both see the
  // same conditions.
  const std::vector<double> truth = {100, 97};
  const std::vector<double> sweep = {100, 103.8};
  const double round_factor[] = {1.0, 1.12, 1.2, 1.05, 1.15};
  size_t call = 0;
  const auto winner = confirm_fastest(sweep, [&](size_t i) { return truth[i] * round_factor[call++ / 2]; });
  EXPECT_EQ(call, 10u);
  EXPECT_EQ(winner.index, 1u);
  EXPECT_NEAR(winner.score, 1.0, 1e-12);
  EXPECT_NEAR(winner.us, 97 * 1.12, 1e-9);  // the median round (factors sorted: 1.0 1.05 1.12 1.15 1.2)
}

TEST(BenchConfirm, IncumbentKeptUnlessBeatenByTheMargin) {
  // The incumbent (index 0) read 10% slow in the sweep (the GPU heating): it stays a finalist all the same.
  const std::vector<double> sweep = {110, 100, 100.5};
  ConfirmOptions keep;
  keep.incumbent = 0;
  // 0.5% faster in every round: within the 2.5% margin, the incumbent stays.
  std::vector<double> truth = {100.5, 100, 101};
  size_t calls = 0;
  auto winner = confirm_fastest(sweep, [&](size_t i) { ++calls; return truth[i]; }, keep);
  EXPECT_EQ(calls, 15u);
  EXPECT_EQ(winner.index, 0u);
  EXPECT_DOUBLE_EQ(winner.us, 100.5);
  // 3% faster: replaced.
  truth = {103, 100, 101};
  winner = confirm_fastest(sweep, [&](size_t i) { return truth[i]; }, keep);
  EXPECT_EQ(winner.index, 1u);
  // Without an incumbent the sweep's cut-off drops the slow first pass.
  calls = 0;
  winner = confirm_fastest({120, 100}, [&](size_t i) { ++calls; return truth[i]; });
  EXPECT_EQ(calls, 5u);
}

TEST(BenchConfirm, EdgeCases) {
  EXPECT_GE(confirm_fastest({}, [](size_t) { return 1.0; }).us, 1e30);
  const auto one = confirm_fastest({50}, [](size_t) { return 60.0; });
  EXPECT_EQ(one.index, 0u);
  EXPECT_DOUBLE_EQ(one.us, 60);
  ConfirmOptions none;
  none.rounds = 0;
  const auto sweep_only = confirm_fastest({50, 40}, [](size_t) -> double { ADD_FAILURE(); return 0; }, none);
  EXPECT_EQ(sweep_only.index, 1u);
  EXPECT_DOUBLE_EQ(sweep_only.us, 40);
  // Every candidate refused: nothing to pick.
  EXPECT_GE(confirm_fastest({1e30, 1e30}, [](size_t) { return 1e30; }).us, 1e30);
}

}  // namespace
