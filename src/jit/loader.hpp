#pragma once
// Loading a cubin through the driver (cuLibraryLoadData: context-independent) and launching it with
// cuLaunchKernelEx, cluster and PDL attributes built per call (safe from several host threads). Launches go
// through the kernel's CUfunction in the stream's context, looked up once per context: a launch through the
// CUkernel handle costs the driver about 1 us more per call (bench/results/h100-2026-11-21-launch-cost.txt).
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "jit/compiler.hpp"

namespace hopgemm::jit {

struct LaunchGeometry {
  unsigned grid_x = 1, grid_y = 1, grid_z = 1;
  unsigned block_x = 1, block_y = 1, block_z = 1;
  int smem_bytes = 0;     // dynamic shared memory
  unsigned cluster_x = 1; // thread-block cluster along x (1 = none)
  int device = -1;        // the launch's device when the caller knows it (saves a query); -1: current
};

class LoadedKernel {
 public:
  // Loads `compiled` (throws Error(kCuda) / Error(kJit)).
  explicit LoadedKernel(const CompiledKernel& compiled);
  ~LoadedKernel();
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;

  CUkernel handle() const { return kernel_; }
  const std::string& entry() const { return entry_; }
  const ResourceUsage& resources() const { return resources_; }
  // Raises the kernel's dynamic shared-memory limit on `device` to `bytes` once (idempotent, cheap).
  void ensure_smem_limit(int device, int bytes) const;
  // How many clusters of `geometry` can be resident at once on `device` (cuOccupancyMaxActiveClusters),
  // computed once per device: a persistent grid larger than that would run its last clusters as a second
  // wave. Only for geometries with cluster_x > 1.
  int max_active_clusters(int device, const LaunchGeometry& geometry) const;
  // The kernel's CUfunction in `context` (cuKernelGetFunction on the first call per context, with the raised
  // shared-memory limit applied to it), then a lock-free lookup while the context stays the same. Like the
  // library's other per-device state (workspace, device info), bindings assume a context lives until the process
  // ends: a context destroyed and re-created at the same address (cudaDeviceReset) is not supported.
  CUfunction function_in(CUcontext context, int smem_bytes) const;

 private:
  struct Binding {
    CUcontext context;
    CUfunction function;
  };
  CUlibrary library_ = nullptr;
  CUkernel kernel_ = nullptr;
  std::string entry_;
  ResourceUsage resources_;
  mutable std::atomic<int> smem_limit_[64] = {};
  mutable std::atomic<int> max_active_clusters_[64] = {};
  // The most recently used context's binding; every binding made stays alive with the kernel (a launch on
  // another thread may still read an older one).
  mutable std::atomic<const Binding*> binding_{nullptr};
  mutable std::mutex bindings_mutex_;
  mutable std::vector<std::unique_ptr<const Binding>> bindings_;
};

// Launches `kernel` on `stream` with one by-value parameter struct `params` (the kernels' single
// `const __grid_constant__ Params` argument). PDL follows get_pdl().
void launch(const LoadedKernel& kernel, const LaunchGeometry& geometry, const void* params, cudaStream_t stream);

// Throws Error(kJit) if `stream` is being captured: compiling or loading inside a capture is refused.
void refuse_inside_capture(cudaStream_t stream, const char* op, const std::string& what);

}  // namespace hopgemm::jit
