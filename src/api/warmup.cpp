// Warm-up for the user's own shapes and models (include/hopgemm/warmup.hpp): every token count of every GEMM turned
// into the problem the op would build, the problems de-duplicated, each one's kernel chosen by the heuristics (on a
// thread pool), the kernels de-duplicated and compiled through the disk cache.
#include "hopgemm/warmup.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include "api/gemm_internal.hpp"
#include "api/gemm_sources.hpp"
#include "api/suite_sources.hpp"
#include "heuristics/sm90_fp8_gemm.hpp"
#include "hopgemm/error.hpp"
#include "hopgemm/layout.hpp"
#include "hopgemm/runtime.hpp"
#include "jit/compiler.hpp"
#include "jit/disk_cache.hpp"
#include "jit/precompile.hpp"
#include "runtime/pod_key.hpp"

namespace hopgemm {
namespace {

using heuristics::Fp8GemmProblem;
using ProblemKey = runtime::PodKey<Fp8GemmProblem>;
using ProblemSet = std::unordered_set<ProblemKey, runtime::PodKeyHash>;
using ConfigKey = runtime::PodKey<device::Sm90Fp8GemmConfig>;

constexpr int64_t kKBlock = 128;  // the K-grouped GEMM's groups hold multiples of 128 rows of K

[[noreturn]] void bad(const std::string& what) { throw Error(ErrorKind::kInvalidArgument, what); }

struct OpName {
  const char* name;
  WarmupOp op;
  ContiguousLayout layout;
};
constexpr OpName kOpNames[] = {
    {"gemm", WarmupOp::kGemm, ContiguousLayout::kGroupIds},
    {"fwd", WarmupOp::kGemm, ContiguousLayout::kGroupIds},  // bench's role names: the same op
    {"dgrad", WarmupOp::kGemm, ContiguousLayout::kGroupIds},
    {"wgrad", WarmupOp::kWgrad, ContiguousLayout::kGroupIds},
    {"m-grouped", WarmupOp::kMGroupedContiguous, ContiguousLayout::kGroupIds},
    {"m-grouped-psum", WarmupOp::kMGroupedContiguous, ContiguousLayout::kPsum},
    {"masked", WarmupOp::kMGroupedMasked, ContiguousLayout::kGroupIds},
    {"k-grouped", WarmupOp::kKGrouped, ContiguousLayout::kGroupIds},
};

bool grouped(WarmupOp op) { return op != WarmupOp::kGemm && op != WarmupOp::kWgrad; }

// The dimension of an op's GEMM that carries tokens.
using Dimension = int64_t WarmupGemm::*;
Dimension token_dim(WarmupOp op) {
  switch (op) {
    case WarmupOp::kWgrad: case WarmupOp::kKGrouped: return &WarmupGemm::k;
    default: return &WarmupGemm::m;
  }
}

// Every problem `gemm` can pose, for token counts up to `max_tokens`, with the caller's scale layouts.
void add_problems(const WarmupGemm& g, int64_t max_tokens, WarmupScales scales, int num_sms, ProblemSet& out) {
  std::vector<int> row_major;  // sfa_k_major values: 1 row-major, 0 MN-major
  if (scales != WarmupScales::kMnMajor) row_major.push_back(1);
  if (scales != WarmupScales::kRowMajor) row_major.push_back(0);
  const int64_t fixed = g.*token_dim(g.op);
  const int64_t first = fixed > 0 ? fixed : 1, last = fixed > 0 ? fixed : max_tokens;
  auto add = [&](const Fp8GemmProblem& p) { out.insert(ProblemKey{p}); };
  const int align = get_mk_alignment_for_contiguous_layout();
  switch (g.op) {
    case WarmupOp::kGemm:
    case WarmupOp::kWgrad: {
      const bool wgrad = g.op == WarmupOp::kWgrad;
      // Weight gradients reduce over the tokens: K runs over the multiples of 16 TMA needs.
      const int64_t step = wgrad && fixed == 0 ? 16 : 1;
      for (int64_t t = wgrad && fixed == 0 ? 16 : first; t <= last; t += step) {
        for (int sfa : row_major) {
          for (int sfb : wgrad ? row_major : std::vector<int>{1}) {
            heuristics::Fp8GemmCall call;
            call.m = wgrad ? g.m : t;
            call.n = g.n;
            call.k = wgrad ? t : g.k;
            call.sfa.k_major = sfa;
            call.num_sms = num_sms;
            call.tc_util = get_tc_util();
            if (wgrad) {
              call.recipe = device::kRecipe1D1D;
              call.out_dtype = device::kOutFp32;
              call.accumulate = 1;
              call.sfb.k_major = sfb;
            }
            add(heuristics::make_fp8_gemm_problem(call));
          }
        }
      }
      break;
    }
    case WarmupOp::kMGroupedContiguous: {
      // The op's problem: the rows per group it expects, M_sum / G (rounded up). With group ids each group's rows
      // are padded to the alignment, so M_sum runs over its multiples.
      const bool ids = g.layout == ContiguousLayout::kGroupIds;
      const int64_t step = ids && fixed == 0 ? align : 1;
      for (int64_t rows = ids && fixed == 0 ? align : first; rows <= last; rows += step) {
        for (int sfa : row_major) {
          add(heuristics::make_m_grouped_problem(ids ? device::kGroupingMIds : device::kGroupingMRanges,
                                                 (rows + g.groups - 1) / g.groups, g.n, g.k, g.groups, sfa, align,
                                                 num_sms, get_tc_util()));
        }
      }
      break;
    }
    case WarmupOp::kMGroupedMasked:
      for (int64_t expected = first; expected <= last; ++expected) {
        for (int sfa : row_major) {
          add(heuristics::make_m_grouped_problem(device::kGroupingMRanges, expected, g.n, g.k, g.groups, sfa, 0,
                                                 num_sms, get_tc_util()));
        }
      }
      break;
    case WarmupOp::kKGrouped: {
      // The op's problem: the mean K of the non-empty groups (each a multiple of 128) and their count.
      const int64_t most = fixed > 0 ? fixed : max_tokens;
      for (int64_t groups = 1; groups <= std::min(g.groups, most / kKBlock); ++groups) {
        const int64_t low = fixed > 0 ? fixed : groups * kKBlock;
        for (int64_t sum_k = low; sum_k <= most; sum_k += kKBlock) {
          add(heuristics::make_k_grouped_problem(g.m, g.n, sum_k / groups, groups, num_sms, get_tc_util()));
        }
      }
      break;
    }
  }
}

void check_gemm(const WarmupGemm& g) {
  const std::string what = "warm-up GEMM " + to_string(g);
  const Dimension tokens = token_dim(g.op);
  for (auto [dim, name] : {std::pair{&WarmupGemm::m, "M"}, {&WarmupGemm::n, "N"}, {&WarmupGemm::k, "K"}}) {
    if (g.*dim < 0) bad(what + ": " + name + " must not be negative");
    if (g.*dim == 0 && dim != tokens) bad(what + ": only " + (tokens == &WarmupGemm::m ? "M" : "K") + " may be 0 (every token count)");
  }
  if (g.groups < 1) bad(what + ": needs at least one group");
  if (!grouped(g.op) && g.groups != 1) bad(what + ": groups are for the grouped ops");
  if (g.k % 16 != 0) bad(what + ": K must be a multiple of 16");
  if (g.n % (g.op == WarmupOp::kWgrad || g.op == WarmupOp::kKGrouped ? 4 : 8) != 0) {
    bad(what + ": N must be a multiple of 8 (BF16 D) or 4 (FP32 D)");
  }
  if (g.op == WarmupOp::kKGrouped && g.k % kKBlock != 0) {
    bad(what + ": K (the groups' total) must be a multiple of 128 (each group's is)");
  }
}

int resolve_num_sms(int requested) {
  if (requested < 0) bad("warmup: num_sms must be positive, or 0 for the current GPU's");
  if (requested > 0) return requested;
  return gpu_available() ? get_num_sms() : 132;
}

struct Plan {
  int64_t problems = 0;
  std::vector<device::Sm90Fp8GemmConfig> gemm_configs;  // the distinct GEMM kernels
  std::vector<jit::KernelSource> sources;               // theirs, then the utility kernels' (options.utility_kernels)
};

// The distinct kernels of `gemms`, chosen on up to `jobs` threads.
Plan make_plan(const std::vector<WarmupGemm>& gemms, const WarmupOptions& options) {
  Plan plan;
  if (options.max_tokens < 1) bad("warmup: max_tokens must be positive");
  const int num_sms = resolve_num_sms(options.num_sms);
  ProblemSet set;
  for (const auto& g : gemms) {
    check_gemm(g);
    add_problems(g, options.max_tokens, options.scales, num_sms, set);
  }
  const std::vector<ProblemKey> problems(set.begin(), set.end());
  plan.problems = static_cast<int64_t>(problems.size());

  int jobs = options.jobs > 0 ? options.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  jobs = static_cast<int>(std::min<int64_t>(jobs, std::max<int64_t>(1, plan.problems / 256)));
  std::vector<std::vector<device::Sm90Fp8GemmConfig>> chosen(static_cast<size_t>(jobs));
  std::atomic<size_t> next{0};
  auto worker = [&](size_t slot) {
    constexpr size_t kBatch = 64;
    for (size_t begin = next.fetch_add(kBatch); begin < problems.size(); begin = next.fetch_add(kBatch)) {
      for (size_t i = begin; i < std::min(problems.size(), begin + kBatch); ++i) {
        const auto choice = heuristics::choose_fp8_gemm_config(problems[i].value);
        if (choice.num_tiles > 0) chosen[slot].push_back(choice.config);
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < jobs; ++t) threads.emplace_back(worker, static_cast<size_t>(t));
  worker(0);
  for (auto& thread : threads) thread.join();

  std::unordered_set<ConfigKey, runtime::PodKeyHash> configs;
  for (const auto& slot : chosen) {
    for (const auto& config : slot) configs.insert(ConfigKey{config});
  }
  std::vector<std::pair<jit::KernelSource, device::Sm90Fp8GemmConfig>> kernels;
  for (const auto& config : configs) kernels.emplace_back(api::render_sm90_fp8_gemm(config.value), config.value);
  // A stable order (by source), so progress and logs read the same from run to run.
  std::sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) { return a.first.code < b.first.code; });
  for (auto& [source, config] : kernels) {
    plan.sources.push_back(std::move(source));
    plan.gemm_configs.push_back(config);
  }
  if (options.utility_kernels) {
    for (auto& s : api::layout_suite_sources()) plan.sources.push_back(std::move(s));
    for (auto& s : api::quantize_suite_sources()) plan.sources.push_back(std::move(s));
  }
  return plan;
}

// ---- models ------------------------------------------------------------------------------------------------------

ModelShape deepseek_v3() {
  ModelShape m;
  m.name = "deepseek-v3";
  m.hidden_size = 7168;
  m.intermediate_size = 18432;
  m.num_attention_heads = 128;
  m.num_key_value_heads = 128;
  m.q_lora_rank = 1536;
  m.kv_lora_rank = 512;
  m.qk_nope_head_dim = 128;
  m.qk_rope_head_dim = 64;
  m.v_head_dim = 128;
  m.num_experts = 256;
  m.num_experts_per_tok = 8;
  m.moe_intermediate_size = 2048;
  m.num_shared_experts = 1;
  m.first_dense_layers = 3;
  return m;
}

ModelShape qwen3_235b_a22b() {
  ModelShape m;
  m.name = "qwen3-235b-a22b";
  m.hidden_size = 4096;
  m.intermediate_size = 12288;
  m.num_attention_heads = 64;
  m.num_key_value_heads = 4;
  m.head_dim = 128;
  m.num_experts = 128;
  m.num_experts_per_tok = 8;
  m.moe_intermediate_size = 1536;
  return m;
}

// The number after the first "key": in `json` (at any depth; configs of multimodal models nest the text model's).
// Absent: `fallback`; present but not a non-negative integer (or null): `fallback` too, as Hugging Face reads it.
int64_t json_int(std::string_view json, const std::string& key, int64_t fallback) {
  const std::string quoted = "\"" + key + "\"";
  for (size_t at = json.find(quoted); at != std::string_view::npos; at = json.find(quoted, at + 1)) {
    size_t p = at + quoted.size();
    while (p < json.size() && std::isspace(static_cast<unsigned char>(json[p]))) ++p;
    if (p >= json.size() || json[p] != ':') continue;  // the key's text inside a string value
    ++p;
    while (p < json.size() && std::isspace(static_cast<unsigned char>(json[p]))) ++p;
    int64_t value = 0;
    const auto [end, ec] = std::from_chars(json.data() + p, json.data() + json.size(), value);
    if (ec != std::errc() || value < 0 || (end < json.data() + json.size() && *end == '.')) return fallback;
    return value;
  }
  return fallback;
}

// A progress bar on stderr: "[########------------] 41/82 kernels, 12 s"; redrawn on a terminal, in a log one line
// per tenth of the work.
std::function<void(int, int)> progress_bar() {
  const bool terminal = isatty(fileno(stderr));
  const auto start = std::chrono::steady_clock::now();
  return [terminal, start](int done, int total) {
    if (!terminal && done != total && done * 10 / total == (done - 1) * 10 / total) return;
    constexpr int kWidth = 24;
    const int filled = total > 0 ? done * kWidth / total : kWidth;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "%s[%s%s] %d/%d kernels, %.0f s%s", terminal ? "\r" : "", std::string(filled, '#').c_str(),
                 std::string(kWidth - filled, '-').c_str(), done, total, seconds, terminal && done != total ? "" : "\n");
    std::fflush(stderr);
  };
}

}  // namespace

