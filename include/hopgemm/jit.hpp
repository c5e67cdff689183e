#pragma once
// Run-time compilation controls: where compiled kernels live, what happens on a miss,
// and ahead-of-time compilation of a whole suite without a GPU.
#include <string>
#include <vector>

namespace hopgemm {

// What an op does when its kernel is in neither the memory nor the disk cache.
enum class JitPolicy {
  kAllow,        // compile it (default)
  kWarnOnMiss,   // compile it and print a warning naming the op and kernel
  kErrorOnMiss,  // throw Error(kJit): for servers that must have precompiled everything
};
void set_jit_policy(JitPolicy policy);
JitPolicy get_jit_policy();
JitPolicy parse_jit_policy(const std::string& text);  // "allow" | "warn_on_miss" | "error_on_miss"
const char* jit_policy_name(JitPolicy policy);

// The disk-cache root: HOPGEMM_CACHE_DIR / DG_JIT_CACHE_DIR, else $XDG_CACHE_HOME/hopgemm, else
// ~/.cache/hopgemm. set_cache_dir("") restores that default.
void set_cache_dir(const std::string& path);
std::string get_cache_dir();

// The device headers the JIT compiles: HOPGEMM_INCLUDE_DIR, else the directory given here (the Python package passes
// its bundled copy), else the source tree the library was built from. "" restores that default.
void set_device_include_dir(const std::string& path);

struct PrecompileReport {
  int num_kernels = 0;   // distinct kernels in the set
  int num_compiled = 0;  // compiled now
  int num_cached = 0;    // already in the disk cache
  int num_stored = 0;    // in the disk cache after the run: fewer than num_kernels where it could not be written
                         // (a full or read-only disk), the rest compiled in memory only and lost at exit
  int num_loaded = 0;    // warmup(): GEMM kernels also loaded into this process (a GPU present)
  double seconds = 0.0;  // wall time
  std::vector<std::string> errors;  // one line per kernel that failed
  std::string compiler;  // the compiler and the file it is, e.g. "NVRTC 13.0, /usr/local/cuda/lib64/libnvrtc.so.13 (...)"
};

// Kernel-cache archives: the valid entries of the cache directory in one uncompressed tar file (POSIX ustar, readable
// by `tar` and Python's tarfile), built once (after a warm-up) and shipped beside an application or a wheel.
// Importing checks every entry (manifest, checksums) before it joins the cache, as the cache checks its own; entries
// are content-addressed, so an archive made with another toolkit adds entries only that toolkit uses.
struct CacheArchiveReport {
  int entries = 0;                   // written (export) or added to the cache (import)
  int already_present = 0;           // import: valid entries the cache had already
  std::vector<std::string> skipped;  // import: "<entry>: why" for each entry not taken
};
// Writes the valid entries of the cache directory (all, or those in `entry_dirs`) to `path`, through a temporary file.
CacheArchiveReport export_cache_archive(const std::string& path, const std::vector<std::string>& entry_dirs = {});
// Adds the archive's valid entries to the cache directory. Throws Error(kJit) if `path` is not a readable tar file.
CacheArchiveReport import_cache_archive(const std::string& path);

// Names of the embedded suites ("deepseek-v3", ...).
std::vector<std::string> precompile_suites();
// Compiles every kernel the suite's ops would use on an SM90 device with `num_sms` SMs, in parallel on
// `jobs` threads (0 = hardware concurrency). Needs no GPU. Throws Error(kInvalidArgument) for an unknown suite.
// With show_progress, a progress line is redrawn on stderr.
PrecompileReport precompile_suite(const std::string& suite, int num_sms = 132, int jobs = 0, bool show_progress = false);

}  // namespace hopgemm
