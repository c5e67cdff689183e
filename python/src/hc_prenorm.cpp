// DeepGEMM's tf32_hc_prenorm_gemm (include/hopgemm/hc_prenorm.hpp) with its Python signature, plus hopgemm's stream=:
//   tf32_hc_prenorm_gemm(a, b, d, sqr_sum, num_splits=None).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>

#include <optional>

#include "bindings.hpp"
#include "hopgemm/hc_prenorm.hpp"
#include "tensor_arg.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace hopgemm::python {
namespace {

void hc_prenorm_binding(nb::handle a, nb::handle b, nb::handle d, nb::handle sqr_sum, std::optional<int> num_splits,
                        nb::handle stream) {
  CallContext ctx;
  const TensorView ta = tensor_arg(a, "a", ctx), tb = tensor_arg(b, "b", ctx), td = tensor_arg(d, "d", ctx);
  const TensorView ts = tensor_arg(sqr_sum, "sqr_sum", ctx);
  // None: one split, d [M, N] and sqr_sum [M]; a number: d and sqr_sum carry a leading split dimension.
  const int splits = num_splits.has_value() ? (*num_splits > 0 ? *num_splits : -1) : 0;
  launch(ctx, stream, [&](cudaStream_t s) { tf32_hc_prenorm_gemm(ta, tb, td, ts, splits, s); });
}

}  // namespace

void bind_hc_prenorm(nb::module_& m) {
  m.def("tf32_hc_prenorm_gemm", &hc_prenorm_binding, "a"_a.none(), "b"_a.none(), "d"_a.none(), "sqr_sum"_a.none(),
        "num_splits"_a.none() = nb::none(), "stream"_a.none() = nb::none(),
        "DeepGEMM's hyper-connection pre-norm GEMM: d = a @ b^T (TF32) and sqr_sum = the squared sums of a's rows, per "
        "K split; d and sqr_sum in place.");
}

}  // namespace hopgemm::python
