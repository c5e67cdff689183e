// MoE grouped FP8 GEMMs (include/hopgemm/grouped_gemm.hpp), with deep_gemm HEAD's Python signatures:
//   m_grouped_fp8_gemm_{nt,nn}_contiguous(a=(A, sfa), b=(B, sfb), d, grouped_layout, recipe=None, recipe_a=None,
//       recipe_b=None, compiled_dims="nk", disable_ue8m0_cast=False, use_psum_layout=False, ensure_zero_padding=True,
//       expected_m_for_psum_layout=None)
//   m_grouped_fp8_gemm_nt_masked(a, b, d, masked_m, expected_m, recipe=None, recipe_a=None, recipe_b=None,
//       compiled_dims="nk", disable_ue8m0_cast=False)
//   k_grouped_fp8_gemm_{nt,tn}_contiguous(a, b, d, ks, ks_tensor, c=None, recipe=(1, 1, 128), compiled_dims="mn",
//       use_psum_layout=False)
// plus, keyword-only: SEED's name for grouped_layout (m_indices), hopgemm's use_packed_layout and stream=.
// Keyword errors are raised before any tensor is looked at.
#include <nanobind/nanobind.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "gemm_args.hpp"
#include "hopgemm/error.hpp"
#include "hopgemm/grouped_gemm.hpp"
#include "tensor_arg.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace hopgemm::python {
namespace {

Error invalid(const char* op, const std::string& message) {
  return Error(ErrorKind::kInvalidArgument, std::string(op) + ": " + message);
}

// deep_gemm HEAD renamed m_indices to grouped_layout; code written for either name works.
nb::handle grouped_layout_arg(const char* op, nb::handle grouped_layout, nb::handle m_indices) {
  if (grouped_layout.is_none() && m_indices.is_none()) {
    throw invalid(op, "argument 'grouped_layout' (or its older name 'm_indices') is required");
  }
  if (!grouped_layout.is_none() && !m_indices.is_none()) {
    throw invalid(op, "pass grouped_layout or its older name m_indices, not both");
  }
  return m_indices.is_none() ? grouped_layout : m_indices;
}

MGroupedContiguousOptions contiguous_options(const char* op, GemmOptions gemm, bool use_psum_layout,
                                             bool use_packed_layout, std::optional<int64_t> expected_m) {
  if (use_psum_layout && use_packed_layout) {
    throw invalid(op, "use_psum_layout and use_packed_layout exclude each other");
  }
  if (expected_m && !use_psum_layout && !use_packed_layout) {
    throw invalid(op, "expected_m_for_psum_layout needs use_psum_layout=True or use_packed_layout=True (with the "
                      "default layout every group's rows are known from grouped_layout)");
  }
  const ContiguousLayout layout = use_psum_layout     ? ContiguousLayout::kPsum
                                  : use_packed_layout ? ContiguousLayout::kPacked
                                                      : ContiguousLayout::kGroupIds;
  return {std::move(gemm), layout, expected_m};
}

using ContiguousFn = decltype(&m_grouped_fp8_gemm_nt_contiguous);

void def_contiguous(nb::module_& m, const char* name, ContiguousFn gemm, const char* doc) {
  m.def(name, [name, gemm](nb::handle a, nb::handle b, nb::handle d, nb::handle grouped_layout,
                           const Recipe& recipe, const OperandRecipe& recipe_a, const OperandRecipe& recipe_b,
                           std::string compiled_dims, bool disable_ue8m0_cast, bool use_psum_layout,
                           bool /*ensure_zero_padding: DeepGEMM reads it on SM100 only*/,
                           std::optional<int64_t> expected_m_for_psum_layout, nb::handle m_indices,
                           bool use_packed_layout, nb::handle stream) {
    const nb::handle layout_arg = grouped_layout_arg(name, grouped_layout, m_indices);
    const MGroupedContiguousOptions options = contiguous_options(
        name, gemm_options(name, recipe, recipe_a, recipe_b, std::move(compiled_dims), disable_ue8m0_cast),
        use_psum_layout, use_packed_layout, expected_m_for_psum_layout);
    CallContext ctx;
    const GemmTensors t = gemm_tensors(a, b, d, ctx);
    const TensorView tlayout = tensor_arg(layout_arg, m_indices.is_none() ? "grouped_layout" : "m_indices", ctx);
    launch(ctx, stream, [&](cudaStream_t s) { gemm(t.a, t.sfa, t.b, t.sfb, t.d, tlayout, options, s); });
  }, "a"_a.none(), "b"_a.none(), "d"_a.none(), "grouped_layout"_a.none() = nb::none(), "recipe"_a.none() = nb::none(),
        "recipe_a"_a.none() = nb::none(), "recipe_b"_a.none() = nb::none(), "compiled_dims"_a = "nk",
        "disable_ue8m0_cast"_a = false, "use_psum_layout"_a = false, "ensure_zero_padding"_a = true,
        "expected_m_for_psum_layout"_a.none() = nb::none(), nb::kw_only(), "m_indices"_a.none() = nb::none(),
        "use_packed_layout"_a = false, "stream"_a.none() = nb::none(), doc);
}

void m_grouped_masked(nb::handle a, nb::handle b, nb::handle d, nb::handle masked_m, int64_t expected_m,
                      const Recipe& recipe, const OperandRecipe& recipe_a, const OperandRecipe& recipe_b,
                      std::string compiled_dims, bool disable_ue8m0_cast, nb::handle stream) {
  const GemmOptions options = gemm_options("m_grouped_fp8_gemm_nt_masked", recipe, recipe_a, recipe_b,
                                           std::move(compiled_dims), disable_ue8m0_cast);
  CallContext ctx;
  const GemmTensors t = gemm_tensors(a, b, d, ctx);
  const TensorView tmasked_m = tensor_arg(masked_m, "masked_m", ctx);
  launch(ctx, stream, [&](cudaStream_t s) {
    m_grouped_fp8_gemm_nt_masked(t.a, t.sfa, t.b, t.sfb, t.d, tmasked_m, expected_m, options, s);
  });
}

// ks as the K-grouped ops take it: the list deep_gemm HEAD calls ks_cpu (None is refused: the kernels need it on the
// host); use_psum_layout is SM100-only there.
std::span<const int64_t> k_grouped_ks(const char* name, const std::optional<std::vector<int64_t>>& ks,
                                      bool use_psum_layout) {
  if (!ks) {
    throw invalid(name, "argument 'ks' must be the groups' K as a list of ints (deep_gemm HEAD's ks_cpu=None, "
                        "which reads them from ks_tensor, is not supported: the kernels need them on the host)");
  }
  if (use_psum_layout) {
    throw Error(ErrorKind::kUnsupported, std::string(name) + ": use_psum_layout=True is not supported on SM90 "
                                                             "(as in DeepGEMM)");
  }
  return *ks;
}

using KGroupedFn = decltype(&k_grouped_fp8_gemm_nt_contiguous);

void def_k_grouped(nb::module_& m, const char* name, KGroupedFn gemm, const char* doc) {
  m.def(name, [name, gemm](nb::handle a, nb::handle b, nb::handle d, const std::optional<std::vector<int64_t>>& ks,
                           nb::handle ks_tensor, nb::handle c, const std::array<int, 3>& recipe,
                           std::string compiled_dims, bool use_psum_layout, nb::handle stream) {
    const std::span<const int64_t> group_ks = k_grouped_ks(name, ks, use_psum_layout);
    const GemmOptions options{.recipe = recipe, .compiled_dims = std::move(compiled_dims)};
    CallContext ctx;
    const GemmTensors t = gemm_tensors(a, b, d, ctx);
    const TensorView tks = tensor_arg(ks_tensor, "ks_tensor", ctx);
    const TensorView tc = optional_tensor_arg(c, "c", ctx);
    launch(ctx, stream, [&](cudaStream_t s) {
      gemm(t.a, t.sfa, t.b, t.sfb, t.d, group_ks, tks, tc.rank < 0 ? nullptr : &tc, options, s);
    });
  }, "a"_a.none(), "b"_a.none(), "d"_a.none(), "ks"_a.none(), "ks_tensor"_a.none(), "c"_a.none() = nb::none(),
        nb::arg("recipe").sig("(1, 1, 128)") = std::array<int, 3>{1, 1, 128}, "compiled_dims"_a = "mn",
        "use_psum_layout"_a = false, nb::kw_only(), "stream"_a.none() = nb::none(), doc);
}

using Bf16ContiguousFn = decltype(&m_grouped_bf16_gemm_nt_contiguous);

// The BF16 contiguous forms: deep_gemm's signature (no scales, no recipes), the same layout keywords.
void def_bf16_contiguous(nb::module_& m, const char* name, Bf16ContiguousFn gemm, const char* doc) {
  m.def(name, [name, gemm](nb::handle a, nb::handle b, nb::handle d, nb::handle grouped_layout,
                           std::string compiled_dims, bool use_psum_layout,
                           bool /*ensure_zero_padding: DeepGEMM reads it on SM100 only*/,
                           std::optional<int64_t> expected_m_for_psum_layout, nb::handle m_indices,
                           bool use_packed_layout, nb::handle stream) {
    const nb::handle layout_arg = grouped_layout_arg(name, grouped_layout, m_indices);
    GemmOptions gemm_opts;
    gemm_opts.compiled_dims = std::move(compiled_dims);
    const MGroupedContiguousOptions options =
        contiguous_options(name, std::move(gemm_opts), use_psum_layout, use_packed_layout, expected_m_for_psum_layout);
    CallContext ctx;
    const TensorView ta = tensor_arg(a, "a", ctx), tb = tensor_arg(b, "b", ctx), td = tensor_arg(d, "d", ctx);
    const TensorView tlayout = tensor_arg(layout_arg, m_indices.is_none() ? "grouped_layout" : "m_indices", ctx);
    launch(ctx, stream, [&](cudaStream_t s) { gemm(ta, tb, td, tlayout, options, s); });
  }, "a"_a.none(), "b"_a.none(), "d"_a.none(), "grouped_layout"_a.none() = nb::none(), "compiled_dims"_a = "nk",
        "use_psum_layout"_a = false, "ensure_zero_padding"_a = true,
        "expected_m_for_psum_layout"_a.none() = nb::none(), nb::kw_only(), "m_indices"_a.none() = nb::none(),
        "use_packed_layout"_a = false, "stream"_a.none() = nb::none(), doc);
}

void m_grouped_bf16_masked(nb::handle a, nb::handle b, nb::handle d, nb::handle masked_m, int64_t expected_m,
                           std::string compiled_dims, nb::handle stream) {
  GemmOptions options;
  options.compiled_dims = std::move(compiled_dims);
  CallContext ctx;
  const TensorView ta = tensor_arg(a, "a", ctx), tb = tensor_arg(b, "b", ctx), td = tensor_arg(d, "d", ctx);
  const TensorView tmasked_m = tensor_arg(masked_m, "masked_m", ctx);
  launch(ctx, stream, [&](cudaStream_t s) {
    m_grouped_bf16_gemm_nt_masked(ta, tb, td, tmasked_m, expected_m, options, s);
  });
}

void k_grouped_bf16(nb::handle a, nb::handle b, nb::handle d, const std::optional<std::vector<int64_t>>& ks,
                    nb::handle ks_tensor, nb::handle c, std::string compiled_dims, bool use_psum_layout,
                    nb::handle stream) {
  const char* name = "k_grouped_bf16_gemm_tn_contiguous";
  const std::span<const int64_t> group_ks = k_grouped_ks(name, ks, use_psum_layout);
  GemmOptions options;
  options.compiled_dims = std::move(compiled_dims);
  CallContext ctx;
  const TensorView ta = tensor_arg(a, "a", ctx), tb = tensor_arg(b, "b", ctx), td = tensor_arg(d, "d", ctx);
  const TensorView tks = tensor_arg(ks_tensor, "ks_tensor", ctx);
  const TensorView tc = optional_tensor_arg(c, "c", ctx);
  launch(ctx, stream, [&](cudaStream_t s) {
    k_grouped_bf16_gemm_tn_contiguous(ta, tb, td, group_ks, tks, tc.rank < 0 ? nullptr : &tc, options, s);
  });
}

}  // namespace

