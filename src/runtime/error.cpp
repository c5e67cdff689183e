#include "hopgemm/error.hpp"

#include <string>

#include "runtime/cuda_check.hpp"

namespace hopgemm {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument: return "invalid argument";
    case ErrorKind::kUnsupported: return "unsupported";
    case ErrorKind::kJit: return "JIT";
    case ErrorKind::kCuda: return "CUDA";
  }
  return "unknown";
}

namespace runtime {

void check_cuda(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  cudaGetLastError();
  throw Error(ErrorKind::kCuda, std::string(call) + " failed: " + cudaGetErrorName(status) + ": " +
                                    cudaGetErrorString(status));
}

}  // namespace runtime
}  // namespace hopgemm
