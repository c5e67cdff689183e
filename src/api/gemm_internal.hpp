#pragma once
// Entry points below the public API, for the tuner and the tests: the problem an FP8 GEMM call resolves
// to, and the same call with a caller-chosen kernel configuration instead of the heuristics' choice.
#include <cuda_runtime_api.h>

#include <map>
#include <string>

#include "api/validate.hpp"
#include "heuristics/sm90_fp8_gemm.hpp"
#include "hopgemm/gemm.hpp"
#include "jit/loader.hpp"

namespace hopgemm::api {

// The FP8 GEMM kernel of `config`, compiled or loaded once per process (every FP8 GEMM op shares the cache).
const jit::LoadedKernel& fp8_gemm_kernel(const device::Sm90Fp8GemmConfig& config, const char* op, cudaStream_t stream);
// That kernel with `choice`'s config and launch parameters (every FP8 GEMM op launches through it).
void fp8_gemm_launch(const jit::LoadedKernel& kernel, const heuristics::Fp8GemmChoice& choice,
                     const device::Sm90Fp8GemmParams* params, int device, cudaStream_t stream);

// Validates like fp8_gemm_nt and returns the problem the heuristics would see.
heuristics::Fp8GemmProblem fp8_gemm_problem(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                            const TensorView& sfb, const TensorView& d, const TensorView* c,
                                            const GemmOptions& options);

// The heuristics' choice for `problem`, memoised as fp8_gemm_nt's own (choosing ranks every candidate config: tens
// of microseconds, which a timing loop of the override hook must not pay on every call).
const heuristics::Fp8GemmChoice& fp8_gemm_choice(const heuristics::Fp8GemmProblem& problem);

// The grouped ops' choice: fp8_gemm_choice where some config fits (else Error(kUnsupported) naming `op`), with
// the fields of set_grouped_config_overrides (this thread), else of HOPGEMM_GROUPED_CONFIG, where one is set (an
// invalid result: Error(kInvalidArgument)).
heuristics::Fp8GemmChoice fp8_grouped_choice(const char* op, const heuristics::Fp8GemmProblem& problem);
// The grouped ops' config overrides in force on this thread (set_grouped_config_overrides, else the
// HOPGEMM_GROUPED_CONFIG environment variable), and in *who which of the two; nullptr where none. Every family's
// grouped and batched ops (FP8, BF16, einsum) apply them to the heuristics' choice: a tuning and test hook.
const std::map<std::string, int>* grouped_config_overrides(const char** who);

// fp8_gemm_nt with `choice`'s config and launch parameters (the config must match the problem's recipe, dtypes and
// scale layouts).
void fp8_gemm_nt_with_config(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                             const TensorView& d, const TensorView* c, const GemmOptions& options,
                             const heuristics::Fp8GemmChoice& choice, cudaStream_t stream);

}  // namespace hopgemm::api
