#pragma once
// Entry points below the public API, for the tuner and the tests: the problem an FP8 GEMM call resolves
// to, and the same call with a caller-chosen kernel configuration instead of the heuristics' choice.
#include "heuristics/sm90_fp8_gemm.hpp"
#include "hopgemm/gemm.hpp"

namespace hopgemm::api {

// Validates like fp8_gemm_nt and returns the problem the heuristics would see.
heuristics::Fp8GemmProblem fp8_gemm_problem(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                            const TensorView& sfb, const TensorView& d, const TensorView* c,
                                            const GemmOptions& options);

// The heuristics' choice for `problem`, memoised as fp8_gemm_nt's own (choosing ranks every candidate config: tens
// of microseconds, which a timing loop of the override hook must not pay on every call).
const heuristics::Fp8GemmChoice& fp8_gemm_choice(const heuristics::Fp8GemmProblem& problem);

// fp8_gemm_nt with `choice`'s config and launch parameters (the config must match the problem's recipe, dtypes and
// scale layouts).
void fp8_gemm_nt_with_config(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                             const TensorView& d, const TensorView* c, const GemmOptions& options,
                             const heuristics::Fp8GemmChoice& choice, cudaStream_t stream);

}  // namespace hopgemm::api
