// Process-wide JIT settings: the miss policy and the disk-cache root (include/hopgemm/jit.hpp).
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>

#include "hopgemm/error.hpp"
#include "hopgemm/jit.hpp"
#include "jit/compiler.hpp"
#include "runtime/env.hpp"

namespace hopgemm {
namespace {

constexpr int kPolicyUnset = -1;  // follow HOPGEMM_JIT_POLICY
std::atomic<int> g_policy{kPolicyUnset};

std::mutex g_cache_dir_mutex;
std::string g_cache_dir;  // empty: the default

const char* non_empty_env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

std::string default_cache_dir() {
  if (const auto& configured = runtime::env().cache_dir) return *configured;
  if (const char* xdg = non_empty_env("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    return std::string(xdg) + "/hopgemm";
  }
  if (const char* home = non_empty_env("HOME")) return std::string(home) + "/.cache/hopgemm";
  if (const passwd* pw = getpwuid(getuid()); pw != nullptr && pw->pw_dir != nullptr && pw->pw_dir[0] != '\0') {
    return std::string(pw->pw_dir) + "/.cache/hopgemm";
  }
  std::error_code ec;
  const auto tmp = std::filesystem::temp_directory_path(ec);
  return (ec ? std::string("/tmp") : tmp.string()) + "/hopgemm-cache-" + std::to_string(getuid());
}

}  // namespace

void set_jit_policy(JitPolicy policy) { g_policy.store(static_cast<int>(policy), std::memory_order_relaxed); }

JitPolicy get_jit_policy() {
  const int policy = g_policy.load(std::memory_order_relaxed);
  return policy == kPolicyUnset ? runtime::env().jit_policy : static_cast<JitPolicy>(policy);
}

JitPolicy parse_jit_policy(const std::string& text) {
  std::string v = text;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  if (v == "allow") return JitPolicy::kAllow;
  if (v == "warn_on_miss") return JitPolicy::kWarnOnMiss;
  if (v == "error_on_miss") return JitPolicy::kErrorOnMiss;
  throw Error(ErrorKind::kInvalidArgument,
              "unknown JIT policy '" + text + "' (expected allow, warn_on_miss or error_on_miss)");
}

const char* jit_policy_name(JitPolicy policy) {
  switch (policy) {
    case JitPolicy::kAllow: return "allow";
    case JitPolicy::kWarnOnMiss: return "warn_on_miss";
    case JitPolicy::kErrorOnMiss: return "error_on_miss";
  }
  return "unknown";
}

void set_cache_dir(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_cache_dir_mutex);
  g_cache_dir = path;
}

std::string get_cache_dir() {
  {
    std::lock_guard<std::mutex> lock(g_cache_dir_mutex);
    if (!g_cache_dir.empty()) return g_cache_dir;
  }
  return default_cache_dir();
}

void set_device_include_dir(const std::string& path) { jit::set_include_dir(path); }

}  // namespace hopgemm
