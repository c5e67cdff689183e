#include "api/validate.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

namespace hopgemm::api {
namespace {

template <typename Range, typename Fn>
std::string join(const Range& range, Fn to_string, const char* sep) {
  std::string out;
  for (const auto& item : range) {
    if (!out.empty()) out += sep;
    out += to_string(item);
  }
  return out;
}

std::string list_string(const int64_t* values, int n) {
  std::string out = "[";
  for (int i = 0; i < n; ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

}  // namespace

std::string shape_string(const TensorView& t) { return list_string(t.shape, t.rank); }
std::string stride_string(const TensorView& t) { return list_string(t.strides, t.rank); }

void Validator::fail(const char* arg, const std::string& problem) const {
  throw Error(ErrorKind::kInvalidArgument, std::string(op_) + ": argument '" + arg + "' " + problem);
}

void Validator::unsupported(const std::string& problem) const {
  throw Error(ErrorKind::kUnsupported, std::string(op_) + ": " + problem);
}

void Validator::on_device(const TensorView& t, const char* arg) const {
  non_negative_extents(t, arg);
  if (t.device < 0) fail(arg, "is in host memory; a CUDA device tensor is required");
  if (t.data == nullptr && t.numel() != 0) fail(arg, "has a null data pointer");
}

void Validator::dtype(const TensorView& t, const char* arg, std::initializer_list<DType> allowed) const {
  if (std::find(allowed.begin(), allowed.end(), t.dtype) != allowed.end()) return;
  fail(arg, "must be " + join(allowed, [](DType d) { return std::string(dtype_name(d)); }, " or ") + ", got " +
                dtype_name(t.dtype));
}

void Validator::rank(const TensorView& t, const char* arg, std::initializer_list<int> allowed) const {
  if (std::find(allowed.begin(), allowed.end(), t.rank) != allowed.end()) return;
  fail(arg, "must have " + join(allowed, [](int r) { return std::to_string(r); }, " or ") + " dimensions, got " +
                std::to_string(t.rank) + " (shape " + shape_string(t) + ")");
}

void Validator::non_negative_extents(const TensorView& t, const char* arg) const {
  for (int d = 0; d < t.rank; ++d)
    if (t.shape[d] < 0) fail(arg, "has a negative extent: shape " + shape_string(t));
}

void Validator::shape(const TensorView& t, const char* arg, std::initializer_list<int64_t> expected) const {
  // A negative extent is an error, not the "any" that -1 means in `expected`.
  non_negative_extents(t, arg);
  bool ok = static_cast<int>(expected.size()) == t.rank;
  int d = 0;
  for (int64_t e : expected) {
    if (ok && e >= 0 && t.shape[d] != e) ok = false;
    ++d;
  }
  if (ok) return;
  std::string want = "[";
  d = 0;
  for (int64_t e : expected) want += (d++ ? ", " : "") + (e >= 0 ? std::to_string(e) : std::string("*"));
  fail(arg, "must have shape " + want + "], got " + shape_string(t));
}

void Validator::contiguous(const TensorView& t, const char* arg) const {
  if (!t.is_contiguous()) fail(arg, "must be contiguous, got shape " + shape_string(t) + " strides " + stride_string(t));
}

void Validator::inner_contiguous(const TensorView& t, const char* arg) const {
  if (t.rank > 0 && t.stride(-1) != 1 && t.size(-1) != 1) {
    fail(arg, "must be row-major (stride(-1) == 1), got strides " + stride_string(t));
  }
}

void Validator::tma_aligned(const TensorView& t, const char* arg) const {
  if (reinterpret_cast<uintptr_t>(t.data) % 16 != 0) fail(arg, "must have a 16-byte aligned data pointer");
  const int64_t elem = static_cast<int64_t>(t.element_size());
  for (int d = 0; d < t.rank - 1; ++d) {
    if (t.shape[d] > 1 && (t.strides[d] * elem) % 16 != 0) {
      fail(arg, "must have 16-byte multiple strides in every dimension but the last (TMA), got strides " +
                    stride_string(t) + " for " + dtype_name(t.dtype));
    }
  }
}

bool Validator::dense_accumulator(const TensorView& c, const TensorView& d, const TensorView& a, int64_t m,
                                  int64_t n) const {
  on_device(c, "c");
  same_device(a, "a", c, "c");
  dtype(c, "c", {d.dtype});
  rank(c, "c", {2});
  shape(c, "c", {m, n});
  inner_contiguous(c, "c");
  if (c.data == d.data) {
    if (c.stride(0) != d.stride(0)) fail("c", "aliases 'd' but has different strides");
    return false;
  }
  no_overlap(d, "d", c, "c");
  return true;
}

void Validator::same_device(const TensorView& a, const char* arg_a, const TensorView& b, const char* arg_b) const {
  if (a.device != b.device) {
    fail(arg_b, "is on device " + std::to_string(b.device) + " but '" + arg_a + "' is on device " +
                    std::to_string(a.device));
  }
}

void byte_range(const TensorView& t, uintptr_t& first, uintptr_t& last) {
  first = last = reinterpret_cast<uintptr_t>(t.data);
  for (int d = 0; d < t.rank; ++d)
    if (t.shape[d] == 0) return;
  // In 128 bits, clamped to the address space: hostile extents and strides (2^62 x 2^40) overflow 64 bits.
  __int128 lo = 0, hi = 0;
  for (int d = 0; d < t.rank; ++d) {
    const __int128 extent = (__int128{t.shape[d]} - 1) * t.strides[d];
    (extent < 0 ? lo : hi) += extent;
  }
  const __int128 elem = static_cast<__int128>(t.element_size());
  const __int128 base = first, top = static_cast<__int128>(UINTPTR_MAX);
  first = static_cast<uintptr_t>(std::clamp<__int128>(base + lo * elem, 0, top));
  last = static_cast<uintptr_t>(std::clamp<__int128>(base + (hi + 1) * elem, 0, top));
}

void Validator::no_overlap(const TensorView& out, const char* arg_out, const TensorView& in, const char* arg_in) const {
  uintptr_t out_first, out_last, in_first, in_last;
  byte_range(out, out_first, out_last);
  byte_range(in, in_first, in_last);
  if (out_first < in_last && in_first < out_last) {
    fail(arg_out, std::string("overlaps input '") + arg_in + "' in memory; outputs must not alias inputs");
  }
}

void Validator::positive(int64_t value, const char* arg) const {
  if (value <= 0) fail(arg, "must be positive, got " + std::to_string(value));
}

void Validator::non_negative_strides(const TensorView& t, const char* arg) const {
  for (int i = 0; i < t.rank; ++i)
    if (t.strides[i] < 0) fail(arg, "must have non-negative strides, got " + stride_string(t));
}

}  // namespace hopgemm::api
