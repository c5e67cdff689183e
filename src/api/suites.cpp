#include "api/suites.hpp"

#include <unistd.h>

#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "api/bf16_gemm_internal.hpp"
#include "api/gemm_sources.hpp"
#include "api/mqa_logits_sources.hpp"
#include "api/suite_sources.hpp"
#include "hopgemm/error.hpp"
#include "hopgemm/jit.hpp"
#include "hopgemm/layout.hpp"
#include "jit/compiler.hpp"
#include "jit/disk_cache.hpp"
#include "jit/precompile.hpp"

namespace hopgemm {
namespace api {
namespace {

// DeepSeek-V3 dense (N, K) pairs of the BF16-output GEMMs (the shapes of DeepGEMM's tests/generators.py).
constexpr int64_t kDeepseekV3NK[][2] = {{2112, 7168}, {576, 7168},   {24576, 1536}, {32768, 512},
                                        {7168, 16384}, {4096, 7168}, {7168, 2048}};
constexpr int64_t kForwardM[] = {1, 64, 128, 4096};
constexpr int64_t kBackwardM = 4096;

std::vector<SuiteGemm> deepseek_v3() {
  std::vector<SuiteGemm> gemms;
  for (int64_t m : kForwardM) {
    for (const auto& nk : kDeepseekV3NK) gemms.push_back({GemmRole::kForward, m, nk[0], nk[1]});
  }
  // Backward of y[m, n] = x[m, k] w[n, k]^T: dgrad dx[m, k] = dy[m, n] w (K = n), wgrad dw[n, k] = dy^T x (K = m).
  for (const auto& nk : kDeepseekV3NK) gemms.push_back({GemmRole::kDgrad, kBackwardM, nk[1], nk[0]});
  for (const auto& nk : kDeepseekV3NK) gemms.push_back({GemmRole::kWgrad, nk[0], nk[1], kBackwardM});
  gemms.push_back({GemmRole::kForward, 8192, 8192, 8192});
  return gemms;
}

// DeepGEMM PR #95's dense weight-gradient shapes: 1D1D, FP32 D += A B^T.
std::vector<SuiteGemm> wgrad_pr95() {
  constexpr int64_t kMNK[][3] = {{7168, 2112, 4096}, {1536, 24576, 4096}, {512, 32768, 4096},
                                 {16384, 7168, 4096}, {7168, 4096, 4096}, {2048, 7168, 4096},
                                 {7168, 2112, 8192}, {1536, 24576, 8192}, {512, 32768, 8192}};
  std::vector<SuiteGemm> gemms;
  for (const auto& s : kMNK) gemms.push_back({GemmRole::kWgrad, s[0], s[1], s[2]});
  return gemms;
}

}  // namespace

std::vector<heuristics::Fp8GemmProblem> moe_suite_problems(int num_sms) {
  // (N, K) of the M-grouped cases (DeepGEMM's tests/generators.py).
  constexpr int64_t kNK[][2] = {{6144, 7168}, {7168, 3072}, {4096, 4096}, {4096, 2048}};
  std::vector<heuristics::Fp8GemmProblem> problems;
  for (const auto& nk : kNK) {
    for (int sfa_k_major : {1, 0}) {
      // Contiguous (groups, rows per group), group-ids and row-range (psum, packed) layouts.
      for (auto [groups, m] : {std::pair{4, 8192}, {8, 4096}}) {
        for (int grouping : {device::kGroupingMIds, device::kGroupingMRanges}) {
          problems.push_back(heuristics::make_m_grouped_problem(grouping, m, nk[0], nk[1], groups, sfa_k_major,
                                                                get_mk_alignment_for_contiguous_layout(), num_sms, 100));
        }
      }
      // Masked (groups, expected m) as DeepGEMM's test passes expected m (x 1.2).
      for (auto [groups, m] : {std::pair{32, 192}, {6, 1024}, {32, 20}, {6, 20}}) {
        problems.push_back(heuristics::make_m_grouped_problem(device::kGroupingMRanges, m * 6 / 5, nk[0], nk[1], groups,
                                                              sfa_k_major, 0, num_sms, 100));
      }
    }
  }
  // K-grouped weight gradients (groups, m, n, expected k): the six EP cases.
  constexpr int64_t kKGrouped[][4] = {{4, 4096, 7168, 8192}, {4, 7168, 2048, 8192}, {8, 4096, 7168, 4096},
                                      {8, 7168, 2048, 4096}, {16, 4096, 7168, 2048}, {16, 7168, 2048, 2048}};
  for (const auto& g : kKGrouped) problems.push_back(heuristics::make_k_grouped_problem(g[1], g[2], g[3], g[0], num_sms, 100));
  return problems;
}

const char* gemm_role_name(GemmRole role) {
  switch (role) {
    case GemmRole::kForward: return "fwd";
    case GemmRole::kDgrad: return "dgrad";
    case GemmRole::kWgrad: return "wgrad";
  }
  return "?";
}

std::optional<GemmRole> gemm_role_from_name(const std::string& name) {
  for (GemmRole role : {GemmRole::kForward, GemmRole::kDgrad, GemmRole::kWgrad})
    if (name == gemm_role_name(role)) return role;
  return std::nullopt;
}

std::span<const PrecompileFamily> precompile_families() {
  // The layout, quantisation and indexer kernels do not depend on the shapes: the same few serve every suite.
  static constexpr PrecompileFamily kFamilies[] = {
      {"sm90_sf_layout", [](const std::string&, int) { return layout_suite_sources(); }},
      {"sm90_quantize_fp8", [](const std::string&, int) { return quantize_suite_sources(); }},
      {"sm90_mqa_logits", [](const std::string&, int) { return mqa_logits_suite_sources(); }},
      {"sm90_fp8_gemm", &fp8_gemm_suite_sources},
      {"sm90_bf16_gemm", &bf16_gemm_suite_sources},
  };
  return kFamilies;
}

std::vector<jit::KernelSource> precompile_sources(const std::string& suite, int num_sms) {
  std::vector<jit::KernelSource> sources;
  std::set<std::string> seen;
  for (const PrecompileFamily& family : precompile_families()) {
    for (auto& source : family.sources(suite, num_sms)) {
      if (seen.insert(source.code).second) sources.push_back(std::move(source));
    }
  }
  return sources;
}

std::vector<std::string> suite_names() { return {"deepseek-v3", "wgrad-pr95"}; }

const std::vector<SuiteGemm>& suite_gemms(const std::string& suite) {
  static const std::vector<SuiteGemm> v3 = deepseek_v3();
  static const std::vector<SuiteGemm> pr95 = wgrad_pr95();
  if (suite == "deepseek-v3") return v3;
  if (suite == "wgrad-pr95") return pr95;
  std::string known;
  for (const auto& name : suite_names()) known += (known.empty() ? "" : ", ") + name;
  throw Error(ErrorKind::kInvalidArgument, "unknown suite '" + suite + "' (known: " + known + ")");
}

}  // namespace api

std::vector<std::string> precompile_suites() {
  std::vector<std::string> names = api::suite_names();
  names.push_back(api::kMoeSuite);
  return names;
}

PrecompileReport precompile_suite(const std::string& suite, int num_sms, int jobs, bool show_progress) {
  if (num_sms <= 0) {
    throw Error(ErrorKind::kInvalidArgument, "precompile: num_sms=" + std::to_string(num_sms) + " must be positive");
  }
  std::vector<jit::KernelSource> sources = api::precompile_sources(suite, num_sms);
  std::function<void(int, int)> progress;
  if (show_progress) {
    // A redrawn line on a terminal; in a log, one line per tenth of the work.
    const bool terminal = isatty(fileno(stderr));
    progress = [terminal](int done, int total) {
      if (terminal) {
        std::fprintf(stderr, "\r[%d/%d] kernels", done, total);
        if (done == total) std::fputc('\n', stderr);
      } else if (done == total || done * 10 / total != (done - 1) * 10 / total) {
        std::fprintf(stderr, "[%d/%d] kernels\n", done, total);
      }
    };
  }
  PrecompileReport report = jit::precompile_sources(sources, jobs, progress);
  // What the disk cache holds now: where it could not be written (a full or read-only disk) the rest were
  // compiled in memory only, after one warning, and are lost at exit.
  const jit::Compiler& compiler = jit::default_compiler();
  std::set<std::string_view> stored;
  for (const auto& source : sources) {
    if (!stored.count(source.code) && jit::disk_cache_contains(source, compiler)) stored.insert(source.code);
  }
  report.num_stored = static_cast<int>(stored.size());
  return report;
}

}  // namespace hopgemm
