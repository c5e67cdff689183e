// Loading cubins and launching kernels through the driver API (entry points from runtime::driver()).
#include "jit/loader.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>

#include "hopgemm/error.hpp"
#include "hopgemm/runtime.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/driver.hpp"

namespace hopgemm::jit {
namespace {

constexpr int kMaxDevices = 64;  // size of LoadedKernel::smem_limit_
constexpr int kDefaultSmemLimit = 48 * 1024;  // what a kernel may use without opting in

// The launch configuration of `geometry` with the attributes it needs (cluster dimension when cluster_x > 1,
// PDL when asked), written into `attributes` (room for 2): built on the caller's stack per call, so
// concurrent launches from several host threads share nothing.
CUlaunchConfig launch_config(const LaunchGeometry& geometry, CUstream stream, bool pdl,
                             CUlaunchAttribute (&attributes)[2]) {
  unsigned num_attributes = 0;
  if (geometry.cluster_x > 1) {
    CUlaunchAttribute& a = attributes[num_attributes++];
    a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    a.value.clusterDim.x = geometry.cluster_x;
    a.value.clusterDim.y = 1;
    a.value.clusterDim.z = 1;
  }
  if (pdl) {
    CUlaunchAttribute& a = attributes[num_attributes++];
    a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    a.value.programmaticStreamSerializationAllowed = 1;
  }
  CUlaunchConfig config{};
  config.gridDimX = geometry.grid_x;
  config.gridDimY = geometry.grid_y;
  config.gridDimZ = geometry.grid_z;
  config.blockDimX = geometry.block_x;
  config.blockDimY = geometry.block_y;
  config.blockDimZ = geometry.block_z;
  config.sharedMemBytes = static_cast<unsigned>(geometry.smem_bytes);
  config.hStream = stream;
  config.attrs = num_attributes > 0 ? attributes : nullptr;
  config.numAttrs = num_attributes;
  return config;
}

}  // namespace

LoadedKernel::LoadedKernel(const CompiledKernel& compiled) : entry_(compiled.entry), resources_(compiled.resources) {
  const auto& api = runtime::driver("loading a JIT-compiled kernel");
  if (compiled.cubin.empty() || compiled.entry.empty()) {
    throw Error(ErrorKind::kJit, "cannot load kernel '" + compiled.entry + "': empty cubin or entry name");
  }
  runtime::check_driver(api.cuLibraryLoadData(&library_, compiled.cubin.data(), nullptr, nullptr, 0, nullptr,
                                              nullptr, 0),
                        "cuLibraryLoadData");
  const CUresult result = api.cuLibraryGetKernel(&kernel_, library_, entry_.c_str());
  if (result != CUDA_SUCCESS) {
    api.cuLibraryUnload(library_);
    library_ = nullptr;
    runtime::check_driver(result, ("cuLibraryGetKernel(" + entry_ + ")").c_str());
  }
}

LoadedKernel::~LoadedKernel() {
  if (library_ == nullptr) return;
  // At process exit the driver may already be torn down (CUDA_ERROR_DEINITIALIZED): nothing to release.
  runtime::driver("unloading a kernel").cuLibraryUnload(library_);
}

void LoadedKernel::ensure_smem_limit(int device, int bytes) const {
  if (device < 0 || device >= kMaxDevices) {
    throw Error(ErrorKind::kInvalidArgument, "ensure_smem_limit: device index " + std::to_string(device) +
                                                 " out of range [0, " + std::to_string(kMaxDevices) + ")");
  }
  std::atomic<int>& limit = smem_limit_[device];
  int current = limit.load(std::memory_order_acquire);
  if (bytes <= current) return;
  // Concurrent callers may both set the attribute: harmless, it is idempotent for the larger value.
  runtime::check_driver(runtime::driver("ensure_smem_limit")
                            .cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes, kernel_,
                                                  static_cast<CUdevice>(device)),
                        "cuKernelSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  while (current < bytes && !limit.compare_exchange_weak(current, bytes, std::memory_order_acq_rel)) {
  }
}

