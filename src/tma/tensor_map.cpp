#include "tma/tensor_map.hpp"

#include <cuda.h>

#include <array>
#include <cstring>
#include <string>

#include "hopgemm/error.hpp"
#include "runtime/driver.hpp"

namespace hopgemm::tma {
namespace {

CUtensorMapDataType data_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat8E4M3: case DType::kUInt8: return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    case DType::kBFloat16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case DType::kFloat16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case DType::kFloat32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case DType::kInt32: return CU_TENSOR_MAP_DATA_TYPE_INT32;
    case DType::kInt64: return CU_TENSOR_MAP_DATA_TYPE_INT64;
  }
  return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

CUtensorMapSwizzle swizzle_mode(Swizzle s) {
  switch (s) {
    case Swizzle::kNone: return CU_TENSOR_MAP_SWIZZLE_NONE;
    case Swizzle::k32B: return CU_TENSOR_MAP_SWIZZLE_32B;
    case Swizzle::k64B: return CU_TENSOR_MAP_SWIZZLE_64B;
    case Swizzle::k128B: return CU_TENSOR_MAP_SWIZZLE_128B;
  }
  return CU_TENSOR_MAP_SWIZZLE_NONE;
}

}  // namespace

Swizzle swizzle_for_bytes(int bytes) {
  switch (bytes) {
    case 128: return Swizzle::k128B;
    case 64: return Swizzle::k64B;
    case 32: return Swizzle::k32B;
    default: return Swizzle::kNone;
  }
}

namespace {

device::TmaDescriptor encode(DType dtype, bool tf32, const void* base, int rank, const cuuint64_t* dims,
                             const cuuint64_t* strides, const cuuint32_t* box, Swizzle swizzle, const char* what) {
  static_assert(sizeof(CUtensorMap) == sizeof(device::TmaDescriptor), "descriptor sizes differ");
  CUtensorMap encoded;
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult result = runtime::driver(what).cuTensorMapEncodeTiled(
      &encoded, tf32 ? CU_TENSOR_MAP_DATA_TYPE_TFLOAT32 : data_type(dtype), rank, const_cast<void*>(base), dims,
      strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle_mode(swizzle),
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    auto list = [](const auto* v, int count) {
      std::string text = "{";
      for (int i = 0; i < count; ++i) text += (i ? ", " : "") + std::to_string(v[i]);
      return text + "}";
    };
    throw Error(ErrorKind::kCuda, std::string(what) + ": cuTensorMapEncodeTiled failed (CUresult " +
                                      std::to_string(result) + ") for dtype " + dtype_name(dtype) + " dims " +
                                      list(dims, rank) + " strides " + list(strides, rank - 1) + " B box " +
                                      list(box, rank));
  }
  device::TmaDescriptor out;
  std::memcpy(&out, &encoded, sizeof(out));
  return out;
}

// encode() behind a per-thread cache. The descriptor is a pure function of its arguments. Calls in a serving or
// training loop reuse the same buffers, so a small direct-mapped cache skips cuTensorMapEncodeTiled (the largest
// part of an op's host cost) without locks, for every rank (split-K's 3-D workspace map included).
device::TmaDescriptor cached_encode(DType dtype, bool tf32, const void* base, int rank, const cuuint64_t* dims,
                                    const cuuint64_t* strides, const cuuint32_t* box, Swizzle swizzle,
                                    const char* what) {
  using Key = std::array<uint64_t, 12>;  // dtype and tf32, base, rank, swizzle, 3 dims, 2 strides, 3 box extents
  Key key{uint64_t(dtype) | uint64_t(tf32) << 32, reinterpret_cast<uint64_t>(base), uint64_t(rank), uint64_t(swizzle)};
  for (int i = 0; i < rank; ++i) {
    key[4 + i] = dims[i];
    key[9 + i] = box[i];
    if (i + 1 < rank) key[7 + i] = strides[i];
  }
  struct Entry {
    Key key;
    device::TmaDescriptor descriptor;
    bool valid = false;
  };
  constexpr size_t kEntries = 64;
  thread_local std::array<Entry, kEntries> cache;
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (uint64_t word : key) h = (h ^ word) * 0xbf58476d1ce4e5b9ull;
  Entry& entry = cache[(h >> 32) % kEntries];
  if (entry.valid && entry.key == key) return entry.descriptor;
  entry.descriptor = encode(dtype, tf32, base, rank, dims, strides, box, swizzle, what);
  entry.key = key;
  entry.valid = true;
  return entry.descriptor;
}

}  // namespace

device::TmaDescriptor encode_2d(const TensorMap2d& map, const char* what) {
  const cuuint64_t dims[2] = {map.inner_dim, map.outer_dim};
  const cuuint64_t strides[1] = {map.outer_stride_bytes};
  const cuuint32_t box[2] = {map.box_inner, map.box_outer};
  return cached_encode(map.dtype, map.round_to_tf32, map.base, 2, dims, strides, box, map.swizzle, what);
}

device::TmaDescriptor encode_3d(const TensorMap2d& map, uint64_t batches, uint64_t batch_stride_bytes, const char* what) {
  const cuuint64_t dims[3] = {map.inner_dim, map.outer_dim, batches};
  const cuuint64_t strides[2] = {map.outer_stride_bytes, batch_stride_bytes};
  const cuuint32_t box[3] = {map.box_inner, map.box_outer, 1};
  return cached_encode(map.dtype, map.round_to_tf32, map.base, 3, dims, strides, box, map.swizzle, what);
}

}  // namespace hopgemm::tma
