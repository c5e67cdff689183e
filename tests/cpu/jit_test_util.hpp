#pragma once
// Shared fixtures for the JIT tests: a private cache directory per test.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "hopgemm/jit.hpp"

namespace hopgemm_test {

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
