// hopgemm precompile: build kernels ahead of time, in parallel, without a GPU: an embedded suite, or warm-up for a
// model or the user's own shapes (every token count up to --max-tokens).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "api/suite_sources.hpp"
#include "cli.hpp"
#include "hopgemm/error.hpp"
#include "hopgemm/jit.hpp"
#include "hopgemm/warmup.hpp"
#include "jit/compiler.hpp"

namespace hopgemm::cli {
namespace {

WarmupScales take_scales(Args& args) {
  const std::string sfa = args.take("sfa", "mn");
  if (sfa == "mn") return WarmupScales::kMnMajor;
  if (sfa == "row") return WarmupScales::kRowMajor;
  if (sfa == "both") return WarmupScales::kBoth;
  throw Error(ErrorKind::kInvalidArgument, "--sfa must be 'mn' (MN-major TMA-aligned), 'row' or 'both', got '" + sfa + "'");
}

int report(const PrecompileReport& report, const std::string& cache_dir) {
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

}  // namespace

int run_precompile(Args& args) {
  const std::string suite = args.take("suite");
  const std::string model = args.take("model");
  const std::vector<std::string> shapes = args.take_all("shape");
  ModelDeployment deployment;
  deployment.tp = args.take_int("tp", 1, 1, 1024);
  deployment.ep = args.take_int("ep", 1, 1, 1024);
  deployment.masked_moe = !args.take_flag("no-masked");
  WarmupOptions options;
  options.max_tokens = args.take_int("max-tokens", 8192, 1, 1 << 20);
  options.scales = take_scales(args);
  options.num_sms = args.take_int("num-sms", 132, 1, 1024);
  options.jobs = args.take_int("jobs", 0, 0, 1024);
  const bool dry_run = args.take_flag("dry-run");
  options.utility_kernels = !args.take_flag("gemms-only");
  options.archive = args.take("archive");
  args.expect_consumed();
  if (int(!suite.empty()) + int(!model.empty()) + int(!shapes.empty()) > 1) {
    throw Error(ErrorKind::kInvalidArgument, "precompile: give one of --suite, --model and --shape");
  }
  const std::string cache_dir = get_cache_dir();

  if (model.empty() && shapes.empty()) {
    const std::string name = suite.empty() ? "deepseek-v3" : suite;
    const std::vector<std::string> suites = precompile_suites();
    if (std::find(suites.begin(), suites.end(), name) == suites.end()) {
      std::string known;
      for (const auto& s : suites) known += (known.empty() ? "" : ", ") + s;
      throw Error(ErrorKind::kInvalidArgument, "precompile: unknown suite '" + name + "' (known: " + known + ")");
    }
    if (dry_run) {
      std::printf("suite '%s' for sm_90a, %d SMs: %zu distinct kernels (nothing compiled)\n", name.c_str(),
                  options.num_sms, api::precompile_sources(name, options.num_sms).size());
      return 0;
    }
    std::printf("precompiling suite '%s' for sm_90a, %d SMs, cache %s\n", name.c_str(), options.num_sms,
                cache_dir.c_str());
    std::fflush(stdout);
    return report(precompile_suite(name, options.num_sms, options.jobs, /*show_progress=*/true), cache_dir);
  }

  std::vector<WarmupGemm> gemms;
  std::string what;
  if (!model.empty()) {
    // A name of the embedded models, else the path of a config.json.
    const bool preset = model.find('/') == std::string::npos && model.find(".json") == std::string::npos;
    const ModelShape shape = preset ? model_preset(model) : read_model_config(model);
    gemms = model_gemms(shape, deployment);
    what = "model " + shape.name + " (tp " + std::to_string(deployment.tp) + ", ep " + std::to_string(deployment.ep) + ")";
  } else {
    for (const auto& text : shapes) gemms.push_back(parse_warmup_gemm(text));
    what = std::to_string(shapes.size()) + " shapes";
  }
  std::printf("warm-up of %s for sm_90a, %d SMs, every token count up to %lld, compiler %s\n", what.c_str(),
              options.num_sms, static_cast<long long>(options.max_tokens),
              jit::default_compiler().signature().c_str());
  for (const auto& g : gemms) std::printf("  %s\n", to_string(g).c_str());
  std::fflush(stdout);
  if (dry_run) {
    const WarmupPlan plan = plan_warmup(gemms, options);
    std::printf("%lld distinct problems select %d distinct kernels (planned in %.2f s; nothing compiled)\n",
                static_cast<long long>(plan.problems), plan.num_kernels, plan.seconds);
    return 0;
  }
  options.show_progress = true;
  options.load = false;  // this process ends here: nothing to load the kernels for
  const int status = report(warmup(gemms, options), cache_dir);
  if (!options.archive.empty()) std::printf("wrote the set's cache entries to %s\n", options.archive.c_str());
  return status;
}

}  // namespace hopgemm::cli
