// The disk cache with real NVRTC compiles of a tiny kernel: publish and hit, eight processes racing on one
// key, corrupt and leftover entries, an unwritable cache directory, listing and clearing, precompile.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cpu/jit_test_kernel.hpp"
#include "cpu/jit_test_util.hpp"
#include "hopgemm/error.hpp"
#include "jit/compiler.hpp"
#include "jit/disk_cache.hpp"
#include "jit/precompile.hpp"

namespace {

namespace fs = std::filesystem;
using namespace hopgemm::jit;
using hopgemm_test::tiny_kernel_source;

using hopgemm_test::count_children;
using hopgemm_test::nvrtc;
using hopgemm_test::slurp;
using hopgemm_test::spit;

// A compiler that counts calls and returns a fixed "cubin": for cache logic that needs no real compile.
class FakeCompiler final : public Compiler {
 public:
  std::string signature() const override { return "FAKE 1.0"; }
  std::string location() const override { return "nowhere (a fake)"; }
  std::vector<std::string> flags() const override { return {"--fake"}; }
  CompiledKernel compile(const KernelSource& source, const std::string& scratch_dir) const override {
    ++calls;
    EXPECT_TRUE(fs::is_directory(scratch_dir));
    if (source.code.find("#error") != std::string::npos) {
      throw hopgemm::Error(hopgemm::ErrorKind::kJit, source.family + ": fake compile failed\nkernel.cu(1): error: boom");
    }
    CompiledKernel k;
    k.entry = "_Z4fakev";
    k.cubin.assign(source.code.begin(), source.code.end());
    k.resources = {12, 0, 0, 0};
    k.log = "ptxas info    : Used 12 registers";
    return k;
  }
  mutable std::atomic<int> calls{0};
};

using DiskCache = hopgemm_test::TempCacheTest;

TEST_F(DiskCache, CompileThenHit) {
  const KernelSource source = tiny_kernel_source(1);
  EXPECT_FALSE(disk_cache_contains(source, nvrtc()));
  const CacheResult first = get_or_compile(source, nvrtc());
  EXPECT_TRUE(first.compiled);
  ASSERT_FALSE(first.entry_dir.empty());
  EXPECT_EQ(first.entry_dir, cache_entry_dir(source, nvrtc()));
  EXPECT_EQ(fs::path(first.entry_dir).parent_path(), fs::path(root()) / "kernels");
  EXPECT_EQ(fs::path(first.entry_dir).filename().string(), "test_tiny-" + cache_digest(source, nvrtc()));
  for (const char* file : {"kernel.cu", "kernel.cubin", "manifest", "compile.log"}) {
    EXPECT_TRUE(fs::is_regular_file(fs::path(first.entry_dir) / file)) << file;
  }
  EXPECT_EQ(slurp(first.entry_dir + "/kernel.cu"), source.code);
  EXPECT_NE(first.kernel.entry.find("tiny_kernel"), std::string::npos);
  EXPECT_GT(first.kernel.compile_seconds, 0.0);
  EXPECT_NE(first.kernel.log.find("Used"), std::string::npos);
  EXPECT_TRUE(disk_cache_contains(source, nvrtc()));
  EXPECT_EQ(count_children(fs::path(root()) / "tmp"), 0u) << "the work directory is removed";

  const CacheResult second = get_or_compile(source, nvrtc());
  EXPECT_FALSE(second.compiled);
  EXPECT_EQ(second.entry_dir, first.entry_dir);
  EXPECT_EQ(second.kernel.cubin, first.kernel.cubin);
  EXPECT_EQ(second.kernel.entry, first.kernel.entry);
  EXPECT_EQ(second.kernel.resources.registers, first.kernel.resources.registers);
  EXPECT_EQ(second.kernel.resources.spill_store_bytes, 0);
  EXPECT_EQ(second.kernel.log, first.kernel.log);
  EXPECT_EQ(second.kernel.compile_seconds, 0.0);
}

TEST_F(DiskCache, KeyCoversSourceCompilerAndFlags) {
  FakeCompiler fake;
  const KernelSource a = tiny_kernel_source(1), b = tiny_kernel_source(2);
  EXPECT_NE(cache_digest(a, nvrtc()), cache_digest(b, nvrtc()));
  EXPECT_NE(cache_digest(a, nvrtc()), cache_digest(a, fake));
  EXPECT_NE(cache_digest(a, *make_nvrtc_compiler("sm_90a", true)), cache_digest(a, nvrtc()));
  EXPECT_NE(cache_digest(a, *make_nvrtc_compiler("sm_100a")), cache_digest(a, nvrtc()));
  EXPECT_EQ(cache_digest(a, *make_nvrtc_compiler()), cache_digest(a, nvrtc()));
}

// Eight processes ask for the same uncached kernel at the same moment: one compiles, seven wait on the
// key's lock and read its entry; one entry results, nothing is left behind.
TEST_F(DiskCache, EightProcessesCompileOnce) {
  const KernelSource source = tiny_kernel_source(2);
  const Compiler& compiler = nvrtc();
  cache_digest(source, compiler);  // header hash computed before fork
  constexpr int kProcesses = 8;
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
      }  // released all at once when the parent closes its end
      char outcome = 'E';
      try {
        const CacheResult r = get_or_compile(source, compiler);
        if (!r.kernel.cubin.empty() && !r.entry_dir.empty() && r.kernel.entry.find("tiny_kernel") != std::string::npos) {
          outcome = r.compiled ? 'C' : 'R';
        }
      } catch (...) {
      }
      [[maybe_unused]] ssize_t n = ::write(result[1], &outcome, 1);
      ::_exit(0);
    }
    ::close(result[1]);
    pids.push_back(pid);
    results.push_back(result[0]);
  }
  ::close(start[0]);
  ::close(start[1]);  // go
  int compiled = 0, read_back = 0;
  for (int i = 0; i < kProcesses; ++i) {
    char outcome = 'X';
    EXPECT_EQ(::read(results[i], &outcome, 1), 1);
    ::close(results[i]);
    int status = 0;
    EXPECT_EQ(::waitpid(pids[i], &status, 0), pids[i]);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    compiled += outcome == 'C';
    read_back += outcome == 'R';
  }
  EXPECT_EQ(compiled, 1);
  EXPECT_EQ(read_back, kProcesses - 1);
  const auto entries = list_cache_entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_TRUE(entries[0].valid) << entries[0].problem;
  EXPECT_EQ(entries[0].family, "test_tiny");
  EXPECT_EQ(count_children(fs::path(root()) / "tmp"), 0u);
  EXPECT_FALSE(get_or_compile(source, compiler).compiled);
}

