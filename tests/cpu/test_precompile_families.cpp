// The precompile registration table: every suite's kernel set is the registered families' kernels, de-duplicated,
// and each family serves the suites it should.
#include <gtest/gtest.h>

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
    for (const auto& s : sources) EXPECT_TRUE(codes.insert(s.code).second) << suite << ": a kernel listed twice\n" << s.code;
    size_t listed = 0;
    for (const auto& family : api::precompile_families()) {
      const auto own = family.sources(suite, 132);
      EXPECT_FALSE(own.empty()) << family.family << " has no kernels for " << suite;
      for (const auto& s : own) EXPECT_TRUE(codes.count(s.code)) << suite << " lacks a " << family.family << " kernel";
      listed += own.size();
    }
    EXPECT_LE(sources.size(), listed);
  }
}

}  // namespace
}  // namespace hopgemm
