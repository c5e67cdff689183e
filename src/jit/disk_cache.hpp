#pragma once
// The content-addressed disk cache (DESIGN.md §2.5).
//
// Entry directory: <cache_dir>/kernels/<family>-<32 hex digest>/ with kernel.cu, kernel.cubin and a
// manifest (entry name, resources, size and checksum of the cubin). The digest covers the generated
// source, the hash of the device-header tree, the compiler signature and flags, and the arch.
// Publish = write into a private temporary directory, fsync, rename. Concurrent processes take an
// advisory lock per key (flock on <cache_dir>/locks/<digest>.lock): one compiles, the others wait and
// then read its entry. A truncated, garbage or incomplete entry is rebuilt, never trusted, never fatal.
// An unwritable cache directory falls back to compiling in memory with one warning.
#include <string>

#include "jit/compiler.hpp"

namespace hopgemm::jit {

struct CacheResult {
  CompiledKernel kernel;
  bool compiled = false;  // true if this call compiled it (a miss), false if read from disk
  std::string entry_dir;  // empty when the cache directory is not writable
};

// Hash of every file under include_dir()/hopgemm/device (computed once per process).
const std::string& device_header_hash();
// The cache key of `source` under `compiler`.
std::string cache_digest(const KernelSource& source, const Compiler& compiler);
// True if a valid entry for `source` exists (does not compile).
bool disk_cache_contains(const KernelSource& source, const Compiler& compiler);
// Reads the entry for `source`, or compiles and publishes it.
CacheResult get_or_compile(const KernelSource& source, const Compiler& compiler);

struct CacheEntryInfo {
  std::string dir;
  std::string family;
  std::string entry;
  ResourceUsage resources;
  long long cubin_bytes = 0;
  bool valid = false;
  std::string problem;  // why it is invalid
};
// All entries under the cache directory (for `hopgemm cache ls|verify`).
std::vector<CacheEntryInfo> list_cache_entries();
// Removes every entry; returns how many were removed.
int clear_cache();

}  // namespace hopgemm::jit