// Every way an entry can be damaged: it is detected, rebuilt, and the rebuilt entry is good.
TEST_F(DiskCache, DamagedEntriesAreRebuilt) {
  const KernelSource source = tiny_kernel_source(3);
  const CacheResult original = get_or_compile(source, nvrtc());
  ASSERT_TRUE(original.compiled);
  const std::string dir = original.entry_dir;
  const std::string cubin = slurp(dir + "/kernel.cubin");
  const std::string manifest = slurp(dir + "/manifest");

  struct Damage {
    const char* name;
    std::function<void()> apply;
  };
  const std::vector<Damage> damages = {
      {"truncated cubin", [&] { spit(dir + "/kernel.cubin", cubin.substr(0, cubin.size() / 2)); }},
      {"empty cubin", [&] { spit(dir + "/kernel.cubin", ""); }},
      {"garbage cubin of the right size", [&] { spit(dir + "/kernel.cubin", std::string(cubin.size(), '\x5a')); }},
      {"one flipped byte in the cubin",
       [&] {
         std::string c = cubin;
         c[c.size() / 3] ^= 1;
         spit(dir + "/kernel.cubin", c);
       }},
      {"missing cubin", [&] { fs::remove(dir + "/kernel.cubin"); }},
      {"truncated manifest", [&] { spit(dir + "/manifest", manifest.substr(0, manifest.size() / 2)); }},
      {"manifest without its last line",
       [&] { spit(dir + "/manifest", manifest.substr(0, manifest.rfind("end="))); }},
      {"garbage manifest", [&] { spit(dir + "/manifest", std::string(300, '\x01') + "\n=\n\xff\xfe"); }},
      {"binary manifest", [&] { spit(dir + "/manifest", cubin); }},
      {"missing manifest", [&] { fs::remove(dir + "/manifest"); }},
      {"changed kernel.cu", [&] { spit(dir + "/kernel.cu", source.code + "// edited\n"); }},
      {"missing kernel.cu", [&] { fs::remove(dir + "/kernel.cu"); }},
      {"empty directory",
       [&] {
         fs::remove_all(dir);
         fs::create_directory(dir);
       }},
      {"a file instead of the directory",
       [&] {
         fs::remove_all(dir);
         spit(dir, "not a directory");
       }},
  };
  for (const Damage& damage : damages) {
    SCOPED_TRACE(damage.name);
    damage.apply();
    EXPECT_FALSE(disk_cache_contains(source, nvrtc()));
    const auto listed = list_cache_entries();
    if (fs::is_directory(dir)) {
      ASSERT_EQ(listed.size(), 1u);
      EXPECT_FALSE(listed[0].valid);
      EXPECT_FALSE(listed[0].problem.empty());
    }
    const CacheResult rebuilt = get_or_compile(source, nvrtc());
    EXPECT_TRUE(rebuilt.compiled);
    EXPECT_EQ(rebuilt.entry_dir, dir);
    EXPECT_EQ(rebuilt.kernel.cubin, original.kernel.cubin);
    EXPECT_EQ(slurp(dir + "/kernel.cubin"), cubin);
    EXPECT_TRUE(disk_cache_contains(source, nvrtc()));
    EXPECT_FALSE(get_or_compile(source, nvrtc()).compiled);
  }
  EXPECT_EQ(count_children(fs::path(root()) / "tmp"), 0u);
}

