// The content-addressed disk cache (the layout and rules are in disk_cache.hpp).
#include "jit/disk_cache.hpp"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hopgemm/error.hpp"
#include "hopgemm/jit.hpp"
#include "runtime/env.hpp"

namespace hopgemm::jit {
namespace {

namespace fs = std::filesystem;

constexpr const char* kEntryFormat = "hopgemm-jit-entry-1";  // bump when the entry layout changes
constexpr size_t kMaxManifestBytes = 64 * 1024;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool debug() { return runtime::env().jit_debug; }

std::string errno_text(int e) { return strerror(e); }

// ---- files ---------------------------------------------------------------------------------------------

// The whole file, or nullopt if it cannot be read or is larger than `limit`.
std::optional<std::string> read_file(const std::string& path, size_t limit = SIZE_MAX) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string data;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    if (static_cast<size_t>(st.st_size) > limit) {
      ::close(fd);
      return std::nullopt;
    }
    data.reserve(static_cast<size_t>(st.st_size));
  }
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n > 0) {
      data.append(buffer, static_cast<size_t>(n));
      if (data.size() > limit) break;
    } else if (n == 0 || errno != EINTR) {
      const bool ok = n == 0;
      ::close(fd);
      if (!ok) return std::nullopt;
      return data;
    }
  }
  ::close(fd);
  return std::nullopt;
}

// Creates `path` (which must not exist), writes `data` and fsyncs it. Returns an error text or "".
std::string write_file_synced(const std::string& path, const void* data, size_t size) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return "cannot create " + path + ": " + errno_text(errno);
  const auto* p = static_cast<const char*>(data);
  size_t done = 0;
  std::string error;
  while (done < size) {
    const ssize_t n = ::write(fd, p + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = "cannot write " + path + ": " + errno_text(errno);
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (error.empty() && ::fsync(fd) != 0) error = "cannot fsync " + path + ": " + errno_text(errno);
  if (::close(fd) != 0 && error.empty()) error = "cannot close " + path + ": " + errno_text(errno);
  return error;
}

std::string write_file_synced(const std::string& path, const std::string& text) {
  return write_file_synced(path, text.data(), text.size());
}

void fsync_dir(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// An exclusive advisory lock on a lock file, held for the object's lifetime. flock() locks belong to the
// open file description, so two threads of one process exclude each other as two processes do.
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd_ < 0) {
      error_ = "cannot open the lock file " + path + ": " + errno_text(errno);
      return;
    }
    int rc = 0;
    do {
      rc = ::flock(fd_, LOCK_EX);
    } while (rc != 0 && errno == EINTR);
    // File systems without flock (some network mounts): go on unlocked; publishing stays atomic.
    if (rc != 0 && debug()) jit_message("flock(" + path + ") failed (" + errno_text(errno) + "); continuing unlocked");
  }
  ~FileLock() {
    if (fd_ < 0) return;
    ::flock(fd_, LOCK_UN);  // explicit: a forked child may still hold a duplicate of the descriptor
    ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool ok() const { return fd_ >= 0; }
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  std::string error_;
};

// ---- entries -------------------------------------------------------------------------------------------

std::string entry_path(const std::string& root, const std::string& family, const std::string& digest) {
  return root + "/kernels/" + family + "-" + digest;
}

std::string manifest_text(const KernelSource& source, const std::string& digest, const Compiler& compiler,
                          const CompiledKernel& kernel) {
  const ResourceUsage& r = kernel.resources;
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%.3f", kernel.compile_seconds);
  std::string text;
  text += std::string("format=") + kEntryFormat + "\n";
  text += "family=" + source.family + "\n";
  text += "digest=" + digest + "\n";
  text += "compiler=" + compiler.signature() + "\n";
  text += "compiler_location=" + compiler.location() + "\n";  // which file compiled it (not part of the key)
  text += "entry=" + kernel.entry + "\n";
  text += "registers=" + std::to_string(r.registers) + "\n";
  text += "spill_store_bytes=" + std::to_string(r.spill_store_bytes) + "\n";
  text += "spill_load_bytes=" + std::to_string(r.spill_load_bytes) + "\n";
  text += "stack_frame_bytes=" + std::to_string(r.stack_frame_bytes) + "\n";
  text += "cubin_bytes=" + std::to_string(kernel.cubin.size()) + "\n";
  text += "cubin_hash=" + hash128_hex(std::string_view(kernel.cubin.data(), kernel.cubin.size())) + "\n";
  text += "source_hash=" + hash128_hex(source.code) + "\n";
  text += std::string("compile_seconds=") + seconds + "\n";
  text += "end=1\n";  // a manifest cut short anywhere lacks this line
  return text;
}

