// DeepGEMM's einsum and fp8_einsum (include/hopgemm/einsum.hpp) with its Python signatures, plus hopgemm's stream=:
//   einsum(expr, a, b, d, c=None); fp8_einsum(expr, a=(A, sfa), b=(B, sfb), d, c=None, recipe=(1, 128, 128)).
// DeepGEMM's einsum(use_cublaslt=True) is hopgemm/_einsum.py's (cuBLASLt is not linked by the extension).
#include <nanobind/nanobind.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>

#include <array>
#include <string>

#include "bindings.hpp"
#include "gemm_args.hpp"
#include "hopgemm/einsum.hpp"
#include "tensor_arg.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace hopgemm::python {
namespace {

void einsum_binding(const std::string& expr, nb::handle a, nb::handle b, nb::handle d, nb::handle c,
                    nb::handle stream) {
  CallContext ctx;
  const TensorView ta = tensor_arg(a, "a", ctx), tb = tensor_arg(b, "b", ctx), td = tensor_arg(d, "d", ctx);
  const TensorView tc = optional_tensor_arg(c, "c", ctx);
  launch(ctx, stream, [&](cudaStream_t s) { einsum(expr, ta, tb, td, tc.rank < 0 ? nullptr : &tc, s); });
}

void fp8_einsum_binding(const std::string& expr, nb::handle a, nb::handle b, nb::handle d, nb::handle c,
                        const std::array<int, 3>& recipe, nb::handle stream) {
  CallContext ctx;
  const GemmTensors t = gemm_tensors(a, b, d, ctx);
  const TensorView tc = optional_tensor_arg(c, "c", ctx);
  launch(ctx, stream, [&](cudaStream_t s) {
    fp8_einsum(expr, t.a, t.sfa, t.b, t.sfb, t.d, tc.rank < 0 ? nullptr : &tc, recipe, s);
  });
}

}  // namespace

void bind_einsum(nb::module_& m) {
  m.def("einsum", &einsum_binding, "expr"_a, "a"_a.none(), "b"_a.none(), "d"_a.none(), "c"_a.none() = nb::none(),
        "stream"_a.none() = nb::none(),
        "DeepGEMM's BF16 einsum forms 'bmk,bnk->mn', 'bhr,hdr->bhd', 'bhd,hdr->bhr' (batched GEMMs); d in place.");
  m.def("fp8_einsum", &fp8_einsum_binding, "expr"_a, "a"_a.none(), "b"_a.none(), "d"_a.none(),
        "c"_a.none() = nb::none(), "recipe"_a = std::array<int, 3>{1, 128, 128}, "stream"_a.none() = nb::none(),
        "DeepGEMM's SM90 FP8 einsum form 'bhr,hdr->bhd' (batched 1D2D GEMMs): a=(A, sfa), b=(B, sfb); d in place.");
}

}  // namespace hopgemm::python
