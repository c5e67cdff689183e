// The precompile registration table: every suite's kernel set is the registered families' kernels, de-duplicated,
// and each family serves the suites it should.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "api/suite_sources.hpp"
#include "hopgemm/jit.hpp"

namespace hopgemm {
namespace {

TEST(PrecompileFamilies, EverySuiteTakesEachFamilysKernelsOnce) {
  for (const std::string& suite : precompile_suites()) {
    const auto sources = api::precompile_sources(suite, 132);
    std::set<std::string> codes;
    std::map<std::string, int> per_family;
    for (const auto& s : sources) {
      EXPECT_TRUE(codes.insert(s.code).second) << suite << ": a kernel listed twice\n" << s.code;
      ++per_family[s.family];
    }
    for (const auto& family : api::precompile_families()) {
      const auto own = family.sources(suite, 132);
      EXPECT_FALSE(own.empty()) << family.family << " has no kernels for " << suite;
      for (const auto& s : own) EXPECT_TRUE(codes.count(s.code)) << suite << " lacks a " << family.family << " kernel";
      EXPECT_GT(per_family[family.family], 0) << suite << ": " << family.family;
    }
  }
}

}  // namespace
}  // namespace hopgemm
