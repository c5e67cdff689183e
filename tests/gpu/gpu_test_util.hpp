#pragma once
// Helpers for the C++ GPU tests: skip with a printed reason where no GPU is present (fail instead where
// HOPGEMM_REQUIRE_GPU=1 says the machine has one: scripts/gpu_check.sh), device buffers.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "hopgemm/runtime.hpp"

namespace hopgemm::testing {

// Whether HOPGEMM_REQUIRE_GPU is set to anything but "" or "0": GPU tests must run, not skip.
inline bool gpu_required() {
  const char* v = std::getenv("HOPGEMM_REQUIRE_GPU");
  return v != nullptr && *v != '\0' && std::string(v) != "0";
}

}  // namespace hopgemm::testing

#define HOPGEMM_SKIP_OR_FAIL(reason)                                                                 \
  do {                                                                                               \
    if (::hopgemm::testing::gpu_required()) GTEST_FAIL() << reason << " (HOPGEMM_REQUIRE_GPU=1)";    \
    GTEST_SKIP() << reason;                                                                          \
  } while (0)

#define HOPGEMM_SKIP_WITHOUT_GPU()                                                                           \
  do {                                                                                                       \
    if (!::hopgemm::gpu_available()) HOPGEMM_SKIP_OR_FAIL("no CUDA GPU/driver on this machine");             \
    if (::hopgemm::device_info().arch_major != 9) HOPGEMM_SKIP_OR_FAIL("needs an SM90 (Hopper) GPU");        \
  } while (0)

namespace hopgemm::testing {

class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    if (cudaMalloc(&ptr_, bytes) != cudaSuccess) {
      std::fprintf(stderr, "cudaMalloc(%zu) failed\n", bytes);
      std::abort();
    }
  }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Appends `json_line` to $HOPGEMM_BENCH_OUT (one JSON object per line) if set.
inline void record_result(const std::string& json_line) {
  std::printf("RESULT %s\n", json_line.c_str());
  if (const char* path = std::getenv("HOPGEMM_BENCH_OUT")) {
    if (FILE* f = std::fopen(path, "a")) {
      std::fprintf(f, "%s\n", json_line.c_str());
      std::fclose(f);
    }
  }
}

}  // namespace hopgemm::testing
