#pragma once
// Environment variables, parsed strictly: a value that is not understood is an error, never garbage.
// Every HOPGEMM_* variable has the DG_* name DeepGEMM users already set as an alias; the HOPGEMM_*
// name wins when both are set.
#include <functional>
#include <optional>
#include <string>

#include "hopgemm/jit.hpp"

namespace hopgemm::runtime {

using GetEnv = std::function<const char*(const char*)>;

struct EnvSettings {
  std::optional<std::string> cache_dir;  // HOPGEMM_CACHE_DIR | DG_JIT_CACHE_DIR
  bool jit_debug = false;                // HOPGEMM_JIT_DEBUG | DG_JIT_DEBUG
  bool print_configs = false;            // HOPGEMM_PRINT_CONFIGS | DG_PRINT_CONFIGS
  bool use_nvcc = false;                 // HOPGEMM_JIT_USE_NVCC | DG_JIT_USE_NVRTC (inverted)
  std::optional<std::string> nvcc_path;  // HOPGEMM_NVCC | DG_JIT_NVCC_COMPILER
  std::optional<std::string> nvrtc_path;  // HOPGEMM_NVRTC: the libnvrtc.so the JIT opens (jit/nvrtc_library.hpp)
  bool ptxas_verbose = false;            // HOPGEMM_JIT_PTXAS_VERBOSE | DG_JIT_PTXAS_VERBOSE
  bool print_compiler_command = false;   // HOPGEMM_JIT_PRINT_COMPILER_COMMAND | DG_JIT_PRINT_COMPILER_COMMAND
  JitPolicy jit_policy = JitPolicy::kAllow;  // HOPGEMM_JIT_POLICY
  // HOPGEMM_GROUPED_CONFIG "field=value,...": config fields the grouped GEMMs override in the heuristics' choice (a
  // tuning hook, as `hopgemm bench --config` is for the dense GEMM; checked when a grouped op first runs).
  std::optional<std::string> grouped_config;
};

// Pure parser (tested with a fake environment). Throws Error(kInvalidArgument) naming the variable.
EnvSettings parse_env(const GetEnv& getenv);
// The process environment, parsed once on first use.
const EnvSettings& env();

// Strict scalar parsers, exposed for tests: booleans accept 0/1/true/false/yes/no/on/off (any case).
bool parse_bool(const std::string& name, const std::string& value);
int parse_int(const std::string& name, const std::string& value);

}  // namespace hopgemm::runtime
