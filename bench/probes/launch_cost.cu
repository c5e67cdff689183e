// Host cost of one kernel launch under the attributes and parameter sizes our kernels use, to see which of
// them the C++ host-cost target (<= 5 us per fp8_gemm_nt call) pays for. GPU machine:
//   nvcc -O2 -std=c++20 -gencode=arch=compute_90a,code=sm_90a -o /tmp/launch_cost bench/probes/launch_cost.cu -lcuda && /tmp/launch_cost
// Each variant: 200 back-to-back launches of an empty kernel on one stream, best of 5 batches (as
// tests/gpu/test_jit_timings.cpp times fp8_gemm_nt), grid 132, 384 threads.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

struct SmallParams {
  int m;
};
struct GemmSizedParams {  // five 128-byte tensor maps + pointers and sizes, like Sm90Fp8GemmParams
  alignas(64) unsigned char maps[5 * 128];
  const float* sfa;
  const float* sfb;
  int m, n, k, sfa_ld, sfb_ld, sfb_kstride;
};

__global__ void empty_small(SmallParams p) {
  if (p.m < 0) asm volatile("trap;");
}
__global__ void __launch_bounds__(384, 1) empty_gemm_sized(const __grid_constant__ GemmSizedParams p) {
  extern __shared__ unsigned char smem[];
  if (p.m < 0) smem[threadIdx.x] = p.maps[threadIdx.x % 640];
  asm volatile("griddepcontrol.launch_dependents;");
}
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)
    empty_gemm_sized_static_cluster(const __grid_constant__ GemmSizedParams p) {
  extern __shared__ unsigned char smem[];
  if (p.m < 0) smem[threadIdx.x] = p.maps[threadIdx.x % 640];
}

template <class Launch>
double best_us_per_launch(Launch launch, cudaStream_t stream) {
  constexpr int kCalls = 200, kBatches = 5;
  double best = 1e30;
  for (int b = 0; b < kBatches; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) launch();
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / kCalls;
    best = std::min(best, us);
    if (cudaStreamSynchronize(stream) != cudaSuccess) {
      std::printf("launch failed: %s\n", cudaGetErrorString(cudaGetLastError()));
      return -1;
    }
  }
  return best;
}

int main() {
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  constexpr int kSmem = 200 * 1024;
  cudaFuncSetAttribute(empty_gemm_sized, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  cudaFuncSetAttribute(empty_gemm_sized_static_cluster, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  SmallParams small{1};
  GemmSizedParams big{};
  big.m = 1;

  auto launch_ex = [&](auto kernel, const auto& params, int smem, bool pdl, int cluster) {
    cudaLaunchAttribute attrs[2];
    int n = 0;
    if (pdl) {
      attrs[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attrs[n].val.programmaticStreamSerializationAllowed = 1;
      ++n;
    }
    if (cluster > 0) {
      attrs[n].id = cudaLaunchAttributeClusterDimension;
      attrs[n].val.clusterDim.x = cluster;
      attrs[n].val.clusterDim.y = 1;
      attrs[n].val.clusterDim.z = 1;
      ++n;
    }
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(132);
    config.blockDim = dim3(384);
    config.dynamicSmemBytes = smem;
    config.stream = stream;
    config.attrs = attrs;
    config.numAttrs = n;
    cudaLaunchKernelEx(&config, kernel, params);
  };
  struct Variant {
    const char* name;
    double us;
  };
  Variant variants[] = {
      {"<<<>>> 4-byte params, no smem", best_us_per_launch([&] { empty_small<<<132, 384, 0, stream>>>(small); }, stream)},
      {"Ex 4-byte params, no attrs", best_us_per_launch([&] { launch_ex(empty_small, small, 0, false, 0); }, stream)},
      {"Ex 704-byte params, no attrs", best_us_per_launch([&] { launch_ex(empty_gemm_sized, big, 0, false, 0); }, stream)},
      {"Ex 704-byte params, 200 KB smem", best_us_per_launch([&] { launch_ex(empty_gemm_sized, big, kSmem, false, 0); }, stream)},
      {"Ex 704 B, 200 KB, PDL", best_us_per_launch([&] { launch_ex(empty_gemm_sized, big, kSmem, true, 0); }, stream)},
      {"Ex 704 B, 200 KB, cluster 1 attr", best_us_per_launch([&] { launch_ex(empty_gemm_sized, big, kSmem, false, 1); }, stream)},
      {"Ex 704 B, 200 KB, cluster 2 attr", best_us_per_launch([&] { launch_ex(empty_gemm_sized, big, kSmem, false, 2); }, stream)},
      {"Ex 704 B, 200 KB, PDL + cluster 1", best_us_per_launch([&] { launch_ex(empty_gemm_sized, big, kSmem, true, 1); }, stream)},
      {"Ex 704 B, 200 KB, PDL + cluster 2", best_us_per_launch([&] { launch_ex(empty_gemm_sized, big, kSmem, true, 2); }, stream)},
      {"Ex 704 B, 200 KB, __cluster_dims__(2)", best_us_per_launch([&] { launch_ex(empty_gemm_sized_static_cluster, big, kSmem, false, 0); }, stream)},
  };
  // The driver entry our JIT uses: cuLaunchKernelEx with the kernel as a CUkernel (context-independent
  // library handle), or as the CUfunction of the current context.
  cudaKernel_t as_kernel;
  cudaFunction_t as_function;
  cudaGetKernel(&as_kernel, empty_gemm_sized);
  cudaGetFuncBySymbol(&as_function, reinterpret_cast<const void*>(empty_gemm_sized));
  auto driver_launch = [&](CUfunction f, bool pdl) {
    CUlaunchAttribute attrs[1];
    attrs[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attrs[0].value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config{};
    config.gridDimX = 132;
    config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = 384;
    config.blockDimY = config.blockDimZ = 1;
    config.sharedMemBytes = kSmem;
    config.hStream = reinterpret_cast<CUstream>(stream);
    config.attrs = attrs;
    config.numAttrs = pdl ? 1 : 0;
    void* args[] = {&big};
    cuLaunchKernelEx(&config, f, args, nullptr);
  };
  Variant driver_variants[] = {
      {"cuLaunchKernelEx CUkernel, 704 B, 200 KB", best_us_per_launch([&] { driver_launch(reinterpret_cast<CUfunction>(as_kernel), false); }, stream)},
      {"cuLaunchKernelEx CUkernel, + PDL", best_us_per_launch([&] { driver_launch(reinterpret_cast<CUfunction>(as_kernel), true); }, stream)},
      {"cuLaunchKernelEx CUfunction, 704 B, 200 KB", best_us_per_launch([&] { driver_launch(reinterpret_cast<CUfunction>(as_function), false); }, stream)},
      {"cuLaunchKernelEx CUfunction, + PDL", best_us_per_launch([&] { driver_launch(reinterpret_cast<CUfunction>(as_function), true); }, stream)},
  };
  for (const auto& v : driver_variants) std::printf("%-42s %6.2f us per launch (host)\n", v.name, v.us);
  for (const auto& v : variants) std::printf("%-42s %6.2f us per launch (host)\n", v.name, v.us);
  cudaStreamDestroy(stream);
  return 0;
}
