// hopgemm precompile: build a suite's kernels ahead of time, in parallel, without a GPU.
#include <cstdio>
#include <string>

#include "cli.hpp"
#include "hopgemm/jit.hpp"

namespace hopgemm::cli {

int run_precompile(Args& args) {
  const std::string suite = args.take("suite", "deepseek-v3");
  const int num_sms = args.take_int("num-sms", 132, 1, 1024);
  const int jobs = args.take_int("jobs", 0, 0, 1024);
  args.expect_consumed();
  const std::string cache_dir = get_cache_dir();
  std::printf("precompiling suite '%s' for sm_90a, %d SMs, cache %s\n", suite.c_str(), num_sms, cache_dir.c_str());
  std::fflush(stdout);
  const PrecompileReport report = precompile_suite(suite, num_sms, jobs, /*show_progress=*/true);
  for (const auto& error : report.errors) std::fprintf(stderr, "error: %s\n", error.c_str());
  const int built = report.num_compiled + report.num_cached;
  std::printf("built %d of %d kernels (%d compiled, %d already cached) in %.2f s; %d stored in %s\n", built,
              report.num_kernels, report.num_compiled, report.num_cached, report.seconds, report.num_stored,
              cache_dir.c_str());
  if (report.num_stored < built) {
    std::printf("%d kernels could not be stored (the cache directory is not writable: see the warning above); they "
                "were compiled in memory only and are lost at exit\n",
                built - report.num_stored);
  }
  return report.errors.empty() ? 0 : 1;
}

}  // namespace hopgemm::cli
