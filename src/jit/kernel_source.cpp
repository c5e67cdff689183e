#include "jit/kernel_source.hpp"

#include <string>

namespace hopgemm::jit {

// The instantiating function is `static` (one per TU, no symbol clash) and `used` (kept although nothing
// calls it). Taking the kernel's address makes the compiler emit exactly that instantiation. Under NVRTC
// with -default-device it is a device function, under NVCC a host function: both instantiate the kernel.
KernelSource render_kernel(const std::string& family, const std::string& header, const std::string& kernel,
                           const std::string& config_expr) {
  std::string code;
  code.reserve(256 + header.size() + kernel.size() + config_expr.size());
  code += "// hopgemm JIT kernel: ";
  code += family;
  code += "\n#include <";
  code += header;
  code += ">\n\nstatic __attribute__((used)) void hopgemm_instantiate() {\n  (void)reinterpret_cast<void*>(&";
  code += kernel;
  code += "<";
  code += config_expr;
  code += ">);\n}\n";
  return KernelSource{family, std::move(code)};
}

}  // namespace hopgemm::jit
