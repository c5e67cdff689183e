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
  decltype(&::cuCtxGetDevice) cuCtxGetDevice = nullptr;
  decltype(&::cuStreamGetCtx) cuStreamGetCtx = nullptr;
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
