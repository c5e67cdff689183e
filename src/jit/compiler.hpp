#pragma once
// The two compilers behind the JIT: NVRTC (default, in process) and NVCC (HOPGEMM_JIT_USE_NVCC=1).
// Both produce an sm_90a cubin and the ptxas resource report of its one entry point.
#include <memory>
#include <string>
#include <vector>

#include "jit/kernel_source.hpp"

namespace hopgemm::jit {

struct ResourceUsage {
  int registers = -1;        // per thread
  int spill_store_bytes = -1;
  int spill_load_bytes = -1;
  int stack_frame_bytes = -1;
  bool spills() const { return spill_store_bytes > 0 || spill_load_bytes > 0; }
};

struct CompiledKernel {
  std::string entry;        // mangled name of the cubin's entry point
  std::vector<char> cubin;
  ResourceUsage resources;
  std::string log;          // compiler output (ptxas report included)
  double compile_seconds = 0.0;  // 0 when read back from the disk cache
};

class Compiler {
 public:
  virtual ~Compiler() = default;
  // Name and version, e.g. "NVRTC 13.0"; part of every cache key.
  virtual std::string signature() const = 0;
  // Which file compiles and why that one, e.g. "/usr/local/cuda/lib64/libnvrtc.so.13 (the CUDA toolkit at
  // /usr/local/cuda)": shown by `hopgemm info` and kept in every cache entry; not part of the key (two copies of one
  // version emit the same code).
  virtual std::string location() const = 0;
  // Options that change the output; part of every cache key.
  virtual std::vector<std::string> flags() const = 0;
  // Compiles for `arch` (e.g. "sm_90a"). `scratch_dir` is an empty private directory the compiler may use;
  // "" lets the compiler make (and remove) its own where it needs one.
  // Throws Error(kJit) with the compiler log on failure.
  virtual CompiledKernel compile(const KernelSource& source, const std::string& scratch_dir) const = 0;
};

// Where the device headers are: HOPGEMM_INCLUDE_DIR, else what set_include_dir() gave (the Python
// package passes its bundled copy), else an installed copy beside the library (<dir>/../include or <dir>/include
// holding hopgemm/device, where <dir> holds libhopgemm.so, the extension or the executable), else the source tree
// the library was built from.
void set_include_dir(const std::string& path);
std::string include_dir();
// The directory of the file this code is linked into (libhopgemm.so, the Python extension, or an executable);
// empty if it cannot be found.
std::string library_directory();
// The CUDA toolkit root (CUDA_HOME, CUDA_PATH, else the build-time toolkit).
std::string cuda_home();

std::unique_ptr<Compiler> make_nvrtc_compiler(const std::string& arch = "sm_90a");
std::unique_ptr<Compiler> make_nvcc_compiler(const std::string& arch = "sm_90a");
// The same with line information (-lineinfo) for profilers and sanitizers; it is part of the flags.
std::unique_ptr<Compiler> make_nvrtc_compiler(const std::string& arch, bool lineinfo);
std::unique_ptr<Compiler> make_nvcc_compiler(const std::string& arch, bool lineinfo);
// The compiler the environment selects (NVRTC unless HOPGEMM_JIT_USE_NVCC=1), created once. NVRTC is the one
// nvrtc_library.hpp's rule picks, whatever NVRTC the process loaded for someone else (torch).
const Compiler& default_compiler();

// Parses a ptxas --verbose report (the part for the single entry point): entry name and resources.
// Returns false if no entry, or more than one, was found.
bool parse_ptxas_report(const std::string& log, std::string& entry, ResourceUsage& usage);

// Shared by both compilers once a cubin exists: fills kernel.entry and kernel.resources from the
// ptxas report in kernel.log (throws Error(kJit) naming the family if there is not exactly one entry)
// and prints the report when HOPGEMM_JIT_PTXAS_VERBOSE (or HOPGEMM_JIT_DEBUG) is set.
void finish_compile(CompiledKernel& kernel, const KernelSource& source, const std::string& compiler);
// The first line of a compiler log that reports an error (else its first non-empty line), for one-line
// summaries in messages.
std::string first_error_line(const std::string& log);
// A private directory `<parent>/<prefix>XXXXXX` (mkdtemp), removed with its contents on destruction;
// `parent` "" means the system's temporary directory. ok() is false (and error() says why) if it could not
// be created.
class TempDir {
 public:
  TempDir(const std::string& parent, const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }

 private:
  std::string path_;
  std::string error_;
};

// Writes "[hopgemm jit] <text>" to stderr as one write, so lines of concurrent threads do not interleave.
void jit_message(const std::string& text);

}  // namespace hopgemm::jit