void bind_grouped_gemm(nb::module_& m) {
  m.def("k_grouped_bf16_gemm_tn_contiguous", &k_grouped_bf16, "a"_a.none(), "b"_a.none(), "d"_a.none(), "ks"_a.none(),
        "ks_tensor"_a.none(), "c"_a.none() = nb::none(), "compiled_dims"_a = "mn", "use_psum_layout"_a = false,
        nb::kw_only(), "stream"_a.none() = nb::none(),
        "MoE K-grouped BF16 GEMM (weight gradients): D[g] = C[g] + A_g @ B_g^T in FP32, a [sum(ks), M] and b "
        "[sum(ks), N] BF16 with rows contiguous (group g: rows [off_g, off_g + ks[g])), ks multiples of 64, "
        "ks_tensor the same as int32 [G] on the device, d [G, M, N] FP32; c None, d itself or another [G, M, N] FP32.");
  def_bf16_contiguous(m, "m_grouped_bf16_gemm_nt_contiguous", &m_grouped_bf16_gemm_nt_contiguous,
      "MoE M-grouped BF16 GEMM, groups of rows stacked: D[rows of g] = A[rows of g] @ B[g]^T, a [M_sum, K], b [G, N, "
      "K] both K-major, d [M_sum, N] BF16 written in place; grouped_layout as m_grouped_fp8_gemm_nt_contiguous's.");
  def_bf16_contiguous(m, "m_grouped_bf16_gemm_nn_contiguous", &m_grouped_bf16_gemm_nn_contiguous,
      "m_grouped_bf16_gemm_nt_contiguous with B given as [G, K, N] (a transposed view of a K-major [G, N, K]).");
  m.def("m_grouped_bf16_gemm_nt_masked", &m_grouped_bf16_masked, "a"_a.none(), "b"_a.none(), "d"_a.none(),
        "masked_m"_a.none(), "expected_m"_a, "compiled_dims"_a = "nk", nb::kw_only(), "stream"_a.none() = nb::none(),
        "MoE M-grouped BF16 GEMM, one padded slab per group: d[g, :m_g] = A[g, :m_g] @ B[g]^T with m_g = masked_m[g] "
        "read on the device. a [G, M_max, K], b [G, N, K] K-major, d [G, M_max, N] BF16.");
  def_contiguous(m, "m_grouped_fp8_gemm_nt_contiguous", &m_grouped_fp8_gemm_nt_contiguous,
      "MoE M-grouped GEMM, groups of rows stacked: D[rows of g] = A[rows of g] @ B[g]^T, FP8 e4m3 with FP32 scales, "
      "recipe (1, 128, 128). a=(A [M_sum, K], sfa [M_sum, ceil(K/128)]), b=(B [G, N, K], sfb [G, ceil(N/128), "
      "ceil(K/128)]), d [M_sum, N] BF16 written in place. grouped_layout int32: [M_sum] group ids (-1: padding; "
      "groups aligned to get_mk_alignment_for_contiguous_layout()), or [G] cumulative row ends with "
      "use_psum_layout / use_packed_layout.");
  def_contiguous(m, "m_grouped_fp8_gemm_nn_contiguous", &m_grouped_fp8_gemm_nn_contiguous,
      "m_grouped_fp8_gemm_nt_contiguous with B given as [G, K, N] (a transposed view of a K-major [G, N, K]).");
  m.def("m_grouped_fp8_gemm_nt_masked", &m_grouped_masked, "a"_a.none(), "b"_a.none(), "d"_a.none(),
        "masked_m"_a.none(), "expected_m"_a,
        "recipe"_a.none() = nb::none(), "recipe_a"_a.none() = nb::none(), "recipe_b"_a.none() = nb::none(),
        "compiled_dims"_a = "nk", "disable_ue8m0_cast"_a = false, nb::kw_only(), "stream"_a.none() = nb::none(),
        "MoE M-grouped GEMM, one padded slab per group: d[g, :m_g] = A[g, :m_g] @ B[g]^T with m_g = masked_m[g] "
        "read on the device (CUDA-graph friendly). a=(A [G, M_max, K], sfa [G, M_max, ceil(K/128)]), b=(B [G, N, "
        "K], sfb [G, ceil(N/128), ceil(K/128)]), d [G, M_max, N] BF16: rows [0, m_g) written, others untouched. "
        "expected_m > 0 steers the heuristics only.");
  def_k_grouped(m, "k_grouped_fp8_gemm_nt_contiguous", &k_grouped_fp8_gemm_nt_contiguous,
      "MoE K-grouped GEMM (weight gradients): D[g] = C[g] + A_g @ B_g^T in FP32, recipe (1, 1, 128). Group g's K is "
      "ks[g] (a multiple of 128; ks_tensor holds the same values as int32 [G] on the device); a and b are the "
      "groups' K-major [M, k_g] / [N, k_g] matrices back to back, sfa [M, sum(ks)/128], sfb [N, sum(ks)/128]; "
      "d [G, M, N] FP32, c None, d itself or another [G, M, N] FP32.");
  def_k_grouped(m, "k_grouped_fp8_gemm_tn_contiguous", &k_grouped_fp8_gemm_tn_contiguous,
      "k_grouped_fp8_gemm_nt_contiguous with MN-major A and B: NotImplementedError on SM90, whose FP8 tensor cores "
      "read K-major operands only (DeepGEMM has it on SM100).");
  m.def("set_mk_alignment_for_contiguous_layout", &set_mk_alignment_for_contiguous_layout, "alignment"_a,
        "Row alignment of the groups in the M-grouped contiguous layouts (128 by default; a positive multiple of 64). "
        "Process-wide.");
}

}  // namespace hopgemm::python
