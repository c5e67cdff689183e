#pragma once
// The arguments every FP8 GEMM binding shares, as deep_gemm takes them: the operands a=(A, sfa), b=(B, sfb) and d,
// recipe=(gran_m, gran_n, gran_k) or HEAD's per-operand recipe_a / recipe_b = (gran_mn, gran_k), compiled_dims and
// disable_ue8m0_cast.
#include <nanobind/nanobind.h>

#include <array>
#include <optional>
#include <string>

#include "hopgemm/gemm.hpp"
#include "hopgemm/tensor.hpp"
#include "tensor_arg.hpp"

namespace hopgemm::python {

using Recipe = std::optional<std::array<int, 3>>;
using OperandRecipe = std::optional<std::array<int, 2>>;

struct GemmTensors {
  TensorView a, sfa, b, sfb, d;
};

// The views of a=(A, sfa), b=(B, sfb) and d, with tensor_arg's errors.
GemmTensors gemm_tensors(nb::handle a, nb::handle b, nb::handle d, CallContext& ctx);

// GemmOptions for op `op`: the recipe is `recipe`, or recipe_a and recipe_b combined (they must share gran_k), or
// {0, 0, 0} (the op infers it) when neither is given. ValueError for recipe_a without recipe_b (or the reverse) and
// for recipe together with them; NotImplementedError for recipe_a and recipe_b with different gran_k. Checks no
// tensor, so these errors come before any tensor's.
GemmOptions gemm_options(const char* op, const Recipe& recipe, const OperandRecipe& recipe_a,
                         const OperandRecipe& recipe_b, std::string compiled_dims, bool disable_ue8m0_cast);

}  // namespace hopgemm::python
