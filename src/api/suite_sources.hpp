#pragma once
// The kernel families' registration for `precompile` (precompile_families), and the kernel sources of the
// scale-factor layout and FP8 quantisation families: rendering for their kernel caches, and the set a suite needs.
// Neither of those two depends on the suite's shapes: sizes are run-time parameters, so one small fixed set of kernels
// serves every shape.
#include <span>
#include <string>
#include <vector>

#include "hopgemm/device/kernels/sm90_quantize_fp8_types.cuh"
#include "hopgemm/device/kernels/sm90_sf_layout_types.cuh"
#include "jit/kernel_source.hpp"

namespace hopgemm::api {

jit::KernelSource render_sm90_sf_layout(const device::SfLayoutConfig& config);
jit::KernelSource render_sm90_quantize_fp8(const device::QuantizeConfig& config);

// The 3 layout kernels: FP32 transpose, UE8M0 pack, K-grouped UE8M0 pack.
std::vector<device::SfLayoutConfig> layout_suite_configs();
std::vector<jit::KernelSource> layout_suite_sources();
// The 12 quantisation kernels of the SM90 recipes: {per token, per block, per channel} x {BF16, FP32} x
// {FP32 scales, UE8M0 scales}, gran 128. Other granularities (32, 64) compile on first use.
std::vector<device::QuantizeConfig> quantize_suite_configs();
std::vector<jit::KernelSource> quantize_suite_sources();

// A kernel family's part in `precompile`: the kernels its ops need for `suite` (a name of precompile_suites()) on a
// device with num_sms SMs; none for a suite it does not serve. A family registers one entry in precompile_families()
// (suites.cpp); `precompile` and the tests take the kernel set from there.
struct PrecompileFamily {
  const char* family;
  std::vector<jit::KernelSource> (*sources)(const std::string& suite, int num_sms);
};
std::span<const PrecompileFamily> precompile_families();
// Every registered family's kernels for `suite`, de-duplicated: what `precompile --suite` builds.
std::vector<jit::KernelSource> precompile_sources(const std::string& suite, int num_sms);

}  // namespace hopgemm::api
