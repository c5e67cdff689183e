// Dense FP8 GEMMs (include/hopgemm/gemm.hpp), with deep_gemm's Python signatures:
//   fp8_gemm_nt(a=(A, sfa), b=(B, sfb), d, c=None, recipe=None, compiled_dims="nk", disable_ue8m0_cast=False)
// plus HEAD's recipe_a / recipe_b (per-operand (gran_mn, gran_k)) and hopgemm's stream=.
#include <nanobind/nanobind.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>

#include <array>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "bindings.hpp"
#include "gemm_args.hpp"
#include "hopgemm/gemm.hpp"
#include "hopgemm/tuning.hpp"
#include "tensor_arg.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace hopgemm::python {
namespace {

using GemmFn = void (*)(const TensorView&, const TensorView&, const TensorView&, const TensorView&, const TensorView&,
                        const TensorView*, const GemmOptions&, cudaStream_t);

template <GemmFn kGemm>
void fp8_gemm(nb::handle a, nb::handle b, nb::handle d, nb::handle c, const Recipe& recipe,
              const OperandRecipe& recipe_a, const OperandRecipe& recipe_b, std::string compiled_dims,
              bool disable_ue8m0_cast, nb::handle stream) {
  const GemmOptions options =
      gemm_options("fp8_gemm", recipe, recipe_a, recipe_b, std::move(compiled_dims), disable_ue8m0_cast);
  CallContext ctx;
  const GemmTensors t = gemm_tensors(a, b, d, ctx);
  const TensorView tc = optional_tensor_arg(c, "c", ctx);
  launch(ctx, stream, [&](cudaStream_t s) {
    kGemm(t.a, t.sfa, t.b, t.sfb, t.d, tc.rank < 0 ? nullptr : &tc, options, s);
  });
}

template <GemmFn kGemm>
void def_fp8_gemm(nb::module_& m, const char* name, const char* compiled_dims, const char* doc) {
  m.def(name, &fp8_gemm<kGemm>, "a"_a.none(), "b"_a.none(), "d"_a.none(), "c"_a.none() = nb::none(),
        "recipe"_a.none() = nb::none(),
        "recipe_a"_a.none() = nb::none(), "recipe_b"_a.none() = nb::none(), "compiled_dims"_a = compiled_dims,
        "disable_ue8m0_cast"_a = false, "stream"_a.none() = nb::none(), doc);
}

// fp8_gemm_nt_skip_head_mid(a, b, d, head_splits=(left, mid, right), recipe=None, compiled_dims="nk",
// disable_ue8m0_cast=False), DeepGEMM's signature, plus stream=.
void fp8_gemm_nt_skip_head_mid(nb::handle a, nb::handle b, nb::handle d, const std::array<int, 3>& head_splits,
                               const Recipe& recipe, std::string compiled_dims, bool disable_ue8m0_cast,
                               nb::handle stream) {
  const GemmOptions options = gemm_options("fp8_gemm_nt_skip_head_mid", recipe, std::nullopt, std::nullopt,
                                           std::move(compiled_dims), disable_ue8m0_cast);
  CallContext ctx;
  const GemmTensors t = gemm_tensors(a, b, d, ctx);
  launch(ctx, stream, [&](cudaStream_t s) {
    hopgemm::fp8_gemm_nt_skip_head_mid(t.a, t.sfa, t.b, t.sfb, t.d, head_splits, options, s);
  });
}

// Test and tuning hook: fp8_gemm_nt with the heuristics' config for the problem, then `overrides` applied
// by field name (e.g. {"k_splits": 4, "block_n": 64}; hopgemm/tuning.hpp).
void fp8_gemm_nt_with_config(nb::handle a, nb::handle b, nb::handle d, nb::handle c, const Recipe& recipe,
                             const std::map<std::string, int>& overrides, nb::handle stream) {
  GemmOptions options;
  options.recipe = recipe.value_or(std::array<int, 3>{0, 0, 0});
  CallContext ctx;
  const GemmTensors t = gemm_tensors(a, b, d, ctx);
  const TensorView tc = optional_tensor_arg(c, "c", ctx);
  const TensorView* pc = tc.rank < 0 ? nullptr : &tc;
  launch(ctx, stream, [&](cudaStream_t s) {
    fp8_gemm_nt_with_overrides(t.a, t.sfa, t.b, t.sfb, t.d, pc, options, overrides, s);
  });
}

}  // namespace

void bind_gemm(nb::module_& m) {
  m.def("_fp8_gemm_nt_with_config", &fp8_gemm_nt_with_config, "a"_a.none(), "b"_a.none(), "d"_a.none(),
        "c"_a.none() = nb::none(),
        "recipe"_a.none() = nb::none(), "overrides"_a = std::map<std::string, int>{}, "stream"_a.none() = nb::none(),
        "Internal (tests, tuning): fp8_gemm_nt with the heuristics' config changed by `overrides` {field: value}.");
  def_fp8_gemm<&fp8_gemm_nt>(m, "fp8_gemm_nt", "nk",
      "D = C + A @ B^T, FP8 e4m3 with FP32 scales: a=(A [M, K], sfa), b=(B [N, K], sfb), both K-major; d [M, N] "
      "written in place. recipe (1, 128, 128): sfa per 1x128, sfb per 128x128, d BF16; (1, 1, 128): both per "
      "1x128, d FP32 with c (aliasing d to accumulate).");
  def_fp8_gemm<&fp8_gemm_nn>(m, "fp8_gemm_nn", "nk", "fp8_gemm_nt with B given as [K, N].");
  def_fp8_gemm<&fp8_gemm_tn>(m, "fp8_gemm_tn", "mn", "fp8_gemm_nt with A given as [K, M] and B as [K, N].");
  def_fp8_gemm<&fp8_gemm_tt>(m, "fp8_gemm_tt", "mn", "fp8_gemm_nt with A given as [K, M].");
  m.def("fp8_gemm_nt_skip_head_mid", &fp8_gemm_nt_skip_head_mid, "a"_a.none(), "b"_a.none(), "d"_a.none(),
        "head_splits"_a, "recipe"_a.none() = nb::none(), "compiled_dims"_a = "nk", "disable_ue8m0_cast"_a = false,
        "stream"_a.none() = nb::none(),
        "fp8_gemm_nt (recipe (1, 128, 128)) whose heads of left + right columns land in d's heads of left + mid + "
        "right columns, the middle `mid` ones untouched: head_splits = (left, mid, right).");
}

}  // namespace hopgemm::python
