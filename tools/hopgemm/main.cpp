// hopgemm: info | bench | tune | explain | precompile | cache ls|verify|clear|export|import
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli.hpp"
#include "api/suites.hpp"
#include "hopgemm/error.hpp"
#include "hopgemm/jit.hpp"
#include "hopgemm/warmup.hpp"

namespace {

using hopgemm::cli::Args;

struct Command {
  const char* name;
  int (*run)(Args&);
  const char* summary;  // one line of the overview
  const char* usage;    // `hopgemm NAME --help`
};

constexpr const char* kShapeOptions =
    "  --suite NAME           {dense suites}\n"
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
    {"precompile", hopgemm::cli::run_precompile, "compile the kernels of a suite, a model or shapes (no GPU needed)",
     "usage: hopgemm precompile [--suite NAME | --model NAME|CONFIG.json [--tp N] [--ep N] | --shape S...] [options]\n"
     "\n"
     "Compiles ahead of time, in parallel, every kernel the ops would use on an SM90 device into the kernel cache,\n"
     "and says how many it could store there (on a full or read-only disk the rest are compiled in memory only and\n"
     "lost at exit). Needs no GPU. With --model or --shape (warm-up), every token count from 1 to --max-tokens is\n"
     "planned, the distinct kernels kept, and the layout and quantisation kernels added.\n"
     "\n"
     "  --suite NAME           {precompile suites} (default: deepseek-v3)\n"
     "  --model NAME|FILE      {models}, or a Hugging Face config.json: its attention, dense and shared-expert\n"
     "                         GEMMs, and its experts' grouped GEMMs (contiguous and masked)\n"
     "  --tp N, --ep N         tensor- and expert-parallel degrees of --model (default 1)\n"
     "  --no-masked            --model's MoE layers without the masked (decode) grouped GEMM\n"
     "  --shape S              one GEMM, repeatable or comma-separated: [OP:]MxNxK, or OP:GxMxNxK for the grouped\n"
     "                         OPs; OP gemm (default; also fwd, dgrad), wgrad, m-grouped, m-grouped-psum, masked,\n"
     "                         k-grouped; * (or 0) for the dimension that carries tokens: M, or K for wgrad and\n"
     "                         k-grouped (e.g. *x7168x2048, wgrad:7168x2048x*, m-grouped:32x*x4096x7168)\n"
     "  --max-tokens N         the largest value of a * dimension (default 8192)\n"
     "  --sfa mn|row|both      the per-token scales the caller passes: MN-major TMA-aligned (default) or row-major\n"
     "  --dry-run              only count the distinct kernels (and, for --model or --shape, problems)\n"
     "  --gemms-only           without the layout and quantisation kernels\n"
     "  --archive FILE.tar     also write the kernels into a cache archive (hopgemm cache import FILE.tar)\n"
     "  --num-sms N            SMs of the device the kernels are for (default 132, an H100 or H200 SXM)\n"
     "  --jobs N               compiler threads (default: one per core)\n"},
    {"cache", hopgemm::cli::run_cache, "list, verify, empty, export or import the kernel cache",
     "usage: hopgemm cache ls | verify | clear | export FILE.tar | import FILE.tar\n"
     "\n"
     "  ls            each entry: kernel family, problem class and config, registers, spills, compiler, directory\n"
     "  verify        checks every entry (manifest, checksums); exit status 1 if any is invalid (rebuilt on next use)\n"
     "  clear         removes every entry\n"
     "  export FILE   writes every valid entry into a tar archive (to ship beside an application or a wheel)\n"
     "  import FILE   adds an archive's entries to the cache, each checked first; entries of another compiler\n"
     "                version are kept but only used by that version\n"
     "\n"
     "The cache is $HOPGEMM_CACHE_DIR (or $DG_JIT_CACHE_DIR), else $XDG_CACHE_HOME/hopgemm, else ~/.cache/hopgemm.\n"},
};

void print_overview(FILE* out) {
  std::fputs("usage: hopgemm <command> [options]   (hopgemm --version: the version)\n\ncommands:\n", out);
  for (const Command& c : kCommands) std::fprintf(out, "  %-12s %s\n", c.name, c.summary);
  std::fputs("\n'hopgemm <command> --help' describes a command and its options.\n", out);
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

void replace_all(std::string& text, const std::string& marker, const std::string& value) {
  for (size_t at = text.find(marker); at != std::string::npos; at = text.find(marker, at + value.size())) {
    text.replace(at, marker.size(), value);
  }
}

// The usage text with its markers replaced: the shape-selection options (shared by bench, tune and explain) and the
// lists of suites and models, which come from the code that accepts them (one list everywhere).
void print_usage(const Command& c) {
  std::string text = c.usage;
  replace_all(text, "{shape options}", kShapeOptions);
  replace_all(text, "{dense suites}", join(hopgemm::api::suite_names()) + " (default: deepseek-v3)");
  replace_all(text, "{precompile suites}", join(hopgemm::precompile_suites()));
  replace_all(text, "{models}", join(hopgemm::model_presets()));
  std::fputs(text.c_str(), stdout);
}

// Levenshtein distance, for "did you mean" (short words only).
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// The command `word` was probably meant to be: the closest name within two edits, or one it starts.
const char* suggestion(const std::string& word) {
  const char* best = nullptr;
  size_t best_distance = 3;
  for (const Command& c : kCommands) {
    const std::string name = c.name;
    const size_t distance = word.size() >= 2 && name.rfind(word, 0) == 0 ? 1 : edit_distance(word, name);
    if (distance < best_distance) {
      best = c.name;
      best_distance = distance;
    }
  }
  return best;
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
  if (!std::strcmp(argv[1], "--version") || !std::strcmp(argv[1], "-V") || !std::strcmp(argv[1], "version")) {
    std::printf("hopgemm %s\n", HOPGEMM_VERSION);
    return 0;
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
    std::fprintf(stderr, "hopgemm: unknown command '%s'\n", argv[1]);
    if (const char* meant = suggestion(argv[1])) std::fprintf(stderr, "did you mean 'hopgemm %s'?\n", meant);
    std::fputc('\n', stderr);
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
