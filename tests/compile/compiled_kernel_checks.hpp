#pragma once
// Shared checks of the compile tests: a JIT-compiled kernel produced a cubin with an entry point, and the
// ptxas report shows no spills and no stack frame; sets of kernels are compiled on every core through the disk cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "api/gemm_sources.hpp"
#include "api/suites.hpp"
#include "jit/compiler.hpp"
#include "jit/disk_cache.hpp"

namespace hopgemm::testing {

inline void expect_clean(const jit::CompiledKernel& k, const jit::KernelSource& s) {
  EXPECT_FALSE(k.cubin.empty()) << s.code;
  EXPECT_FALSE(k.entry.empty()) << s.code;
  EXPECT_EQ(k.resources.spill_store_bytes, 0) << s.code << k.log;
  EXPECT_EQ(k.resources.spill_load_bytes, 0) << s.code << k.log;
  EXPECT_EQ(k.resources.stack_frame_bytes, 0) << s.code << k.log;
}

// Runs fn(0) .. fn(count - 1) on every core (fn must be thread-safe; gtest's assertions are).
template <class Fn>
void parallel_for(size_t count, Fn fn) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < count;) fn(i);
  };
  std::vector<std::thread> threads(std::max(1u, std::thread::hardware_concurrency()) - 1);
  for (auto& t : threads) t = std::thread(worker);
  worker();
  for (auto& t : threads) t.join();
}

// Compiles every source with NVRTC on every core through the JIT disk cache and checks each with expect_clean. Under
// ctest the cache is $HOPGEMM_CACHE_DIR, a directory of the build tree that each run starts empty (tests/CMakeLists.txt):
// a kernel that several compile tests (or the precompile CLI and a test) build is compiled once per run. Returns the
// number of kernels this call compiled (the rest were in the cache).
inline size_t compile_all_clean(const std::vector<jit::KernelSource>& sources) {
  const auto compiler = jit::make_nvrtc_compiler();
  std::vector<jit::CacheResult> results(sources.size());
  std::vector<std::string> errors(sources.size());
  parallel_for(sources.size(), [&](size_t i) {
    try {
      results[i] = jit::get_or_compile(sources[i], *compiler);
    } catch (const std::exception& e) {
      errors[i] = e.what();
    }
  });
  size_t compiled = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (!errors[i].empty()) {
      ADD_FAILURE() << sources[i].code << errors[i];
      continue;
    }
    expect_clean(results[i].kernel, sources[i]);
    compiled += results[i].compiled;
  }
  return compiled;
}

// The distinct FP8 GEMM kernels the suites (deepseek-v3, wgrad-pr95; every scale layout) select on 132 SMs.
inline std::vector<jit::KernelSource> suite_gemm_sources() {
  std::vector<jit::KernelSource> out;
  std::set<std::string> seen;
  for (const char* suite : {"deepseek-v3", "wgrad-pr95"}) {
    for (auto& s : api::gemm_suite_sources(api::suite_gemms(suite), 132)) {
      if (seen.insert(s.code).second) out.push_back(std::move(s));
    }
  }
  return out;
}

}  // namespace hopgemm::testing
