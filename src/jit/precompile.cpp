// Ahead-of-time compilation on a thread pool: no GPU, no driver, only the compiler and the disk cache.
#include "jit/precompile.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "hopgemm/error.hpp"
#include "jit/compiler.hpp"
#include "jit/disk_cache.hpp"

namespace hopgemm::jit {

PrecompileReport precompile_sources(const std::vector<KernelSource>& sources, int jobs,
                                    const std::function<void(int, int)>& progress) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<const KernelSource*> unique;
  {
    std::unordered_set<std::string_view> seen;
    for (const auto& source : sources) {
      if (seen.insert(source.code).second) unique.push_back(&source);
    }
  }
  PrecompileReport report;
  report.num_kernels = static_cast<int>(unique.size());
  if (unique.empty()) return report;

  // Created (and the header tree hashed) before the workers start, so a setup error is thrown once, here.
  const Compiler& compiler = default_compiler();
  device_header_hash();
  report.compiler = compiler.signature() + ", " + compiler.location();

  if (jobs <= 0) jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int num_threads = std::min<int>(jobs, report.num_kernels);
  std::atomic<size_t> next{0};
  std::mutex mutex;  // guards report and serialises progress()
  int done = 0;
  auto worker = [&] {
    for (size_t i = next++; i < unique.size(); i = next++) {
      const KernelSource& source = *unique[i];
      bool compiled = false;
      std::string error;
      try {
        compiled = get_or_compile(source, compiler).compiled;
      } catch (const std::exception& e) {
        error = first_error_line(e.what());
        if (error.rfind(source.family + ":", 0) != 0) error = source.family + ": " + error;
      }
      std::lock_guard<std::mutex> lock(mutex);
      if (!error.empty()) {
        report.errors.push_back(std::move(error));
      } else {
        ++(compiled ? report.num_compiled : report.num_cached);
      }
      ++done;
      if (progress) progress(done, report.num_kernels);
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(num_threads - 1));
  for (int t = 1; t < num_threads; ++t) threads.emplace_back(worker);
  worker();
  for (auto& thread : threads) thread.join();
  // What the disk cache holds now: where it could not be written (a full or read-only disk) the rest were compiled
  // in memory only, after one warning, and are lost at exit.
  for (const KernelSource* source : unique) report.num_stored += disk_cache_contains(*source, compiler) ? 1 : 0;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace hopgemm::jit
