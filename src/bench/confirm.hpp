#pragma once
// Picking the fastest of several candidates on a GPU whose speed drifts: re-time the close ones in rounds and
// rank them by time relative to each round's fastest (used by `hopgemm tune`).
#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

namespace hopgemm::bench {

struct ConfirmOptions {
  double within = 1.08;      // finalists: first pass within this factor of the fastest first pass
  size_t max_finalists = 8;  // at most this many (the fastest first)
  int rounds = 5;            // each finalist timed this many more times, one round taking turns
  // The current choice, when there is one: always a finalist (a late first pass on a heating GPU must not drop it),
  // and replaced only by a finalist whose score beats it by `incumbent_margin` (noise must not flip a table row: on
  // the suite's band re-timing a band that won the rounds by 4% read 1.3-2.5% slower in the next suite run).
  std::optional<size_t> incumbent;
  double incumbent_margin = 1.025;
};

struct Confirmed {
  size_t index = 0;   // the winner, into first_pass
  double us = 1e30;   // its median over the rounds
  double score = 0;   // its median over rounds of (its time / the round's fastest)
};

// One median of a sweep can be off by several percent, enough to crown the wrong candidate or drop the right one:
// the GPU slows as it heats under sustained load (H100, 2026-11-22: one config read 292 us late in a tune sweep and
// 271-272 us in separate runs; the same finalists read 3-12% slower in a third round than in a second, 16-21% on
// the largest GEMMs). Within a round, taking turns, they see nearly the same conditions, so ranking by the time
// relative to the round's fastest cancels the drift between rounds.
// first_pass[i]: candidate i's time in the sweep (1e30: refused); time(i) times it again. report(i, score, us,
// times) is called for every finalist (times: its first pass, then its rounds). Empty first_pass: index 0, us 1e30.
Confirmed confirm_fastest(const std::vector<double>& first_pass, const std::function<double(size_t)>& time,
                          const ConfirmOptions& options = {},
                          const std::function<void(size_t, double, double, const std::vector<double>&)>& report = {});

}  // namespace hopgemm::bench
