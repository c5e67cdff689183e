#pragma once
// Tensor-map (TMA descriptor) construction through cuTensorMapEncodeTiled, into the device-side
// TmaDescriptor type the kernels' parameter structs hold.
#include <cstdint>

#include "hopgemm/device/common.cuh"
#include "hopgemm/tensor.hpp"

namespace hopgemm::tma {

enum class Swizzle { kNone = 0, k32B = 32, k64B = 64, k128B = 128 };

// The swizzle mode for a byte width of 16 (none), 32, 64 or 128.
Swizzle swizzle_for_bytes(int bytes);

struct TensorMap2d {
  DType dtype;
  const void* base;
  uint64_t inner_dim, outer_dim;  // elements
  uint64_t outer_stride_bytes;    // multiple of 16
  uint32_t box_inner, box_outer;  // elements
  Swizzle swizzle = Swizzle::kNone;
  // FP32 elements rounded to TF32 (to nearest) by the copy itself (CU_TENSOR_MAP_DATA_TYPE_TFLOAT32): a TF32 WGMMA
  // reading the plain FP32 bytes would truncate their low 13 bits instead, a bias torch's and DeepGEMM's TF32 lack.
  bool round_to_tf32 = false;
};

// Encodes `map` (throws Error(kCuda) naming `what` with the parameters when the driver refuses).
device::TmaDescriptor encode_2d(const TensorMap2d& map, const char* what);
// `map` repeated `batches` times, batch_stride_bytes apart (a multiple of 16): a rank-3 descriptor with the batch its
// outermost dimension and a box of one batch (the batched schedulers' operands and outputs).
device::TmaDescriptor encode_3d(const TensorMap2d& map, uint64_t batches, uint64_t batch_stride_bytes, const char* what);

}  // namespace hopgemm::tma
