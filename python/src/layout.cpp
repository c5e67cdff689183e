// Scale-factor layout ops. Outputs are allocated by the Python layer (hopgemm/_layout.py) with the
// caller's framework; these bindings fill them.
#include <nanobind/nanobind.h>
#include <nanobind/stl/vector.h>

#include <vector>

#include "bindings.hpp"
#include "hopgemm/error.hpp"
#include "hopgemm/layout.hpp"
#include "tensor_arg.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace hopgemm::python {

void bind_layout(nb::module_& m) {
  m.def("get_tma_aligned_size", &get_tma_aligned_size, "x"_a, "element_size"_a,
        "`x` rounded up so that x * element_size is a multiple of 16 bytes.");
  m.def("get_mk_alignment_for_contiguous_layout", &get_mk_alignment_for_contiguous_layout,
        "Row alignment of each group in the M-grouped contiguous layouts: 128 unless "
        "set_mk_alignment_for_contiguous_layout changed it.");

  m.def("is_mn_major_tma_aligned", [](nb::handle sf) {
    CallContext ctx;
    return is_mn_major_tma_aligned(tensor_arg(sf, "sf", ctx));
  }, "sf"_a.none(), "True if `sf` already has the MN-major TMA-aligned strides.");

  m.def("mn_major_tma_aligned_strides", [](const std::vector<int64_t>& shape, int64_t element_size) {
    if (shape.size() != 2 && shape.size() != 3) {
      throw Error(ErrorKind::kInvalidArgument, "mn_major_tma_aligned_strides: shape must be [mn, k] or [G, mn, k], "
                                               "got " + std::to_string(shape.size()) + " dimensions");
    }
    int64_t strides[3] = {};
    mn_major_tma_aligned_strides(static_cast<int>(shape.size()), shape.data(), element_size, strides);
    nb::list out;
    for (size_t d = 0; d < shape.size(); ++d) out.append(strides[d]);
    return nb::tuple(out);
  }, "shape"_a, "element_size"_a, "Strides (elements) of the MN-major TMA-aligned layout of `shape`.");

  m.def("plan_transform_sf_into_required_layout",
        [](nb::handle sf, int64_t mn, int64_t k, int gran_mn, int gran_k, int num_groups) {
    CallContext ctx;
    return plan_transform_sf_into_required_layout(tensor_arg(sf, "sf", ctx), mn, k, gran_mn, gran_k, num_groups) ==
           SfTransform::kMnMajorTmaAligned;
  }, "sf"_a.none(), "mn"_a, "k"_a, "gran_mn"_a, "gran_k"_a, "num_groups"_a = -1,
        "Validates sf for transform_sf_into_required_layout (DeepGEMM's check_sf_layout); True if it must be "
        "re-laid out MN-major TMA-aligned, False if it is used as it is.");

  m.def("get_mn_major_tma_aligned_tensor", [](nb::handle sf, nb::handle out, nb::handle stream) {
    CallContext ctx;
    const TensorView s = tensor_arg(sf, "sf", ctx), o = tensor_arg(out, "out", ctx);
    launch(ctx, stream, [&](cudaStream_t st) { get_mn_major_tma_aligned_tensor(s, o, st); });
  }, "sf"_a.none(), "out"_a.none(), "stream"_a.none() = nb::none());

  m.def("get_mn_major_tma_aligned_packed_ue8m0_tensor", [](nb::handle sf, nb::handle out, nb::handle stream) {
    CallContext ctx;
    const TensorView s = tensor_arg(sf, "sf", ctx), o = tensor_arg(out, "out", ctx);
    launch(ctx, stream, [&](cudaStream_t st) { get_mn_major_tma_aligned_packed_ue8m0_tensor(s, o, st); });
  }, "sf"_a.none(), "out"_a.none(), "stream"_a.none() = nb::none());

  m.def("get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor",
        [](nb::handle sf, const std::vector<int>& ks, nb::handle out, nb::handle stream) {
    CallContext ctx;
    const TensorView s = tensor_arg(sf, "sf", ctx), o = tensor_arg(out, "out", ctx);
    launch(ctx, stream, [&](cudaStream_t st) { get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(s, ks, o, st); });
  }, "sf"_a.none(), "ks"_a, "out"_a.none(), "stream"_a.none() = nb::none());
}

}  // namespace hopgemm::python