bool parse_int_field(const std::map<std::string, std::string>& fields, const char* key, long long& out) {
  const auto it = fields.find(key);
  if (it == fields.end() || it->second.empty()) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtoll(it->second.c_str(), &end, 10);
  return errno == 0 && end != nullptr && *end == '\0';
}

struct EntryRead {
  bool valid = false;
  std::string problem;  // why it is not valid
  CacheEntryInfo info;
  CompiledKernel kernel;
};

// Reads and verifies the entry in `dir`. `expected_code`, when given, must equal the stored kernel.cu (a
// digest collision or a tampered entry is then not trusted either).
EntryRead read_entry(const std::string& dir, const std::string& expected_digest, const std::string* expected_code) {
  EntryRead read;
  read.info.dir = dir;
  auto invalid = [&](const std::string& problem) {
    read.problem = problem;
    read.info.problem = problem;
    return read;
  };
  const auto manifest = read_file(dir + "/manifest", kMaxManifestBytes);
  if (!manifest) return invalid("manifest missing or unreadable");
  std::map<std::string, std::string> fields;
  size_t pos = 0;
  while (pos < manifest->size()) {
    size_t end = manifest->find('\n', pos);
    if (end == std::string::npos) return invalid("manifest truncated");
    const std::string line = manifest->substr(pos, end - pos);
    pos = end + 1;
    const size_t eq = line.find('=');
    if (eq == std::string::npos || eq == 0) return invalid("manifest is not key=value lines");
    fields[line.substr(0, eq)] = line.substr(eq + 1);
  }
  if (fields["format"] != kEntryFormat) return invalid("manifest format is not " + std::string(kEntryFormat));
  if (fields["end"] != "1") return invalid("manifest truncated");
  if (fields["digest"] != expected_digest) return invalid("manifest digest does not match the directory name");
  read.info.family = fields["family"];
  read.info.entry = fields["entry"];
  read.info.compiler = fields["compiler"];
  read.info.compiler_location = fields["compiler_location"];
  long long registers = 0, spill_stores = 0, spill_loads = 0, stack = 0, cubin_bytes = 0;
  if (read.info.entry.empty() || read.info.family.empty() || !parse_int_field(fields, "registers", registers) ||
      !parse_int_field(fields, "spill_store_bytes", spill_stores) ||
      !parse_int_field(fields, "spill_load_bytes", spill_loads) ||
      !parse_int_field(fields, "stack_frame_bytes", stack) || !parse_int_field(fields, "cubin_bytes", cubin_bytes) ||
      cubin_bytes <= 0) {
    return invalid("manifest fields missing or malformed");
  }
  read.info.resources = {static_cast<int>(registers), static_cast<int>(spill_stores), static_cast<int>(spill_loads),
                         static_cast<int>(stack)};
  read.info.cubin_bytes = cubin_bytes;

  const auto code = read_file(dir + "/kernel.cu");
  if (!code) return invalid("kernel.cu missing or unreadable");
  if (hash128_hex(*code) != fields["source_hash"]) return invalid("kernel.cu does not match its checksum");
  if (expected_code != nullptr && *code != *expected_code) return invalid("kernel.cu differs from the source");
  const auto cubin = read_file(dir + "/kernel.cubin", static_cast<size_t>(cubin_bytes));
  if (!cubin || static_cast<long long>(cubin->size()) != cubin_bytes) {
    return invalid("kernel.cubin missing or not " + std::to_string(cubin_bytes) + " bytes");
  }
  if (hash128_hex(*cubin) != fields["cubin_hash"]) return invalid("kernel.cubin does not match its checksum");

  read.kernel.entry = read.info.entry;
  read.kernel.resources = read.info.resources;
  read.kernel.cubin.assign(cubin->begin(), cubin->end());
  if (auto log = read_file(dir + "/compile.log")) read.kernel.log = std::move(*log);
  read.kernel.compile_seconds = 0.0;
  read.valid = true;
  read.info.valid = true;
  return read;
}

