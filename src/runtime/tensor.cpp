#include "hopgemm/tensor.hpp"

#include <string>

#include "hopgemm/error.hpp"

namespace hopgemm {

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kFloat8E4M3: return "float8_e4m3fn";
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat16: return "float16";
    case DType::kFloat32: return "float32";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kUInt8: return "uint8";
  }
  return "unknown";
}

// Both overflow-free on hostile extents (validation calls them on any view a caller passes): numel saturates at
// INT64_MAX / INT64_MIN, and a view whose dense stride would pass 2^63 is not contiguous.
int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) {
    int64_t product = 0;
    if (__builtin_mul_overflow(n, shape[d], &product)) return (shape[d] < 0) != (n < 0) ? INT64_MIN : INT64_MAX;
    n = product;
  }
  return n;
}

bool TensorView::is_contiguous() const {
  int64_t expected = 1;
  bool past_range = false;  // expected passed 2^63: no stride can equal it
  for (int d = rank - 1; d >= 0; --d) {
    if (shape[d] != 1 && (past_range || strides[d] != expected)) return false;
    past_range = past_range || __builtin_mul_overflow(expected, shape[d], &expected);
  }
  return true;
}

namespace {

TensorView make_view(void* data, DType dtype, std::initializer_list<int64_t> shape, int device) {
  if (shape.size() > TensorView::kMaxRank) {
    throw Error(ErrorKind::kInvalidArgument,
                "make_tensor: rank " + std::to_string(shape.size()) + " exceeds the maximum of 4");
  }
  TensorView t;
  t.data = data;
  t.dtype = dtype;
  t.device = device;
  t.rank = static_cast<int>(shape.size());
  int d = 0;
  for (int64_t s : shape) t.shape[d++] = s;
  return t;
}

}  // namespace

TensorView make_tensor(void* data, DType dtype, std::initializer_list<int64_t> shape, int device) {
  TensorView t = make_view(data, dtype, shape, device);
  int64_t stride = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    t.strides[d] = stride;
    stride *= t.shape[d];
  }
  return t;
}

TensorView make_tensor(void* data, DType dtype, std::initializer_list<int64_t> shape,
                       std::initializer_list<int64_t> strides, int device) {
  TensorView t = make_view(data, dtype, shape, device);
  if (strides.size() != shape.size()) {
    throw Error(ErrorKind::kInvalidArgument, "make_tensor: " + std::to_string(strides.size()) + " strides for " +
                                                 std::to_string(shape.size()) + " dimensions");
  }
  int d = 0;
  for (int64_t s : strides) t.strides[d++] = s;
  return t;
}

}  // namespace hopgemm
