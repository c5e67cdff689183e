// Strict environment parsing (src/runtime/env.hpp): every variable under both names, precedence of the
// HOPGEMM_* name, and bad values rejected with the variable's name in the message.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "hopgemm/error.hpp"
#include "hopgemm/jit.hpp"
#include "runtime/env.hpp"

namespace {

using hopgemm::Error;
using hopgemm::ErrorKind;
using hopgemm::JitPolicy;
using hopgemm::runtime::EnvSettings;
using hopgemm::runtime::parse_env;

EnvSettings parse(const std::map<std::string, std::string>& vars) {
  return parse_env([&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

// Expects parsing `vars` to fail with kInvalidArgument and a message naming `variable`.
void expect_rejected(const std::map<std::string, std::string>& vars, const std::string& variable) {
  try {
    parse(vars);
    FAIL() << "accepted " << variable;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(variable), std::string::npos) << e.what();
  }
}

struct BoolVar {
  const char* name;
  const char* alias;
  bool EnvSettings::*field;
};
const BoolVar kBoolVars[] = {
    {"HOPGEMM_JIT_DEBUG", "DG_JIT_DEBUG", &EnvSettings::jit_debug},
    {"HOPGEMM_PRINT_CONFIGS", "DG_PRINT_CONFIGS", &EnvSettings::print_configs},
    {"HOPGEMM_JIT_PTXAS_VERBOSE", "DG_JIT_PTXAS_VERBOSE", &EnvSettings::ptxas_verbose},
    {"HOPGEMM_JIT_PRINT_COMPILER_COMMAND", "DG_JIT_PRINT_COMPILER_COMMAND", &EnvSettings::print_compiler_command},
};

TEST(Env, DefaultsWhenNothingIsSet) {
  const EnvSettings s = parse({});
  EXPECT_FALSE(s.cache_dir.has_value());
  EXPECT_FALSE(s.jit_debug);
  EXPECT_FALSE(s.print_configs);
  EXPECT_FALSE(s.use_nvcc);
  EXPECT_FALSE(s.nvcc_path.has_value());
  EXPECT_FALSE(s.ptxas_verbose);
  EXPECT_FALSE(s.print_compiler_command);
  EXPECT_EQ(s.jit_policy, JitPolicy::kAllow);
}

TEST(Env, BooleanFlagsUnderBothNames) {
  for (const BoolVar& var : kBoolVars) {
    SCOPED_TRACE(var.name);
    EXPECT_TRUE(parse({{var.name, "1"}}).*var.field);
    EXPECT_TRUE(parse({{var.alias, "1"}}).*var.field);
    EXPECT_FALSE(parse({{var.name, "0"}}).*var.field);
    EXPECT_FALSE(parse({{var.alias, "0"}}).*var.field);
    // The HOPGEMM_* name wins over the DG_* alias, in both directions.
    EXPECT_TRUE(parse({{var.name, "1"}, {var.alias, "0"}}).*var.field);
    EXPECT_FALSE(parse({{var.name, "0"}, {var.alias, "1"}}).*var.field);
  }
}

TEST(Env, BooleanSpellings) {
  for (const char* yes : {"1", "true", "TRUE", "True", "yes", "YES", "on", "On"}) {
    EXPECT_TRUE(parse({{"HOPGEMM_JIT_DEBUG", yes}}).jit_debug) << yes;
  }
  for (const char* no : {"0", "false", "FALSE", "no", "off", "OFF", ""}) {
    EXPECT_FALSE(parse({{"HOPGEMM_JIT_DEBUG", no}}).jit_debug) << no;
  }
}

TEST(Env, BadBooleansNameTheVariable) {
  for (const BoolVar& var : kBoolVars) {
    for (const char* bad : {"2", "-1", "y", "enable", "1 ", " 1", "truee", "0x1"}) {
      SCOPED_TRACE(std::string(var.name) + "=" + bad);
      expect_rejected({{var.name, bad}}, var.name);
      expect_rejected({{var.alias, bad}}, var.alias);
    }
  }
}

TEST(Env, CacheDir) {
  EXPECT_EQ(parse({{"HOPGEMM_CACHE_DIR", "/a"}}).cache_dir.value(), "/a");
  EXPECT_EQ(parse({{"DG_JIT_CACHE_DIR", "/b"}}).cache_dir.value(), "/b");
  EXPECT_EQ(parse({{"HOPGEMM_CACHE_DIR", "/a"}, {"DG_JIT_CACHE_DIR", "/b"}}).cache_dir.value(), "/a");
  expect_rejected({{"HOPGEMM_CACHE_DIR", ""}}, "HOPGEMM_CACHE_DIR");
  expect_rejected({{"DG_JIT_CACHE_DIR", ""}}, "DG_JIT_CACHE_DIR");
}

TEST(Env, CompilerChoice) {
  EXPECT_TRUE(parse({{"HOPGEMM_JIT_USE_NVCC", "1"}}).use_nvcc);
  EXPECT_FALSE(parse({{"HOPGEMM_JIT_USE_NVCC", "0"}}).use_nvcc);
  // DeepGEMM's switch has the opposite sense: DG_JIT_USE_NVRTC=0 selects NVCC.
  EXPECT_TRUE(parse({{"DG_JIT_USE_NVRTC", "0"}}).use_nvcc);
  EXPECT_FALSE(parse({{"DG_JIT_USE_NVRTC", "1"}}).use_nvcc);
  EXPECT_FALSE(parse({{"HOPGEMM_JIT_USE_NVCC", "0"}, {"DG_JIT_USE_NVRTC", "0"}}).use_nvcc);
  EXPECT_TRUE(parse({{"HOPGEMM_JIT_USE_NVCC", "1"}, {"DG_JIT_USE_NVRTC", "1"}}).use_nvcc);
  expect_rejected({{"HOPGEMM_JIT_USE_NVCC", "nvcc"}}, "HOPGEMM_JIT_USE_NVCC");
  expect_rejected({{"DG_JIT_USE_NVRTC", "maybe"}}, "DG_JIT_USE_NVRTC");
}

TEST(Env, NvccPath) {
  EXPECT_EQ(parse({{"HOPGEMM_NVCC", "/opt/cuda/bin/nvcc"}}).nvcc_path.value(), "/opt/cuda/bin/nvcc");
  EXPECT_EQ(parse({{"DG_JIT_NVCC_COMPILER", "/x/nvcc"}}).nvcc_path.value(), "/x/nvcc");
  EXPECT_EQ(parse({{"HOPGEMM_NVCC", "/a/nvcc"}, {"DG_JIT_NVCC_COMPILER", "/b/nvcc"}}).nvcc_path.value(), "/a/nvcc");
  expect_rejected({{"HOPGEMM_NVCC", ""}}, "HOPGEMM_NVCC");
  expect_rejected({{"DG_JIT_NVCC_COMPILER", ""}}, "DG_JIT_NVCC_COMPILER");
}

TEST(Env, JitPolicy) {
  EXPECT_EQ(parse({{"HOPGEMM_JIT_POLICY", "allow"}}).jit_policy, JitPolicy::kAllow);
  EXPECT_EQ(parse({{"HOPGEMM_JIT_POLICY", "warn_on_miss"}}).jit_policy, JitPolicy::kWarnOnMiss);
  EXPECT_EQ(parse({{"HOPGEMM_JIT_POLICY", "error_on_miss"}}).jit_policy, JitPolicy::kErrorOnMiss);
  for (const char* bad : {"", "deny", "error", "warn-on-miss", "allow "}) {
    SCOPED_TRACE(bad);
    expect_rejected({{"HOPGEMM_JIT_POLICY", bad}}, "HOPGEMM_JIT_POLICY");
  }
}

TEST(Env, ScalarParsers) {
  using hopgemm::runtime::parse_bool;
  using hopgemm::runtime::parse_int;
  EXPECT_EQ(parse_int("X", "0"), 0);
  EXPECT_EQ(parse_int("X", "-17"), -17);
  EXPECT_EQ(parse_int("X", "2147483647"), 2147483647);
  EXPECT_EQ(parse_int("X", "-2147483648"), -2147483648);
  // Strict: blanks on either side, a sign other than a leading '-', a base prefix or a value past int's range.
  for (const char* bad : {"", " ", "-", "1.5", "12a", "a12", "2147483648", "-2147483649", "99999999999999999999",
                          " 3", "\t3", "\n3", "3 ", "3\n", "+3", "--3", "- 3", "0x10", "1e3"}) {
    try {
      parse_int("MY_VAR", bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("MY_VAR"), std::string::npos);
    }
  }
  EXPECT_TRUE(parse_bool("X", "On"));
  EXPECT_THROW(parse_bool("X", "2"), Error);
}

TEST(JitPolicyNames, ParseAndName) {
  using hopgemm::jit_policy_name;
  using hopgemm::parse_jit_policy;
  for (JitPolicy p : {JitPolicy::kAllow, JitPolicy::kWarnOnMiss, JitPolicy::kErrorOnMiss}) {
    EXPECT_EQ(parse_jit_policy(jit_policy_name(p)), p);
  }
  EXPECT_STREQ(jit_policy_name(JitPolicy::kErrorOnMiss), "error_on_miss");
  EXPECT_EQ(parse_jit_policy("ERROR_ON_MISS"), JitPolicy::kErrorOnMiss);
  try {
    parse_jit_policy("sometimes");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("sometimes"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("error_on_miss"), std::string::npos);
  }
}

TEST(JitPolicyNames, SetAndGet) {
  const JitPolicy before = hopgemm::get_jit_policy();
  hopgemm::set_jit_policy(JitPolicy::kErrorOnMiss);
  EXPECT_EQ(hopgemm::get_jit_policy(), JitPolicy::kErrorOnMiss);
  hopgemm::set_jit_policy(JitPolicy::kWarnOnMiss);
  EXPECT_EQ(hopgemm::get_jit_policy(), JitPolicy::kWarnOnMiss);
  hopgemm::set_jit_policy(before);
}

}  // namespace
