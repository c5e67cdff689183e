// hopgemm: info | bench | precompile | cache ls|verify|clear
#include <cstdio>
#include <cstring>
#include <string>

#include "cli.hpp"
#include "hopgemm/error.hpp"

namespace {

constexpr const char* kUsage =
    "usage: hopgemm <command> [options]\n"
    "\n"
    "commands:\n"
    "  info                         GPU, driver, toolkit, compiler, cache and settings\n"
    "  bench [--suite NAME [--role fwd|dgrad|wgrad] | --shape [wgrad:]MxNxK] [--out FILE.json] [--plot] [--iters N]\n"
    "       [--sfa mn|row] [--flush write|clean] [--config FIELD=V,...] [--sustain-ms MS]\n"
    "                               time hopgemm's kernels against the cuBLASLt baselines (L2 flushed by a\n"
    "                               256 MB write before each call; clean: then read back, L2 left clean);\n"
    "                               --config: our kernel with these config fields changed (e.g. block_n=128);\n"
    "                               --sustain-ms: each kernel first runs back to back for MS ms (settled clocks)\n"
    "  tune [--suite NAME [--role R] | --shape [wgrad:]MxNxK] [--top N] [--out FILE.inc] [--schedules]\n"
    "       [--sustain-ms MS] [--bands]\n"
    "                               time the model's best N configs per shape; write the winners\n"
    "                               (a shape's tuning-table row is timed too and kept unless beaten by 2.5%)\n"
    "                               (--bands: the winner re-timed with raster bands 1-32, the fastest kept;\n"
    "                               --top 0: the op's current choice, table or model, is the only candidate)\n"
    "  explain [--suite NAME [--role R] | --shape [wgrad:]MxNxK] [--sfa mn|row] [--num-sms N] [--top N]\n"
    "                               the config the op would choose (tuned table or cost model) and the\n"
    "                               model's best N candidates with predicted times (no GPU needed)\n"
    "  precompile [--suite NAME] [--num-sms N] [--jobs N]\n"
    "                               compile every kernel a suite needs (no GPU needed)\n"
    "  cache ls | verify | clear    inspect or empty the JIT disk cache\n"
    "\n"
    "suites: deepseek-v3 (default), wgrad-pr95 (DeepGEMM PR #95 weight-gradient shapes)\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  try {
    hopgemm::cli::Args args(argc, argv, 2);
    if (command == "info") return hopgemm::cli::run_info(args);
    if (command == "bench") return hopgemm::cli::run_bench(args);
    if (command == "tune") return hopgemm::cli::run_tune(args);
    if (command == "precompile") return hopgemm::cli::run_precompile(args);
    if (command == "explain") return hopgemm::cli::run_explain(args);
    if (command == "cache") return hopgemm::cli::run_cache(args);
    std::fprintf(stderr, "hopgemm: unknown command '%s'\n\n%s", command.c_str(), kUsage);
    return 2;
  } catch (const hopgemm::Error& e) {
    std::fprintf(stderr, "hopgemm %s: error (%s): %s\n", command.c_str(), hopgemm::error_kind_name(e.kind()), e.what());
    return 1;
  }
}
