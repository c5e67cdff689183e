// The config override hook behind `_fp8_gemm_nt_with_config`, bench/try_configs.py and `hopgemm bench --config`:
// parsing "field=value,..." and applying it to a heuristics config.
#include <gtest/gtest.h>

#include <string>

#include "api/gemm_sources.hpp"
#include "heuristics/sm90_fp8_gemm.hpp"
#include "hopgemm/error.hpp"

namespace hopgemm {
namespace {

TEST(ConfigOverrides, Parse) {
  const auto o = api::parse_config_overrides("block_n=64,k_splits=4");
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o.at("block_n"), 64);
  EXPECT_EQ(o.at("k_splits"), 4);
  EXPECT_TRUE(api::parse_config_overrides("").empty());
  for (const char* bad : {"block_n", "block_n=", "=4", "block_n=6x", "block_n=64,,k_splits=2"}) {
    try {
      api::parse_config_overrides(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("field=integer"), std::string::npos) << e.what();
    }
  }
}

TEST(ConfigOverrides, Apply) {
  device::Sm90Fp8GemmConfig base;
  base.block_m = 64;
  base.block_n = 128;
  base.num_stages = heuristics::max_stages(base);
  // A narrower tile gets its own stage count; k_splits alone brings the reduction the heuristics would use.
  const auto c = api::apply_config_overrides(base, {{"block_n", 64}, {"k_splits", 4}}, "test");
  EXPECT_EQ(c.block_n, 64);
  EXPECT_EQ(c.k_splits, 4);
  EXPECT_EQ(c.splitk_fused, heuristics::preferred_splitk_fused(c));
  EXPECT_EQ(c.splitk_fused, 1);
  EXPECT_EQ(c.num_stages, heuristics::max_stages(c));
  EXPECT_GT(c.num_stages, base.num_stages);
  EXPECT_EQ(api::apply_config_overrides(base, {{"num_stages", 3}}, "test").num_stages, 3);
  EXPECT_EQ(api::apply_config_overrides(base, {{"k_splits", 2}, {"splitk_fused", 0}}, "test").splitk_fused, 0);
  try {
    api::apply_config_overrides(base, {{"recipe", 1}}, "test-hook");  // follows from the problem: not tunable
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("test-hook"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'recipe'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hopgemm