int LoadedKernel::max_active_clusters(int device, const LaunchGeometry& geometry) const {
  if (device < 0 || device >= kMaxDevices) {
    throw Error(ErrorKind::kInvalidArgument, "max_active_clusters: device index " + std::to_string(device) +
                                                 " out of range [0, " + std::to_string(kMaxDevices) + ")");
  }
  std::atomic<int>& cached = max_active_clusters_[device];
  if (const int known = cached.load(std::memory_order_acquire); known > 0) return known;
  ensure_smem_limit(device, geometry.smem_bytes);
  CUlaunchAttribute attributes[2];
  const CUlaunchConfig config = launch_config(geometry, nullptr, /*pdl=*/false, attributes);
  int clusters = 0;
  runtime::check_driver(runtime::driver("max_active_clusters")
                            .cuOccupancyMaxActiveClusters(&clusters, reinterpret_cast<CUfunction>(kernel_), &config),
                        "cuOccupancyMaxActiveClusters");
  clusters = std::max(clusters, 1);
  cached.store(clusters, std::memory_order_release);
  return clusters;
}

CUfunction LoadedKernel::function_in(CUcontext context, int smem_bytes) const {
  if (const Binding* b = binding_.load(std::memory_order_acquire); b != nullptr && b->context == context) {
    return b->function;
  }
  std::lock_guard lock(bindings_mutex_);
  const Binding* found = nullptr;
  for (const auto& b : bindings_) {
    if (b->context == context) found = b.get();
  }
  if (found == nullptr) {
    const auto& api = runtime::driver("binding a kernel to a context");
    runtime::check_driver(api.cuCtxPushCurrent(context), "cuCtxPushCurrent");
    CUfunction function = nullptr;
    CUresult result = api.cuKernelGetFunction(&function, kernel_);
    if (result == CUDA_SUCCESS && smem_bytes > kDefaultSmemLimit) {
      result = api.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem_bytes);
    }
    CUcontext popped = nullptr;
    api.cuCtxPopCurrent(&popped);
    runtime::check_driver(result, ("cuKernelGetFunction(" + entry_ + ")").c_str());
    bindings_.push_back(std::make_unique<const Binding>(Binding{context, function}));
    found = bindings_.back().get();
  }
  binding_.store(found, std::memory_order_release);
  return found->function;
}

void launch(const LoadedKernel& kernel, const LaunchGeometry& geometry, const void* params, cudaStream_t stream) {
  const auto& api = runtime::driver("launching a kernel");
  if (geometry.smem_bytes > kDefaultSmemLimit) {
    int device = geometry.device;
    if (device < 0) HOPGEMM_CUDA_CHECK(cudaGetDevice(&device));
    kernel.ensure_smem_limit(device, geometry.smem_bytes);
  }
  CUlaunchAttribute attributes[2];
  const CUlaunchConfig config = launch_config(geometry, reinterpret_cast<CUstream>(stream), get_pdl(), attributes);
  void* args[] = {const_cast<void*>(params)};
  // The CUfunction of the stream's context; a green-context stream launches through the CUkernel handle,
  // which the driver resolves itself.
  CUcontext context = nullptr;
  CUgreenCtx green = nullptr;
  runtime::check_driver(api.cuStreamGetCtx(reinterpret_cast<CUstream>(stream), &context, &green), "cuStreamGetCtx");
  const CUfunction function = green == nullptr ? kernel.function_in(context, geometry.smem_bytes)
                                               : reinterpret_cast<CUfunction>(kernel.handle());
  const CUresult result = api.cuLaunchKernelEx(&config, function, args, nullptr);
  if (result != CUDA_SUCCESS) runtime::check_driver(result, ("cuLaunchKernelEx(" + kernel.entry() + ")").c_str());
}

void refuse_inside_capture(cudaStream_t stream, const char* op, const std::string& what) {
  runtime::driver(op);  // a clear "no driver" error before any runtime call
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t result = cudaStreamIsCapturing(stream, &status);
  // The legacy stream cannot be queried while another stream captures in global mode: that is a capture too.
  if (result == cudaErrorStreamCaptureImplicit) {
    cudaGetLastError();
    status = cudaStreamCaptureStatusActive;
  } else {
    runtime::check_cuda(result, "cudaStreamIsCapturing");
  }
  if (status != cudaStreamCaptureStatusNone) {
    throw Error(ErrorKind::kJit, std::string(op) + ": kernel " + what +
                                     " is not loaded yet and the stream is being captured into a CUDA graph; run the "
                                     "op once before capture (warm-up) or precompile");
  }
}

}  // namespace hopgemm::jit
