#pragma once
// The vendor baselines that `hopgemm bench` times next to our kernels, through the cuBLASLt C API
// (no torch): FP8 blockwise (1x128 x 128x128 FP32 scales), FP8 per-tensor, BF16.
//
// Every op computes our row-major D[M, N] = A[M, K] . B[N, K]^T (the `nt` form: A and B K-major). cuBLASLt is
// column-major, and FP8 on Hopper needs its "TN" form, so each call is issued as the column-major product
//   D^T[N, M] = op_T(B) . A^T, i.e. cuBLASLt m = N, n = M, k = K,
//   cuBLASLt "A" = our B  (stored K x N column-major, ld = B.stride(0), transa = T),
//   cuBLASLt "B" = our A  (stored K x M column-major, ld = A.stride(0), transb = N),
//   cuBLASLt "D" = our D  (stored N x M column-major, ld = D.stride(0)).
// Consequently our LHS scales (1x128) are cuBLASLt's *B* scales (B_SCALE_MODE = VEC128_32F) and our RHS scales
// (128x128) are cuBLASLt's *A* scales (A_SCALE_MODE = BLK128x128_32F): the "BLK128x128 x VEC128" combination of
// the cuBLAS docs (CUDA >= 12.9, SM90 only; BLK x BLK is not supported).
//
// Plans (matmul descriptor, four layouts, heuristic top-1 algorithm) are built once per problem and cached, so a
// timed call is one cublasLtMatmul. Not thread-safe: one object per thread.
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "bench/timer.hpp"
#include "hopgemm/tensor.hpp"

namespace hopgemm::bench {

// FP8 blockwise scale factors in the layouts cuBLASLt requires (owning device buffers plus views of them):
//   sfa: FP32 [M, ceil(K/128)] with strides (1, M): "MN-major", i.e. memory [ceil(K/128)][M]. One scale per row
//        per 128 K-elements (VEC128 of cuBLASLt's B = our A). cuBLASLt takes no leading dimension for it.
//   sfb: FP32 [ceil(N/128), ceil(K/128)] with strides (L4, 1), L4 = round_up(ceil(K/128), 4): K-major, each
//        N-block's column of K-block scales padded to a multiple of 4 floats (16 bytes) ("L4" in the cuBLAS docs).
// DeepGEMM keeps sfa either row-major [M, K/128] or MN-major with M padded to 4 (TMA-aligned): only the latter
// with M % 4 == 0 is already this layout, hence the conversion below, done once in the bench setup.
struct CublasLtBlockScales {
  DeviceBuffer sfa_storage;
  DeviceBuffer sfb_storage;
  TensorView sfa;
  TensorView sfb;
};

// Converts our scales, sfa FP32 [M, ceil(K/128)] and sfb FP32 [ceil(N/128), ceil(K/128)] with any strides
// (row-major, or DeepGEMM's MN-major TMA-aligned sfa), into cuBLASLt's layouts. Synchronous (a host round trip):
// benchmark setup only, never inside a timed region. Throws Error(kInvalidArgument) for wrong dtypes/shapes.
CublasLtBlockScales to_cublaslt_block_scales(const TensorView& sfa, const TensorView& sfb);

class CublasLtBaselines {
 public:
  static constexpr size_t kWorkspaceBytes = size_t{32} << 20;

  // Creates the cuBLASLt handle and the 32 MiB workspace on the current device. Throws Error(kCuda).
  CublasLtBaselines();
  ~CublasLtBaselines();
  CublasLtBaselines(const CublasLtBaselines&) = delete;
  CublasLtBaselines& operator=(const CublasLtBaselines&) = delete;

  // D[M, N] (BF16) = (A . sfa) [M, K] x ((B . sfb) [N, K])^T with A, B FP8 E4M3 K-major (row stride a multiple of
  // 16 bytes), sfa/sfb FP32 in cuBLASLt's layouts (see CublasLtBlockScales / to_cublaslt_block_scales), D BF16
  // row-major (row stride a multiple of 8 elements), FP32 accumulation. Throws Error(kInvalidArgument) for bad
  // inputs, Error(kUnsupported) naming the cuBLASLt status when the heuristic has no algorithm (e.g. M = 1),
  // Error(kCuda) when cublasLtMatmul fails (kUnsupported where it answers CUBLAS_STATUS_NOT_SUPPORTED).
  void fp8_blockwise(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                     const TensorView& d, cudaStream_t stream);

  // D[M, N] (BF16) = scale_a * scale_b * A[M, K] . B[N, K]^T, A and B FP8 E4M3 K-major, scale_a/scale_b device
  // pointers to one FP32 each, each 16-byte aligned (cuBLASLt rejects 4-byte-aligned ones at launch), FP32
  // accumulation with fast accumulation OFF. Errors as fp8_blockwise.
  void fp8_per_tensor(const TensorView& a, const TensorView& b, const TensorView& d, const float* scale_a,
                      const float* scale_b, cudaStream_t stream);

  // D[M, N] (BF16) = A[M, K] . B[N, K]^T, A and B BF16 K-major, FP32 compute. Errors as fp8_blockwise.
  void bf16(const TensorView& a, const TensorView& b, const TensorView& d, cudaStream_t stream);

  // cuBLASLt's version number (e.g. 130100) of the loaded library.
  static size_t library_version();

 private:
  enum class Op { kFp8Blockwise, kFp8PerTensor, kBf16 };
  struct Plan;
  // op, m, n, k, lda, ldb, ldd
  using PlanKey = std::tuple<Op, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;

  // Checks a, b, d (dtypes, shapes, strides, alignment) and returns the cached plan, building it (descriptor with
  // the scale pointers, layouts, heuristic top-1) on first use.
  Plan& plan(Op op, const TensorView& a, const TensorView& b, const TensorView& d, const void* a_scale,
             const void* b_scale, const char* name);
  void run(Plan& plan, const TensorView& a, const TensorView& b, const TensorView& d, const void* a_scale,
           const void* b_scale, cudaStream_t stream, const char* name);

  cublasLtHandle_t handle_ = nullptr;
  DeviceBuffer workspace_;
  std::map<PlanKey, std::unique_ptr<Plan>> plans_;
};

}  // namespace hopgemm::bench
