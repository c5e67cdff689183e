#pragma once
// Inputs of one benchmark or tuning problem: random BF16 matrices quantised by our own kernels (A per
// 1x128; B per 128x128, or per 1x128 for weight gradients), the output, and the views the ops take.
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "api/suites.hpp"
#include "bench/timer.hpp"
#include "hopgemm/tensor.hpp"

namespace hopgemm::cli {

struct GemmShape {
  api::GemmRole role;
  int64_t m, n, k;
  bool wgrad() const { return role == api::GemmRole::kWgrad; }
};

// The shapes of `suite` (only those of `role` when not empty), or the single "[role:]MxNxK" `shape` when given.
std::vector<GemmShape> gemm_shapes(const std::string& suite, const std::string& shape, const std::string& role = "");

class GemmInputs {
 public:
  // `mn_major_sfa`: hand the GEMM its per-row scales (A; B too for wgrad) MN-major TMA-aligned, else
  // row-major as quantised.
  GemmInputs(const GemmShape& shape, bool mn_major_sfa, uint32_t seed, cudaStream_t stream);

  GemmShape shape;
  bench::DeviceBuffer a16, b16, a8, b8, sfa, sfa_mn, sfb, sfb_mn, d;
  TensorView a16v, b16v, a8v, b8v, sfav, sfbv, dv;
  DType out_dtype;
  // Bytes a GEMM moves: A, B and their scales read once, D written once (read too when accumulating).
  double bytes() const;
  double flops() const { return 2.0 * shape.m * shape.n * shape.k; }
};

std::string git_commit();

}  // namespace hopgemm::cli
