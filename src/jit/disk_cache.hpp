#pragma once
// The content-addressed disk cache.
//
// Entry directory: <cache_dir>/kernels/<family>-<32 hex digest>/ with kernel.cu, kernel.cubin and a
// manifest (entry name, resources, size and checksum of the cubin, the compiler and the file that compiled it).
// The digest covers the generated source, the hash of the device-header tree, the compiler signature (name and
// version) and flags, and the arch.
// Publish = write into a private temporary directory, fsync, rename. Concurrent processes take an
// advisory lock per key (flock on <cache_dir>/locks/<digest>.lock): one compiles, the others wait and
// then read its entry. A truncated, garbage or incomplete entry is rebuilt, never trusted, never fatal.
// An unwritable cache directory falls back to compiling in memory with one warning.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "jit/compiler.hpp"

namespace hopgemm::jit {

// A 128-bit non-cryptographic hash (two 64-bit lanes over 16-byte blocks, avalanche-finalised), used for
// cache keys, the header-tree hash and cubin checksums. Incremental: update() in pieces equals one update()
// of the concatenation.
class Hash128 {
 public:
  Hash128& update(const void* data, size_t size);
  Hash128& update(std::string_view text) { return update(text.data(), text.size()); }
  // Length-prefixed, so consecutive fields cannot run into each other ("ab"+"c" != "a"+"bc").
  Hash128& field(std::string_view text);
  // 32 lowercase hex digits.
  std::string hex() const;

 private:
  void block(uint64_t k1, uint64_t k2);
  uint64_t h1_ = 0x6a09e667f3bcc908ull;
  uint64_t h2_ = 0xbb67ae8584caa73bull;
  unsigned char tail_[16] = {};
  size_t tail_size_ = 0;
  uint64_t length_ = 0;
};
std::string hash128_hex(std::string_view data);

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
  std::string compiler;           // e.g. "NVRTC 13.0" (part of the key)
  std::string compiler_location;  // the file that compiled it and why that one ("" in entries of older versions)
  ResourceUsage resources;
  long long cubin_bytes = 0;
  bool valid = false;
  std::string problem;  // why it is invalid
};
// All entries under the cache directory (for `hopgemm cache ls|verify`).
std::vector<CacheEntryInfo> list_cache_entries();
// Removes every entry; returns how many were removed. Also removes temporary directories left behind by
// processes that died while compiling (older than an hour).
int clear_cache();
// Moves the entry directory `staged` (named <family>-<digest>, holding an entry's files) into the cache if it is a
// valid entry and the cache has no valid one of that name; returns "" when added, "present" when the cache already
// had it, else why it was refused. The key's lock is held while the entry is checked and renamed into place.
std::string adopt_entry(const std::string& staged);
// The entry directory `source` would have under `compiler` (whether or not it exists).
std::string cache_entry_dir(const KernelSource& source, const Compiler& compiler);

}  // namespace hopgemm::jit
