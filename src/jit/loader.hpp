#pragma once
// Loading a cubin through the driver (cuLibraryLoadData: context-independent) and launching it with
// cuLaunchKernelEx, cluster and PDL attributes built per call (safe from several host threads).
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <string>

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

 private:
  CUlibrary library_ = nullptr;
  CUkernel kernel_ = nullptr;
  std::string entry_;
  ResourceUsage resources_;
  mutable std::atomic<int> smem_limit_[64] = {};
  mutable std::atomic<int> max_active_clusters_[64] = {};
};

// Launches `kernel` on `stream` with one by-value parameter struct `params` (the kernels' single
// `const __grid_constant__ Params` argument). PDL follows get_pdl().
void launch(const LoadedKernel& kernel, const LaunchGeometry& geometry, const void* params, cudaStream_t stream);

// Throws Error(kJit) if `stream` is being captured: compiling or loading inside a capture is refused.
void refuse_inside_capture(cudaStream_t stream, const char* op, const std::string& what);

}  // namespace hopgemm::jit
