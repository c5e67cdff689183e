// `hopgemm precompile`, `hopgemm cache ls|verify|clear` and `hopgemm info`, run as a user would (the built binary,
// HOPGEMM_CLI_PATH) on a private cache directory: precompile builds every kernel of both suites (on every core), each
// one clean (no spills) and exactly the entry the ops look up; a second precompile finds them all cached; the cache
// commands and info see them, verify catches a damaged entry, clear removes them. Needs no GPU.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "api/gemm_sources.hpp"
#include "api/mqa_logits_sources.hpp"
#include "api/suite_sources.hpp"
#include "api/suites.hpp"
#include "compile/compiled_kernel_checks.hpp"
#include "hopgemm/jit.hpp"
#include "jit/compiler.hpp"
#include "jit/disk_cache.hpp"

namespace hopgemm {
namespace {

struct CliRun {
  int status = -1;
  std::string output;  // stdout and stderr together
};

CliRun run_cli(const std::string& cache_dir, const std::string& args) {
  CliRun r;
  const std::string command =
      "HOPGEMM_CACHE_DIR='" + cache_dir + "' " + std::string(HOPGEMM_CLI_PATH) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer{};
  while (fgets(buffer.data(), buffer.size(), pipe) != nullptr) r.output += buffer.data();
  r.status = pclose(pipe);
  return r;
}

// The distinct kernels `hopgemm precompile --suite <suite>` builds for 132 SMs: every registered family's.
std::vector<jit::KernelSource> precompile_set(const std::string& suite) { return api::precompile_sources(suite, 132); }

// "built B of N kernels (C compiled, K already cached)..." -> {N, C, K}, with every kernel built (B == N).
std::array<int, 3> built_counts(const std::string& output) {
  std::smatch match;
  const std::regex line(R"(built (\d+) of (\d+) kernels \((\d+) compiled, (\d+) already cached\))");
  if (!std::regex_search(output, match, line)) {
    ADD_FAILURE() << "no 'built ... kernels' line in:\n" << output;
    return {-1, -1, -1};
  }
  EXPECT_EQ(match[1], match[2]) << output;
  return {std::stoi(match[2]), std::stoi(match[3]), std::stoi(match[4])};
}

class ScopedCacheDir {
 public:
  explicit ScopedCacheDir(const std::filesystem::path& path) : previous_(get_cache_dir()), path_(path) {
    std::filesystem::remove_all(path_);
    set_cache_dir(path_.string());
  }
  ~ScopedCacheDir() {
    set_cache_dir(previous_);
    std::filesystem::remove_all(path_);
  }
  std::string str() const { return path_.string(); }

 private:
  std::string previous_;
  std::filesystem::path path_;
};

TEST(PrecompileCli, BuildsCleanSuiteKernelsThatTheCacheCommandsSee) {
  // Under the compile tests' cache directory when ctest runs them (tests/CMakeLists.txt), else the temp directory.
  const char* root = std::getenv("HOPGEMM_CACHE_DIR");
  const ScopedCacheDir cache(std::filesystem::path(root != nullptr ? root : std::filesystem::temp_directory_path()) /
                             "precompile-cli");
  std::set<std::string> distinct;
  size_t first_suite_kernels = 0;
  for (const char* suite : {"deepseek-v3", "wgrad-pr95"}) {
    SCOPED_TRACE(suite);
    const auto sources = precompile_set(suite);
    const CliRun run = run_cli(cache.str(), std::string("precompile --suite ") + suite);
    ASSERT_EQ(run.status, 0) << run.output;
    const auto [built, compiled, cached] = built_counts(run.output);
    EXPECT_EQ(built, static_cast<int>(sources.size())) << run.output;
    EXPECT_EQ(compiled + cached, built) << run.output;
    size_t new_here = 0;
    for (const auto& s : sources) new_here += distinct.insert(s.code).second;
    EXPECT_EQ(compiled, static_cast<int>(new_here)) << "the second suite compiles only what the first did not build";
    if (first_suite_kernels == 0) first_suite_kernels = sources.size();
    // Each one is the entry the ops look up (read back, not compiled) and compiled clean.
    for (const auto& s : sources) {
      const jit::CacheResult r = jit::get_or_compile(s, jit::default_compiler());
      EXPECT_FALSE(r.compiled) << s.code;
      testing::expect_clean(r.kernel, s);
    }
  }
  const int entries = static_cast<int>(distinct.size());

  const CliRun again = run_cli(cache.str(), "precompile --suite deepseek-v3");
  ASSERT_EQ(again.status, 0) << again.output;
  EXPECT_EQ(built_counts(again.output), (std::array<int, 3>{int(first_suite_kernels), 0, int(first_suite_kernels)}));

  const CliRun ls = run_cli(cache.str(), "cache ls");
  ASSERT_EQ(ls.status, 0) << ls.output;
  EXPECT_NE(ls.output.find(cache.str() + ": " + std::to_string(entries) + " entries"), std::string::npos) << ls.output;
  for (const char* family : {"sm90_fp8_gemm", "sm90_quantize_fp8", "sm90_sf_layout"}) {
    EXPECT_NE(ls.output.find(family), std::string::npos) << family << " missing from:\n" << ls.output;
  }
  EXPECT_EQ(ls.output.find("INVALID"), std::string::npos) << ls.output;

  const CliRun info = run_cli(cache.str(), "info");
  ASSERT_EQ(info.status, 0) << info.output;
  EXPECT_NE(info.output.find(cache.str() + " (" + std::to_string(entries) + " entries)"), std::string::npos)
      << info.output;
  EXPECT_NE(info.output.find("JIT compiler"), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("GPU"), std::string::npos) << info.output;

  const CliRun verify = run_cli(cache.str(), "cache verify");
  EXPECT_EQ(verify.status, 0) << verify.output;
  EXPECT_NE(verify.output.find(std::to_string(entries) + " valid, 0 invalid"), std::string::npos) << verify.output;
  // A truncated cubin: verify names the entry and fails.
  const std::string damaged = jit::cache_entry_dir(precompile_set("deepseek-v3").back(), jit::default_compiler());
  std::filesystem::resize_file(std::filesystem::path(damaged) / "kernel.cubin", 10);
  const CliRun bad = run_cli(cache.str(), "cache verify");
  EXPECT_NE(bad.status, 0) << bad.output;
  EXPECT_NE(bad.output.find("INVALID " + damaged), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find(std::to_string(entries - 1) + " valid, 1 invalid"), std::string::npos) << bad.output;

  const CliRun clear = run_cli(cache.str(), "cache clear");
  EXPECT_EQ(clear.status, 0) << clear.output;
  EXPECT_NE(clear.output.find("removed " + std::to_string(entries) + " entries"), std::string::npos) << clear.output;
  EXPECT_NE(run_cli(cache.str(), "cache ls").output.find(": 0 entries"), std::string::npos);
  EXPECT_NE(run_cli(cache.str(), "cache tidy").status, 0);
}

}  // namespace
}  // namespace hopgemm
