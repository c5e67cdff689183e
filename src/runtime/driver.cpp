#include "runtime/driver.hpp"

#include <cuda_runtime_api.h>

#include <cuda.h>
#include <string>

#include "hopgemm/error.hpp"

namespace hopgemm::runtime {
namespace {

template <typename Fn>
bool resolve(const char* symbol, Fn& fn) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(symbol, &address, CUDA_VERSION, cudaEnableDefault, &query) != cudaSuccess ||
      query != cudaDriverEntryPointSuccess) {
    cudaGetLastError();  // clear the sticky-free error so later runtime calls are unaffected
    return false;
  }
  fn = reinterpret_cast<Fn>(address);
  return true;
}

struct Resolved {
  DriverApi api;
  std::string missing;  // first symbol that failed, empty on success
};

Resolved resolve_all() {
  Resolved r;
  auto need = [&](const char* name, auto& fn) {
    if (r.missing.empty() && !resolve(name, fn)) r.missing = name;
  };
  need("cuGetErrorString", r.api.cuGetErrorString);
  need("cuLibraryLoadData", r.api.cuLibraryLoadData);
  need("cuLibraryUnload", r.api.cuLibraryUnload);
  need("cuLibraryGetKernel", r.api.cuLibraryGetKernel);
  need("cuKernelSetAttribute", r.api.cuKernelSetAttribute);
  need("cuKernelGetAttribute", r.api.cuKernelGetAttribute);
  need("cuLaunchKernelEx", r.api.cuLaunchKernelEx);
  need("cuTensorMapEncodeTiled", r.api.cuTensorMapEncodeTiled);
  need("cuStreamGetCtx", r.api.cuStreamGetCtx);
  need("cuOccupancyMaxActiveClusters", r.api.cuOccupancyMaxActiveClusters);
  need("cuKernelGetFunction", r.api.cuKernelGetFunction);
  need("cuFuncSetAttribute", r.api.cuFuncSetAttribute);
  need("cuCtxPushCurrent", r.api.cuCtxPushCurrent);
  need("cuCtxPopCurrent", r.api.cuCtxPopCurrent);
  return r;
}

}  // namespace

const DriverApi& driver(const char* what) {
  static const Resolved resolved = resolve_all();
  if (!resolved.missing.empty()) {
    throw Error(ErrorKind::kCuda, std::string(what) + ": the CUDA driver is not available (entry point " +
                                      resolved.missing + " could not be resolved; is an NVIDIA driver installed?)");
  }
  return resolved.api;
}

void check_driver(CUresult result, const char* call) {
  if (result == CUDA_SUCCESS) return;
  const char* message = nullptr;
  if (driver(call).cuGetErrorString(result, &message) != CUDA_SUCCESS || message == nullptr) message = "unknown error";
  throw Error(ErrorKind::kCuda, std::string(call) + " failed: " + message + " (CUresult " + std::to_string(result) + ")");
}

}  // namespace hopgemm::runtime
