// The benchmark timer on the GPU: both L2 flushes time a call, sustain runs the call back to back first, a negative
// sustain is refused. How much the clean flush (write, then read back) takes off a call is a measurement, printed
// here and by `hopgemm bench --flush clean`, not a pass/fail limit.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "bench/timer.hpp"
#include "gpu_test_util.hpp"
#include "hopgemm/error.hpp"
#include "runtime/cuda_check.hpp"

namespace hopgemm {
namespace {

TEST(BenchTimer, BothFlushesTimeTheCall) {
  HOPGEMM_SKIP_WITHOUT_GPU();
  constexpr size_t kBytes = size_t{96} << 20;  // a 96 MB copy: 192 MB of traffic, about 70 us on an H100
  bench::DeviceBuffer src(kBytes), dst(kBytes);
  HOPGEMM_CUDA_CHECK(cudaMemset(src.get(), 1, kBytes));
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  auto copy = [&](cudaStream_t s) {
    HOPGEMM_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), kBytes, cudaMemcpyDeviceToDevice, s));
  };
  bench::TimerOptions options;
  options.iters = 30;
  options.flush_mode = bench::L2Flush::kWrite;
  const bench::Timing write = bench::time_call(copy, stream, options);
  options.flush_mode = bench::L2Flush::kWriteThenRead;
  const bench::Timing clean = bench::time_call(copy, stream, options);
  cudaStreamDestroy(stream);
  std::printf("96 MB copy: %.1f us after a write flush, %.1f us after a write + read flush\n", write.median_us,
              clean.median_us);
  for (const bench::Timing& t : {write, clean}) {
    EXPECT_EQ(t.samples, 30);
    // 192 MB of traffic cannot take under 20 us (9.6 TB/s, three times the H100's HBM) nor a second.
    EXPECT_GT(t.median_us, 20.0);
    EXPECT_LT(t.median_us, 1e6);
  }
}

TEST(BenchTimer, SustainRunsTheCallBackToBackBeforeTheSamples) {
  HOPGEMM_SKIP_WITHOUT_GPU();
  constexpr size_t kBytes = size_t{64} << 20;
  bench::DeviceBuffer src(kBytes), dst(kBytes);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  int calls = 0;
  auto copy = [&](cudaStream_t s) {
    ++calls;
    HOPGEMM_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), kBytes, cudaMemcpyDeviceToDevice, s));
  };
  bench::TimerOptions options;
  options.iters = 10;
  options.warmups = 1;
  options.sustain_ms = 200;
  const auto start = std::chrono::steady_clock::now();
  const bench::Timing t = bench::time_call(copy, stream, options);
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  cudaStreamDestroy(stream);
  std::printf("sustained 200 ms: %d calls, %.0f ms, median %.1f us\n", calls, wall_ms, t.median_us);
  EXPECT_GE(wall_ms, 200.0);
  // A 128 MB-traffic copy takes ~45 us (+ the flush): 200 ms holds hundreds of calls.
  EXPECT_GT(calls, 11 + 200);
  EXPECT_EQ(t.samples, 10);
  EXPECT_GT(t.median_us, 0.0);
}

TEST(BenchTimer, RejectsANegativeSustain) {
  bench::TimerOptions options;
  options.sustain_ms = -1;
  int calls = 0;
  EXPECT_THROW(bench::time_call([&](cudaStream_t) { ++calls; }, nullptr, options), Error);
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace hopgemm