const char* warmup_op_name(WarmupOp op) {
  for (const auto& entry : kOpNames) {
    if (entry.op == op) return entry.name;
  }
  return "?";
}

WarmupGemm parse_warmup_gemm(const std::string& text) {
  WarmupGemm g;
  std::string dims = text;
  if (const size_t colon = text.find(':'); colon != std::string::npos) {
    const std::string name = text.substr(0, colon);
    const OpName* found = nullptr;
    for (const auto& entry : kOpNames) {
      if (name == entry.name) found = &entry;
    }
    if (found == nullptr) {
      std::string known;
      for (const auto& entry : kOpNames) known += std::string(known.empty() ? "" : ", ") + entry.name;
      bad("shape '" + text + "': unknown op '" + name + "' (known: " + known + ")");
    }
    g.op = found->op;
    g.layout = found->layout;
    dims = text.substr(colon + 1);
  }
  std::vector<int64_t> values;
  for (size_t pos = 0; pos <= dims.size();) {
    size_t end = dims.find('x', pos);
    if (end == std::string::npos) end = dims.size();
    const std::string item = dims.substr(pos, end - pos);
    int64_t value = 0;
    if (item == "*") {
      value = 0;
    } else {
      const auto [stop, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
      if (item.empty() || ec != std::errc() || stop != item.data() + item.size() || value < 0) {
        bad("shape '" + text + "': '" + item + "' is not a size (a non-negative integer, or * for every token count)");
      }
    }
    values.push_back(value);
    pos = end + 1;
  }
  const size_t want = grouped(g.op) ? 4 : 3;
  if (values.size() != want) {
    bad("shape '" + text + "': " + warmup_op_name(g.op) + " takes " + (want == 4 ? "GxMxNxK" : "MxNxK") + ", got " +
        std::to_string(values.size()) + " sizes");
  }
  size_t i = 0;
  if (want == 4) g.groups = values[i++];
  g.m = values[i++];
  g.n = values[i++];
  g.k = values[i++];
  check_gemm(g);
  return g;
}

std::string to_string(const WarmupGemm& g) {
  auto dim = [](int64_t v) { return v == 0 ? std::string("*") : std::to_string(v); };
  std::string name = warmup_op_name(g.op);
  if (g.op == WarmupOp::kMGroupedContiguous && g.layout != ContiguousLayout::kGroupIds) name = "m-grouped-psum";
  std::string out = name + ":";
  if (grouped(g.op)) out += std::to_string(g.groups) + "x";
  return out + dim(g.m) + "x" + dim(g.n) + "x" + dim(g.k);
}

std::vector<std::string> model_presets() { return {"deepseek-v3", "qwen3-235b-a22b"}; }

ModelShape model_preset(const std::string& name) {
  if (name == "deepseek-v3" || name == "deepseek-r1") return deepseek_v3();
  if (name == "qwen3-235b-a22b") return qwen3_235b_a22b();
  std::string known;
  for (const auto& preset : model_presets()) known += (known.empty() ? "" : ", ") + preset;
  bad("unknown model '" + name + "' (embedded: " + known + "; or the path of a Hugging Face config.json)");
}

ModelShape read_model_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) bad("cannot read the model config " + path);
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ModelShape m;
  m.name = path;
  m.hidden_size = json_int(json, "hidden_size", 0);
  if (m.hidden_size <= 0) bad("model config " + path + ": no hidden_size");
  m.intermediate_size = json_int(json, "intermediate_size", 0);
  m.num_attention_heads = json_int(json, "num_attention_heads", 0);
  m.num_key_value_heads = json_int(json, "num_key_value_heads", m.num_attention_heads);
  m.head_dim = json_int(json, "head_dim", m.num_attention_heads > 0 ? m.hidden_size / m.num_attention_heads : 0);
  m.q_lora_rank = json_int(json, "q_lora_rank", 0);
  m.kv_lora_rank = json_int(json, "kv_lora_rank", 0);
  m.qk_nope_head_dim = json_int(json, "qk_nope_head_dim", 0);
  m.qk_rope_head_dim = json_int(json, "qk_rope_head_dim", 0);
  m.v_head_dim = json_int(json, "v_head_dim", 0);
  m.num_experts = json_int(json, "n_routed_experts", json_int(json, "num_experts", json_int(json, "num_local_experts", 0)));
  m.num_experts_per_tok = json_int(json, "num_experts_per_tok", 0);
  m.moe_intermediate_size = json_int(json, "moe_intermediate_size", m.intermediate_size);
  m.num_shared_experts = json_int(json, "n_shared_experts", 0);
  m.first_dense_layers = json_int(json, "first_k_dense_replace", 0);
  if (m.num_attention_heads <= 0) bad("model config " + path + ": no num_attention_heads");
  if (m.num_experts > 0 && m.num_experts_per_tok <= 0) bad("model config " + path + ": experts but no num_experts_per_tok");
  return m;
}

