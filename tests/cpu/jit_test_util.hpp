#pragma once
// Shared fixtures for the JIT tests: a private cache directory per test.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "hopgemm/jit.hpp"
#include "jit/compiler.hpp"

namespace hopgemm_test {

// The in-process NVRTC back-end, made once per test binary.
inline const hopgemm::jit::Compiler& nvrtc() {
  static const std::unique_ptr<hopgemm::jit::Compiler> compiler = hopgemm::jit::make_nvrtc_compiler();
  return *compiler;
}

// A whole file's bytes ("" when it cannot be read).
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Replaces a file's bytes.
inline void spit(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

// Entries directly in `dir` (0 when it cannot be listed).
inline size_t count_children(const std::filesystem::path& dir) {
  std::error_code ec;
  size_t n = 0;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) ++n;
  return n;
}

// Gives each test an empty cache directory (set_cache_dir) and removes it afterwards.
class TempCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = std::filesystem::temp_directory_path().string() + "/hopgemm-test-cache-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    hopgemm::set_cache_dir(root_);
  }
  void TearDown() override {
    hopgemm::set_cache_dir("");
    std::error_code ec;
    // Sub-cases may have made parts read-only: give the owner access back before removing.
    for (auto it = std::filesystem::recursive_directory_iterator(root_, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_directory(ec)) ::chmod(it->path().c_str(), 0755);
    }
    ::chmod(root_.c_str(), 0755);
    std::filesystem::remove_all(root_, ec);
  }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

}  // namespace hopgemm_test