TEST_F(DiskCache, LeftoverTempDirIsHarmless) {
  FakeCompiler fake;
  const KernelSource source = tiny_kernel_source(4);
  // What a process killed mid-compile leaves: a work directory with a half-written entry.
  const fs::path leftover = fs::path(root()) / "tmp" / ("test_tiny-" + cache_digest(source, fake).substr(0, 8) + "-dead01");
  fs::create_directories(leftover / "entry");
  fs::create_directories(leftover / "scratch");
  spit((leftover / "entry" / "kernel.cubin").string(), "half a cub");
  fs::create_directories(fs::path(root()) / "locks");
  spit(root() + "/locks/" + cache_digest(source, fake) + ".lock", "");

  const CacheResult r = get_or_compile(source, fake);
  EXPECT_TRUE(r.compiled);
  EXPECT_FALSE(r.entry_dir.empty());
  EXPECT_FALSE(get_or_compile(source, fake).compiled);
  EXPECT_EQ(fake.calls, 1);
  EXPECT_TRUE(fs::exists(leftover)) << "another process's work directory is not touched";

  // clear_cache removes stale work directories (an hour old), and every entry.
  fs::last_write_time(leftover, fs::file_time_type::clock::now() - std::chrono::hours(2));
  EXPECT_EQ(clear_cache(), 1);
  EXPECT_FALSE(fs::exists(leftover));
  EXPECT_TRUE(list_cache_entries().empty());
  EXPECT_FALSE(disk_cache_contains(source, fake));
  EXPECT_TRUE(get_or_compile(source, fake).compiled);
}

TEST_F(DiskCache, CompileErrorsPropagateAndLeaveNothing) {
  FakeCompiler fake;
  const KernelSource broken{"test_broken", "#error broken\n"};
  try {
    get_or_compile(broken, fake);
    FAIL() << "no error";
  } catch (const hopgemm::Error& e) {
    EXPECT_EQ(e.kind(), hopgemm::ErrorKind::kJit);
    EXPECT_NE(std::string(e.what()).find("test_broken"), std::string::npos);
  }
  EXPECT_TRUE(list_cache_entries().empty());
  EXPECT_EQ(count_children(fs::path(root()) / "tmp"), 0u);
}

// Runs two compiles against the cache root `dir`: both must succeed in memory with exactly one warning
// naming the directory. Returns what went wrong, "" if nothing (usable in a forked child too).
std::string check_memory_fallback(const std::string& dir, const KernelSource& source) {
  hopgemm::set_cache_dir(dir);
  testing::internal::CaptureStderr();
  CacheResult first, second;
  std::string problem;
  try {
    first = get_or_compile(source, nvrtc());
    second = get_or_compile(source, nvrtc());
  } catch (const std::exception& e) {
    problem = std::string("threw: ") + e.what();
  }
  const std::string err = testing::internal::GetCapturedStderr();
  size_t warnings = 0;
  for (size_t at = err.find("warning"); at != std::string::npos; at = err.find("warning", at + 1)) ++warnings;
  if (!problem.empty()) return problem;
  if (!first.compiled || !second.compiled) return "not compiled in memory (cached on disk?)";
  if (!first.entry_dir.empty()) return "an entry directory was reported: " + first.entry_dir;
  if (first.kernel.cubin.empty() || first.kernel.entry.find("tiny_kernel") == std::string::npos) return "bad kernel";
  if (second.kernel.cubin != first.kernel.cubin) return "the two compiles differ";
  if (warnings != 1) return "expected one warning, stderr was:\n" + err;
  if (err.find(dir) == std::string::npos) return "the warning does not name " + dir + ":\n" + err;
  return "";
}

TEST_F(DiskCache, CacheUnderAPlainFileFallsBackToMemory) {
  const std::string file = root() + "/plain-file";
  spit(file, "x");
  EXPECT_EQ(check_memory_fallback(file + "/cache", tiny_kernel_source(5)), "");
}

