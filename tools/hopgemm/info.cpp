// hopgemm info: what this machine offers and how hopgemm is set up on it.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

#include "cli.hpp"
#include "hopgemm/error.hpp"
#include "hopgemm/jit.hpp"
#include "hopgemm/runtime.hpp"
#include "jit/compiler.hpp"
#include "jit/disk_cache.hpp"
#include "runtime/env.hpp"

namespace hopgemm::cli {
namespace {

void print_version(const char* what, int version) {
  if (version > 0) {
    std::printf("%-22s %d.%d\n", what, version / 1000, (version % 1000) / 10);
  } else {
    std::printf("%-22s not available\n", what);
  }
}

}  // namespace

int run_info(Args& args) {
  args.expect_consumed();
  std::printf("%-22s %s\n", "hopgemm", HOPGEMM_VERSION);
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  cudaGetLastError();
  print_version("CUDA driver", driver);
  print_version("CUDA runtime", runtime);
  std::printf("%-22s %s\n", "CUDA home", jit::cuda_home().c_str());
  std::printf("%-22s %s\n", "device headers", jit::include_dir().c_str());
  try {
    const jit::Compiler& compiler = jit::default_compiler();
    std::printf("%-22s %s\n", "JIT compiler", compiler.signature().c_str());
    std::printf("%-22s %s\n", "JIT compiler file", compiler.location().c_str());
  } catch (const Error& e) {
    std::printf("%-22s unavailable: %s\n", "JIT compiler", e.what());
  }
  std::printf("%-22s %s (%zu entries)\n", "JIT cache", get_cache_dir().c_str(), jit::list_cache_entries().size());
  std::printf("%-22s %s\n", "JIT policy", jit_policy_name(get_jit_policy()));
  std::printf("%-22s %d%%\n", "tensor-core util", get_tc_util());
  std::printf("%-22s %s\n", "PDL", get_pdl() ? "on" : "off");
  if (!gpu_available()) {
    std::printf("%-22s none (no driver or no visible device): kernels can be precompiled, not run\n", "GPU");
    return 0;
  }
  const DeviceInfo& d = device_info();
  std::printf("%-22s %s (sm_%d%d)\n", "GPU", d.name.c_str(), d.arch_major, d.arch_minor);
  std::printf("%-22s %d (using %d)\n", "SMs", d.num_sms, get_num_sms());
  std::printf("%-22s %d KiB per block (opt-in)\n", "shared memory", d.max_smem_per_block / 1024);
  std::printf("%-22s %d MiB\n", "L2", d.l2_size >> 20);
  std::printf("%-22s %d MHz SM, %d MHz memory\n", "clocks", d.clock_khz / 1000, d.memory_clock_khz / 1000);
  if (d.arch_major != 9) std::printf("warning: hopgemm's kernels need an SM90 (Hopper) GPU\n");
  return 0;
}

}  // namespace hopgemm::cli
