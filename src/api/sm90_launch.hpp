#pragma once
// Host side shared by the SM90 kernel families: the tensor maps of FP8 operands, FP32 scale factors and outputs, the
// C pre-fill, and the launch of a persistent grid (one CTA per SM, capped to the clusters that can be co-resident).
// An op is then validate -> params (from these maps) -> launch_persistent.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "hopgemm/device/common.cuh"
#include "hopgemm/tensor.hpp"
#include "jit/loader.hpp"

namespace hopgemm::api::sm90 {

// A K-major FP8 operand [rows, k] (row stride t.stride(0) bytes): boxes of 128 bytes of K x box_rows, 128-byte swizzle
// (what a WGMMA operand tile in shared memory takes).
device::TmaDescriptor fp8_operand_map(const TensorView& t, int64_t rows, int64_t k, uint32_t box_rows, const char* op);
// MN-major TMA-aligned FP32 scales [rows, sf_k] (element (r, j) at r + j * sf.stride(1)): a box of box_rows scales of
// one k-block.
device::TmaDescriptor mn_major_scale_map(const TensorView& sf, int64_t rows, int64_t sf_k, uint32_t box_rows,
                                         const char* op);
// Row-major FP32 scales [rows, sf_k] with row stride `ld` elements (16-byte rows): a box of chunk_k k-blocks of
// box_rows rows.
device::TmaDescriptor row_scale_chunk_map(const TensorView& sf, int64_t rows, int64_t sf_k, int64_t ld, uint32_t chunk_k,
                                          uint32_t box_rows, const char* op);
// An output [rows, cols] of d's dtype: boxes of box_cols x box_rows with a swizzle of `swizzle_bytes` (128, 64, 32;
// 16: none), as an epilogue staging tile of that swizzle is laid out.
device::TmaDescriptor output_map(const TensorView& d, int64_t rows, int64_t cols, uint32_t box_cols, uint32_t box_rows,
                                 int swizzle_bytes, const char* op);

// D = C where C is distinct from D (copy_c), or zeros where there is no C (both [rows, cols] views) (a kernel then adds into D or K is 0),
// stream-ordered.
void prefill_output(const TensorView& d, const TensorView* c, bool copy_c, cudaStream_t stream);

// A persistent kernel's grid: num_sms CTAs less those a cluster cannot pair, capped to the CTAs that can be resident
// at once (with clusters, GPC boundaries may leave fewer slots than SMs; a second wave would deadlock nothing but run
// the persistent loop twice as long).
struct PersistentLaunch {
  int num_sms = 0;
  int cluster = 1;
  unsigned threads = 0;
  int smem_bytes = 0;
  int device = -1;
};
void launch_persistent(const jit::LoadedKernel& kernel, const PersistentLaunch& launch, const void* params,
                       cudaStream_t stream);

}  // namespace hopgemm::api::sm90
