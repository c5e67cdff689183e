// hopgemm precompile: build a suite's kernels ahead of time, in parallel, without a GPU.
#include <cstdio>
#include <string>

#include "cli.hpp"
#include "hopgemm/jit.hpp"

namespace hopgemm::cli {

int run_precompile(Args& args) {
  const std::string suite = args.take("suite", "deepseek-v3");
  const int num_sms = args.take_int("num-sms", 132);
  const int jobs = args.take_int("jobs", 0);
  args.expect_consumed();
  std::printf("precompiling suite '%s' for sm_90a, %d SMs, cache %s\n", suite.c_str(), num_sms, get_cache_dir().c_str());
  std::fflush(stdout);
  const PrecompileReport report = precompile_suite(suite, num_sms, jobs, /*show_progress=*/true);
  for (const auto& error : report.errors) std::fprintf(stderr, "error: %s\n", error.c_str());
  std::printf("built %d kernels (%d compiled, %d already cached) in %.2f s\n", report.num_kernels, report.num_compiled,
              report.num_cached, report.seconds);
  return report.errors.empty() ? 0 : 1;
}

}  // namespace hopgemm::cli
