#pragma once
// Argument validation shared by every op: a bad input never reaches a kernel, and the
// error names the op, the argument, what was given and what is required.
#include <initializer_list>
#include <string>

#include "hopgemm/error.hpp"
#include "hopgemm/tensor.hpp"

namespace hopgemm::api {

std::string shape_string(const TensorView& t);
std::string stride_string(const TensorView& t);

class Validator {
 public:
  explicit Validator(const char* op) : op_(op) {}

  [[noreturn]] void fail(const char* arg, const std::string& problem) const;
  [[noreturn]] void unsupported(const std::string& problem) const;

  // A tensor on a CUDA device (host memory is rejected), no negative extent, a non-null pointer unless it is empty.
  void on_device(const TensorView& t, const char* arg) const;
  void dtype(const TensorView& t, const char* arg, std::initializer_list<DType> allowed) const;
  void rank(const TensorView& t, const char* arg, std::initializer_list<int> allowed) const;
  // Each expected extent must match; -1 accepts any extent (of the tensor's own: none may be negative).
  void shape(const TensorView& t, const char* arg, std::initializer_list<int64_t> expected) const;
  void contiguous(const TensorView& t, const char* arg) const;
  // stride(-1) == 1 (row-major rows, any leading strides).
  void inner_contiguous(const TensorView& t, const char* arg) const;
  // TMA requirements: 16-byte aligned base pointer and 16-byte multiple leading strides (every stride
  // but the innermost, in bytes).
  void tma_aligned(const TensorView& t, const char* arg) const;
  void same_device(const TensorView& a, const char* arg_a, const TensorView& b, const char* arg_b) const;
  // `out` must not share memory with `in` (byte ranges of the two views must not intersect).
  void no_overlap(const TensorView& out, const char* arg_out, const TensorView& in, const char* arg_in) const;
  void positive(int64_t value, const char* arg) const;
  void non_negative_extents(const TensorView& t, const char* arg) const;
  // No negative stride (one would reach cuTensorMapEncodeTiled as a huge unsigned stride: an opaque driver error).
  void non_negative_strides(const TensorView& t, const char* arg) const;

  // C of a dense D = C + A B^T (`a`: the operand whose device the op runs on): on that device, D's dtype, [m, n],
  // rows contiguous; either aliasing D (same data, then the same strides) or not overlapping it. Returns whether C is
  // distinct (the op copies it into D first).
  bool dense_accumulator(const TensorView& c, const TensorView& d, const TensorView& a, int64_t m, int64_t n) const;

  const char* op() const { return op_; }

 private:
  const char* op_;
};

// [first, last) byte range a view can touch (for overlap checks).
void byte_range(const TensorView& t, uintptr_t& first, uintptr_t& last);

}  // namespace hopgemm::api
