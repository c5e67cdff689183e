#pragma once
// The in-memory kernel cache of one kernel family, keyed by its config struct (a POD of ints): a hit
// costs one hash of a few bytes and a shared lock; no source is rendered and nothing is hashed on disk.
// A miss renders the source, applies the JIT policy, goes to the disk cache (compiling if needed) and
// loads the cubin; inside a CUDA-graph capture a miss is an error naming the op.
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "jit/kernel_source.hpp"
#include "jit/loader.hpp"
#include "runtime/pod_key.hpp"

namespace hopgemm::jit {

// Loads (compiling through the disk cache if needed) the kernel of `source`, applying the JIT policy
// and the capture check for `op`. Shared by every KernelCache.
std::unique_ptr<LoadedKernel> load_kernel(const KernelSource& source, const char* op, cudaStream_t stream);

template <typename Config>
class KernelCache {
 public:
  using Render = KernelSource (*)(const Config&);
  explicit KernelCache(Render render) : render_(render) {}

  // The loaded kernel for `config`. `op` names the public op in errors and policy messages.
  const LoadedKernel& get(const Config& config, const char* op, cudaStream_t stream) {
    const runtime::PodKey<Config> key{config};
    {
      std::shared_lock lock(mutex_);
      auto it = kernels_.find(key);
      if (it != kernels_.end()) return *it->second;
    }
    std::unique_ptr<LoadedKernel> loaded = load_kernel(render_(config), op, stream);
    std::unique_lock lock(mutex_);
    auto [it, inserted] = kernels_.try_emplace(key, std::move(loaded));
    return *it->second;
  }

  // The source a config renders to (for precompile and tests).
  KernelSource render(const Config& config) const { return render_(config); }

 private:
  Render render_;
  std::shared_mutex mutex_;
  std::unordered_map<runtime::PodKey<Config>, std::unique_ptr<LoadedKernel>, runtime::PodKeyHash> kernels_;
};

}  // namespace hopgemm::jit
