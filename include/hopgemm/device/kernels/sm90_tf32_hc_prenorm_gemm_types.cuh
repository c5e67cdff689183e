#pragma once
// Config and parameters of the hyper-connection pre-norm GEMM (kernels/sm90_tf32_hc_prenorm_gemm.cuh), DeepGEMM's
// tf32_hc_prenorm_gemm. Compiles as device code (NVRTC, NVCC) and as plain host C++20.
//
// For A [M, K] BF16 and B [N, K] FP32, both K-major, N <= 32, and K cut into num_splits ranges of whole k-blocks:
//   D[s][m][n] = sum over split s's K of A[m][k] * B[n][k]   (TF32 tensor cores, FP32 sums)
//   sqr_sum[s][m] = sum over split s's K of A[m][k]^2        (FP32, from the same A values)
// One CTA per (64-row block, split): grid = ceil(M / 64) x num_splits, not persistent (the GEMM is a few columns wide:
// reading A once is the whole cost). Warp 4 issues TMA (A [64 rows, 64 K] with the 128-byte swizzle; B [block_n,
// 32 K] twice per k-block, each 128 bytes of K); warps 0-3 read A from shared memory into registers (BF16 -> TF32),
// add its squares, and run WGMMA m64nNk8 TF32 with A from registers and B from shared memory.
// Host contract: tma_a BFLOAT16 dims {K, M} box {64, 64} SWIZZLE_128B; tma_b FLOAT32 dims {K, N} box {32, block_n}
// SWIZZLE_128B (rows past N and K past the end read as zeros); d row-major FP32 [num_splits][M][N] (split stride,
// row stride in elements), sqr_sum FP32 [num_splits][M] (split stride M).

#include "hopgemm/device/common.cuh"

namespace hopgemm::device {

// X(name, default, tunable): the config's fields, declared once (rendering, the cache key).
//   block_n     16 or 32: N rounded up to the WGMMA width
//   num_stages  pipeline depth
#define HOPGEMM_SM90_HC_PRENORM_FIELDS(X) X(block_n, 32, 0) X(num_stages, 12, 0)

struct Sm90HcPrenormConfig {
#define HOPGEMM_DECLARE_FIELD(name, default_value, tunable) int name = default_value;
  HOPGEMM_SM90_HC_PRENORM_FIELDS(HOPGEMM_DECLARE_FIELD)
#undef HOPGEMM_DECLARE_FIELD
};

inline constexpr int kHcBlockM = 64, kHcBlockK = 64;
inline constexpr int kHcThreads = 256;  // one math warpgroup, one producer warpgroup (its warp 0 issues TMA)

struct Sm90HcPrenormParams {
  TmaDescriptor tma_a;
  TmaDescriptor tma_b;
  float* d;
  float* sqr_sum;
  i64 ldd;             // D's row stride (elements)
  i64 d_split_stride;  // elements between the splits' D
  i32 m, n, k;
  i32 num_splits;
};

// Shared memory: [A x stages][B x stages][full barriers][empty barriers]; every stage 1024-aligned (SW128 atoms).
HOPGEMM_HOST_DEVICE constexpr int hc_a_stage_bytes() { return kHcBlockM * kHcBlockK * 2; }
HOPGEMM_HOST_DEVICE constexpr int hc_b_stage_bytes(const Sm90HcPrenormConfig& c) { return c.block_n * kHcBlockK * 4; }
HOPGEMM_HOST_DEVICE constexpr int smem_bytes(const Sm90HcPrenormConfig& c) {
  return c.num_stages * (hc_a_stage_bytes() + hc_b_stage_bytes(c)) + 2 * c.num_stages * 8;
}
HOPGEMM_HOST_DEVICE constexpr bool is_valid(const Sm90HcPrenormConfig& c) {
  return (c.block_n == 16 || c.block_n == 32) && c.num_stages >= 2 && c.num_stages <= 16 &&
         smem_bytes(c) <= 232448;
}

}  // namespace hopgemm::device
