// What both compilers share: where the headers and the toolkit are, the choice of compiler, and the
// ptxas resource report kept with every compiled kernel.
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "hopgemm/error.hpp"
#include "jit/compiler.hpp"
#include "runtime/env.hpp"

#ifndef HOPGEMM_SOURCE_INCLUDE_DIR
#error "HOPGEMM_SOURCE_INCLUDE_DIR must name the include/ directory of the source tree"
#endif
#ifndef HOPGEMM_CUDA_HOME
#define HOPGEMM_CUDA_HOME "/usr/local/cuda"
#endif

namespace hopgemm::jit {
namespace {

std::mutex g_include_dir_mutex;
std::string g_include_dir;  // set_include_dir(); empty: not set

const char* non_empty_env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

// The integer that ends right before `suffix` in `line` ("... 24 bytes spill stores" -> 24), or -1.
int number_before(std::string_view line, std::string_view suffix) {
  const size_t at = line.find(suffix);
  if (at == std::string_view::npos) return -1;
  size_t begin = at;
  while (begin > 0 && line[begin - 1] == ' ') --begin;
  size_t digits_end = begin;
  while (begin > 0 && line[begin - 1] >= '0' && line[begin - 1] <= '9') --begin;
  if (begin == digits_end) return -1;
  return std::atoi(std::string(line.substr(begin, digits_end - begin)).c_str());
}

// The integer right after `prefix` in `line` ("Used 168 registers" with prefix "Used " -> 168), or -1.
int number_after(std::string_view line, std::string_view prefix) {
  const size_t at = line.find(prefix);
  if (at == std::string_view::npos) return -1;
  size_t begin = at + prefix.size(), end = begin;
  while (end < line.size() && line[end] >= '0' && line[end] <= '9') ++end;
  if (begin == end) return -1;
  return std::atoi(std::string(line.substr(begin, end - begin)).c_str());
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

void set_include_dir(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_include_dir_mutex);
  g_include_dir = path;
}

std::string library_directory() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&library_directory), &info) == 0 || info.dli_fname == nullptr) return "";
  // For code linked into the executable the loader reports its argv[0], which may be a bare name: the kernel knows.
  const std::filesystem::path file = info.dli_fname[0] == '/' ? info.dli_fname : "/proc/self/exe";
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::canonical(file, ec);
  return ec ? "" : self.parent_path().string();
}

std::string include_dir() {
  if (const char* dir = non_empty_env("HOPGEMM_INCLUDE_DIR")) return dir;
  {
    std::lock_guard<std::mutex> lock(g_include_dir_mutex);
    if (!g_include_dir.empty()) return g_include_dir;
  }
  // An installed library (<prefix>/lib/libhopgemm.so beside <prefix>/include, or the CLI in <prefix>/bin) finds its
  // own headers; found once, the installation does not move under a running process.
  static const std::string installed = [] {
    const std::filesystem::path self = library_directory();
    if (self.empty()) return std::string();
    for (const auto& candidate : {self.parent_path() / "include", self / "include"}) {
      std::error_code ec;
      if (std::filesystem::is_directory(candidate / "hopgemm" / "device", ec)) {
        return std::filesystem::weakly_canonical(candidate, ec).string();
      }
    }
    return std::string();
  }();
  return installed.empty() ? HOPGEMM_SOURCE_INCLUDE_DIR : installed;
}

std::string cuda_home() {
  if (const char* dir = non_empty_env("CUDA_HOME")) return dir;
  if (const char* dir = non_empty_env("CUDA_PATH")) return dir;
  // The build-time toolkit; CMake may leave it empty, then the toolkit's usual place.
  constexpr const char* kBuildTime = HOPGEMM_CUDA_HOME;
  return kBuildTime[0] != '\0' ? kBuildTime : "/usr/local/cuda";
}

const Compiler& default_compiler() {
  static const std::unique_ptr<Compiler> compiler =
      runtime::env().use_nvcc ? make_nvcc_compiler() : make_nvrtc_compiler();
  return *compiler;
}