// Writes the entry into `staging` (which must not exist), fsyncs it and renames it to `dir`, moving an
// invalid entry already at `dir` aside into `trash` first. The caller holds the key's lock.
std::string publish(const std::string& staging, const std::string& dir, const std::string& trash,
                    const KernelSource& source, const std::string& digest, const Compiler& compiler,
                    const CompiledKernel& kernel) {
  if (::mkdir(staging.c_str(), 0755) != 0) return "cannot create " + staging + ": " + errno_text(errno);
  std::string error = write_file_synced(staging + "/kernel.cu", source.code);
  if (error.empty()) error = write_file_synced(staging + "/kernel.cubin", kernel.cubin.data(), kernel.cubin.size());
  if (error.empty()) error = write_file_synced(staging + "/compile.log", kernel.log);
  if (error.empty()) error = write_file_synced(staging + "/manifest", manifest_text(source, digest, compiler, kernel));
  if (!error.empty()) return error;
  ::chmod(staging.c_str(), 0755);  // readable by every user of a shared cache, whatever mkdtemp gave
  fsync_dir(staging);
  if (::rename(staging.c_str(), dir.c_str()) != 0) {
    if (errno != EEXIST && errno != ENOTEMPTY && errno != ENOTDIR) return "cannot rename " + staging + " to " + dir + ": " + errno_text(errno);
    // An invalid entry (or a stray file) is in the way; we hold the lock, so nobody is writing it: move it
    // aside and retry.
    if (::rename(dir.c_str(), trash.c_str()) != 0 || ::rename(staging.c_str(), dir.c_str()) != 0) {
      return "cannot replace the invalid entry " + dir + ": " + errno_text(errno);
    }
  }
  fsync_dir(fs::path(dir).parent_path().string());
  return "";
}

// ---- fallback when the cache directory cannot be written -----------------------------------------------

std::mutex g_warned_mutex;
std::set<std::string> g_warned_roots;

void warn_unwritable(const std::string& root, const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(g_warned_mutex);
    if (!g_warned_roots.insert(root).second) return;
  }
  jit_message("warning: the kernel cache directory " + root + " is not usable (" + reason +
              "); compiling in memory, nothing will be kept between runs (set HOPGEMM_CACHE_DIR to a writable "
              "directory)");
}

CompiledKernel compile_in_private_dir(const KernelSource& source, const Compiler& compiler) {
  TempDir scratch("", "hopgemm-jit-");
  if (!scratch.ok()) throw Error(ErrorKind::kJit, source.family + ": " + scratch.error());
  return compiler.compile(source, scratch.path());
}

CacheResult compile_in_memory(const KernelSource& source, const Compiler& compiler, const std::string& root,
                              const std::string& reason) {
  warn_unwritable(root, reason);
  CacheResult result;
  result.kernel = compile_in_private_dir(source, compiler);
  result.compiled = true;
  return result;
}

// Creates <root>/{kernels,locks,tmp}. Returns an error text or "".
std::string prepare_root(const std::string& root) {
  for (const char* sub : {"kernels", "locks", "tmp"}) {
    const std::string path = root + "/" + sub;
    std::error_code ec;
    fs::create_directories(path, ec);
    if (ec) return "cannot create " + path + ": " + ec.message();
    if (::access(path.c_str(), W_OK | X_OK) != 0) return path + " is not writable: " + errno_text(errno);
  }
  return "";
}

// ---- the device-header tree ----------------------------------------------------------------------------

std::mutex g_header_hash_mutex;
std::map<std::string, std::string> g_header_hashes;  // include dir -> hash (node-based: references stay valid)

