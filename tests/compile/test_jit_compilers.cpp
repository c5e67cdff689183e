// Both compilers build the same tiny kernel for sm_90a on a CPU-only machine: a non-empty ELF cubin, the
// entry point found in the ptxas report, no spills. Prints the cold compile times.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>

#include "cpu/jit_test_kernel.hpp"
#include "cpu/jit_test_util.hpp"
#include "hopgemm/error.hpp"
#include "jit/compiler.hpp"

namespace {

using namespace hopgemm::jit;

class Compilers : public hopgemm_test::TempCacheTest {
 protected:
  // A private, empty scratch directory (what the disk cache hands a compiler).
  std::string scratch(const char* name) {
    const std::string dir = root() + "/" + name;
    std::filesystem::create_directories(dir);
    return dir;
  }
};

void expect_good_cubin(const CompiledKernel& k, const char* compiler) {
  SCOPED_TRACE(compiler);
  ASSERT_GE(k.cubin.size(), 64u);
  EXPECT_EQ(std::string(k.cubin.data(), 4), "\x7f" "ELF");
  EXPECT_NE(k.entry.find("tiny_kernel"), std::string::npos) << k.entry;
  EXPECT_GT(k.resources.registers, 0);
  EXPECT_EQ(k.resources.spill_store_bytes, 0);
  EXPECT_EQ(k.resources.spill_load_bytes, 0);
  EXPECT_FALSE(k.resources.spills());
  EXPECT_NE(k.log.find("sm_90a"), std::string::npos) << k.log;
  EXPECT_GT(k.compile_seconds, 0.0);
}

TEST_F(Compilers, NvrtcAndNvccBuildTheSameKernel) {
  // A fresh variant: neither compiler has seen it, so both times are cold.
  const KernelSource source = hopgemm_test::tiny_kernel_source(100, 7);
  const auto nvrtc = make_nvrtc_compiler();
  const auto nvcc = make_nvcc_compiler();
  EXPECT_EQ(nvrtc->signature().rfind("NVRTC ", 0), 0u) << nvrtc->signature();
  EXPECT_EQ(nvcc->signature().rfind("NVCC ", 0), 0u) << nvcc->signature();

  const CompiledKernel a = nvrtc->compile(source, scratch("nvrtc"));
  const CompiledKernel b = nvcc->compile(source, scratch("nvcc"));
  expect_good_cubin(a, "NVRTC");
  expect_good_cubin(b, "NVCC");
  EXPECT_EQ(a.entry, b.entry) << "one mangled name for one instantiation";
  std::printf("cold compile of the test kernel for sm_90a: %s %.3f s (%d registers), %s %.3f s (%d registers)\n",
              nvrtc->signature().c_str(), a.compile_seconds, a.resources.registers, nvcc->signature().c_str(),
              b.compile_seconds, b.resources.registers);
}

// NVRTC 13's own output cache (in the driver's compute cache, so only where a driver exists) skips ptxas
// on a repeat and drops the resource report; the compiler must turn it off.
TEST_F(Compilers, RepeatedNvrtcCompileKeepsThePtxasReport) {
  const auto nvrtc = make_nvrtc_compiler();
  const KernelSource source = hopgemm_test::tiny_kernel_source(102);
  for (int i = 0; i < 3; ++i) expect_good_cubin(nvrtc->compile(source, scratch("repeat")), "NVRTC repeated");
}

TEST_F(Compilers, LineinfoIsAFlag) {
  const auto plain = make_nvrtc_compiler();
  const auto lines = make_nvrtc_compiler("sm_90a", true);
  EXPECT_NE(plain->flags(), lines->flags());
  const CompiledKernel k = lines->compile(hopgemm_test::tiny_kernel_source(101), scratch("lineinfo"));
  expect_good_cubin(k, "NVRTC -lineinfo");
  EXPECT_NE(make_nvcc_compiler()->flags(), make_nvcc_compiler("sm_90a", true)->flags());
}

void expect_compile_error(const Compiler& compiler, const std::string& dir) {
  const KernelSource broken{"test_broken_family",
                            "#include <hopgemm/device/common.cuh>\n__global__ void k() { undefined_name(); }\n"};
  try {
    compiler.compile(broken, dir);
    FAIL() << compiler.signature() << " accepted broken code";
  } catch (const hopgemm::Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.kind(), hopgemm::ErrorKind::kJit);
    EXPECT_NE(what.find("test_broken_family"), std::string::npos) << what;
    EXPECT_NE(what.find("undefined_name"), std::string::npos) << what;  // the compiler log is included
    EXPECT_NE(what.substr(0, what.find('\n')).find("error"), std::string::npos) << "first line says what failed";
  }
}

TEST_F(Compilers, CompileErrorsCarryTheLogAndFamily) {
  expect_compile_error(*make_nvrtc_compiler(), scratch("nvrtc"));
  expect_compile_error(*make_nvcc_compiler(), scratch("nvcc"));
}

TEST_F(Compilers, TwoEntryPointsAreRejected) {
  const KernelSource two{"test_two_entries",
                         "__global__ void a(int* p) { *p = 1; }\n__global__ void b(int* p) { *p = 2; }\n"};
  try {
    make_nvrtc_compiler()->compile(two, scratch("two"));
    FAIL() << "accepted a TU with two kernels";
  } catch (const hopgemm::Error& e) {
    EXPECT_EQ(e.kind(), hopgemm::ErrorKind::kJit);
    EXPECT_NE(std::string(e.what()).find("entry point"), std::string::npos) << e.what();
  }
}

TEST_F(Compilers, MissingNvccIsAClearError) {
  // make_nvcc_compiler reads HOPGEMM_NVCC through the parsed environment; a bad CUDA_HOME is tested
  // instead when no nvcc path is configured.
  if (std::getenv("HOPGEMM_NVCC") != nullptr || std::getenv("DG_JIT_NVCC_COMPILER") != nullptr) {
    GTEST_SKIP() << "an nvcc path is configured in the environment";
  }
  const char* old = std::getenv("CUDA_HOME");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("CUDA_HOME", "/nonexistent/cuda", 1);
  try {
    make_nvcc_compiler();
    ADD_FAILURE() << "no error";
  } catch (const hopgemm::Error& e) {
    EXPECT_EQ(e.kind(), hopgemm::ErrorKind::kJit);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/cuda/bin/nvcc"), std::string::npos) << e.what();
  }
  if (old != nullptr) {
    ::setenv("CUDA_HOME", saved.c_str(), 1);
  } else {
    ::unsetenv("CUDA_HOME");
  }
}

}  // namespace