// ptxas --verbose, as NVRTC and NVCC print it (NVCC drops the "ptxas ." prefix of the second line):
//   ptxas info    : Compiling entry function '_Z...' for 'sm_90a'
//   ptxas info    : Function properties for _Z...
//   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 10 registers, used 0 barriers
// Non-inlined device functions get their own "Function properties" block, so the spill line is taken
// from the block of the entry itself.
bool parse_ptxas_report(const std::string& log, std::string& entry, ResourceUsage& usage) {
  static constexpr std::string_view kEntry = "Compiling entry function '";
  static constexpr std::string_view kProperties = "Function properties for ";
  const std::vector<std::string_view> lines = split_lines(log);

  std::string found;
  size_t entry_line = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const size_t at = lines[i].find(kEntry);
    if (at == std::string_view::npos) continue;
    const std::string_view rest = lines[i].substr(at + kEntry.size());
    const size_t quote = rest.find('\'');
    if (quote == std::string_view::npos || quote == 0) continue;
    const std::string name(rest.substr(0, quote));
    if (!found.empty() && found != name) return false;  // more than one entry point
    if (found.empty()) entry_line = i;
    found = name;
  }
  if (found.empty()) return false;

  ResourceUsage parsed;
  bool in_entry_properties = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (const size_t at = line.find(kProperties); at != std::string_view::npos) {
      in_entry_properties = trim(line.substr(at + kProperties.size())) == found;
      continue;
    }
    if (in_entry_properties && line.find("bytes stack frame") != std::string_view::npos) {
      parsed.stack_frame_bytes = number_before(line, "bytes stack frame");
      parsed.spill_store_bytes = number_before(line, "bytes spill stores");
      parsed.spill_load_bytes = number_before(line, "bytes spill loads");
      in_entry_properties = false;
      continue;
    }
    if (i > entry_line && parsed.registers < 0) {
      const int registers = number_after(line, "Used ");
      if (registers >= 0 && line.find("registers") != std::string_view::npos) parsed.registers = registers;
    }
  }
  entry = found;
  usage = parsed;
  return true;
}

void finish_compile(CompiledKernel& kernel, const KernelSource& source, const std::string& compiler) {
  const auto& settings = runtime::env();
  if (settings.ptxas_verbose || settings.jit_debug) {
    jit_message(source.family + ": " + compiler + " report:\n" + kernel.log);
  }
  if (!parse_ptxas_report(kernel.log, kernel.entry, kernel.resources)) {
    const bool no_report = kernel.log.find("ptxas") == std::string::npos;
    throw Error(ErrorKind::kJit, source.family + ": " + compiler +
                                     (no_report ? " returned no ptxas report (was ptxas skipped by a compiler-side "
                                                  "cache?)"
                                                : " produced no single entry point in its ptxas report (the "
                                                  "translation unit must instantiate exactly one kernel)") +
                                     "; compiler output:\n" + kernel.log);
  }
  if (kernel.cubin.empty()) {
    throw Error(ErrorKind::kJit, source.family + ": " + compiler + " produced an empty cubin");
  }
}

std::string first_error_line(const std::string& log) {
  std::string_view first;
  for (std::string_view line : split_lines(log)) {
    line = trim(line);
    if (line.empty()) continue;
    if (first.empty()) first = line;
    if (line.find("error") != std::string_view::npos) return std::string(line);
  }
  return std::string(first);
}

TempDir::TempDir(const std::string& parent, const std::string& prefix) {
  std::string base = parent;
  if (base.empty()) {
    std::error_code ec;
    base = std::filesystem::temp_directory_path(ec).string();
    if (ec || base.empty()) base = "/tmp";
  }
  std::string pattern = base + "/" + prefix + "XXXXXX";
  if (::mkdtemp(pattern.data()) != nullptr) {
    path_ = pattern;
  } else {
    error_ = "cannot create a temporary directory in " + base + ": " + std::strerror(errno);
  }
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void jit_message(const std::string& text) {
  std::string line = "[hopgemm jit] " + text;
  if (line.back() != '\n') line += '\n';
  // One write() per message: lines from concurrent threads and processes stay whole.
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
}

}  // namespace hopgemm::jit
