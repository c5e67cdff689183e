// The hopgemm command line as a new user meets it, without a GPU: help for every command, arguments checked before
// the GPU is looked for, `cache ls` naming what each entry is, `precompile` saying what it could store.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

#include "api/gemm_sources.hpp"
#include "api/suite_sources.hpp"
#include "api/suites.hpp"
#include "jit/compiler.hpp"
#include "jit/disk_cache.hpp"
#include "hopgemm/jit.hpp"
#include "hopgemm/runtime.hpp"
#include "hopgemm/warmup.hpp"
#include "jit_test_util.hpp"

namespace {

struct CliRun {
  int status = -1;
  std::string output;  // stdout and stderr together
};

// Runs the built CLI with `env` ("NAME=value ..." or "") in front of it.
CliRun run_cli(const std::string& args, const std::string& env = "") {
  CliRun r;
  FILE* pipe = popen((env + " " + HOPGEMM_CLI_PATH + " " + args + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer{};
  while (fgets(buffer.data(), buffer.size(), pipe) != nullptr) r.output += buffer.data();
  r.status = pclose(pipe);
  return r;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(CliUsage, EveryCommandHasHelp) {
  for (const char* command : {"info", "bench", "tune", "explain", "precompile", "cache"}) {
    for (const std::string& form : {std::string(command) + " --help", std::string(command) + " -h",
                                    "help " + std::string(command), std::string(command) + " --shape 12x --help"}) {
      const CliRun r = run_cli(form);
      EXPECT_EQ(r.status, 0) << form << ": " << r.output;
      EXPECT_EQ(r.output.rfind(std::string("usage: hopgemm ") + command, 0), 0u) << form << ": " << r.output;
    }
  }
  const CliRun bench = run_cli("bench --help");
  for (const char* option : {"--suite", "--role", "--shape", "--sfa", "--flush", "--iters", "--sustain-ms", "--config",
                             "--out", "--plot"}) {
    EXPECT_NE(bench.output.find(option), std::string::npos) << option;
  }
  const CliRun overview = run_cli("--help");
  EXPECT_EQ(overview.status, 0);
  EXPECT_NE(overview.output.find("'hopgemm <command> --help'"), std::string::npos) << overview.output;
  EXPECT_NE(run_cli("").status, 0);  // no command: the overview on stderr, a usage error
}

TEST(CliUsage, BenchChecksItsArgumentsBeforeLookingForAGpu) {
  const CliRun shape = run_cli("bench --shape 12x");
  EXPECT_NE(shape.status, 0);
  EXPECT_NE(shape.output.find("--shape '12x' must be"), std::string::npos) << shape.output;
  const CliRun suite = run_cli("bench --suite no-such-suite");
  EXPECT_NE(suite.status, 0);
  EXPECT_NE(suite.output.find("unknown suite 'no-such-suite'"), std::string::npos) << suite.output;
  const CliRun role = run_cli("bench --role sideways");
  EXPECT_NE(role.output.find("--role 'sideways' must be fwd, dgrad or wgrad"), std::string::npos) << role.output;
}

TEST(CliUsage, VersionAndAMistypedCommand) {
  for (const char* form : {"--version", "-V", "version"}) {
    const CliRun r = run_cli(form);
    EXPECT_EQ(r.status, 0) << form;
    EXPECT_EQ(r.output, std::string("hopgemm ") + hopgemm::version() + "\n") << form;
  }
  for (auto [typed, meant] : {std::pair{"ino", "info"}, {"precomple", "precompile"}, {"bnech", "bench"}, {"cach", "cache"}}) {
    const CliRun r = run_cli(typed);
    EXPECT_NE(r.status, 0) << typed;
    EXPECT_NE(r.output.find(std::string("did you mean 'hopgemm ") + meant + "'?"), std::string::npos) << r.output;
  }
  EXPECT_EQ(run_cli("frobnicate").output.find("did you mean"), std::string::npos);
}

// The suites and models the help texts list are the ones the commands take: the lists come from the code.
TEST(CliUsage, HelpListsWhatTheCommandsTake) {
  const CliRun precompile = run_cli("precompile --help");
  std::string known;
  for (const auto& suite : hopgemm::precompile_suites()) {
    EXPECT_NE(precompile.output.find(suite), std::string::npos) << suite << "\n" << precompile.output;
    known += (known.empty() ? "" : ", ") + suite;
  }
  const CliRun unknown = run_cli("precompile --suite no-such-suite");
  EXPECT_NE(unknown.status, 0);
  EXPECT_NE(unknown.output.find("unknown suite 'no-such-suite' (known: " + known + ")"), std::string::npos)
      << unknown.output;
  for (const auto& model : hopgemm::model_presets()) {
    EXPECT_NE(precompile.output.find(model), std::string::npos) << model;
    const CliRun plan = run_cli("precompile --model " + model + " --tp 8 --ep 8 --max-tokens 64 --dry-run");
    EXPECT_EQ(plan.status, 0) << plan.output;
    EXPECT_NE(plan.output.find("distinct kernels (planned in"), std::string::npos) << plan.output;
  }
  for (const auto& suite : hopgemm::precompile_suites()) {  // a suite's --dry-run counts what --suite would build
    const CliRun plan = run_cli("precompile --suite " + suite + " --dry-run");
    EXPECT_EQ(plan.status, 0) << plan.output;
    EXPECT_NE(plan.output.find(": " + std::to_string(hopgemm::api::precompile_sources(suite, 132).size()) +
                               " distinct kernels (nothing compiled)"), std::string::npos) << plan.output;
  }
  const CliRun bench = run_cli("bench --help");
  for (const auto& suite : hopgemm::api::suite_names()) EXPECT_NE(bench.output.find(suite), std::string::npos) << suite;
  EXPECT_EQ(bench.output.find(hopgemm::api::kMoeSuite), std::string::npos) << bench.output;  // precompile only
}

TEST(CliUsage, PrecompileChecksItsNumbers) {
  const CliRun r = run_cli("precompile --num-sms 0");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("option --num-sms must be 1 .. 1024, got 0"), std::string::npos) << r.output;
}

class CliCache : public hopgemm_test::TempCacheTest {};

TEST_F(CliCache, LsNamesEachEntrysFamilyProblemClassAndConfig) {
  using namespace hopgemm;
  const jit::Compiler& compiler = jit::default_compiler();
  jit::get_or_compile(api::layout_suite_sources().at(1), compiler);  // the UE8M0 pack
  const auto gemms = api::gemm_suite_sources({{api::GemmRole::kForward, 128, 2112, 7168}}, 132);
  ASSERT_FALSE(gemms.empty());
  jit::get_or_compile(gemms.front(), compiler);
  std::vector<jit::KernelSource> bf16;
  for (const auto& family : api::precompile_families()) {
    if (std::string(family.family) == "sm90_bf16_gemm") bf16 = family.sources("deepseek-v3", 132);
  }
  ASSERT_FALSE(bf16.empty());
  jit::get_or_compile(bf16.front(), compiler);

  const CliRun r = run_cli("cache ls", "HOPGEMM_CACHE_DIR=" + root());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find(": 3 entries"), std::string::npos) << r.output;
  // Every GEMM family's problem class in words, its tunable fields apart.
  EXPECT_NE(r.output.find("\nsm90_bf16_gemm "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("    problem: BF16 A K-major, B K-major, BF16 D, dense\n"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("problem: block_m="), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\nsm90_sf_layout "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("    problem: pack_ue8m0=1 max_groups="), std::string::npos) << r.output;
  // The GEMM's problem class (recipe, dtypes, layouts) in words, apart from its tuned config (tiles, stages, splits).
  EXPECT_NE(r.output.find("\nsm90_fp8_gemm "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("    problem: 1D2D scales (A per 1x128, B per 128x128), BF16 D, A scales row-major, dense\n"),
            std::string::npos) << r.output;
  // And the compiler that built each entry, with its file.
  EXPECT_NE(r.output.find("    compiler: " + compiler.signature() + ", " + compiler.location() + "\n"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("    config: block_m="), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("config: recipe="), std::string::npos) << r.output;
}

TEST_F(CliCache, PrecompileIntoAnUnusableCacheWarnsOnceAndSaysNothingWasStored) {
  // A cache path below a regular file cannot be created, even by root: every kernel is compiled in memory.
  const std::string file = root() + "/not-a-directory";
  std::ofstream(file) << "x";
  // wgrad-pr95: the smaller suite (37 kernels, ~10 s on two cores).
  const CliRun r = run_cli("precompile --suite wgrad-pr95", "HOPGEMM_CACHE_DIR=" + file + "/cache");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(count(r.output, "is not usable"), 1u) << r.output;
  EXPECT_NE(r.output.find("compiled, 0 already cached)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("; 0 stored in " + file + "/cache"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("kernels could not be stored"), std::string::npos) << r.output;
}

}  // namespace
