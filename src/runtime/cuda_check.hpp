#pragma once
#include <cuda_runtime_api.h>

namespace hopgemm::runtime {

// Throws Error(kCuda) naming `call` and the runtime's message if `status` is not cudaSuccess.
void check_cuda(cudaError_t status, const char* call);

}  // namespace hopgemm::runtime

#define HOPGEMM_CUDA_CHECK(expr) ::hopgemm::runtime::check_cuda((expr), #expr)
