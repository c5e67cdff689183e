#include "tma/tensor_map.hpp"

#include <cuda.h>

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

device::TmaDescriptor encode_2d(const TensorMap2d& map, const char* what) {
  static_assert(sizeof(CUtensorMap) == sizeof(device::TmaDescriptor), "descriptor sizes differ");
  CUtensorMap encoded;
  const cuuint64_t dims[2] = {map.inner_dim, map.outer_dim};
  const cuuint64_t strides[1] = {map.outer_stride_bytes};
  const cuuint32_t box[2] = {map.box_inner, map.box_outer};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult result = runtime::driver(what).cuTensorMapEncodeTiled(
      &encoded, data_type(map.dtype), 2, const_cast<void*>(map.base), dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle_mode(map.swizzle), CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    throw Error(ErrorKind::kCuda,
                std::string(what) + ": cuTensorMapEncodeTiled failed (CUresult " + std::to_string(result) +
                    ") for dtype " + dtype_name(map.dtype) + " dims {" + std::to_string(map.inner_dim) + ", " +
                    std::to_string(map.outer_dim) + "} stride " + std::to_string(map.outer_stride_bytes) +
                    " B box {" + std::to_string(map.box_inner) + ", " + std::to_string(map.box_outer) + "}");
  }
  device::TmaDescriptor out;
  std::memcpy(&out, &encoded, sizeof(out));
  return out;
}

}  // namespace hopgemm::tma
