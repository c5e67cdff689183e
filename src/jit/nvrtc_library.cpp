// NVRTC opened by its full path and called through that copy's entry points (the rule is in nvrtc_library.hpp).
#include "jit/nvrtc_library.hpp"

#include <cuda.h>  // CUDA_VERSION: the toolkit hopgemm was built with names the NVRTC major version it needs
#include <dlfcn.h>

#include <filesystem>
#include <string>
#include <vector>

#include "hopgemm/error.hpp"
#include "jit/compiler.hpp"
#include "runtime/env.hpp"

namespace hopgemm::jit {
namespace {

namespace fs = std::filesystem;

constexpr int kMajor = CUDA_VERSION / 1000;

std::string soname() { return "libnvrtc.so." + std::to_string(kMajor); }

bool is_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);  // follows symlinks
}

// The full path of the file `handle` was opened from (the loader resolves a bare soname).
std::string loaded_path(void* handle, void* symbol, const std::string& fallback) {
  Dl_info info{};
  if (symbol != nullptr && ::dladdr(symbol, &info) != 0 && info.dli_fname != nullptr) {
    std::error_code ec;
    const fs::path path = fs::canonical(info.dli_fname, ec);
    return ec ? std::string(info.dli_fname) : path.string();
  }
  (void)handle;
  return fallback;
}

template <class Fn>
void bind(void* handle, const char* name, Fn& out, const std::string& path) {
  out = reinterpret_cast<Fn>(::dlsym(handle, name));
  if (out == nullptr) throw Error(ErrorKind::kJit, "NVRTC: " + path + " has no " + name);
}

NvrtcLibrary open_library(const NvrtcCandidate& candidate) {
  void* handle = ::dlopen(candidate.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    throw Error(ErrorKind::kJit, "NVRTC: cannot open " + candidate.path + " (" + candidate.rule + "): " +
                                     (why != nullptr ? why : "unknown error"));
  }
  // Never closed: kernels compiled by it may be in use until the process ends, and so may its builtins library.
  NvrtcLibrary lib;
  bind(handle, "nvrtcVersion", lib.version, candidate.path);
  bind(handle, "nvrtcGetErrorString", lib.get_error_string, candidate.path);
  bind(handle, "nvrtcCreateProgram", lib.create_program, candidate.path);
  bind(handle, "nvrtcDestroyProgram", lib.destroy_program, candidate.path);
  bind(handle, "nvrtcCompileProgram", lib.compile_program, candidate.path);
  bind(handle, "nvrtcGetProgramLogSize", lib.get_program_log_size, candidate.path);
  bind(handle, "nvrtcGetProgramLog", lib.get_program_log, candidate.path);
  bind(handle, "nvrtcGetCUBINSize", lib.get_cubin_size, candidate.path);
  bind(handle, "nvrtcGetCUBIN", lib.get_cubin, candidate.path);
  if (lib.version(&lib.major, &lib.minor) != NVRTC_SUCCESS) {
    throw Error(ErrorKind::kJit, "NVRTC: nvrtcVersion failed in " + candidate.path);
  }
  lib.path = loaded_path(handle, reinterpret_cast<void*>(lib.version), candidate.path);
  lib.rule = candidate.rule;
  if (lib.major != kMajor) {
    throw Error(ErrorKind::kJit, "NVRTC: " + lib.path + " (" + candidate.rule + ") is version " +
                                     std::to_string(lib.major) + "." + std::to_string(lib.minor) +
                                     "; hopgemm was built with CUDA " + std::to_string(kMajor) + " and needs NVRTC " +
                                     std::to_string(kMajor) + ".x");
  }
  return lib;
}

NvrtcLibrary load() {
  const std::vector<NvrtcCandidate> candidates = nvrtc_candidates();
  // An explicit choice is final: a wrong HOPGEMM_NVRTC is an error, not a silent fall-back to another compiler.
  if (runtime::env().nvrtc_path) return open_library(candidates.front());
  std::string tried;
  for (const auto& candidate : candidates) {
    try {
      return open_library(candidate);
    } catch (const Error& e) {
      tried += std::string("\n  ") + e.what();
    }
  }
  throw Error(ErrorKind::kJit, "NVRTC " + std::to_string(kMajor) + ".x was not found; tried:" + tried +
                                   "\nInstall the CUDA toolkit (or pip's nvidia-cuda-nvrtc), set CUDA_HOME to it, or "
                                   "set HOPGEMM_NVRTC to a libnvrtc.so");
}

}  // namespace

std::vector<NvrtcCandidate> nvrtc_candidates() {
  if (const auto& explicit_path = runtime::env().nvrtc_path) return {{*explicit_path, "HOPGEMM_NVRTC"}};
  std::vector<NvrtcCandidate> out;
  const fs::path home = cuda_home();
  for (const char* lib : {"lib64", "lib"}) {
    const fs::path path = home / lib / soname();
    if (is_file(path)) {
      out.push_back({path.string(), "the CUDA toolkit at " + home.string()});
      break;
    }
  }
  // site-packages/hopgemm/_C.so (or hopgemm/lib/..., hopgemm/bin/...) beside site-packages/nvidia/...
  if (const fs::path self = library_directory(); !self.empty()) {
    const std::string wheel_dir = kMajor >= 13 ? "nvidia/cu" + std::to_string(kMajor) + "/lib" : "nvidia/cuda_nvrtc/lib";
    for (const fs::path& base : {self.parent_path(), self.parent_path().parent_path()}) {
      const fs::path path = base / wheel_dir / soname();
      if (is_file(path)) {
        out.push_back({path.string(), "the NVIDIA pip wheel at " + (base / wheel_dir).string()});
        break;
      }
    }
  }
  out.push_back({soname(), "the dynamic loader's search for " + soname()});
  return out;
}

const NvrtcLibrary& nvrtc_library() {
  static const NvrtcLibrary library = load();
  return library;
}

}  // namespace hopgemm::jit
