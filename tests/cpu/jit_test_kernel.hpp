#pragma once
// A tiny kernel for the JIT tests: a template over a C++20 class-type config, one by-value parameter
// struct, like the library's kernels. `variant` changes the instantiation (and so the cache key), letting
// every test work on a kernel no other test has compiled.
#include <string>

#include "jit/kernel_source.hpp"

namespace hopgemm_test {

// Host-side copy of the kernel's parameter struct.
struct TinyParams {
  float* out;
  int n;
};

inline const char* tiny_kernel_definition() {
  return R"(
namespace hopgemm_test {
struct TinyConfig {
  int scale;
  int offset;
};
struct TinyParams {
  float* out;
  int n;
};
// out[i] = i * scale + offset
template <TinyConfig kConfig>
__global__ void __launch_bounds__(128) tiny_kernel(const __grid_constant__ TinyParams params) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < params.n) params.out[i] = static_cast<float>(i * kConfig.scale + kConfig.offset);
}
}  // namespace hopgemm_test
)";
}

// The TU the JIT would render for this kernel, with the kernel's definition inlined after the include
// (the test kernel is not one of the library's device headers).
inline hopgemm::jit::KernelSource tiny_kernel_source(int variant, int scale = 3) {
  const std::string config = hopgemm::jit::ConfigWriter("hopgemm_test::TinyConfig")
                                 .field("scale", scale)
                                 .field("offset", variant)
                                 .str();
  hopgemm::jit::KernelSource source = hopgemm::jit::render_kernel(
      "test_tiny", "hopgemm/device/common.cuh", "hopgemm_test::tiny_kernel", config);
  const std::string include = "#include <hopgemm/device/common.cuh>\n";
  source.code.insert(source.code.find(include) + include.size(), tiny_kernel_definition());
  return source;
}

}  // namespace hopgemm_test
