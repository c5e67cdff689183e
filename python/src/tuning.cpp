// The tuning hooks that need no tensors (hopgemm/tuning.hpp), for tests and tools: the configuration an op would run
// for a problem, ahead-of-time compilation of chosen configurations, and the grouped GEMMs' configuration overridden
// for the calling thread.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "hopgemm/error.hpp"
#include "hopgemm/tuning.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace hopgemm::python {
namespace {

Fp8GemmOpKind op_kind(const std::string& op) {
  if (op == "gemm") return Fp8GemmOpKind::kGemm;
  if (op == "m_grouped_ids") return Fp8GemmOpKind::kMGroupedIds;
  if (op == "m_grouped_ranges") return Fp8GemmOpKind::kMGroupedRanges;
  if (op == "k_grouped") return Fp8GemmOpKind::kKGrouped;
  throw Error(ErrorKind::kInvalidArgument,
              "_fp8_gemm_config: op must be 'gemm', 'm_grouped_ids', 'm_grouped_ranges' or 'k_grouped', got '" + op + "'");
}

std::map<std::string, int> config(const std::string& op, int64_t m, int64_t n, int64_t k, int64_t num_groups,
                                  bool recipe_1d1d, bool fp32_out, bool accumulate, bool sfa_row_major,
                                  bool sfb_row_major, bool scale_rows_aligned, int group_align, int num_sms, int tc_util,
                                  const std::map<std::string, int>& overrides) {
  Fp8GemmProblemSpec spec;
  spec.op = op_kind(op);
  spec.m = m;
  spec.n = n;
  spec.k = k;
  spec.num_groups = num_groups;
  spec.recipe_1d1d = recipe_1d1d;
  spec.fp32_out = fp32_out;
  spec.accumulate = accumulate;
  spec.sfa_row_major = sfa_row_major;
  spec.sfb_row_major = sfb_row_major;
  spec.scale_rows_aligned = scale_rows_aligned;
  spec.group_align = group_align;
  spec.num_sms = num_sms;
  spec.tc_util = tc_util;
  return fp8_gemm_config(spec, overrides);
}

}  // namespace

void bind_tuning(nb::module_& m) {
  m.def("_fp8_gemm_config", &config, "op"_a, "m"_a, "n"_a, "k"_a, "num_groups"_a = 1, "recipe_1d1d"_a = false,
        "fp32_out"_a = false, "accumulate"_a = false, "sfa_row_major"_a = true, "sfb_row_major"_a = true,
        "scale_rows_aligned"_a = true, "group_align"_a = 128, "num_sms"_a = 132, "tc_util"_a = 100, "overrides"_a = std::map<std::string, int>{},
        "Internal (tests, tools): the kernel configuration {field: value, ..., num_sms, raster_band} an FP8 GEMM op "
        "runs for a problem, without a GPU (hopgemm/tuning.hpp fp8_gemm_config). op: 'gemm' (m x n x k), "
        "'m_grouped_ids' / 'm_grouped_ranges' (num_groups groups of m rows), 'k_grouped' (num_groups groups of M = m, "
        "N = n, mean K = k); `overrides` applied as _fp8_gemm_nt_with_config applies them.");
  m.def("_precompile_fp8_gemm_configs", &precompile_fp8_gemm_configs, "configs"_a, "jobs"_a = 0,
        nb::call_guard<nb::gil_scoped_release>(),
        "Internal (tests, tools): compiles the FP8 GEMM kernels of `configs` (as _fp8_gemm_config returns them) into "
        "the disk cache on `jobs` threads (0: all cores). Needs no GPU.");
  m.def("_set_grouped_config_overrides", &set_grouped_config_overrides, "overrides"_a,
        "Internal (tests, tuning): the grouped GEMMs called on this thread run with their configuration changed by "
        "`overrides` {field: value} (as HOPGEMM_GROUPED_CONFIG does for a process); {} restores the heuristics'.");
}

}  // namespace hopgemm::python
