// The JIT under faults (issue 29, item 5), beyond the damaged entries and races of test_jit_disk_cache.cpp: the
// compiler killed mid-compile (an NVCC that dies by a signal after writing half a cubin; the process compiling
// killed while holding the key's lock, with another process waiting on it), a full disk at every point of a publish,
// a read-only cache that holds good, bad and missing entries, entries of another entry format, two hopgemm versions
// (two device-header trees) sharing one cache directory, and 16 cold processes compiling the same and different
// kernels at once. Every call must return the cubin a clean compile gives (byte for byte) or a clear Error(kJit);
// never a crash, a hang (the forked cases run under a time limit) or an entry that a later call trusts wrongly.
#include <gtest/gtest.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cpu/jit_test_kernel.hpp"
#include "cpu/jit_test_util.hpp"
#include "hopgemm/error.hpp"
#include "hopgemm/jit.hpp"
#include "jit/compiler.hpp"
#include "jit/disk_cache.hpp"

namespace {

namespace fs = std::filesystem;
using namespace hopgemm::jit;
using hopgemm_test::tiny_kernel_source;

using hopgemm_test::count_children;
using hopgemm_test::nvrtc;
using hopgemm_test::slurp;
using hopgemm_test::spit;

std::string cubin_hash(const CompiledKernel& kernel) {
  return hash128_hex(std::string_view(kernel.cubin.data(), kernel.cubin.size()));
}

// The cubin of a compile that touches no cache (the reference every faulted call must match).
std::string clean_cubin_hash(const KernelSource& source, const Compiler& compiler = nvrtc()) {
  return cubin_hash(compiler.compile(source, ""));
}

// Runs `body` in a forked child under a time limit; returns what the child reported ("" = fine), or how it died.
std::string in_child(const std::function<std::string()>& body, int timeout_s = 120) {
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    ::close(fds[0]);
    std::string problem;
    try {
      problem = body();
    } catch (const std::exception& e) {
      problem = std::string("threw: ") + e.what();
    }
    size_t done = 0;
    while (done < problem.size()) {
      const ssize_t n = ::write(fds[1], problem.data() + done, problem.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buffer[4096];
    const ssize_t n = ::read(fds[0], buffer, sizeof(buffer));
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (timed_out) return "hung: killed after " + std::to_string(timeout_s) + " s; it had said: " + out;
  if (WIFSIGNALED(status)) return "died by signal " + std::to_string(WTERMSIG(status)) + "; it had said: " + out;
  return out;
}

// Checks what a faulted get_or_compile returned against the clean compile.
std::string check_result(const CacheResult& r, const std::string& clean_hash, const char* what) {
  if (r.kernel.cubin.empty() || cubin_hash(r.kernel) != clean_hash) return std::string(what) + ": a wrong cubin";
  if (r.kernel.entry.find("tiny_kernel") == std::string::npos) return std::string(what) + ": a wrong entry name";
  return "";
}

// Every entry under the cache is valid and holds exactly what a clean compile of its source gives.
std::string check_no_poisoned_entry(const std::map<std::string, std::string>& clean_by_dir) {
  for (const auto& e : list_cache_entries()) {
    if (!e.valid) return "an invalid entry " + e.dir + ": " + e.problem;
    const auto it = clean_by_dir.find(e.dir);
    if (it == clean_by_dir.end()) return "an unexpected entry " + e.dir;
    if (hash128_hex(slurp(e.dir + "/kernel.cubin")) != it->second) return "a poisoned entry " + e.dir;
  }
  return "";
}

using JitFaults = hopgemm_test::TempCacheTest;

// ---- the compiler killed mid-compile -------------------------------------------------------------------------------

// An NVCC that reports the real one's version (so its cache key is the real compiler's) and then fails in `how`.
std::string fake_toolkit(const std::string& root, const std::string& how) {
  const std::string bin = root + "/bin";
  fs::create_directories(bin);
  const std::string real = cuda_home() + "/bin/nvcc";
  spit(bin + "/nvcc", "#!/bin/sh\n"
                      "if [ \"$1\" = --version ]; then exec '" + real + "' --version; fi\n" + how + "\n");
  fs::permissions(bin + "/nvcc", fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
  return root;
}

TEST_F(JitFaults, NvccKilledMidCompileLeavesNothingAndTheNextCompileIsClean) {
  const KernelSource source = tiny_kernel_source(101);
  const std::string real_home = cuda_home();
  const char* given_home = std::getenv("CUDA_HOME");
  const std::optional<std::string> original_home = given_home ? std::optional<std::string>(given_home) : std::nullopt;
  const std::unique_ptr<Compiler> real_nvcc = make_nvcc_compiler();
  struct Fault {
    const char* name;
    std::string script;  // runs in the compile's scratch directory
    const char* message;  // what the error must say
  };
  const std::vector<Fault> faults = {
      {"SIGKILL after half a cubin", "printf 'ELF half a cubin' > kernel.cubin; kill -KILL $$", "killed by signal 9"},
      {"SIGSEGV", "printf 'x' > kernel.cubin; kill -SEGV $$", "killed by signal 11"},
      {"SIGTERM while the real compiler runs",
       "'" + real_home + "/bin/nvcc' \"$@\" & sleep 0.3; kill -KILL $! 2>/dev/null; kill -TERM $$",
       "killed by signal 15"},
      {"exit status 1 with output", "echo 'kernel.cu(1): error: out of memory'; exit 1", "exit status 1"},
      {"exit 0 without a cubin or a report", "exit 0", "no ptxas report"},
  };
  for (const Fault& fault : faults) {
    SCOPED_TRACE(fault.name);
    const std::string home = fake_toolkit(root() + "/toolkit-" + std::to_string(&fault - faults.data()), fault.script);
    ASSERT_EQ(::setenv("CUDA_HOME", home.c_str(), 1), 0);
    const std::unique_ptr<Compiler> dying = make_nvcc_compiler();
    if (original_home) ::setenv("CUDA_HOME", original_home->c_str(), 1); else ::unsetenv("CUDA_HOME");
    ASSERT_EQ(cache_digest(source, *dying), cache_digest(source, *real_nvcc)) << "the fake must share the real key";
    try {
      get_or_compile(source, *dying);
      ADD_FAILURE() << "no error";
    } catch (const hopgemm::Error& e) {
      EXPECT_EQ(e.kind(), hopgemm::ErrorKind::kJit);
      EXPECT_NE(std::string(e.what()).find(fault.message), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("test_tiny"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(list_cache_entries().empty()) << "nothing is published";
    EXPECT_EQ(count_children(fs::path(root()) / "tmp"), 0u) << "the work directory is removed";
    EXPECT_FALSE(disk_cache_contains(source, *real_nvcc));
  }
  const CacheResult r = get_or_compile(source, *real_nvcc);
  EXPECT_TRUE(r.compiled);
  EXPECT_EQ(check_result(r, clean_cubin_hash(source, *real_nvcc), "the real NVCC after the faults"), "");
  EXPECT_EQ(check_no_poisoned_entry({{r.entry_dir, cubin_hash(r.kernel)}}), "");
}

// A compiler with NVRTC's key that reports when it starts and then never returns: the process holding the key's lock.
class StuckCompiler final : public Compiler {
 public:
  explicit StuckCompiler(int started_fd) : started_fd_(started_fd) {}
  std::string signature() const override { return nvrtc().signature(); }
  std::string location() const override { return nvrtc().location(); }
  std::vector<std::string> flags() const override { return nvrtc().flags(); }
  CompiledKernel compile(const KernelSource&, const std::string& scratch_dir) const override {
    spit(scratch_dir + "/kernel.cubin", "half a cub");
    [[maybe_unused]] ssize_t n = ::write(started_fd_, "S", 1);
    for (;;) ::pause();
  }

 private:
  int started_fd_;
};

// The process compiling a kernel is killed (SIGKILL) while it holds the key's lock and another process waits on it:
// the lock dies with it, the waiter compiles the kernel itself (no hang), and its entry is the clean compile's.
TEST_F(JitFaults, ProcessKilledWhileCompilingReleasesTheLock) {
  const KernelSource source = tiny_kernel_source(102);
  int started[2];
  ASSERT_EQ(::pipe(started), 0);
  const pid_t holder = ::fork();
  ASSERT_GE(holder, 0);
  if (holder == 0) {
    ::close(started[0]);
    StuckCompiler stuck(started[1]);
    try {
      get_or_compile(source, stuck);
    } catch (...) {
    }
    ::_exit(1);
  }
  ::close(started[1]);
  char byte = 0;
  ASSERT_EQ(::read(started[0], &byte, 1), 1) << "the holder never started compiling";
  ::close(started[0]);
  // The waiter starts while the holder holds the lock; it blocks until the holder dies.
  std::string waiter_result;
  std::thread waiter([&] {
    waiter_result = in_child([&] {
      const CacheResult r = get_or_compile(source, nvrtc());
      if (!r.compiled) return std::string("the waiter read an entry nobody could have published");
      return r.entry_dir.empty() ? std::string("not published") : std::string("");
    }, 60);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(::kill(holder, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(holder, &status, 0), holder);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  waiter.join();
  EXPECT_EQ(waiter_result, "");
  const std::string clean = clean_cubin_hash(source);
  const CacheResult r = get_or_compile(source, nvrtc());
  EXPECT_FALSE(r.compiled);
  EXPECT_EQ(check_result(r, clean, "after the kill"), "");
  EXPECT_EQ(check_no_poisoned_entry({{r.entry_dir, clean}}), "");
  EXPECT_EQ(count_children(fs::path(root()) / "tmp"), 1u) << "the dead holder's work directory (clear_cache's job)";
}

// ---- a full disk ---------------------------------------------------------------------------------------------------

// Makes `dir` a tmpfs of `bytes` in a private mount namespace of this (child) process. Returns "" or why it cannot.
std::string mount_small_tmpfs(const std::string& dir, long bytes) {
  static bool unshared = false;
  if (!unshared) {
    if (::unshare(CLONE_NEWNS) != 0) {
      // Not root: a user namespace of our own makes us root in it.
      const uid_t uid = ::geteuid();
      const gid_t gid = ::getegid();
      if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return std::string("unshare: ") + strerror(errno);
      spit("/proc/self/setgroups", "deny");
      spit("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1");
      spit("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1");
    }
    if (::mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return std::string("mount --make-rprivate: ") + strerror(errno);
    unshared = true;
  }
  fs::create_directories(dir);
  const std::string options = "size=" + std::to_string(bytes);
  if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, options.c_str()) != 0) return std::string("mount tmpfs: ") + strerror(errno);
  return "";
}

// Compiles on caches that run out of space at every point of a publish (tmpfs of 4 KiB to 40 KiB where a private
// mount is allowed; else a file-size limit, RLIMIT_FSIZE with SIGXFSZ ignored, which fails each write past it): every
// call returns the clean cubin; an entry is either published whole or not at all; space freed, the next call
// publishes.
TEST_F(JitFaults, FullDiskCompilesInMemoryAndPublishesNothingPartial) {
  const KernelSource source = tiny_kernel_source(103);
  const std::string clean = clean_cubin_hash(source);
  const std::string report = in_child([&]() -> std::string {
    std::string mechanism = "tmpfs";
    std::vector<long> limits;
    for (long kib = 4; kib <= 40; kib += 4) limits.push_back(kib * 1024);
    if (const std::string why = mount_small_tmpfs(root() + "/probe", 4096); !why.empty()) {
      mechanism = "RLIMIT_FSIZE (no tmpfs: " + why + ")";
      ::signal(SIGXFSZ, SIG_IGN);
      limits = {0, 64, 512, 1024, 2048, 4096, 8192, 16384, 1 << 20};
    }
    int published = 0, in_memory = 0;
    for (size_t i = 0; i < limits.size(); ++i) {
      const std::string dir = root() + "/full-" + std::to_string(i);
      if (mechanism == "tmpfs") {
        if (std::string why = mount_small_tmpfs(dir, limits[i]); !why.empty()) return why;
      } else {
        fs::create_directories(dir);
        const rlimit limit{static_cast<rlim_t>(limits[i]), static_cast<rlim_t>(RLIM_INFINITY)};
        if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return "setrlimit failed";
      }
      hopgemm::set_cache_dir(dir);
      const std::string what = mechanism + " of " + std::to_string(limits[i]) + " bytes";
      CacheResult r;
      try {
        r = get_or_compile(source, nvrtc());
      } catch (const std::exception& e) {
        return what + ": threw " + e.what();
      }
      if (std::string bad = check_result(r, clean, what.c_str()); !bad.empty()) return bad;
      const auto entries = list_cache_entries();
      if (r.entry_dir.empty()) {
        ++in_memory;
        if (!entries.empty()) return what + ": not published, yet an entry is there: " + entries[0].problem;
      } else {
        ++published;
        if (std::string bad = check_no_poisoned_entry({{r.entry_dir, clean}}); !bad.empty()) return what + ": " + bad;
      }
      if (count_children(fs::path(dir) / "tmp") != 0) return what + ": a work directory is left behind";
      // Space again: the next call publishes (or reads what was published).
      const rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
      ::setrlimit(RLIMIT_FSIZE, &unlimited);
      if (mechanism == "tmpfs") ::mount("tmpfs", dir.c_str(), "tmpfs", MS_REMOUNT, "size=1048576");
      const CacheResult again = get_or_compile(source, nvrtc());
      if (std::string bad = check_result(again, clean, "with space again"); !bad.empty()) return what + ": " + bad;
      if (again.entry_dir.empty()) return what + ": with space again, still not published";
      if (std::string bad = check_no_poisoned_entry({{again.entry_dir, clean}}); !bad.empty()) return what + ": " + bad;
    }
    if (published == 0 || in_memory == 0) {
      return mechanism + ": the limits did not cover both outcomes (" + std::to_string(published) + " published, " +
             std::to_string(in_memory) + " in memory)";
    }
    std::printf("full disk (%s): %zu limits, %d published, %d compiled in memory only\n", mechanism.c_str(),
                limits.size(), published, in_memory);
    std::fflush(stdout);
    return "";
  });
  EXPECT_EQ(report, "");
}

// ---- a read-only cache ----------------------------------------------------------------------------------------------

// A cache that cannot be written holding a good entry, a damaged one and none for a third kernel: the good one is read,
// the others are compiled in memory (one warning), the damaged entry is left as it was and never trusted.
TEST_F(JitFaults, ReadOnlyCacheReadsGoodEntriesAndCompilesTheRest) {
  const KernelSource good = tiny_kernel_source(104), damaged = tiny_kernel_source(105), absent = tiny_kernel_source(106);
  const CacheResult good_entry = get_or_compile(good, nvrtc());
  const CacheResult damaged_entry = get_or_compile(damaged, nvrtc());
  const std::string cubin = slurp(damaged_entry.entry_dir + "/kernel.cubin");
  spit(damaged_entry.entry_dir + "/kernel.cubin", cubin.substr(0, cubin.size() / 2));
  const std::string clean_good = cubin_hash(good_entry.kernel), clean_damaged = cubin_hash(damaged_entry.kernel);
  const std::string clean_absent = clean_cubin_hash(absent);
  for (const auto& entry : fs::recursive_directory_iterator(root())) {
    ::chmod(entry.path().c_str(), entry.is_directory() ? 0555 : 0444);
  }
  ::chmod(root().c_str(), 0555);
  const std::string problem = in_child([&]() -> std::string {
    // root writes through mode bits: drop to nobody (the parent directory stays reachable).
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) return "cannot drop to uid 65534";
    testing::internal::CaptureStderr();
    std::string bad;
    try {
      const CacheResult a = get_or_compile(good, nvrtc());
      if (a.compiled) bad += "the good entry was recompiled; ";
      bad += check_result(a, clean_good, "good");
      const CacheResult b = get_or_compile(damaged, nvrtc());
      if (!b.compiled || !b.entry_dir.empty()) bad += "the damaged entry was trusted; ";
      bad += check_result(b, clean_damaged, "damaged");
      const CacheResult c = get_or_compile(absent, nvrtc());
      if (!c.compiled || !c.entry_dir.empty()) bad += "the absent entry was not compiled in memory; ";
      bad += check_result(c, clean_absent, "absent");
    } catch (const std::exception& e) {
      bad += std::string("threw: ") + e.what();
    }
    const std::string err = testing::internal::GetCapturedStderr();
    size_t warnings = 0;
    for (size_t at = err.find("warning"); at != std::string::npos; at = err.find("warning", at + 1)) ++warnings;
    if (warnings != 1) bad += "expected one warning, stderr was:\n" + err;
    return bad;
  });
  EXPECT_EQ(problem, "");
  EXPECT_EQ(slurp(damaged_entry.entry_dir + "/kernel.cubin").size(), cubin.size() / 2) << "left as it was";
  EXPECT_TRUE(disk_cache_contains(good, nvrtc()));
  EXPECT_FALSE(disk_cache_contains(damaged, nvrtc()));
}

// ---- other versions --------------------------------------------------------------------------------------------------

// Entries another entry format wrote (an older or newer hopgemm, here and under other keys) are never trusted at our
// key, never removed by our compiles, and `cache ls` reports them as foreign.
TEST_F(JitFaults, ForeignFormatEntriesAreNotTrustedNorTouched) {
  const KernelSource source = tiny_kernel_source(107);
  const CacheResult ours = get_or_compile(source, nvrtc());
  const std::string manifest = slurp(ours.entry_dir + "/manifest");
  const std::string clean = cubin_hash(ours.kernel);
  // Another version's entry under a key of its own.
  const std::string foreign = root() + "/kernels/test_tiny-" + std::string(32, 'f');
  fs::copy(ours.entry_dir, foreign);
  std::string foreign_manifest = manifest;
  foreign_manifest.replace(foreign_manifest.find("hopgemm-jit-entry-"), 19, "hopgemm-jit-entry-9");
  foreign_manifest.replace(foreign_manifest.find("digest=") + 7, 32, std::string(32, 'f'));
  spit(foreign + "/manifest", foreign_manifest + "new_field=from the future\n");
  for (const char* format : {"hopgemm-jit-entry-0", "hopgemm-jit-entry-2", "", "hopgemm-jit-entry-1x"}) {
    SCOPED_TRACE(format);
    std::string changed = manifest;
    const size_t at = changed.find("format=") + 7;
    changed.replace(at, changed.find('\n', at) - at, format);
    spit(ours.entry_dir + "/manifest", changed);
    EXPECT_FALSE(disk_cache_contains(source, nvrtc()));
    const CacheResult rebuilt = get_or_compile(source, nvrtc());
    EXPECT_TRUE(rebuilt.compiled);
    EXPECT_EQ(check_result(rebuilt, clean, "rebuilt"), "");
    EXPECT_EQ(slurp(ours.entry_dir + "/manifest").find("format=hopgemm-jit-entry-1\n"), 0u);
    EXPECT_TRUE(fs::exists(foreign + "/kernel.cubin")) << "the other version's entry is left alone";
  }
  // Unknown fields of a later version in an otherwise valid manifest do not make our entry invalid.
  spit(ours.entry_dir + "/manifest", manifest + "new_field=from the future\n");
  EXPECT_FALSE(get_or_compile(source, nvrtc()).compiled);
  int foreign_listed = 0;
  for (const auto& e : list_cache_entries()) {
    if (e.dir != foreign) continue;
    ++foreign_listed;
    EXPECT_FALSE(e.valid);
    EXPECT_NE(e.problem.find("format"), std::string::npos) << e.problem;
  }
  EXPECT_EQ(foreign_listed, 1);
}

// A copy of the device headers with one header changed: what another hopgemm version brings to a shared cache.
std::string other_version_include_dir(const std::string& root) {
  const std::string dir = root + "/other-version-include";
  if (fs::exists(dir)) return dir;
  fs::create_directories(dir + "/hopgemm");
  fs::copy(include_dir() + "/hopgemm/device", dir + "/hopgemm/device", fs::copy_options::recursive);
  std::ofstream(dir + "/hopgemm/device/common.cuh", std::ios::app) << "\n// another hopgemm version\n";
  return dir;
}

// ---- 16 cold processes at once --------------------------------------------------------------------------------------

// 16 processes start together, none with NVRTC loaded or the headers hashed (ctest runs this test in a process of its
// own: only the fork happened before): eight are one hopgemm version, eight another (their own device-header tree),
// and each asks for a kernel every process wants and one of four it shares with three others, in either order. Each
// of the 10 distinct entries is compiled by exactly one process, every process gets the clean cubins, both versions'
// entries stay valid side by side.
TEST_F(JitFaults, SixteenColdProcessesTwoVersionsSameAndDifferentKernels) {
  const std::string other_include = other_version_include_dir(root());
  const std::string this_include = include_dir();
  const char* given_include = std::getenv("HOPGEMM_INCLUDE_DIR");
  const std::optional<std::string> original_include =
      given_include ? std::optional<std::string>(given_include) : std::nullopt;
  constexpr int kProcesses = 16;
  const std::vector<KernelSource> sources = {tiny_kernel_source(110), tiny_kernel_source(111),
                                             tiny_kernel_source(112), tiny_kernel_source(113),
                                             tiny_kernel_source(114)};
  int start[2];
  ASSERT_EQ(::pipe(start), 0);
  std::vector<pid_t> pids;
  std::vector<int> results;
  for (int i = 0; i < kProcesses; ++i) {
    int result[2];
    ASSERT_EQ(::pipe(result), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(start[1]);
      ::close(result[0]);
      char byte;
      while (::read(start[0], &byte, 1) > 0) {
      }
      // Version: which header tree. Output per kernel: "<version><index><C|R><cubin hash>\n".
      const bool other = i % 2 == 1;
      ::setenv("HOPGEMM_INCLUDE_DIR", (other ? other_include : this_include).c_str(), 1);
      std::string out;
      const int own = 1 + (i / 2) % 4;
      for (int which : (i / 8 == 0 ? std::vector<int>{0, own} : std::vector<int>{own, 0})) {
        try {
          const CacheResult r = get_or_compile(sources[which], nvrtc());
          out += std::string(other ? "B" : "A") + std::to_string(which) + (r.compiled ? "C" : "R") +
                 (r.entry_dir.empty() ? "-unpublished" : cubin_hash(r.kernel)) + "\n";
        } catch (const std::exception& e) {
          out += std::string("error ") + e.what() + "\n";
        }
      }
      [[maybe_unused]] ssize_t n = ::write(result[1], out.data(), out.size());
      ::_exit(0);
    }
    ::close(result[1]);
    pids.push_back(pid);
    results.push_back(result[0]);
  }
  ::close(start[0]);
  const auto t0 = std::chrono::steady_clock::now();
  ::close(start[1]);  // go
  std::map<std::string, int> compiled, read_back;
  std::map<std::string, std::set<std::string>> hashes;
  for (int i = 0; i < kProcesses; ++i) {
    std::string out;
    char buffer[4096];
    for (ssize_t n; (n = ::read(results[i], buffer, sizeof(buffer))) > 0;) out.append(buffer, static_cast<size_t>(n));
    ::close(results[i]);
    int status = 0;
    EXPECT_EQ(::waitpid(pids[i], &status, 0), pids[i]);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "process " << i;
    size_t lines = 0;
    for (size_t pos = 0, end; (end = out.find('\n', pos)) != std::string::npos; pos = end + 1, ++lines) {
      const std::string line = out.substr(pos, end - pos);
      ASSERT_EQ(line.rfind("error", 0), std::string::npos) << line;
      const std::string key = line.substr(0, 2);
      (line[2] == 'C' ? compiled : read_back)[key]++;
      hashes[key].insert(line.substr(3));
    }
    EXPECT_EQ(lines, 2u) << "process " << i << " said: " << out;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(hashes.size(), 10u);
  for (const auto& [key, n] : compiled) EXPECT_EQ(n, 1) << key << " compiled more than once";
  EXPECT_EQ(compiled.size(), 10u);
  // The clean compiles, one per version and kernel, in this process (after the children: they started cold).
  std::map<std::string, std::string> clean_by_dir;
  for (const char* version : {"A", "B"}) {
    ::setenv("HOPGEMM_INCLUDE_DIR", (version[0] == 'A' ? this_include : other_include).c_str(), 1);
    for (int which = 0; which < 5; ++which) {
      const std::string key = version + std::to_string(which);
      const std::string clean = clean_cubin_hash(sources[which]);
      EXPECT_EQ(hashes[key], std::set<std::string>{clean}) << key;
      clean_by_dir[cache_entry_dir(sources[which], nvrtc())] = clean;
    }
  }
  if (original_include) ::setenv("HOPGEMM_INCLUDE_DIR", original_include->c_str(), 1);
  else ::unsetenv("HOPGEMM_INCLUDE_DIR");
  EXPECT_EQ(list_cache_entries().size(), 10u);
  EXPECT_EQ(check_no_poisoned_entry(clean_by_dir), "");
  EXPECT_EQ(count_children(fs::path(root()) / "tmp"), 0u);
  std::printf("16 cold processes, 2 versions, 10 distinct kernels: %.2f s\n", seconds);
}

}  // namespace
