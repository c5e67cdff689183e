#include "runtime/env.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <string>
#include <system_error>

#include "hopgemm/error.hpp"

namespace hopgemm::runtime {
namespace {

struct Lookup {
  std::string name;  // the variable that was actually set
  std::string value;
};

std::optional<Lookup> lookup(const GetEnv& getenv, const char* name, const char* alias) {
  if (const char* v = getenv(name)) return Lookup{name, v};
  if (alias != nullptr) {
    if (const char* v = getenv(alias)) return Lookup{alias, v};
  }
  return std::nullopt;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

bool parse_bool(const std::string& name, const std::string& value) {
  const std::string v = lower(value);
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off" || v.empty()) return false;
  throw Error(ErrorKind::kInvalidArgument,
              name + "='" + value + "' is not a boolean (use 0/1, true/false, yes/no or on/off)");
}

int parse_int(const std::string& name, const std::string& value) {
  // std::from_chars reads an optional '-' and decimal digits only: no blanks, no '+', no base prefix. Whatever it
  // leaves unread, or a value out of int's range, is an error.
  int parsed = 0;
  const char* end = value.data() + value.size();
  const auto [stop, error] = std::from_chars(value.data(), end, parsed, 10);
  if (value.empty() || error != std::errc() || stop != end) {
    throw Error(ErrorKind::kInvalidArgument, name + "='" + value + "' is not a decimal integer");
  }
  return parsed;
}

EnvSettings parse_env(const GetEnv& getenv) {
  EnvSettings s;
  auto flag = [&](const char* name, const char* alias, bool& out) {
    if (auto v = lookup(getenv, name, alias)) out = parse_bool(v->name, v->value);
  };
  if (auto v = lookup(getenv, "HOPGEMM_CACHE_DIR", "DG_JIT_CACHE_DIR")) {
    if (v->value.empty()) throw Error(ErrorKind::kInvalidArgument, v->name + " is set but empty");
    s.cache_dir = v->value;
  }
  flag("HOPGEMM_JIT_DEBUG", "DG_JIT_DEBUG", s.jit_debug);
  flag("HOPGEMM_PRINT_CONFIGS", "DG_PRINT_CONFIGS", s.print_configs);
  if (auto v = lookup(getenv, "HOPGEMM_JIT_USE_NVCC", nullptr)) {
    s.use_nvcc = parse_bool(v->name, v->value);
  } else if (auto dg = lookup(getenv, "DG_JIT_USE_NVRTC", nullptr)) {
    s.use_nvcc = !parse_bool(dg->name, dg->value);
  }
  if (auto v = lookup(getenv, "HOPGEMM_NVCC", "DG_JIT_NVCC_COMPILER")) {
    if (v->value.empty()) throw Error(ErrorKind::kInvalidArgument, v->name + " is set but empty");
    s.nvcc_path = v->value;
  }
  if (auto v = lookup(getenv, "HOPGEMM_NVRTC", nullptr)) {
    if (v->value.empty()) throw Error(ErrorKind::kInvalidArgument, v->name + " is set but empty");
    s.nvrtc_path = v->value;
  }
  flag("HOPGEMM_JIT_PTXAS_VERBOSE", "DG_JIT_PTXAS_VERBOSE", s.ptxas_verbose);
  flag("HOPGEMM_JIT_PRINT_COMPILER_COMMAND", "DG_JIT_PRINT_COMPILER_COMMAND", s.print_compiler_command);
  if (auto v = lookup(getenv, "HOPGEMM_JIT_POLICY", nullptr)) {
    try {
      s.jit_policy = parse_jit_policy(v->value);
    } catch (const Error& e) {
      throw Error(ErrorKind::kInvalidArgument, v->name + ": " + e.what());
    }
  }
  if (auto v = lookup(getenv, "HOPGEMM_GROUPED_CONFIG", nullptr)) {
    if (v->value.empty()) throw Error(ErrorKind::kInvalidArgument, v->name + " is set but empty");
    s.grouped_config = v->value;
  }
  return s;
}

const EnvSettings& env() {
  static const EnvSettings settings = parse_env([](const char* name) { return std::getenv(name); });
  return settings;
}

}  // namespace hopgemm::runtime
