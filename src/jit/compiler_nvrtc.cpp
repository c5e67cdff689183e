// NVRTC: the default compiler, in process. The kernel's TU is compiled straight to an
// sm_90a cubin; ptxas's verbose report arrives in the program log. The library is the one nvrtc_library.hpp's
// rule picks, called through its own entry points.

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "hopgemm/error.hpp"
#include "jit/compiler.hpp"
#include "jit/nvrtc_library.hpp"
#include "runtime/env.hpp"

namespace hopgemm::jit {
namespace {

// Front-end remarks that the device headers trigger by design (unused variables in some instantiations,
// integer conversions in constexpr tile arithmetic, ...): noise in a JIT log.
constexpr const char* kDiagSuppress = "--diag-suppress=39,161,174,177,186,940";

void check_nvrtc(const NvrtcLibrary& nvrtc, nvrtcResult result, const char* call, const std::string& family) {
  if (result == NVRTC_SUCCESS) return;
  throw Error(ErrorKind::kJit, family + ": " + call + " failed: " + nvrtc.get_error_string(result));
}

class NvrtcCompiler final : public Compiler {
 public:
  NvrtcCompiler(const std::string& arch, bool lineinfo) : nvrtc_(nvrtc_library()) {
    const int major = nvrtc_.major, minor = nvrtc_.minor;
    signature_ = "NVRTC " + std::to_string(major) + "." + std::to_string(minor);
    flags_ = {"--gpu-architecture=" + arch, "-std=c++20", "-default-device", "--ptxas-options=-v", kDiagSuppress};
    // NVRTC 13 keeps its own cache of outputs in the driver's compute cache (when a driver is present) and,
    // on a hit, skips ptxas: the cubin then comes without the resource report every entry must carry
    // (seen on the H100: the second compile of a source in a process returned an empty log). Our disk
    // cache already avoids recompiles, so NVRTC's is turned off.
    if (major >= 13) flags_.push_back("--no-cache");
    if (lineinfo) flags_.push_back("-lineinfo");
  }

  std::string signature() const override { return signature_; }
  std::string location() const override { return nvrtc_.path + " (" + nvrtc_.rule + ")"; }
  std::vector<std::string> flags() const override { return flags_; }

  CompiledKernel compile(const KernelSource& source, const std::string& /*scratch_dir*/) const override {
    const auto start = std::chrono::steady_clock::now();
    // Include paths are not flags: where the headers live does not change the output (their content is
    // hashed into the cache key separately).
    std::vector<std::string> options = flags_;
    options.push_back("-I" + include_dir());
    const std::string cccl = cuda_home() + "/include/cccl";
    std::error_code ec;
    if (std::filesystem::is_directory(cccl, ec)) options.push_back("-I" + cccl);
    std::vector<const char*> argv;
    argv.reserve(options.size());
    for (const auto& option : options) argv.push_back(option.c_str());

    const auto& settings = runtime::env();
    if (settings.print_compiler_command || settings.jit_debug) {
      std::string line = source.family + ": NVRTC options:";
      for (const auto& option : options) line += " " + option;
      jit_message(line);
    }

    nvrtcProgram program = nullptr;
    check_nvrtc(nvrtc_, nvrtc_.create_program(&program, source.code.c_str(), "kernel.cu", 0, nullptr, nullptr),
                "nvrtcCreateProgram", source.family);
    struct ProgramGuard {
      const NvrtcLibrary& nvrtc;
      nvrtcProgram& program;
      ~ProgramGuard() { nvrtc.destroy_program(&program); }
    } guard{nvrtc_, program};

    const nvrtcResult result = nvrtc_.compile_program(program, static_cast<int>(argv.size()), argv.data());
    CompiledKernel kernel;
    size_t log_size = 0;
    if (nvrtc_.get_program_log_size(program, &log_size) == NVRTC_SUCCESS && log_size > 1) {
      kernel.log.resize(log_size);
      if (nvrtc_.get_program_log(program, kernel.log.data()) != NVRTC_SUCCESS) kernel.log.clear();
      while (!kernel.log.empty() && kernel.log.back() == '\0') kernel.log.pop_back();
    }
    if (result != NVRTC_SUCCESS) {
      throw Error(ErrorKind::kJit, source.family + ": NVRTC compilation for " + arch() + " failed (" +
                                       nvrtc_.get_error_string(result) + "): " + first_error_line(kernel.log) +
                                       "\ncompiler log:\n" + kernel.log + "\nsource:\n" + source.code);
    }
    size_t cubin_size = 0;
    check_nvrtc(nvrtc_, nvrtc_.get_cubin_size(program, &cubin_size), "nvrtcGetCUBINSize", source.family);
    kernel.cubin.resize(cubin_size);
    if (cubin_size > 0) {
      check_nvrtc(nvrtc_, nvrtc_.get_cubin(program, kernel.cubin.data()), "nvrtcGetCUBIN", source.family);
    }
    kernel.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    finish_compile(kernel, source, signature_);
    return kernel;
  }

 private:
  std::string arch() const { return flags_.front().substr(flags_.front().find('=') + 1); }

  const NvrtcLibrary& nvrtc_;
  std::string signature_;
  std::vector<std::string> flags_;
};

}  // namespace

std::unique_ptr<Compiler> make_nvrtc_compiler(const std::string& arch) { return make_nvrtc_compiler(arch, false); }

std::unique_ptr<Compiler> make_nvrtc_compiler(const std::string& arch, bool lineinfo) {
  return std::make_unique<NvrtcCompiler>(arch, lineinfo);
}

}  // namespace hopgemm::jit
