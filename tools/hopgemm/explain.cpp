// hopgemm explain: the kernel configuration the op would choose for each shape, and why, without a GPU: the tuned
// table's entry where one matches, else the cost model's ranking (its best candidates with predicted times).
#include <cstdio>
#include <optional>
#include <string>

#include "api/gemm_sources.hpp"
#include "cli.hpp"
#include "gemm_inputs.hpp"
#include "heuristics/sm90_fp8_gemm.hpp"

namespace hopgemm::cli {

int run_explain(Args& args) {
  const std::string suite = args.take("suite", "deepseek-v3");
  const std::string shape = args.take("shape");
  const std::string role = args.take("role");
  const bool mn_major_sfa = take_sfa_mn_major(args);
  const int num_sms = args.take_int("num-sms", 132, 1, 1024);
  const int top = args.take_int("top", 5, 0, 1000);
  args.expect_consumed();
  const int k_major = mn_major_sfa ? 0 : 1;  // the layouts `hopgemm bench` and `tune` hand the op
  for (const auto& s : gemm_shapes(suite, shape, role)) {
    const heuristics::Fp8GemmProblem p = api::suite_gemm_problem({s.role, s.m, s.n, s.k}, num_sms, k_major, k_major);
    const std::optional<heuristics::Fp8GemmChoice> tuned = heuristics::tuned_fp8_gemm_choice(p);
    const heuristics::Fp8GemmChoice choice = tuned ? *tuned : heuristics::choose_fp8_gemm_config(p);
    std::printf("%s %lldx%lldx%lld: %s [%s]\n", api::gemm_role_name(s.role), (long long)s.m, (long long)s.n,
                (long long)s.k, heuristics::describe(choice).c_str(), tuned ? "tuned" : "model");
    const auto ranked = heuristics::rank_fp8_gemm_configs(p, static_cast<size_t>(top));
    for (size_t i = 0; i < ranked.size(); ++i) std::printf("  model #%zu: %s\n", i + 1, heuristics::describe(ranked[i]).c_str());
  }
  return 0;
}

}  // namespace hopgemm::cli
