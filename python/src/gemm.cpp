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

#include "bindings.hpp"
#include "hopgemm/error.hpp"
#include "hopgemm/gemm.hpp"
#include "hopgemm/tuning.hpp"
#include "tensor_arg.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace hopgemm::python {
namespace {

using Recipe = std::optional<std::array<int, 3>>;
using OperandRecipe = std::optional<std::array<int, 2>>;

std::array<int, 3> resolve_recipe(const char* op, const Recipe& recipe, const OperandRecipe& recipe_a,
                                  const OperandRecipe& recipe_b) {
  if (recipe_a.has_value() != recipe_b.has_value()) {
    throw Error(ErrorKind::kInvalidArgument, std::string(op) + ": recipe_a and recipe_b go together");
  }
  if (!recipe_a) return recipe.value_or(std::array<int, 3>{0, 0, 0});
  if (recipe) throw Error(ErrorKind::kInvalidArgument, std::string(op) + ": pass recipe or recipe_a/recipe_b, not both");
  if ((*recipe_a)[1] != (*recipe_b)[1]) {
    throw Error(ErrorKind::kUnsupported, std::string(op) + ": recipe_a and recipe_b must share gran_k, got " +
                                             std::to_string((*recipe_a)[1]) + " and " + std::to_string((*recipe_b)[1]));
  }
  return {(*recipe_a)[0], (*recipe_b)[0], (*recipe_a)[1]};
}

using GemmFn = void (*)(const TensorView&, const TensorView&, const TensorView&, const TensorView&, const TensorView&,
                        const TensorView*, const GemmOptions&, cudaStream_t);

template <GemmFn kGemm>
void fp8_gemm(nb::handle a, nb::handle b, nb::handle d, nb::handle c, const Recipe& recipe,
              const OperandRecipe& recipe_a, const OperandRecipe& recipe_b, std::string compiled_dims,
              bool disable_ue8m0_cast, nb::handle stream) {
  GemmOptions options;
  options.recipe = resolve_recipe("fp8_gemm", recipe, recipe_a, recipe_b);
  CallContext ctx;
  const auto [ta, tsfa] = tensor_pair_arg(a, "a", ctx);
  const auto [tb, tsfb] = tensor_pair_arg(b, "b", ctx);
  const TensorView td = tensor_arg(d, "d", ctx);
  const TensorView tc = optional_tensor_arg(c, "c", ctx);
  options.compiled_dims = std::move(compiled_dims);
  options.disable_ue8m0_cast = disable_ue8m0_cast;
  launch(ctx, stream, [&](cudaStream_t s) {
    kGemm(ta, tsfa, tb, tsfb, td, tc.rank < 0 ? nullptr : &tc, options, s);
  });
}

template <GemmFn kGemm>
void def_fp8_gemm(nb::module_& m, const char* name, const char* compiled_dims, const char* doc) {
  m.def(name, &fp8_gemm<kGemm>, "a"_a, "b"_a, "d"_a, "c"_a.none() = nb::none(), "recipe"_a.none() = nb::none(),
        "recipe_a"_a.none() = nb::none(), "recipe_b"_a.none() = nb::none(), "compiled_dims"_a = compiled_dims,
        "disable_ue8m0_cast"_a = false, "stream"_a.none() = nb::none(), doc);
}

// Test and tuning hook: fp8_gemm_nt with the heuristics' config for the problem, then `overrides` applied
// by field name (e.g. {"k_splits": 4, "block_n": 64}; hopgemm/tuning.hpp).
void fp8_gemm_nt_with_config(nb::handle a, nb::handle b, nb::handle d, nb::handle c, const Recipe& recipe,
                             const std::map<std::string, int>& overrides, nb::handle stream) {
  GemmOptions options;
  options.recipe = recipe.value_or(std::array<int, 3>{0, 0, 0});
  CallContext ctx;
  const auto [ta, tsfa] = tensor_pair_arg(a, "a", ctx);
  const auto [tb, tsfb] = tensor_pair_arg(b, "b", ctx);
  const TensorView td = tensor_arg(d, "d", ctx);
  const TensorView tc = optional_tensor_arg(c, "c", ctx);
  const TensorView* pc = tc.rank < 0 ? nullptr : &tc;
  launch(ctx, stream, [&](cudaStream_t s) {
    fp8_gemm_nt_with_overrides(ta, tsfa, tb, tsfb, td, pc, options, overrides, s);
  });
}

}  // namespace

void bind_gemm(nb::module_& m) {
  m.def("_fp8_gemm_nt_with_config", &fp8_gemm_nt_with_config, "a"_a, "b"_a, "d"_a, "c"_a.none() = nb::none(),
        "recipe"_a.none() = nb::none(), "overrides"_a = std::map<std::string, int>{}, "stream"_a.none() = nb::none(),
        "Internal (tests, tuning): fp8_gemm_nt with the heuristics' config changed by `overrides` {field: value}.");
  def_fp8_gemm<&fp8_gemm_nt>(m, "fp8_gemm_nt", "nk",
      "D = C + A @ B^T, FP8 e4m3 with FP32 scales: a=(A [M, K], sfa), b=(B [N, K], sfb), both K-major; d [M, N] "
      "written in place. recipe (1, 128, 128): sfa per 1x128, sfb per 128x128, d BF16; (1, 1, 128): both per "
      "1x128, d FP32 with c (aliasing d to accumulate).");
  def_fp8_gemm<&fp8_gemm_nn>(m, "fp8_gemm_nn", "nk", "fp8_gemm_nt with B given as [K, N].");
  def_fp8_gemm<&fp8_gemm_tn>(m, "fp8_gemm_tn", "mn", "fp8_gemm_nt with A given as [K, M] and B as [K, N].");
  def_fp8_gemm<&fp8_gemm_tt>(m, "fp8_gemm_tt", "mn", "fp8_gemm_nt with A given as [K, M].");
}

}  // namespace hopgemm::python
