#include "gemm_args.hpp"

#include <utility>

#include "hopgemm/error.hpp"

namespace hopgemm::python {
namespace {

std::array<int, 3> resolve_recipe(const char* op, const Recipe& recipe, const OperandRecipe& recipe_a,
                                  const OperandRecipe& recipe_b) {
  if (recipe_a.has_value() != recipe_b.has_value()) {
    throw Error(ErrorKind::kInvalidArgument, std::string(op) + ": recipe_a and recipe_b go together");
  }
  if (!recipe_a) return recipe.value_or(std::array<int, 3>{0, 0, 0});
  if (recipe) {
    throw Error(ErrorKind::kInvalidArgument, std::string(op) + ": pass recipe or recipe_a/recipe_b, not both");
  }
  if ((*recipe_a)[1] != (*recipe_b)[1]) {
    throw Error(ErrorKind::kUnsupported, std::string(op) + ": recipe_a and recipe_b must share gran_k, got " +
                                             std::to_string((*recipe_a)[1]) + " and " + std::to_string((*recipe_b)[1]));
  }
  return {(*recipe_a)[0], (*recipe_b)[0], (*recipe_a)[1]};
}

}  // namespace

GemmTensors gemm_tensors(nb::handle a, nb::handle b, nb::handle d, CallContext& ctx) {
  const auto [ta, tsfa] = tensor_pair_arg(a, "a", ctx);
  const auto [tb, tsfb] = tensor_pair_arg(b, "b", ctx);
  return {ta, tsfa, tb, tsfb, tensor_arg(d, "d", ctx)};
}

GemmOptions gemm_options(const char* op, const Recipe& recipe, const OperandRecipe& recipe_a,
                         const OperandRecipe& recipe_b, std::string compiled_dims, bool disable_ue8m0_cast) {
  GemmOptions options;
  options.recipe = resolve_recipe(op, recipe, recipe_a, recipe_b);
  options.compiled_dims = std::move(compiled_dims);
  options.disable_ue8m0_cast = disable_ue8m0_cast;
  return options;
}

}  // namespace hopgemm::python