TEST_F(DiskCache, ReadOnlyCacheDirFallsBackToMemory) {
  const std::string dir = root() + "/read-only";
  fs::create_directories(dir);
  ASSERT_EQ(::chmod(dir.c_str(), 0555), 0);
  const std::string probe = dir + "/probe";
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT, 0644);
  if (fd < 0) {
    EXPECT_EQ(check_memory_fallback(dir, tiny_kernel_source(6)), "");
    return;
  }
  ::close(fd);
  ::unlink(probe.c_str());
  // root writes through mode bits (CAP_DAC_OVERRIDE): run the case in a child that drops to nobody.
  if (::geteuid() != 0) GTEST_SKIP() << "a 0555 directory is writable here, and we are not root to drop privileges";
  ASSERT_EQ(::chmod(root().c_str(), 0755), 0);  // let nobody reach the directory
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(pipe_fds[0]);
    std::string problem;
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) {
      problem = "cannot drop to uid 65534";
    } else {
      problem = check_memory_fallback(dir, tiny_kernel_source(6));
    }
    [[maybe_unused]] ssize_t n = ::write(pipe_fds[1], problem.data(), problem.size());
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string problem;
  char buffer[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof(buffer))) > 0;) problem.append(buffer, static_cast<size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(problem, "") << "(checked as uid 65534 in a child process)";
}

TEST_F(DiskCache, ListAndClear) {
  FakeCompiler fake;
  EXPECT_TRUE(list_cache_entries().empty());
  EXPECT_EQ(clear_cache(), 0);
  get_or_compile(tiny_kernel_source(7), fake);
  get_or_compile(tiny_kernel_source(8), fake);
  fs::create_directories(fs::path(root()) / "kernels" / "stray");
  const auto entries = list_cache_entries();
  ASSERT_EQ(entries.size(), 3u);
  int valid = 0;
  for (const auto& e : entries) {
    if (!e.valid) {
      EXPECT_NE(e.dir.find("stray"), std::string::npos);
      continue;
    }
    ++valid;
    EXPECT_EQ(e.family, "test_tiny");
    EXPECT_EQ(e.entry, "_Z4fakev");
    EXPECT_EQ(e.resources.registers, 12);
    EXPECT_GT(e.cubin_bytes, 0);
  }
  EXPECT_EQ(valid, 2);
  EXPECT_EQ(clear_cache(), 3);
  EXPECT_TRUE(list_cache_entries().empty());
}

TEST_F(DiskCache, ThreadsShareOneCompile) {
  FakeCompiler fake;
  const KernelSource source = tiny_kernel_source(9);
  std::atomic<int> compiled{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] { compiled += get_or_compile(source, fake).compiled ? 1 : 0; });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(compiled, 1);
  EXPECT_EQ(fake.calls, 1);
}

TEST_F(DiskCache, PrecompileDeduplicatesAndReports) {
  std::vector<KernelSource> sources = {tiny_kernel_source(10), tiny_kernel_source(11), tiny_kernel_source(10),
                                       tiny_kernel_source(12), tiny_kernel_source(11)};
  std::vector<std::pair<int, int>> calls;
  const auto report = precompile_sources(sources, 2, [&](int done, int total) { calls.emplace_back(done, total); });
  EXPECT_EQ(report.num_kernels, 3);
  EXPECT_EQ(report.num_compiled, 3);
  EXPECT_EQ(report.num_cached, 0);
  EXPECT_TRUE(report.errors.empty());
  EXPECT_GT(report.seconds, 0.0);
  ASSERT_EQ(calls.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(calls[i], std::make_pair(i + 1, 3));
  std::printf("precompile: 3 tiny kernels on 2 threads in %.2f s\n", report.seconds);

  sources.push_back({"test_broken", "#include <hopgemm/device/common.cuh>\nint broken = undefined_name;\n"});
  const auto again = precompile_sources(sources, 0);
  EXPECT_EQ(again.num_kernels, 4);
  EXPECT_EQ(again.num_compiled, 0);
  EXPECT_EQ(again.num_cached, 3);
  ASSERT_EQ(again.errors.size(), 1u);
  EXPECT_EQ(again.errors[0].rfind("test_broken:", 0), 0u) << again.errors[0];
  EXPECT_NE(again.errors[0].find("undefined_name"), std::string::npos) << again.errors[0];
  EXPECT_EQ(again.errors[0].find('\n'), std::string::npos);
  EXPECT_EQ(precompile_sources({}, 4).num_kernels, 0);
}

}  // namespace