std::vector<WarmupGemm> model_gemms(const ModelShape& model, const ModelDeployment& d) {
  if (d.tp < 1 || d.ep < 1) bad("model_gemms: tp and ep must be positive");
  const int64_t tp = d.tp, h = model.hidden_size;
  std::vector<WarmupGemm> out;
  auto dense = [&](int64_t n, int64_t k) {
    if (n > 0 && k > 0) out.push_back({WarmupOp::kGemm, 0, n, k, 1, ContiguousLayout::kGroupIds});
  };
  auto split = [&](int64_t size, const char* what) {
    if (size % tp != 0) bad(model.name + ": " + what + " = " + std::to_string(size) + " does not split over tp = " + std::to_string(tp));
    return size / tp;
  };
  if (model.kv_lora_rank > 0) {
    // MLA: the fused q_a + kv_a down-projection (replicated), q_b and kv_b up-projections and o_proj (split by heads).
    const int64_t heads = split(model.num_attention_heads, "num_attention_heads");
    const int64_t qk_head = model.qk_nope_head_dim + model.qk_rope_head_dim;
    if (model.q_lora_rank > 0) {
      dense(model.q_lora_rank + model.kv_lora_rank + model.qk_rope_head_dim, h);
      dense(heads * qk_head, model.q_lora_rank);
    } else {
      dense(heads * qk_head, h);
      dense(model.kv_lora_rank + model.qk_rope_head_dim, h);
    }
    dense(heads * (model.qk_nope_head_dim + model.v_head_dim), model.kv_lora_rank);
    dense(h, heads * model.v_head_dim);
  } else {
    // Grouped-query attention: fused QKV (KV heads replicated where fewer than tp) and o_proj.
    const int64_t heads = split(model.num_attention_heads, "num_attention_heads");
    const int64_t kv_heads = std::max<int64_t>(1, model.num_key_value_heads / tp);
    dense((heads + 2 * kv_heads) * model.head_dim, h);
    dense(h, heads * model.head_dim);
  }
  const bool moe = model.num_experts > 0;
  if (!moe || model.first_dense_layers > 0) {
    const int64_t inter = split(model.intermediate_size, "intermediate_size");
    dense(2 * inter, h);  // gate and up, fused
    dense(h, inter);
  }
  if (moe) {
    if (model.num_shared_experts > 0) {
      const int64_t shared = split(model.num_shared_experts * model.moe_intermediate_size, "the shared experts' size");
      dense(2 * shared, h);
      dense(h, shared);
    }
    if (model.num_experts % d.ep != 0) {
      bad(model.name + ": " + std::to_string(model.num_experts) + " experts do not split over ep = " + std::to_string(d.ep));
    }
    const int64_t experts = model.num_experts / d.ep;
    const int64_t inter = d.ep > 1 ? model.moe_intermediate_size : split(model.moe_intermediate_size, "moe_intermediate_size");
    for (auto [n, k] : {std::pair{2 * inter, h}, {h, inter}}) {
      out.push_back({WarmupOp::kMGroupedContiguous, 0, n, k, experts, ContiguousLayout::kGroupIds});
      if (d.masked_moe) out.push_back({WarmupOp::kMGroupedMasked, 0, n, k, experts, ContiguousLayout::kGroupIds});
    }
  }
  // One GEMM per distinct shape.
  std::vector<WarmupGemm> unique;
  for (const auto& g : out) {
    const bool seen = std::any_of(unique.begin(), unique.end(), [&](const WarmupGemm& u) {
      return u.op == g.op && u.m == g.m && u.n == g.n && u.k == g.k && u.groups == g.groups && u.layout == g.layout;
    });
    if (!seen) unique.push_back(g);
  }
  return unique;
}

WarmupPlan plan_warmup(const std::vector<WarmupGemm>& gemms, const WarmupOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const Plan made = make_plan(gemms, options);
  WarmupPlan plan;
  plan.problems = made.problems;
  plan.num_kernels = static_cast<int>(made.sources.size());
  plan.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return plan;
}

PrecompileReport warmup(const std::vector<WarmupGemm>& gemms, const WarmupOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const Plan plan = make_plan(gemms, options);
  const auto progress = options.progress ? options.progress : options.show_progress ? progress_bar() : nullptr;
  PrecompileReport report = jit::precompile_sources(plan.sources, options.jobs, progress);
  if (!options.archive.empty()) {
    std::vector<std::string> dirs;
    for (const auto& source : plan.sources) dirs.push_back(jit::cache_entry_dir(source, jit::default_compiler()));
    export_cache_archive(options.archive, dirs);
  }
  // With a GPU, the GEMM kernels are loaded into this process too: a CUDA-graph capture refuses to load one.
  if (options.load && report.errors.empty() && gpu_available()) {
    for (const auto& config : plan.gemm_configs) api::fp8_gemm_kernel(config, "warmup", nullptr);
    report.num_loaded = static_cast<int>(plan.gemm_configs.size());
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace hopgemm