std::string hash_header_tree(const std::string& root) {
  const fs::path device = fs::path(root) / "hopgemm" / "device";
  std::error_code ec;
  if (!fs::is_directory(device, ec)) {
    throw Error(ErrorKind::kJit, "the device headers are not at " + device.string() +
                                     " (set HOPGEMM_INCLUDE_DIR to the include/ directory that holds hopgemm/device)");
  }
  std::vector<std::string> files;
  for (fs::recursive_directory_iterator it(device, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) files.push_back(fs::relative(it->path(), device, ec).generic_string());
  }
  if (ec) throw Error(ErrorKind::kJit, "cannot list the device headers in " + device.string() + ": " + ec.message());
  std::sort(files.begin(), files.end());
  Hash128 hash;
  for (const auto& file : files) {
    const auto content = read_file((device / file).string());
    if (!content) throw Error(ErrorKind::kJit, "cannot read the device header " + (device / file).string());
    hash.field(file).field(*content);
  }
  return hash.hex();
}

}  // namespace

const std::string& device_header_hash() {
  const std::string root = include_dir();
  std::lock_guard<std::mutex> lock(g_header_hash_mutex);
  auto it = g_header_hashes.find(root);
  if (it == g_header_hashes.end()) it = g_header_hashes.emplace(root, hash_header_tree(root)).first;
  return it->second;
}

std::string cache_digest(const KernelSource& source, const Compiler& compiler) {
  Hash128 hash;
  hash.field(kEntryFormat).field(source.family).field(source.code).field(device_header_hash());
  hash.field(compiler.signature());
  for (const auto& flag : compiler.flags()) hash.field(flag);  // the flags name the arch
  return hash.hex();
}

std::string cache_entry_dir(const KernelSource& source, const Compiler& compiler) {
  return entry_path(get_cache_dir(), source.family, cache_digest(source, compiler));
}

bool disk_cache_contains(const KernelSource& source, const Compiler& compiler) {
  const std::string digest = cache_digest(source, compiler);
  return read_entry(entry_path(get_cache_dir(), source.family, digest), digest, &source.code).valid;
}

CacheResult get_or_compile(const KernelSource& source, const Compiler& compiler) {
  const auto start = std::chrono::steady_clock::now();
  const std::string digest = cache_digest(source, compiler);
  const std::string root = get_cache_dir();
  const std::string dir = entry_path(root, source.family, digest);
  auto hit = [&](EntryRead& read, const char* how) {
    if (debug()) {
      jit_message(source.family + ": " + how + " " + dir + " (" + std::to_string(seconds_since(start)) + " s)");
    }
    return CacheResult{std::move(read.kernel), false, dir};
  };

  EntryRead read = read_entry(dir, digest, &source.code);
  if (read.valid) return hit(read, "disk cache hit");
  if (debug() && read.problem != "manifest missing or unreadable") {
    jit_message(source.family + ": rebuilding the invalid entry " + dir + ": " + read.problem);
  }

  if (const std::string error = prepare_root(root); !error.empty()) {
    return compile_in_memory(source, compiler, root, error);
  }
  FileLock lock(root + "/locks/" + digest + ".lock");
  if (!lock.ok()) return compile_in_memory(source, compiler, root, lock.error());
  read = read_entry(dir, digest, &source.code);  // another process may have built it while we waited
  if (read.valid) return hit(read, "built by another process:");

  TempDir work(root + "/tmp", source.family + "-" + digest.substr(0, 8) + "-");
  if (!work.ok()) return compile_in_memory(source, compiler, root, work.error());
  const std::string scratch = work.path() + "/scratch";
  if (::mkdir(scratch.c_str(), 0700) != 0) {
    return compile_in_memory(source, compiler, root, "cannot create " + scratch + ": " + errno_text(errno));
  }
  if (debug()) jit_message(source.family + ": compiling with " + compiler.signature() + ":\n" + source.code);

  CacheResult result;
  result.kernel = compiler.compile(source, scratch);
  result.compiled = true;
  const std::string error =
      publish(work.path() + "/entry", dir, work.path() + "/stale", source, digest, compiler, result.kernel);
  if (!error.empty()) {
    warn_unwritable(root, error);
    return result;
  }
  result.entry_dir = dir;
  if (debug()) {
    const ResourceUsage& r = result.kernel.resources;
    jit_message(source.family + ": compiled in " + std::to_string(result.kernel.compile_seconds) + " s (" +
                std::to_string(r.registers) + " registers, " + std::to_string(r.spill_store_bytes) +
                " B spill stores), published " + dir + " (" + std::to_string(seconds_since(start)) + " s in total)");
  }
  return result;
}

