#pragma once
// tf32_hc_prenorm_gemm's kernel source for a config (the op's kernel cache and the compile tests render it alike).
#include "hopgemm/device/kernels/sm90_tf32_hc_prenorm_gemm_types.cuh"
#include "jit/kernel_source.hpp"

namespace hopgemm::api {

jit::KernelSource render_sm90_hc_prenorm(const device::Sm90HcPrenormConfig& config);

}  // namespace hopgemm::api
