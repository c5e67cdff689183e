#include "bench/confirm.hpp"

#include <algorithm>

#include "bench/timer.hpp"  // median

namespace hopgemm::bench {

Confirmed confirm_fastest(const std::vector<double>& first_pass, const std::function<double(size_t)>& time,
                          const ConfirmOptions& options,
                          const std::function<void(size_t, double, double, const std::vector<double>&)>& report) {
  if (first_pass.empty()) return {};
  std::vector<size_t> finalists(first_pass.size());
  for (size_t i = 0; i < finalists.size(); ++i) finalists[i] = i;
  std::stable_sort(finalists.begin(), finalists.end(),
                   [&](size_t x, size_t y) { return first_pass[x] < first_pass[y]; });
  const double cutoff = first_pass[finalists[0]] * options.within;
  while (finalists.size() > std::max<size_t>(options.max_finalists, 1) ||
         (finalists.size() > 1 && first_pass[finalists.back()] > cutoff)) {
    finalists.pop_back();
  }
  const bool has_incumbent = options.incumbent && *options.incumbent < first_pass.size();
  if (has_incumbent && std::find(finalists.begin(), finalists.end(), *options.incumbent) == finalists.end()) {
    finalists.push_back(*options.incumbent);
  }
  std::vector<std::vector<double>> times(finalists.size()), relative(finalists.size());
  for (size_t f = 0; f < finalists.size(); ++f) times[f].push_back(first_pass[finalists[f]]);
  for (int round = 0; round < options.rounds; ++round) {
    double fastest = 1e30;
    for (size_t f = 0; f < finalists.size(); ++f) fastest = std::min(fastest, times[f].emplace_back(time(finalists[f])));
    for (size_t f = 0; f < finalists.size(); ++f) relative[f].push_back(times[f].back() / fastest);
  }
  Confirmed best, incumbent;
  best.index = finalists[0];
  double best_score = 1e30;
  for (size_t f = 0; f < finalists.size(); ++f) {
    // Without rounds, the sweep's own time is all there is.
    const double score = options.rounds > 0 ? median(relative[f]) : times[f][0] / first_pass[finalists[0]];
    const double us = options.rounds > 0 ? median(std::vector<double>(times[f].begin() + 1, times[f].end())) : times[f][0];
    if (report) report(finalists[f], score, us, times[f]);
    if (score < best_score) {
      best_score = score;
      best = {finalists[f], us, score};
    }
    if (has_incumbent && finalists[f] == *options.incumbent) incumbent = {finalists[f], us, score};
  }
  if (has_incumbent && !(best.score * options.incumbent_margin < incumbent.score)) return incumbent;
  return best;
}

}  // namespace hopgemm::bench
