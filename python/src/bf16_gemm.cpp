// Dense BF16 GEMMs (include/hopgemm/bf16_gemm.hpp), with deep_gemm's Python signatures:
//   bf16_gemm_nt(a, b, d, c=None, compiled_dims="nk") (nn "nk", tn and tt "mn"), plus hopgemm's stream=.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>

#include <map>
#include <string>

#include "bindings.hpp"
#include "hopgemm/bf16_gemm.hpp"
#include "hopgemm/tuning.hpp"
#include "tensor_arg.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace hopgemm::python {
namespace {

using Bf16GemmFn = void (*)(const TensorView&, const TensorView&, const TensorView&, const TensorView*,
                            const GemmOptions&, cudaStream_t);

template <Bf16GemmFn kGemm>
void bf16_gemm(nb::handle a, nb::handle b, nb::handle d, nb::handle c, std::string compiled_dims, nb::handle stream) {
  GemmOptions options;
  options.compiled_dims = std::move(compiled_dims);
  CallContext ctx;
  const TensorView ta = tensor_arg(a, "a", ctx), tb = tensor_arg(b, "b", ctx), td = tensor_arg(d, "d", ctx);
  const TensorView tc = optional_tensor_arg(c, "c", ctx);
  launch(ctx, stream, [&](cudaStream_t s) { kGemm(ta, tb, td, tc.rank < 0 ? nullptr : &tc, options, s); });
}

template <Bf16GemmFn kGemm>
void def_bf16_gemm(nb::module_& m, const char* name, const char* compiled_dims, const char* doc) {
  m.def(name, &bf16_gemm<kGemm>, "a"_a.none(), "b"_a.none(), "d"_a.none(), "c"_a.none() = nb::none(),
        "compiled_dims"_a = compiled_dims, "stream"_a.none() = nb::none(), doc);
}

// Test hook: bf16_gemm_<layout> with the heuristics' config changed by `overrides` (hopgemm/tuning.hpp).
void bf16_gemm_with_config(nb::handle a, nb::handle b, nb::handle d, nb::handle c, const std::string& layout,
                           const std::map<std::string, int>& overrides, nb::handle stream) {
  CallContext ctx;
  const TensorView ta = tensor_arg(a, "a", ctx), tb = tensor_arg(b, "b", ctx), td = tensor_arg(d, "d", ctx);
  const TensorView tc = optional_tensor_arg(c, "c", ctx);
  launch(ctx, stream, [&](cudaStream_t s) {
    bf16_gemm_with_overrides(layout, ta, tb, td, tc.rank < 0 ? nullptr : &tc, overrides, s);
  });
}

}  // namespace

void bind_bf16_gemm(nb::module_& m) {
  m.def("_bf16_gemm_with_config", &bf16_gemm_with_config, "a"_a.none(), "b"_a.none(), "d"_a.none(),
        "c"_a.none() = nb::none(), "layout"_a = "nt", "overrides"_a = std::map<std::string, int>{},
        "stream"_a.none() = nb::none(),
        "Internal (tests): bf16_gemm_<layout> with the heuristics' config changed by `overrides` {field: value}.");
  def_bf16_gemm<&bf16_gemm_nt>(m, "bf16_gemm_nt", "nk",
      "D = C + A @ B^T, BF16 A [M, K] and B [N, K], each K- or MN-major; d [M, N] BF16 or FP32 written in place.");
  def_bf16_gemm<&bf16_gemm_nn>(m, "bf16_gemm_nn", "nk", "bf16_gemm_nt with B given as [K, N].");
  def_bf16_gemm<&bf16_gemm_tn>(m, "bf16_gemm_tn", "mn", "bf16_gemm_nt with A given as [K, M] and B as [K, N].");
  def_bf16_gemm<&bf16_gemm_tt>(m, "bf16_gemm_tt", "mn", "bf16_gemm_nt with A given as [K, M].");
}

}  // namespace hopgemm::python
