// hopgemm from C++: warm up the kernels of one FP8 GEMM ahead of time (no GPU needed), then, where an SM90 GPU is
// present, quantise two BF16 matrices to FP8 with DeepSeek's fine-grained scales, multiply them and compare the
// result with a float reference computed on the host.
//
//   fp8_gemm [M N K]      (default 256 512 1024)
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include <hopgemm/hopgemm.hpp>

namespace {

// BF16 <-> float on the host (round to nearest even).
uint16_t to_bf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}
float from_bf16(uint16_t x) {
  const uint32_t bits = uint32_t(x) << 16;
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

#define CHECK_CUDA(call)                                                                         \
  do {                                                                                           \
    const cudaError_t status = (call);                                                           \
    if (status != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(status));                \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

template <class T>
T* device_alloc(size_t count) {
  void* p = nullptr;
  CHECK_CUDA(cudaMalloc(&p, count * sizeof(T)));
  return static_cast<T*>(p);
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t m = argc > 3 ? std::atoll(argv[1]) : 256;
  const int64_t n = argc > 3 ? std::atoll(argv[2]) : 512;
  const int64_t k = argc > 3 ? std::atoll(argv[3]) : 1024;
  std::printf("hopgemm %s: D[%lld, %lld] = A[%lld, %lld] B[%lld, %lld]^T in FP8\n", hopgemm::version(), (long long)m,
              (long long)n, (long long)m, (long long)k, (long long)n, (long long)k);

  try {
    // 1. Warm-up: the kernels this GEMM selects (A's scales row-major, as per_token_cast_to_fp8 returns them) and
    //    the quantisers, compiled into the kernel cache. Needs the CUDA toolkit's NVRTC, not a GPU.
    hopgemm::WarmupGemm gemm;
    gemm.m = m;
    gemm.n = n;
    gemm.k = k;
    hopgemm::WarmupOptions options;
    options.scales = hopgemm::WarmupScales::kRowMajor;
    options.utility_kernels = hopgemm::gpu_available();  // the quantisers run only where there is a GPU
    const hopgemm::PrecompileReport report = hopgemm::warmup({gemm}, options);
    std::printf("warm-up: %d kernels (%d compiled, %d from the cache %s) in %.2f s with %s\n", report.num_kernels,
                report.num_compiled, report.num_cached, hopgemm::get_cache_dir().c_str(), report.seconds,
                report.compiler.c_str());
    for (const auto& error : report.errors) std::fprintf(stderr, "error: %s\n", error.c_str());
    if (!report.errors.empty()) return 1;

    if (!hopgemm::gpu_available()) {
      std::printf("no GPU: the kernels are compiled and cached; run this again on an SM90 GPU to use them\n");
      return 0;
    }

    // 2. The GEMM, with the kernels warmed up: no compilation from here on.
    hopgemm::set_jit_policy(hopgemm::JitPolicy::kErrorOnMiss);
    std::mt19937 rng(7);
    std::normal_distribution<float> normal;
    std::vector<uint16_t> x(size_t(m * k)), w(size_t(n * k));
    for (auto& v : x) v = to_bf16(normal(rng));
    for (auto& v : w) v = to_bf16(normal(rng));

    const int64_t sf_k = (k + 127) / 128;
    auto* x_d = device_alloc<uint16_t>(x.size());
    auto* w_d = device_alloc<uint16_t>(w.size());
    auto* x_fp8 = device_alloc<uint8_t>(x.size());
    auto* w_fp8 = device_alloc<uint8_t>(w.size());
    auto* sfx = device_alloc<float>(size_t(m * sf_k));
    auto* sfw = device_alloc<float>(size_t((n + 127) / 128 * sf_k));
    auto* y_d = device_alloc<uint16_t>(size_t(m * n));
    CHECK_CUDA(cudaMemcpy(x_d, x.data(), x.size() * 2, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(w_d, w.data(), w.size() * 2, cudaMemcpyHostToDevice));

    using hopgemm::DType;
    using hopgemm::make_tensor;
    cudaStream_t stream = nullptr;
    hopgemm::per_token_cast_to_fp8(make_tensor(x_d, DType::kBFloat16, {m, k}), make_tensor(x_fp8, DType::kFloat8E4M3, {m, k}),
                                   make_tensor(sfx, DType::kFloat32, {m, sf_k}), false, 128, stream);
    hopgemm::per_block_cast_to_fp8(make_tensor(w_d, DType::kBFloat16, {n, k}), make_tensor(w_fp8, DType::kFloat8E4M3, {n, k}),
                                   make_tensor(sfw, DType::kFloat32, {(n + 127) / 128, sf_k}), false, 128, stream);
    hopgemm::fp8_gemm_nt(make_tensor(x_fp8, DType::kFloat8E4M3, {m, k}), make_tensor(sfx, DType::kFloat32, {m, sf_k}),
                         make_tensor(w_fp8, DType::kFloat8E4M3, {n, k}),
                         make_tensor(sfw, DType::kFloat32, {(n + 127) / 128, sf_k}),
                         make_tensor(y_d, DType::kBFloat16, {m, n}), nullptr, {}, stream);
    std::vector<uint16_t> y(size_t(m * n));
    CHECK_CUDA(cudaMemcpy(y.data(), y_d, y.size() * 2, cudaMemcpyDeviceToHost));

    // DeepGEMM's measure: 1 - 2 sum(x y) / sum(x^2 + y^2), against the product of the BF16 inputs.
    double xy = 0, xx_yy = 0;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double ref = 0;
        for (int64_t l = 0; l < k; ++l) ref += double(from_bf16(x[i * k + l])) * from_bf16(w[j * k + l]);
        const double got = from_bf16(y[i * n + j]);
        xy += ref * got;
        xx_yy += ref * ref + got * got;
      }
    }
    const double diff = 1.0 - 2.0 * xy / xx_yy;
    std::printf("FP8 GEMM on %s: difference from the BF16 product %.2e (%s)\n", hopgemm::device_info().name.c_str(),
                diff, diff < 1e-3 ? "ok" : "too large");
    for (void* p : {(void*)x_d, (void*)w_d, (void*)x_fp8, (void*)w_fp8, (void*)sfx, (void*)sfw, (void*)y_d}) cudaFree(p);
    return diff < 1e-3 ? 0 : 1;
  } catch (const hopgemm::Error& e) {
    std::fprintf(stderr, "hopgemm error (%s): %s\n", hopgemm::error_kind_name(e.kind()), e.what());
    return 1;
  }
}
