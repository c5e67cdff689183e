// NVCC (HOPGEMM_JIT_USE_NVCC=1): nvcc is run directly (fork + exec, no shell) in the private scratch
// directory, so files in the caller's working directory cannot shadow headers; its output is captured.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hopgemm/error.hpp"
#include "jit/compiler.hpp"
#include "runtime/env.hpp"

namespace hopgemm::jit {
namespace {

constexpr const char* kDiagSuppress = "--diag-suppress=39,161,174,177,186,940";

struct ProcessResult {
  bool signaled = false;
  int status = -1;  // exit status, or the signal number if signaled
  std::string output;  // stdout and stderr, interleaved as written
};

void close_fd(int fd) {
  if (fd >= 0) ::close(fd);
}

// Runs `argv` (argv[0] is the path) in `cwd` and captures its output. Throws Error(kJit) if it cannot be
// started. Only async-signal-safe calls happen between fork and exec (the caller may be multithreaded).
ProcessResult run_process(const std::vector<std::string>& args, const std::string& cwd) {
  std::vector<char*> argv;
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);

  int out[2] = {-1, -1}, exec_error[2] = {-1, -1};
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(exec_error, O_CLOEXEC) != 0) {
    const int e = errno;
    close_fd(out[0]), close_fd(out[1]);
    throw Error(ErrorKind::kJit, std::string("cannot create a pipe to run ") + args[0] + ": " + strerror(e));
  }
  const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t pid = ::fork();
  if (pid == 0) {
    int e = 0;
    if (::chdir(cwd.c_str()) != 0 || (devnull >= 0 && ::dup2(devnull, STDIN_FILENO) < 0) ||
        ::dup2(out[1], STDOUT_FILENO) < 0 || ::dup2(out[1], STDERR_FILENO) < 0) {
      e = errno;
    } else {
      ::execvp(argv[0], argv.data());  // a bare name (HOPGEMM_NVCC=nvcc) is looked up in PATH
      e = errno;
    }
    [[maybe_unused]] ssize_t ignored = ::write(exec_error[1], &e, sizeof(e));
    ::_exit(127);
  }
  const int fork_errno = errno;
  close_fd(out[1]);
  close_fd(exec_error[1]);
  close_fd(devnull);
  if (pid < 0) {
    close_fd(out[0]), close_fd(exec_error[0]);
    throw Error(ErrorKind::kJit, std::string("cannot fork to run ") + args[0] + ": " + strerror(fork_errno));
  }

  ProcessResult result;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(out[0], buffer, sizeof(buffer));
    if (n > 0) {
      result.output.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close_fd(out[0]);
  int child_errno = 0;
  ssize_t got = 0;
  do {
    got = ::read(exec_error[0], &child_errno, sizeof(child_errno));
  } while (got < 0 && errno == EINTR);
  close_fd(exec_error[0]);

  int status = 0;
  pid_t waited = 0;
  do {
    waited = ::waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof(child_errno))) {
    throw Error(ErrorKind::kJit, "cannot run " + args[0] + " in " + cwd + ": " + strerror(child_errno));
  }
  if (waited == pid && WIFSIGNALED(status)) {
    result.signaled = true;
    result.status = WTERMSIG(status);
  } else if (waited == pid && WIFEXITED(status)) {
    result.status = WEXITSTATUS(status);
  }
  return result;
}

std::string command_line(const std::vector<std::string>& args) {
  std::string line;
  for (const auto& arg : args) line += (line.empty() ? "" : " ") + arg;
  return line;
}

class NvccCompiler final : public Compiler {
 public:
  NvccCompiler(const std::string& arch, bool lineinfo) : arch_(arch) {
    const auto& configured = runtime::env().nvcc_path;
    path_ = configured ? *configured : cuda_home() + "/bin/nvcc";
    signature_ = query_version();
    // sm_90a -> compute_90a + sm_90a: a cubin for exactly that architecture.
    const std::string number = arch.rfind("sm_", 0) == 0 ? arch.substr(3) : arch;
    flags_ = {"-cubin", "-gencode=arch=compute_" + number + ",code=sm_" + number, "-std=c++20", "-O3",
              "--expt-relaxed-constexpr", "-Xptxas", "-v", kDiagSuppress};
    if (lineinfo) flags_.push_back("-lineinfo");
  }

