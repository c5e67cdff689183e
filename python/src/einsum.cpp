// DeepGEMM's einsum (include/hopgemm/einsum.hpp) with its Python signature, plus hopgemm's stream=:
//   einsum(expr, a, b, d, c=None).
// DeepGEMM's einsum(use_cublaslt=True) is hopgemm/_einsum.py's (cuBLASLt is not linked by the extension).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>

#include "bindings.hpp"
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

}  // namespace

void bind_einsum(nb::module_& m) {
  m.def("einsum", &einsum_binding, "expr"_a, "a"_a.none(), "b"_a.none(), "d"_a.none(), "c"_a.none() = nb::none(),
        "stream"_a.none() = nb::none(),
        "DeepGEMM's BF16 einsum forms 'bmk,bnk->mn', 'bhr,hdr->bhd', 'bhd,hdr->bhr' (batched GEMMs); d in place.");
}

}  // namespace hopgemm::python
