// hopgemm cache ls | verify | clear
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "hopgemm/device/kernels/sm90_bf16_gemm_types.cuh"
#include "hopgemm/device/kernels/sm90_fp8_gemm_types.cuh"
#include "hopgemm/error.hpp"
#include "hopgemm/jit.hpp"
#include "jit/disk_cache.hpp"

namespace hopgemm::cli {
namespace {

struct EntryConfig {
  std::string type;                                         // e.g. Sm90Fp8GemmConfig (namespace stripped)
  std::vector<std::pair<std::string, std::string>> fields;  // in declaration order
};

// The config an entry's kernel was instantiated with, read back from its kernel.cu, which jit/kernel_source.cpp
// renders as `&ns::kernel<ns::Type{.field = value, ...}>`; nullopt where the file is not of that form.
std::optional<EntryConfig> read_entry_config(const std::string& dir) {
  std::ifstream in(dir + "/kernel.cu");
  const std::string code((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t kernel = code.find('&', code.find("hopgemm_instantiate"));
  const size_t open = code.find('<', kernel);
  const size_t brace = code.find('{', open);
  const size_t close = code.find("}>", brace);
  if (kernel == std::string::npos || open == std::string::npos || brace == std::string::npos ||
      close == std::string::npos) {
    return std::nullopt;
  }
  EntryConfig config;
  config.type = code.substr(open + 1, brace - open - 1);
  if (const size_t colons = config.type.rfind("::"); colons != std::string::npos) config.type.erase(0, colons + 2);
  const std::string body = code.substr(brace + 1, close - brace - 1);
  for (size_t pos = 0; pos < body.size();) {
    size_t end = body.find(',', pos);
    if (end == std::string::npos) end = body.size();
    const std::string item = body.substr(pos, end - pos);  // " .name = value"
    const size_t dot = item.find('.'), eq = item.find(" = ");
    if (dot == std::string::npos || eq == std::string::npos || eq < dot) return std::nullopt;
    config.fields.emplace_back(item.substr(dot + 1, eq - dot - 1), item.substr(eq + 3));
    pos = end + 1;
  }
  return config;
}

// Each GEMM family's tunable config fields (tiles, stages, clusters, schedules), from its field declaration; every
// other field follows from the problem (recipe, dtypes, layouts, grouping), which is the entry's problem class.
const std::map<std::string, std::set<std::string>>& gemm_tunable_fields() {
#define HOPGEMM_TUNABLE_FIELD(name, default_value, tunable) \
  if (tunable) out.insert(#name);
  static const std::map<std::string, std::set<std::string>> families = {
      {"Sm90Fp8GemmConfig", [] { std::set<std::string> out; HOPGEMM_SM90_FP8_GEMM_FIELDS(HOPGEMM_TUNABLE_FIELD) return out; }()},
      {"Sm90Bf16GemmConfig", [] { std::set<std::string> out; HOPGEMM_SM90_BF16_GEMM_FIELDS(HOPGEMM_TUNABLE_FIELD) return out; }()},
  };
#undef HOPGEMM_TUNABLE_FIELD
  return families;
}

std::string grouping_in_words(int grouping) {
  switch (grouping) {
    case device::kGroupingNone: return "dense";
    case device::kGroupingMIds: return "M-grouped by row group ids (contiguous)";
    case device::kGroupingMRanges: return "M-grouped by row ranges (contiguous psum or packed, masked)";
    case device::kGroupingK: return "K-grouped";
    case device::kGroupingKRanges: return "K-grouped over K ranges of one matrix per operand";
    case device::kGroupingBatched: return "batched (einsum bhr,hdr->bhd, bhd,hdr->bhr)";
    case device::kGroupingBatchSum: return "summed over batches (einsum bmk,bnk->mn)";
    default: return "grouping " + std::to_string(grouping);
  }
}

// A GEMM entry's problem class in words, e.g. "1D2D scales (A per 1x128, B per 128x128), BF16 D, A scales MN-major,
// dense" or "BF16 A K-major, B MN-major, FP32 D += A B^T, K-grouped".
std::string gemm_problem_in_words(const std::string& type, const std::vector<std::pair<std::string, std::string>>& fields) {
  auto field = [&](const char* name) {
    for (const auto& [key, value] : fields) {
      if (key == name) return std::atoi(value.c_str());
    }
    return -1;
  };
  std::string out;
  if (type == "Sm90Fp8GemmConfig") {
    const bool one_d_one_d = field("recipe") == device::kRecipe1D1D;
    out = one_d_one_d ? "1D1D scales (A and B per 1x128)" : "1D2D scales (A per 1x128, B per 128x128)";
  } else {
    out = std::string("BF16 A ") + (field("a_k_major") == 0 ? "MN-major" : "K-major") + ", B " +
          (field("b_k_major") == 0 ? "MN-major" : "K-major");
  }
  out += field("out_dtype") == device::kOutFp32 ? ", FP32 D" : ", BF16 D";
  if (field("accumulate") == 1) out += " += A B^T";
  if (type == "Sm90Fp8GemmConfig") {
    out += field("sfa_k_major") == 1 ? ", A scales row-major" : ", A scales MN-major";
    if (field("recipe") == device::kRecipe1D1D) out += field("sfb_k_major") == 1 ? ", B scales row-major" : ", B scales MN-major";
    if (field("head_mid") > 0) {
      out += ", D heads of (" + std::to_string(field("head_left")) + ", " + std::to_string(field("head_mid")) + ", " +
             std::to_string(field("head_right")) + ") columns, the middle ones untouched";
    }
  }
  return out + ", " + grouping_in_words(field("grouping"));
}

void print_entry_config(const std::string& dir) {
  const std::optional<EntryConfig> config = read_entry_config(dir);
  if (!config) {
    std::printf("    (kernel.cu does not name a config)\n");
    return;
  }
  const auto family = gemm_tunable_fields().find(config->type);
  const bool gemm = family != gemm_tunable_fields().end();
  std::string problem, tuned;
  for (const auto& [name, value] : config->fields) {
    std::string& line = gemm && family->second.count(name) ? tuned : problem;
    line += " " + name + "=" + value;
  }
  if (gemm) problem = " " + gemm_problem_in_words(config->type, config->fields);
  std::printf("    problem:%s\n", problem.c_str());
  if (!tuned.empty()) std::printf("    config: %s\n", tuned.c_str() + 1);
}

}  // namespace

int run_cache(Args& args) {
  const std::string action = args.next_positional();
  if (action == "export" || action == "import") {
    const std::string file = args.next_positional();
    args.expect_consumed();
    if (file.empty()) throw Error(ErrorKind::kInvalidArgument, "cache " + action + ": give the archive's file name");
    if (action == "export") {
      const CacheArchiveReport report = export_cache_archive(file);
      std::printf("wrote %d entries of %s to %s\n", report.entries, get_cache_dir().c_str(), file.c_str());
      return 0;
    }
    const CacheArchiveReport report = import_cache_archive(file);
    for (const auto& why : report.skipped) std::fprintf(stderr, "skipped %s\n", why.c_str());
    std::printf("added %d entries to %s (%d were there already, %zu skipped)\n", report.entries,
                get_cache_dir().c_str(), report.already_present, report.skipped.size());
    return report.skipped.empty() ? 0 : 1;
  }
  args.expect_consumed();
  if (action == "clear") {
    const int removed = jit::clear_cache();
    std::printf("removed %d entries from %s\n", removed, get_cache_dir().c_str());
    return 0;
  }
  if (action != "ls" && action != "verify") {
    throw Error(ErrorKind::kInvalidArgument,
                "cache: expected ls, verify, clear, export FILE or import FILE, got '" + action + "'");
  }
  const auto entries = jit::list_cache_entries();
  int invalid = 0;
  std::printf("%s: %zu entries\n", get_cache_dir().c_str(), entries.size());
  for (const auto& e : entries) {
    if (!e.valid) ++invalid;
    if (action == "ls") {
      std::printf("%-20s %7lld B  regs %3d  spills %d  %s%s\n", e.family.c_str(), e.cubin_bytes, e.resources.registers,
                  e.resources.spill_store_bytes + e.resources.spill_load_bytes, e.dir.c_str(),
                  e.valid ? "" : ("  INVALID: " + e.problem).c_str());
      if (e.valid) {
        print_entry_config(e.dir);
        std::printf("    compiler: %s%s%s\n", e.compiler.c_str(), e.compiler_location.empty() ? "" : ", ",
                    e.compiler_location.c_str());
      }
    } else if (!e.valid) {
      std::printf("INVALID %s: %s\n", e.dir.c_str(), e.problem.c_str());
    }
  }
  if (action == "verify") {
    std::printf("%zu valid, %d invalid (invalid entries are rebuilt on next use)\n", entries.size() - invalid, invalid);
    return invalid == 0 ? 0 : 1;
  }
  return 0;
}

}  // namespace hopgemm::cli
