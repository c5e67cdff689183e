#pragma once
// The NVRTC library the JIT compiles with, chosen by one rule that does not depend on what else the process has
// loaded. A process that imported torch first holds torch's own libnvrtc (its pip wheel's, often a newer minor
// version); linking NVRTC by its soname would bind hopgemm to whichever copy came first, so the same kernel would
// get another compiler (and another cache key) with and without `import torch`, and kernels precompiled by the CLI
// would miss in a server. NVRTC is therefore opened by its full path, privately (RTLD_LOCAL), and called through
// the function pointers of that copy; the first of these that exists is used:
//   1. HOPGEMM_NVRTC: the path of a libnvrtc.so the user names;
//   2. the CUDA toolkit's (cuda_home(): CUDA_HOME, CUDA_PATH, else the toolkit hopgemm was built with):
//      <home>/lib64/libnvrtc.so.<major>, then <home>/lib/...;
//   3. the NVIDIA pip wheel beside the installed package (<site-packages>/nvidia/cu<major>/lib, or the CUDA 12
//      wheels' nvidia/cuda_nvrtc/lib), found from this library's own location;
//   4. libnvrtc.so.<major> as the dynamic loader finds it (LD_LIBRARY_PATH, ld.so.cache, or a copy already loaded).
// Only the fourth can depend on the process; `hopgemm info` and every cache entry name the file and the rule.
#include <nvrtc.h>

#include <string>
#include <vector>

namespace hopgemm::jit {

struct NvrtcLibrary {
  std::string path;  // the file opened (as the loader resolved it)
  std::string rule;  // which of the rules above chose it, in words
  int major = 0, minor = 0;

  decltype(&::nvrtcVersion) version = nullptr;
  decltype(&::nvrtcGetErrorString) get_error_string = nullptr;
  decltype(&::nvrtcCreateProgram) create_program = nullptr;
  decltype(&::nvrtcDestroyProgram) destroy_program = nullptr;
  decltype(&::nvrtcCompileProgram) compile_program = nullptr;
  decltype(&::nvrtcGetProgramLogSize) get_program_log_size = nullptr;
  decltype(&::nvrtcGetProgramLog) get_program_log = nullptr;
  decltype(&::nvrtcGetCUBINSize) get_cubin_size = nullptr;
  decltype(&::nvrtcGetCUBIN) get_cubin = nullptr;
};

// Opened once per process by the rule above; throws Error(kJit) listing the places tried when none works.
const NvrtcLibrary& nvrtc_library();

// The candidate files in rule order (exposed for tests and `hopgemm info`): each with its rule's description.
struct NvrtcCandidate {
  std::string path;  // a full path, or a bare soname for the loader's own search
  std::string rule;
};
std::vector<NvrtcCandidate> nvrtc_candidates();

}  // namespace hopgemm::jit
