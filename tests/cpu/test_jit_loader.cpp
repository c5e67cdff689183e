// Loading and launching. Without a GPU driver every entry point must fail with Error(kCuda) and a clear
// message (the library itself loads and its CPU paths work); with a GPU the tiny kernel is loaded, launched
// and checked, and a miss inside a CUDA-graph capture is refused.
#include <gtest/gtest.h>
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "cpu/jit_test_kernel.hpp"
#include "cpu/jit_test_util.hpp"
#include "hopgemm/error.hpp"
#include "hopgemm/jit.hpp"
#include "hopgemm/runtime.hpp"
#include "jit/compiler.hpp"
#include "jit/disk_cache.hpp"
#include "jit/kernel_cache.hpp"
#include "jit/loader.hpp"

namespace {

using namespace hopgemm::jit;
using hopgemm::Error;
using hopgemm::ErrorKind;
using hopgemm_test::tiny_kernel_source;

using Loader = hopgemm_test::TempCacheTest;

template <typename Fn>
void expect_error(Fn&& fn, ErrorKind kind, const std::vector<std::string>& phrases) {
  try {
    fn();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    for (const auto& phrase : phrases) EXPECT_NE(std::string(e.what()).find(phrase), std::string::npos) << e.what();
  }
}

TEST_F(Loader, WithoutADriverEveryEntryPointThrowsCudaErrors) {
  if (hopgemm::gpu_available()) GTEST_SKIP() << "a GPU is present: the GPU cases below run instead";
  const CompiledKernel compiled = get_or_compile(tiny_kernel_source(20), default_compiler()).kernel;
  expect_error([&] { LoadedKernel kernel(compiled); }, ErrorKind::kCuda, {"driver"});
  expect_error([&] { refuse_inside_capture(nullptr, "fp8_gemm_nt", "sm90_fp8_gemm"); }, ErrorKind::kCuda,
               {"driver", "fp8_gemm_nt"});
  expect_error([&] { load_kernel(tiny_kernel_source(21), "test_op", nullptr); }, ErrorKind::kCuda, {"driver"});
  KernelCache<int> cache([](const int& v) { return tiny_kernel_source(v); });
  expect_error([&] { cache.get(22, "test_op", nullptr); }, ErrorKind::kCuda, {"driver"});
}

TEST_F(Loader, ErrorOnMissNamesOpFamilyAndPrecompile) {
  hopgemm::set_jit_policy(hopgemm::JitPolicy::kErrorOnMiss);
  const KernelSource source = tiny_kernel_source(23);
  expect_error([&] { load_kernel(source, "fp8_gemm_nt", nullptr); }, ErrorKind::kJit,
               {"fp8_gemm_nt", "test_tiny", "hopgemm precompile", "error_on_miss"});
  EXPECT_FALSE(disk_cache_contains(source, default_compiler())) << "nothing was compiled";
  // Once precompiled, the policy lets it through (to the loader, which needs a driver here).
  get_or_compile(source, default_compiler());
  if (hopgemm::gpu_available()) {
    EXPECT_NO_THROW(load_kernel(source, "fp8_gemm_nt", nullptr));
  } else {
    expect_error([&] { load_kernel(source, "fp8_gemm_nt", nullptr); }, ErrorKind::kCuda, {"driver"});
  }
  hopgemm::set_jit_policy(hopgemm::JitPolicy::kAllow);
}

TEST_F(Loader, WarnOnMissWarnsOncePerKernel) {
  hopgemm::set_jit_policy(hopgemm::JitPolicy::kWarnOnMiss);
  const KernelSource source = tiny_kernel_source(24);
  testing::internal::CaptureStderr();
  for (int i = 0; i < 2; ++i) {
    try {
      load_kernel(source, "bf16_gemm_nt", nullptr);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kCuda);  // no driver: the warning came first
      ASSERT_FALSE(hopgemm::gpu_available());
    }
  }
  const std::string err = testing::internal::GetCapturedStderr();
  hopgemm::set_jit_policy(hopgemm::JitPolicy::kAllow);
  const size_t first = err.find("warning");
  ASSERT_NE(first, std::string::npos) << err;
  EXPECT_EQ(err.find("warning", first + 1), std::string::npos) << err;
  EXPECT_NE(err.find("bf16_gemm_nt"), std::string::npos) << err;
  EXPECT_NE(err.find("test_tiny"), std::string::npos) << err;
}

class GpuLoader : public hopgemm_test::TempCacheTest {
 protected:
  void SetUp() override {
    if (!hopgemm::gpu_available()) GTEST_SKIP() << "no GPU: the no-driver cases above run instead";
    TempCacheTest::SetUp();
  }
};

// Runs the tiny kernel (out[i] = i * 3 + offset) on n elements and checks every one.
void run_and_check(const LoadedKernel& kernel, int offset, int n, unsigned cluster, cudaStream_t stream) {
  float* out = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&out), n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(out, 0xff, n * sizeof(float), stream), cudaSuccess);  // NaN
  const hopgemm_test::TinyParams params{out, n};
  LaunchGeometry geometry;
  geometry.grid_x = static_cast<unsigned>((n + 127) / 128 + 1) / cluster * cluster;
  geometry.block_x = 128;
  geometry.cluster_x = cluster;
  geometry.smem_bytes = 64 * 1024;  // over the default limit: exercises ensure_smem_limit
  launch(kernel, geometry, &params, stream);
  std::vector<float> host(n);
  ASSERT_EQ(cudaMemcpyAsync(host.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  cudaFree(out);
  for (int i = 0; i < n; ++i) ASSERT_EQ(host[i], static_cast<float>(i * 3 + offset)) << i;
}

TEST_F(GpuLoader, LoadLaunchAndCheck) {
  const CompiledKernel compiled = get_or_compile(tiny_kernel_source(30), default_compiler()).kernel;
  LoadedKernel kernel(compiled);
  EXPECT_EQ(kernel.entry(), compiled.entry);
  EXPECT_NE(kernel.handle(), nullptr);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  run_and_check(kernel, 30, 1000, 1, stream);
  run_and_check(kernel, 30, 4097, 2, stream);  // thread-block cluster of 2
  hopgemm::set_pdl(true);
  run_and_check(kernel, 30, 777, 1, stream);
  hopgemm::set_pdl(false);
  cudaStreamDestroy(stream);
}

TEST_F(GpuLoader, KernelCacheHitIsTheSameKernel) {
  KernelCache<int> cache([](const int& v) { return tiny_kernel_source(v); });
  const LoadedKernel& a = cache.get(31, "test_op", nullptr);
  const LoadedKernel& b = cache.get(31, "test_op", nullptr);
  EXPECT_EQ(&a, &b);
  run_and_check(a, 31, 300, 1, nullptr);
}

TEST_F(GpuLoader, MissInsideCaptureIsRefusedHitIsFine) {
  KernelCache<int> cache([](const int& v) { return tiny_kernel_source(v); });
  const LoadedKernel& warm = cache.get(32, "test_op", nullptr);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  EXPECT_EQ(&cache.get(32, "test_op", stream), &warm) << "a memory hit needs no check";
  expect_error([&] { cache.get(33, "fp8_gemm_nt", stream); }, ErrorKind::kJit,
               {"fp8_gemm_nt", "test_tiny", "captured", "warm-up"});
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  if (graph != nullptr) cudaGraphDestroy(graph);
  EXPECT_FALSE(disk_cache_contains(tiny_kernel_source(33), default_compiler())) << "nothing compiled in capture";
  cudaStreamDestroy(stream);
}

}  // namespace
