// Cold JIT compile times, recorded on every machine (they need no GPU). The warm host cost per call is measured by
// the benchmark bench/host_cost.cpp (hopgemm_host_cost), not in a correctness run.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "api/gemm_sources.hpp"
#include "api/suite_sources.hpp"
#include "api/suites.hpp"
#include "gpu_test_util.hpp"
#include "hopgemm/jit.hpp"
#include "jit/compiler.hpp"
#include "jit/disk_cache.hpp"

namespace hopgemm {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

class ScopedCacheDir {
 public:
  explicit ScopedCacheDir(const std::string& name)
      : previous_(get_cache_dir()), path_(std::filesystem::temp_directory_path() / name) {
    std::filesystem::remove_all(path_);
    set_cache_dir(path_.string());
  }
  ~ScopedCacheDir() {
    set_cache_dir(previous_);
    std::filesystem::remove_all(path_);
  }

 private:
  std::string previous_;
  std::filesystem::path path_;
};

void time_cold_compiles(const jit::Compiler& compiler, const char* label) {
  ScopedCacheDir cache(std::string("hopgemm-cold-") + label);
  std::vector<jit::KernelSource> sources = api::quantize_suite_sources();
  // Two FP8 GEMM kernels of the suite: a small-M and a large-M configuration.
  const auto gemms = api::gemm_suite_sources(api::suite_gemms("deepseek-v3"), 132);
  sources.push_back(gemms.front());
  sources.push_back(gemms.back());
  for (const auto& source : sources) {
    const auto start = Clock::now();
    const jit::CacheResult result = jit::get_or_compile(source, compiler);
    const double total = seconds_since(start);
    EXPECT_TRUE(result.compiled);
    EXPECT_FALSE(result.kernel.resources.spills()) << source.family;
    testing::record_result("{\"metric\": \"cold_compile\", \"compiler\": \"" + compiler.signature() +
                           "\", \"family\": \"" + source.family + "\", \"compile_s\": " +
                           std::to_string(result.kernel.compile_seconds) + ", \"total_s\": " + std::to_string(total) +
                           ", \"registers\": " + std::to_string(result.kernel.resources.registers) + "}");
  }
}

TEST(JitTimings, ColdCompileNvrtc) { time_cold_compiles(*jit::make_nvrtc_compiler(), "nvrtc"); }
TEST(JitTimings, ColdCompileNvcc) { time_cold_compiles(*jit::make_nvcc_compiler(), "nvcc"); }

}  // namespace
}  // namespace hopgemm
