// Host cost per call from C++, against the project's target (<= 5 us): per_token_cast_to_fp8, fp8_gemm_nt and the
// JIT's launch() of a tiny kernel, with where launch()'s time goes (the driver's own cuLaunchKernelEx, bare and with
// the PDL attribute, and the stream-context query launch() makes per call). A benchmark, not a test: it reports each
// figure against its target and exits 0 unless something fails to run; the GPU routine (scripts/gpu_check.sh) runs it
// alone, after the tests. JSON lines go to $HOPGEMM_BENCH_OUT when set.
// Usage: hopgemm_host_cost   (needs an SM90 GPU)
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cpu/jit_test_kernel.hpp"
#include "hopgemm/error.hpp"
#include "hopgemm/gemm.hpp"
#include "hopgemm/quantize.hpp"
#include "hopgemm/runtime.hpp"
#include "jit/compiler.hpp"
#include "jit/disk_cache.hpp"
#include "jit/loader.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/driver.hpp"

namespace hopgemm {
namespace {

constexpr double kTargetUs = 5.0;

using Clock = std::chrono::steady_clock;

// Batches of 200 calls (well under the driver's launch-queue depth, so the host is timed and not the GPU), 20
// batches: the best is the host cost least disturbed by other processes; the first and the median batch show
// whether a slow read is a slow start or a slow host.
struct HostCost {
  double best_us = 0, median_us = 0, first_us = 0;
};

template <typename Call>
HostCost host_us_per_call(Call call, cudaStream_t stream) {
  constexpr int kCalls = 200, kBatches = 20;
  std::vector<double> batches;
  for (int batch = 0; batch < kBatches; ++batch) {
    const auto start = Clock::now();
    for (int i = 0; i < kCalls; ++i) call();
    batches.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count() / kCalls);
    HOPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  HostCost cost;
  cost.first_us = batches.front();
  std::sort(batches.begin(), batches.end());
  cost.best_us = batches.front();
  cost.median_us = batches[batches.size() / 2];
  return cost;
}

void report(const char* what, const HostCost& cost, double target_us) {
  std::printf("%-44s %6.2f us  (median batch %6.2f, first %6.2f)", what, cost.best_us, cost.median_us, cost.first_us);
  if (target_us > 0) std::printf("  target %.0f us: %s", target_us, cost.best_us <= target_us ? "met" : "MISSED");
  std::printf("\n");
  const std::string line = std::string("{\"metric\": \"host_cost\", \"api\": \"C++\", \"call\": \"") + what +
                           "\", \"warm_us_per_call\": " + std::to_string(cost.best_us) +
                           ", \"median_batch_us\": " + std::to_string(cost.median_us) +
                           ", \"first_batch_us\": " + std::to_string(cost.first_us) +
                           ", \"target_us\": " + std::to_string(target_us) + "}";
  if (const char* path = std::getenv("HOPGEMM_BENCH_OUT")) {
    if (FILE* f = std::fopen(path, "a")) {
      std::fprintf(f, "%s\n", line.c_str());
      std::fclose(f);
    }
  }
}

struct DeviceBuffer {
  explicit DeviceBuffer(size_t bytes) { HOPGEMM_CUDA_CHECK(cudaMalloc(&ptr, bytes)); }
  ~DeviceBuffer() { cudaFree(ptr); }
  void* ptr = nullptr;
};

void per_token_cast(cudaStream_t stream) {
  constexpr int64_t kM = 128, kK = 7168;
  DeviceBuffer x(kM * kK * 2), q(kM * kK), sf(kM * (kK / 128) * 4);
  HOPGEMM_CUDA_CHECK(cudaMemset(x.ptr, 0x3c, kM * kK * 2));
  const TensorView xv = make_tensor(x.ptr, DType::kBFloat16, {kM, kK});
  const TensorView qv = make_tensor(q.ptr, DType::kFloat8E4M3, {kM, kK});
  const TensorView sv = make_tensor(sf.ptr, DType::kFloat32, {kM, kK / 128});
  per_token_cast_to_fp8(xv, qv, sv, false, 128, stream);  // compile or load outside the timing
  report("per_token_cast_to_fp8 (128 x 7168)",
         host_us_per_call([&] { per_token_cast_to_fp8(xv, qv, sv, false, 128, stream); }, stream), kTargetUs);
}

void fp8_gemm(cudaStream_t stream) {
  constexpr int64_t kM = 128, kN = 256, kK = 256;
  DeviceBuffer a(kM * kK), b(kN * kK), sfa(kM * 2 * 4), sfb(2 * 2 * 4), d(kM * kN * 2);
  HOPGEMM_CUDA_CHECK(cudaMemset(a.ptr, 0x38, kM * kK));
  HOPGEMM_CUDA_CHECK(cudaMemset(b.ptr, 0x38, kN * kK));
  HOPGEMM_CUDA_CHECK(cudaMemset(sfa.ptr, 0, kM * 2 * 4));
  HOPGEMM_CUDA_CHECK(cudaMemset(sfb.ptr, 0, 2 * 2 * 4));
  const TensorView av = make_tensor(a.ptr, DType::kFloat8E4M3, {kM, kK});
  const TensorView bv = make_tensor(b.ptr, DType::kFloat8E4M3, {kN, kK});
  const TensorView sfav = make_tensor(sfa.ptr, DType::kFloat32, {kM, 2});
  const TensorView sfbv = make_tensor(sfb.ptr, DType::kFloat32, {2, 2});
  const TensorView dv = make_tensor(d.ptr, DType::kBFloat16, {kM, kN});
  const GemmOptions options;
  fp8_gemm_nt(av, sfav, bv, sfbv, dv, nullptr, options, stream);
  report("fp8_gemm_nt (128 x 256 x 256)",
         host_us_per_call([&] { fp8_gemm_nt(av, sfav, bv, sfbv, dv, nullptr, options, stream); }, stream),
         kTargetUs);
}

void tiny_launch(cudaStream_t stream) {
  const jit::CompiledKernel compiled =
      jit::get_or_compile(hopgemm_test::tiny_kernel_source(34), jit::default_compiler()).kernel;
  const jit::LoadedKernel kernel(compiled);
  DeviceBuffer out(128 * sizeof(float));
  const hopgemm_test::TinyParams params{static_cast<float*>(out.ptr), 128};
  jit::LaunchGeometry geometry;
  geometry.block_x = 128;
  jit::launch(kernel, geometry, &params, stream);
  report("jit::launch (tiny kernel)", host_us_per_call([&] { jit::launch(kernel, geometry, &params, stream); }, stream),
         kTargetUs);

  const auto& api = runtime::driver("hopgemm_host_cost");
  const auto cu_stream = reinterpret_cast<CUstream>(stream);
  CUcontext context = nullptr;
  CUgreenCtx green = nullptr;
  if (api.cuStreamGetCtx(cu_stream, &context, &green) != CUDA_SUCCESS) throw Error(ErrorKind::kCuda, "cuStreamGetCtx");
  const CUfunction function = kernel.function_in(context, 0);
  void* args[] = {const_cast<void*>(static_cast<const void*>(&params))};
  CUlaunchConfig config{};
  config.gridDimX = config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = 128;
  config.blockDimY = config.blockDimZ = 1;
  config.hStream = cu_stream;
  report("  cuLaunchKernelEx, bare",
         host_us_per_call([&] { api.cuLaunchKernelEx(&config, function, args, nullptr); }, stream), 0);
  CUlaunchAttribute pdl{};
  pdl.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  pdl.value.programmaticStreamSerializationAllowed = 1;
  config.attrs = &pdl;
  config.numAttrs = 1;
  report("  cuLaunchKernelEx, PDL attribute",
         host_us_per_call([&] { api.cuLaunchKernelEx(&config, function, args, nullptr); }, stream), 0);
  report("  cuStreamGetCtx", host_us_per_call([&] { api.cuStreamGetCtx(cu_stream, &context, &green); }, stream), 0);
}

int run() {
  if (!gpu_available() || device_info().arch_major != 9) {
    std::fprintf(stderr, "hopgemm_host_cost: needs an SM90 GPU\n");
    return 2;
  }
  std::printf("host cost per call, best of 20 batches of 200 calls on %s\n", device_info().name.c_str());
  cudaStream_t stream;
  HOPGEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  per_token_cast(stream);
  fp8_gemm(stream);
  tiny_launch(stream);
  cudaStreamDestroy(stream);
  return 0;
}

}  // namespace
}  // namespace hopgemm

int main() {
  try {
    return hopgemm::run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hopgemm_host_cost: %s\n", e.what());
    return 1;
  }
}
