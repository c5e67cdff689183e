// Fused FP8 quantisation kernels. Outputs are allocated by hopgemm/utils.py like the input.
#include <nanobind/nanobind.h>

#include "bindings.hpp"
#include "hopgemm/quantize.hpp"
#include "tensor_arg.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace hopgemm::python {
namespace {

using CastFn = void (*)(const TensorView&, const TensorView&, const TensorView&, bool, int, cudaStream_t);

template <CastFn kCast>
void cast_to_fp8(nb::handle x, nb::handle x_fp8, nb::handle sf, bool use_ue8m0, int gran_k, nb::handle stream) {
  CallContext ctx;
  const TensorView in = tensor_arg(x, "x", ctx), q = tensor_arg(x_fp8, "x_fp8", ctx, kArgFp8Bytes),
                   s = tensor_arg(sf, "sf", ctx);
  launch(ctx, stream, [&](cudaStream_t st) { kCast(in, q, s, use_ue8m0, gran_k, st); });
}

}  // namespace

void bind_quantize(nb::module_& m) {
  m.def("per_token_cast_to_fp8", &cast_to_fp8<&per_token_cast_to_fp8>, "x"_a.none(), "x_fp8"_a.none(), "sf"_a.none(),
        "use_ue8m0"_a = false, "gran_k"_a = 128, "stream"_a.none() = nb::none(),
        "x [m, n] -> x_fp8 [m, n] e4m3, sf [m, ceil(n / gran_k)] FP32 (1 x gran_k groups).");
  m.def("per_block_cast_to_fp8", &cast_to_fp8<&per_block_cast_to_fp8>, "x"_a.none(), "x_fp8"_a.none(), "sf"_a.none(),
        "use_ue8m0"_a = false, "gran_k"_a = 128, "stream"_a.none() = nb::none(),
        "x [m, n] -> x_fp8 [m, n] e4m3, sf [ceil(m / gran_k), ceil(n / gran_k)] FP32 (gran_k x gran_k blocks).");
  m.def("per_channel_cast_to_fp8", &cast_to_fp8<&per_channel_cast_to_fp8>, "x"_a.none(), "x_fp8"_a.none(),
        "sf"_a.none(),
        "use_ue8m0"_a = false, "gran_k"_a = 128, "stream"_a.none() = nb::none(),
        "x [m, n] (m % gran_k == 0) -> x_fp8 [m, n] e4m3, sf [m / gran_k, n] FP32 (gran_k x 1 groups).");
}

}  // namespace hopgemm::python
