// hopgemm: info | bench | tune | explain | precompile | cache ls|verify|clear
#include <cstdio>
#include <cstring>
#include <string>

#include "cli.hpp"
#include "hopgemm/error.hpp"

namespace {

using hopgemm::cli::Args;

struct Command {
  const char* name;
  int (*run)(Args&);
  const char* summary;  // one line of the overview
  const char* usage;    // `hopgemm NAME --help`
};

constexpr const char* kShapeOptions =
    "  --suite NAME           deepseek-v3 (default) or wgrad-pr95 (DeepGEMM PR #95 weight-gradient shapes)\n"
    "  --role R               only the suite's shapes of role R: fwd, dgrad or wgrad\n"
    "  --shape [ROLE:]MxNxK   one shape instead of a suite; ROLE fwd (default), dgrad, or wgrad (1D1D, FP32\n"
    "                         D += A B^T); K a multiple of 16, N of 8 (4 for wgrad)\n"
    "  --sfa mn|row           A's scale factors (B's too for wgrad) MN-major TMA-aligned (default) or row-major\n"
    "                         as the quantisers return them\n";

const Command kCommands[] = {
    {"info", hopgemm::cli::run_info, "GPU, driver, toolkit, JIT compiler, kernel cache and settings",
     "usage: hopgemm info\n"
     "\n"
     "What hopgemm sees on this machine: the CUDA driver and runtime, the JIT compiler and device headers, the\n"
     "kernel cache, the settings, and the GPU. Needs no GPU.\n"},
    {"bench", hopgemm::cli::run_bench, "time the FP8 GEMMs against cuBLASLt (needs an SM90 GPU)",
     "usage: hopgemm bench [--suite NAME [--role R] | --shape [ROLE:]MxNxK] [options]\n"
     "\n"
     "Times hopgemm's FP8 GEMMs and the cuBLASLt baselines (FP8 blockwise, FP8 per-tensor, BF16) on the same inputs,\n"
     "checks each result against cuBLASLt's, prints a table and writes JSON. Needs an SM90 (Hopper) GPU.\n"
     "\n"
     "{shape options}"
     "  --flush write|clean    L2 flushed by a 256 MB write before each timed call (default); clean: the flush\n"
     "                         buffer is then read back, so the call starts on a clean L2\n"
     "  --iters N              timed calls per kernel (default 30; the median is reported)\n"
     "  --sustain-ms MS        each kernel first runs back to back for MS ms (0 .. 60000): settled clocks\n"
     "  --config FIELD=V,...   our kernel with these config fields changed (e.g. block_n=128)\n"
     "  --out FILE.json        where the results go (default bench/results/<gpu>-<date>-<suite>.json)\n"
     "  --plot                 also a PNG beside the JSON (bench/plot.py, needs matplotlib)\n"},
    {"tune", hopgemm::cli::run_tune, "time the cost model's best configs per shape, write the winners (SM90 GPU)",
     "usage: hopgemm tune [--suite NAME [--role R] | --shape [ROLE:]MxNxK] [options]\n"
     "\n"
     "Times the cost model's best configs for each shape (a shape's tuning-table row too, kept unless beaten by\n"
     "2.5%) and writes the winners as a tuning table. Needs an SM90 (Hopper) GPU.\n"
     "\n"
     "{shape options}"
     "  --top N                candidates per shape (default 8; 0: the op's current choice only)\n"
     "  --iters N              timed calls per candidate (default 20)\n"
     "  --schedules            also time each candidate's other consumer schedules\n"
     "  --bands                the winner re-timed with raster bands 1-32, the fastest kept\n"
     "  --sustain-ms MS        every timing first runs its candidate back to back for MS ms\n"
     "  --out FILE.inc         where the table goes\n"},
    {"explain", hopgemm::cli::run_explain, "the config the op would choose and why (no GPU needed)",
     "usage: hopgemm explain [--suite NAME [--role R] | --shape [ROLE:]MxNxK] [options]\n"
     "\n"
     "The kernel config the op would choose for each shape (the tuning table's entry where one matches, else the\n"
     "cost model's pick) and the model's best candidates with predicted times. Needs no GPU.\n"
     "\n"
     "{shape options}"
     "  --num-sms N            SMs of the device to plan for (default 132, an H100 SXM)\n"
     "  --top N                model candidates to list (default 5)\n"},
    {"precompile", hopgemm::cli::run_precompile, "compile every kernel a suite needs (no GPU needed)",
     "usage: hopgemm precompile [--suite NAME] [--num-sms N] [--jobs N]\n"
     "\n"
     "Compiles every kernel the suite's ops would use on an SM90 device into the kernel cache, in parallel, and\n"
     "says how many it could store there (on a full or read-only disk the rest are compiled in memory only and\n"
     "lost at exit). Needs no GPU.\n"
     "\n"
     "  --suite NAME           deepseek-v3 (default), wgrad-pr95, or deepseek-v3-moe (the MoE grouped GEMMs:\n"
     "                         m-grouped contiguous and masked, k-grouped, of DeepGEMM's grouped test shapes)\n"
     "  --num-sms N            SMs of the device the kernels are for (default 132, an H100 SXM)\n"
     "  --jobs N               compiler threads (default: one per core)\n"},
    {"cache", hopgemm::cli::run_cache, "list, verify or empty the kernel cache",
     "usage: hopgemm cache ls | verify | clear\n"
     "\n"
     "  ls      each entry: kernel family, problem class and config, registers, spills, size and directory\n"
     "  verify  checks every entry (manifest, checksums); exit status 1 if any is invalid (rebuilt on next use)\n"
     "  clear   removes every entry\n"
     "\n"
     "The cache is $HOPGEMM_CACHE_DIR (or $DG_JIT_CACHE_DIR), else $XDG_CACHE_HOME/hopgemm, else ~/.cache/hopgemm.\n"},
};

void print_overview(FILE* out) {
  std::fputs("usage: hopgemm <command> [options]\n\ncommands:\n", out);
  for (const Command& c : kCommands) std::fprintf(out, "  %-12s %s\n", c.name, c.summary);
  std::fputs("\n'hopgemm <command> --help' describes a command and its options.\n", out);
}

// The usage text with the shape-selection options (shared by bench, tune and explain) in place of its marker.
void print_usage(const Command& c) {
  std::string text = c.usage;
  const std::string marker = "{shape options}";
  if (const size_t at = text.find(marker); at != std::string::npos) text.replace(at, marker.size(), kShapeOptions);
  std::fputs(text.c_str(), stdout);
}

bool wants_help(int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) return true;
  }
  return false;
}

const Command* find_command(const char* name) {
  for (const Command& c : kCommands) {
    if (!std::strcmp(c.name, name)) return &c;
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_overview(stderr);
    return 2;
  }
  if (!std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "help")) {
    const Command* topic = argc > 2 ? find_command(argv[2]) : nullptr;
    if (topic != nullptr) {
      print_usage(*topic);
    } else {
      print_overview(stdout);
    }
    return 0;
  }
  const Command* command = find_command(argv[1]);
  if (command == nullptr) {
    std::fprintf(stderr, "hopgemm: unknown command '%s'\n\n", argv[1]);
    print_overview(stderr);
    return 2;
  }
  // Help is answered before anything else is read or checked: it works without a GPU and with any other arguments.
  if (wants_help(argc, argv)) {
    print_usage(*command);
    return 0;
  }
  try {
    Args args(argc, argv, 2);
    return command->run(args);
  } catch (const hopgemm::Error& e) {
    std::fprintf(stderr, "hopgemm %s: error (%s): %s\n", command->name, hopgemm::error_kind_name(e.kind()), e.what());
    return 1;
  }
}
