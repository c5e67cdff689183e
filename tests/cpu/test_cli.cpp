// The hopgemm command-line tool's GPU-free commands, run as a user would (the built binary, HOPGEMM_CLI_PATH).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

namespace {

struct CliRun {
  int status = -1;
  std::string output;  // stdout and stderr together
};

CliRun run_cli(const std::string& args) {
  CliRun r;
  FILE* pipe = popen((std::string(HOPGEMM_CLI_PATH) + " " + args + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer{};
  while (fgets(buffer.data(), buffer.size(), pipe) != nullptr) r.output += buffer.data();
  r.status = pclose(pipe);
  return r;
}

TEST(Cli, ExplainNamesTheTunedChoiceAndTheModelsRanking) {
  const CliRun r = run_cli("explain --shape 4096x7168x16384 --top 2");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("fwd 4096x7168x16384: Sm90Fp8GemmConfig(block_m=256, block_n=128"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[tuned]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("model #2: "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("model #3: "), std::string::npos) << r.output;
}

TEST(Cli, ExplainFallsBackToTheModelOffTheTable) {
  const CliRun r = run_cli("explain --shape wgrad:1000x3000x5120 --top 1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("wgrad 1000x3000x5120: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[model]"), std::string::npos) << r.output;
}

TEST(Cli, BadOptionsNameTheOption) {
  for (const char* command : {"explain", "bench", "tune"}) {
    const CliRun r = run_cli(std::string(command) + " --sfa colmajor");
    EXPECT_NE(r.status, 0) << command;
    EXPECT_NE(r.output.find("--sfa must be 'mn' (MN-major TMA-aligned) or 'row', got 'colmajor'"), std::string::npos)
        << command << ": " << r.output;
  }
  const CliRun sustain = run_cli("bench --sustain-ms 99999");
  EXPECT_NE(sustain.status, 0);
  EXPECT_NE(sustain.output.find("option --sustain-ms must be 0 .. 60000, got 99999"), std::string::npos) << sustain.output;
  const CliRun shape = run_cli("explain --shape 64x100x128");
  EXPECT_NE(shape.status, 0);
  EXPECT_NE(shape.output.find("N of 8"), std::string::npos) << shape.output;
}

}  // namespace
