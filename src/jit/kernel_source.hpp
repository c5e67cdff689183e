#pragma once
// What the JIT compiles: one tiny translation unit per kernel, rendered from a config struct.
#include <string>

namespace hopgemm::jit {

struct KernelSource {
  std::string family;  // kernel family, e.g. "sm90_fp8_gemm"; names the cache entry and messages
  std::string code;    // the translation unit: an #include of the family's header + one instantiation
};

// Writes a config struct as a C++20 designated initializer, the form the kernel template takes:
//   ConfigWriter("hopgemm::device::QuantizeConfig").field("kind", 1).field("gran", 128).str()
//   == "hopgemm::device::QuantizeConfig{.kind = 1, .gran = 128}"
class ConfigWriter {
 public:
  explicit ConfigWriter(std::string type) : text_(std::move(type) + "{") {}
  ConfigWriter& field(const char* name, long long value) {
    text_ += (first_ ? "." : ", .") + std::string(name) + " = " + std::to_string(value);
    first_ = false;
    return *this;
  }
  std::string str() const { return text_ + "}"; }

 private:
  std::string text_;
  bool first_ = true;
};

// A kernel family as the JIT sees it: the name of its cache entries and messages, the device header that defines it
// (relative to include/), the __global__ template and the config struct it is instantiated with.
struct KernelFamily {
  const char* name;
  const char* header;
  const char* kernel;
  const char* config_type;
};

// The translation unit for one kernel: includes `header` (relative to include/, e.g.
// "hopgemm/device/kernels/sm90_quantize_fp8.cuh") and takes the address of `kernel<config_expr>`, which
// makes the compiler emit exactly that one instantiation as the cubin's only entry point.
KernelSource render_kernel(const std::string& family, const std::string& header, const std::string& kernel,
                           const std::string& config_expr);

// The family's translation unit for one config: `write_fields(writer)` adds the config's fields in declaration order.
template <class WriteFields>
KernelSource render_kernel(const KernelFamily& family, WriteFields&& write_fields) {
  ConfigWriter writer(family.config_type);
  write_fields(writer);
  return render_kernel(family.name, family.header, family.kernel, writer.str());
}

}  // namespace hopgemm::jit
