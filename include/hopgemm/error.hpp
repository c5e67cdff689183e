#pragma once
// hopgemm::Error: the one exception type of the library. Its kind tells callers (and the Python layer,
// which maps kinds to ValueError / NotImplementedError / RuntimeError) what went wrong; its message names
// the op, the argument, what was given and what is required.
#include <stdexcept>
#include <string>

namespace hopgemm {

enum class ErrorKind {
  kInvalidArgument,  // a caller's input breaks a documented requirement
  kUnsupported,      // valid in principle, not supported (architecture, dtype combination, ...)
  kJit,              // code generation, compilation, cache or load failure; JIT policy refusals
  kCuda,             // a CUDA runtime or driver call failed
};

const char* error_kind_name(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace hopgemm
