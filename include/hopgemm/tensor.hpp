#pragma once
// TensorView: a non-owning, torch-free description of a strided tensor.
// Shapes and strides are in elements; device < 0 means host memory (which every op rejects).
#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace hopgemm {

enum class DType : uint8_t { kFloat8E4M3, kBFloat16, kFloat16, kFloat32, kInt32, kInt64, kUInt8 };

constexpr size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kFloat8E4M3: case DType::kUInt8: return 1;
    case DType::kBFloat16: case DType::kFloat16: return 2;
    case DType::kFloat32: case DType::kInt32: return 4;
    case DType::kInt64: return 8;
  }
  return 0;
}
const char* dtype_name(DType dtype);

struct TensorView {
  static constexpr int kMaxRank = 4;
  void* data = nullptr;
  DType dtype = DType::kFloat32;
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
  int device = -1;

  // size/stride accept negative indices (-1 = last dimension), like torch.
  int64_t size(int dim) const { return shape[dim < 0 ? dim + rank : dim]; }
  int64_t stride(int dim) const { return strides[dim < 0 ? dim + rank : dim]; }
  int64_t numel() const;
  bool is_contiguous() const;
  size_t element_size() const { return dtype_size(dtype); }
};

// A contiguous (row-major) view over `data`.
TensorView make_tensor(void* data, DType dtype, std::initializer_list<int64_t> shape, int device = 0);
// A view with explicit strides (elements).
TensorView make_tensor(void* data, DType dtype, std::initializer_list<int64_t> shape,
                       std::initializer_list<int64_t> strides, int device = 0);

}  // namespace hopgemm
