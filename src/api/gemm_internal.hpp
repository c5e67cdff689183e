#pragma once
// Entry points below the public API, for the tuner and the tests: the problem an FP8 GEMM call resolves
// to, and the same call with a caller-chosen kernel configuration instead of the heuristics' choice.
#include <cuda_runtime_api.h>

#include "api/validate.hpp"
#include "heuristics/sm90_fp8_gemm.hpp"
#include "hopgemm/gemm.hpp"
#include "jit/loader.hpp"

namespace hopgemm::api {

// How a scale-factor tensor [rows, sf_k] is laid out; the kernels read either form directly.
enum class SfLayout { kRowMajor, kMnMajorTmaAligned };
// The layout of `sf` (FP32 [rows, sf_k] on the device), or a failure naming `arg` (MN-major only where allowed).
SfLayout sf_layout(const Validator& v, const TensorView& sf, const char* arg, int64_t rows, int64_t sf_k,
                   bool allow_mn_major);
// The FP8 GEMM kernel of `config`, compiled or loaded once per process (every FP8 GEMM op shares the cache).
const jit::LoadedKernel& fp8_gemm_kernel(const device::Sm90Fp8GemmConfig& config, const char* op, cudaStream_t stream);

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