  std::string signature() const override { return signature_; }
  std::string location() const override {
    return path_ + (runtime::env().nvcc_path ? " (HOPGEMM_NVCC)" : " (the CUDA toolkit at " + cuda_home() + ")");
  }
  std::vector<std::string> flags() const override { return flags_; }

  CompiledKernel compile(const KernelSource& source, const std::string& given_scratch_dir) const override {
    const auto start = std::chrono::steady_clock::now();
    std::optional<TempDir> own_scratch;
    if (given_scratch_dir.empty()) {
      own_scratch.emplace("", "hopgemm-nvcc-");
      if (!own_scratch->ok()) throw Error(ErrorKind::kJit, source.family + ": " + own_scratch->error());
    }
    const std::string& scratch_dir = own_scratch ? own_scratch->path() : given_scratch_dir;
    {
      std::ofstream file(scratch_dir + "/kernel.cu", std::ios::binary | std::ios::trunc);
      file << source.code;
      if (!file.flush()) {
        throw Error(ErrorKind::kJit, source.family + ": cannot write kernel.cu into " + scratch_dir);
      }
    }
    std::vector<std::string> args = {path_, "kernel.cu", "-o", "kernel.cubin"};
    args.insert(args.end(), flags_.begin(), flags_.end());
    args.push_back("-I" + include_dir());

    const auto& settings = runtime::env();
    if (settings.print_compiler_command || settings.jit_debug) {
      jit_message(source.family + ": cd " + scratch_dir + " && " + command_line(args));
    }
    const ProcessResult run = run_process(args, scratch_dir);
    CompiledKernel kernel;
    kernel.log = run.output;
    if (run.signaled || run.status != 0) {
      const std::string how = run.signaled ? "was killed by signal " + std::to_string(run.status) + " (" +
                                                 strsignal(run.status) + ")"
                                           : "failed with exit status " + std::to_string(run.status);
      throw Error(ErrorKind::kJit, source.family + ": NVCC compilation for " + arch_ + " " + how + ": " +
                                       first_error_line(run.output) + "\ncommand: cd " + scratch_dir + " && " +
                                       command_line(args) + "\ncompiler output:\n" + run.output);
    }
    std::ifstream cubin(scratch_dir + "/kernel.cubin", std::ios::binary);
    kernel.cubin.assign(std::istreambuf_iterator<char>(cubin), std::istreambuf_iterator<char>());
    kernel.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    finish_compile(kernel, source, signature_);
    return kernel;
  }

 private:
  // "Cuda compilation tools, release 13.0, V13.0.88" -> "NVCC 13.0.88".
  std::string query_version() const {
    const ProcessResult run = run_process({path_, "--version"}, "/");
    const size_t at = run.output.find(", V");
    if (run.signaled || run.status != 0 || at == std::string::npos) {
      throw Error(ErrorKind::kJit, "'" + path_ + " --version' did not report a version (set HOPGEMM_NVCC or "
                                                 "CUDA_HOME to a CUDA toolkit's nvcc); output:\n" + run.output);
    }
    const size_t begin = at + 3;
    size_t end = begin;
    while (end < run.output.size() && (isdigit(static_cast<unsigned char>(run.output[end])) || run.output[end] == '.')) {
      ++end;
    }
    return "NVCC " + run.output.substr(begin, end - begin);
  }

  std::string arch_;
  std::string path_;
  std::string signature_;
  std::vector<std::string> flags_;
};

}  // namespace

std::unique_ptr<Compiler> make_nvcc_compiler(const std::string& arch) { return make_nvcc_compiler(arch, false); }

std::unique_ptr<Compiler> make_nvcc_compiler(const std::string& arch, bool lineinfo) {
  return std::make_unique<NvccCompiler>(arch, lineinfo);
}

}  // namespace hopgemm::jit
