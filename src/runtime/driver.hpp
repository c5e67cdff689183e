#pragma once
// The CUDA driver API, reached only through cudaGetDriverEntryPoint: libcuda is never linked, so the
// library loads and its CPU paths (codegen, compile, cache, precompile) run where no driver exists.
#include <cuda.h>

namespace hopgemm::runtime {

struct DriverApi {
  decltype(&::cuGetErrorString) cuGetErrorString = nullptr;
  decltype(&::cuLibraryLoadData) cuLibraryLoadData = nullptr;
  decltype(&::cuLibraryUnload) cuLibraryUnload = nullptr;
  decltype(&::cuLibraryGetKernel) cuLibraryGetKernel = nullptr;
  decltype(&::cuKernelSetAttribute) cuKernelSetAttribute = nullptr;
  decltype(&::cuKernelGetAttribute) cuKernelGetAttribute = nullptr;
  decltype(&::cuLaunchKernelEx) cuLaunchKernelEx = nullptr;
  decltype(&::cuTensorMapEncodeTiled) cuTensorMapEncodeTiled = nullptr;
  // Resolved by base name at the headers' CUDA_VERSION, an entry point is its newest ABI: cuStreamGetCtx is
  // cuStreamGetCtx_v2 (CUDA 12.5+, a third out-parameter), whatever the headers' unversioned prototype says.
  // Calling it through the two-argument type crashed in the driver.
  decltype(&::cuStreamGetCtx_v2) cuStreamGetCtx = nullptr;
  decltype(&::cuOccupancyMaxActiveClusters) cuOccupancyMaxActiveClusters = nullptr;
  decltype(&::cuKernelGetFunction) cuKernelGetFunction = nullptr;
  decltype(&::cuFuncSetAttribute) cuFuncSetAttribute = nullptr;
  decltype(&::cuCtxPushCurrent) cuCtxPushCurrent = nullptr;
  decltype(&::cuCtxPopCurrent) cuCtxPopCurrent = nullptr;
};

// The driver entry points, resolved once. Throws Error(kCuda) naming `what` if no driver is present.
const DriverApi& driver(const char* what);

// Throws Error(kCuda) with the driver's message if `result` is not CUDA_SUCCESS.
void check_driver(CUresult result, const char* call);

}  // namespace hopgemm::runtime
