// Host cost of fp8_gemm_nt's validation and problem resolution alone (no driver, no launch), to see how much of
// the per-call host time is ours rather than the driver's. CPU machine, after building build_lead:
//   g++ -O2 -std=c++20 -Iinclude -Isrc -I/usr/local/cuda/include bench/probes/validate_cost.cpp -o /tmp/validate_cost \
//       build_lead/libhopgemm_core.a -L/usr/local/cuda/lib64 -lnvrtc -lcudart -ldl -lpthread && /tmp/validate_cost
#include <chrono>
#include <cstdio>

#include "api/gemm_internal.hpp"
#include "hopgemm/runtime.hpp"
#include "hopgemm/tensor.hpp"

int main() {
  using namespace hopgemm;
  set_num_sms(132);  // no device query
  static char buffer[1 << 20];  // never dereferenced: validation reads shapes, strides and addresses only
  const TensorView a = make_tensor(buffer, DType::kFloat8E4M3, {128, 256});
  const TensorView b = make_tensor(buffer + 65536, DType::kFloat8E4M3, {256, 256});
  const TensorView sfa = make_tensor(buffer + 200000, DType::kFloat32, {128, 2});
  const TensorView sfb = make_tensor(buffer + 300000, DType::kFloat32, {2, 2});
  const TensorView d = make_tensor(buffer + 400000, DType::kBFloat16, {128, 256});
  const GemmOptions options;
  constexpr int kCalls = 100000;
  long long sink = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) sink += api::fp8_gemm_problem(a, sfa, b, sfb, d, nullptr, options).m;
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / kCalls;
    std::printf("validation + problem: %.3f us per call\n", us);
  }
  return sink == 0;
}