std::vector<CacheEntryInfo> list_cache_entries() {
  const fs::path kernels = fs::path(get_cache_dir()) / "kernels";
  std::vector<CacheEntryInfo> entries;
  std::error_code ec;
  for (fs::directory_iterator it(kernels, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_directory(ec)) continue;
    const std::string name = it->path().filename().string();
    const size_t dash = name.rfind('-');
    EntryRead read;
    if (dash == std::string::npos || name.size() - dash - 1 != 32) {
      read.info.dir = it->path().string();
      read.info.problem = "not a cache entry name (<family>-<32 hex digits>)";
    } else {
      read = read_entry(it->path().string(), name.substr(dash + 1), nullptr);
      if (read.info.family.empty()) read.info.family = name.substr(0, dash);
    }
    entries.push_back(std::move(read.info));
  }
  std::sort(entries.begin(), entries.end(),
            [](const CacheEntryInfo& a, const CacheEntryInfo& b) { return a.dir < b.dir; });
  return entries;
}

std::string adopt_entry(const std::string& staged) {
  const std::string name = fs::path(staged).filename().string();
  const size_t dash = name.rfind('-');
  if (dash == std::string::npos || name.size() - dash - 1 != 32) return "not a cache entry name (<family>-<32 hex digits>)";
  const std::string digest = name.substr(dash + 1);
  if (EntryRead read = read_entry(staged, digest, nullptr); !read.valid) return read.problem;
  const std::string root = get_cache_dir();
  if (const std::string error = prepare_root(root); !error.empty()) return error;
  FileLock lock(root + "/locks/" + digest + ".lock");
  const std::string dir = root + "/kernels/" + name;
  if (read_entry(dir, digest, nullptr).valid) return "present";
  ::chmod(staged.c_str(), 0755);
  if (::rename(staged.c_str(), dir.c_str()) != 0) {
    // An invalid entry (or a stray file) is in the way: move it aside into the staging area, then retry.
    const std::string aside = staged + ".stale";
    if (::rename(dir.c_str(), aside.c_str()) != 0 || ::rename(staged.c_str(), dir.c_str()) != 0) {
      return "cannot move it into " + dir + ": " + errno_text(errno);
    }
    std::error_code ec;
    fs::remove_all(aside, ec);
  }
  fsync_dir(root + "/kernels");
  return "";
}

int clear_cache() {
  const std::string root = get_cache_dir();
  std::error_code ec;
  if (!fs::is_directory(fs::path(root) / "kernels", ec)) return 0;
  if (const std::string error = prepare_root(root); !error.empty()) {
    throw Error(ErrorKind::kJit, "clear_cache: " + error);
  }
  // Each entry is first renamed out of kernels/ (atomic: readers see it whole or not at all), then removed.
  TempDir trash(root + "/tmp", "clear-");
  if (!trash.ok()) throw Error(ErrorKind::kJit, "clear_cache: " + trash.error());
  int removed = 0;
  std::vector<fs::path> dirs;
  for (fs::directory_iterator it(fs::path(root) / "kernels", ec), end; !ec && it != end; it.increment(ec)) {
    dirs.push_back(it->path());
  }
  for (const auto& dir : dirs) {
    const fs::path target = fs::path(trash.path()) / dir.filename();
    if (::rename(dir.c_str(), target.c_str()) == 0) ++removed;
  }
  // Work directories of processes that died while compiling: nobody uses one after an hour.
  const auto cutoff = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (fs::directory_iterator it(fs::path(root) / "tmp", ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code time_ec;
    if (it->path() != trash.path() && it->last_write_time(time_ec) < cutoff && !time_ec) {
      std::error_code remove_ec;
      fs::remove_all(it->path(), remove_ec);
    }
  }
  return removed;
}

}  // namespace hopgemm::jit
