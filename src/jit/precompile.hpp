#pragma once
// Ahead-of-time compilation of a de-duplicated set of kernel sources on a thread pool, without a GPU.
#include <functional>
#include <string>
#include <vector>

#include "hopgemm/jit.hpp"
#include "jit/kernel_source.hpp"

namespace hopgemm::jit {

// Compiles every distinct source (by code) through the disk cache on `jobs` threads, and counts the ones the disk
// cache holds afterwards (num_stored). `progress(done, total)` is called after each kernel (from worker threads,
// serialised).
PrecompileReport precompile_sources(const std::vector<KernelSource>& sources, int jobs,
                                    const std::function<void(int, int)>& progress = {});

}  // namespace hopgemm::jit
