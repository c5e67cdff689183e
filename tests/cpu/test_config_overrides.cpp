// The config override hook behind `_fp8_gemm_nt_with_config`, bench/try_configs.py and `hopgemm bench --config`:
// parsing "field=value,..." and applying it to a heuristics config.
#include <gtest/gtest.h>

#include <cstring>

#include <string>

#include "api/gemm_sources.hpp"
#include "heuristics/sm90_fp8_gemm.hpp"
#include "hopgemm/error.hpp"

namespace hopgemm {
namespace {

TEST(ConfigOverrides, Parse) {
  const auto o = api::parse_config_overrides("block_n=64,k_splits=4", "test");
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o.at("block_n"), 64);
  EXPECT_EQ(o.at("k_splits"), 4);
  EXPECT_TRUE(api::parse_config_overrides("", "test").empty());
  for (const char* bad : {"block_n", "block_n=", "=4", "block_n=6x", "block_n=64,,k_splits=2"}) {
    try {
      api::parse_config_overrides(bad, "test");
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("field=integer"), std::string::npos) << e.what();
    }
  }
  // Names are checked as apply_config_overrides checks them, so a typo fails before any work is done.
  try {
    api::parse_config_overrides("block_n=64,blok_m=128", "--config");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("'blok_m'"), std::string::npos) << e.what();
  }
}

TEST(ConfigOverrides, Apply) {
  heuristics::Fp8GemmChoice base;
  base.config.block_m = 64;
  base.config.block_n = 128;
  base.config.num_stages = heuristics::max_stages(base.config);
  // A narrower tile gets its own stage count.
  const auto c = api::apply_config_overrides(base, {{"block_n", 64}, {"k_splits", 4}}, "test").config;
  EXPECT_EQ(c.block_n, 64);
  EXPECT_EQ(c.k_splits, 4);
  EXPECT_EQ(c.num_stages, heuristics::max_stages(c));
  EXPECT_GT(c.num_stages, base.config.num_stages);
  EXPECT_EQ(api::apply_config_overrides(base, {{"num_stages", 3}}, "test").config.num_stages, 3);
  // The launch parameters are set by name too, and leave the compiled config alone.
  const auto launched = api::apply_config_overrides(base, {{"raster_band", 2}, {"num_sms", 64}}, "test");
  EXPECT_EQ(launched.launch.raster_band, 2);
  EXPECT_EQ(launched.launch.num_sms, 64);
  EXPECT_EQ(std::memcmp(&launched.config, &base.config, sizeof(base.config)), 0);
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
