// The miss path shared by every KernelCache: JIT policy, capture check, disk cache, load.
#include "jit/kernel_cache.hpp"

#include <mutex>
#include <set>
#include <string>

#include "hopgemm/error.hpp"
#include "hopgemm/jit.hpp"
#include "jit/compiler.hpp"
#include "jit/disk_cache.hpp"

namespace hopgemm::jit {
namespace {

std::mutex g_warned_mutex;
std::set<std::string> g_warned_digests;  // warn_on_miss: one warning per kernel

}  // namespace

std::unique_ptr<LoadedKernel> load_kernel(const KernelSource& source, const char* op, cudaStream_t stream) {
  const Compiler& compiler = default_compiler();
  const JitPolicy policy = get_jit_policy();
  if (policy != JitPolicy::kAllow && !disk_cache_contains(source, compiler)) {
    const std::string digest = cache_digest(source, compiler);
    const std::string what = std::string(op) + ": kernel " + source.family + " (cache key " + digest +
                             ") is not in the kernel cache " + get_cache_dir();
    if (policy == JitPolicy::kErrorOnMiss) {
      throw Error(ErrorKind::kJit, what + " and the JIT policy is error_on_miss; run `hopgemm precompile` for "
                                          "this workload (same toolkit, same HOPGEMM_CACHE_DIR) or allow compilation");
    }
    bool first = false;
    {
      std::lock_guard<std::mutex> lock(g_warned_mutex);
      first = g_warned_digests.insert(digest).second;
    }
    if (first) jit_message("warning: " + what + "; compiling it now (JIT policy warn_on_miss)");
  }
  // The policy comes first (an error_on_miss refusal is the more useful message), then the capture
  // check: nothing is compiled or loaded while the stream is being captured.
  refuse_inside_capture(stream, op, source.family);
  return std::make_unique<LoadedKernel>(get_or_compile(source, compiler).kernel);
}

}  // namespace hopgemm::jit
