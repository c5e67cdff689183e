// The shared validation helpers: one test per kind of bad input, checking the message names the op,
// the argument and the requirement.
#include <gtest/gtest.h>

#include <string>

#include "api/validate.hpp"
#include "hopgemm/error.hpp"
#include "hopgemm/runtime.hpp"
#include "hopgemm/tensor.hpp"

namespace hopgemm {
namespace {

void* fake_device_pointer(uintptr_t offset = 0) { return reinterpret_cast<void*>(uintptr_t{1} << 32 | offset); }

template <typename Fn>
std::string error_message(Fn fn, ErrorKind expected_kind = ErrorKind::kInvalidArgument) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), expected_kind);
    return e.what();
  }
  ADD_FAILURE() << "no error was raised";
  return "";
}

TEST(Validate, HostMemoryRejected) {
  api::Validator v("op_x");
  TensorView t = make_tensor(fake_device_pointer(), DType::kFloat32, {4, 4}, /*device=*/-1);
  const std::string msg = error_message([&] { v.on_device(t, "x"); });
  EXPECT_NE(msg.find("op_x: argument 'x'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("host memory"), std::string::npos) << msg;
}

TEST(Validate, NullPointerRejectedUnlessEmpty) {
  api::Validator v("op_x");
  EXPECT_THROW(v.on_device(make_tensor(nullptr, DType::kFloat32, {4, 4}), "x"), Error);
  EXPECT_NO_THROW(v.on_device(make_tensor(nullptr, DType::kFloat32, {0, 4}), "x"));
}

TEST(Validate, DType) {
  api::Validator v("op_x");
  TensorView t = make_tensor(fake_device_pointer(), DType::kFloat16, {4, 4});
  const std::string msg = error_message([&] { v.dtype(t, "d", {DType::kBFloat16, DType::kFloat32}); });
  EXPECT_NE(msg.find("must be bfloat16 or float32, got float16"), std::string::npos) << msg;
  EXPECT_NO_THROW(v.dtype(t, "d", {DType::kFloat16}));
}

TEST(Validate, Rank) {
  api::Validator v("op_x");
  TensorView t = make_tensor(fake_device_pointer(), DType::kFloat32, {2, 3, 4, 5});
  const std::string msg = error_message([&] { v.rank(t, "sf", {2, 3}); });
  EXPECT_NE(msg.find("must have 2 or 3 dimensions, got 4 (shape [2, 3, 4, 5])"), std::string::npos) << msg;
}

TEST(Validate, Shape) {
  api::Validator v("op_x");
  TensorView t = make_tensor(fake_device_pointer(), DType::kFloat32, {8, 56});
  EXPECT_NO_THROW(v.shape(t, "sfa", {8, -1}));
  const std::string msg = error_message([&] { v.shape(t, "sfa", {8, 57}); });
  EXPECT_NE(msg.find("must have shape [8, 57], got [8, 56]"), std::string::npos) << msg;
  EXPECT_THROW(v.shape(t, "sfa", {8, 56, 1}), Error);
}

TEST(Validate, Strides) {
  api::Validator v("op_x");
  TensorView row_major = make_tensor(fake_device_pointer(), DType::kBFloat16, {16, 32});
  TensorView transposed = make_tensor(fake_device_pointer(), DType::kBFloat16, {16, 32}, {1, 16});
  EXPECT_NO_THROW(v.contiguous(row_major, "a"));
  EXPECT_NO_THROW(v.inner_contiguous(row_major, "a"));
  EXPECT_THROW(v.contiguous(transposed, "a"), Error);
  const std::string msg = error_message([&] { v.inner_contiguous(transposed, "a"); });
  EXPECT_NE(msg.find("row-major"), std::string::npos) << msg;
}

TEST(Validate, TmaAlignment) {
  api::Validator v("op_x");
  EXPECT_NO_THROW(v.tma_aligned(make_tensor(fake_device_pointer(), DType::kFloat8E4M3, {4, 32}), "a"));
  const std::string pointer = error_message(
      [&] { v.tma_aligned(make_tensor(fake_device_pointer(8), DType::kFloat8E4M3, {4, 32}), "a"); });
  EXPECT_NE(pointer.find("16-byte aligned data pointer"), std::string::npos) << pointer;
  // K = 24 FP8 elements per row: a 24-byte row stride is not a multiple of 16.
  const std::string stride =
      error_message([&] { v.tma_aligned(make_tensor(fake_device_pointer(), DType::kFloat8E4M3, {4, 24}), "a"); });
  EXPECT_NE(stride.find("16-byte multiple strides"), std::string::npos) << stride;
}

TEST(Validate, SameDevice) {
  api::Validator v("op_x");
  TensorView a = make_tensor(fake_device_pointer(), DType::kFloat32, {4}, /*device=*/0);
  TensorView b = make_tensor(fake_device_pointer(), DType::kFloat32, {4}, /*device=*/1);
  const std::string msg = error_message([&] { v.same_device(a, "a", b, "b"); });
  EXPECT_NE(msg.find("argument 'b' is on device 1 but 'a' is on device 0"), std::string::npos) << msg;
}

TEST(Validate, Overlap) {
  api::Validator v("op_x");
  TensorView in = make_tensor(fake_device_pointer(), DType::kFloat32, {16, 16});
  TensorView out_inside = make_tensor(fake_device_pointer(64 * 4), DType::kFloat32, {2, 16});
  TensorView out_after = make_tensor(fake_device_pointer(256 * 4), DType::kFloat32, {2, 16});
  const std::string msg = error_message([&] { v.no_overlap(out_inside, "d", in, "a"); });
  EXPECT_NE(msg.find("argument 'd' overlaps input 'a'"), std::string::npos) << msg;
  EXPECT_NO_THROW(v.no_overlap(out_after, "d", in, "a"));
}

TEST(Validate, Positive) {
  api::Validator v("op_x");
  EXPECT_THROW(v.positive(0, "expected_m"), Error);
  EXPECT_NO_THROW(v.positive(3, "expected_m"));
}

TEST(Tensor, MakeTensorAndContiguity) {
  TensorView t = make_tensor(fake_device_pointer(), DType::kBFloat16, {2, 3, 4});
  EXPECT_EQ(t.stride(0), 12);
  EXPECT_EQ(t.stride(-1), 1);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.element_size(), 2u);
  EXPECT_THROW(make_tensor(nullptr, DType::kFloat32, {1, 2, 3, 4, 5}), Error);
  EXPECT_THROW(make_tensor(nullptr, DType::kFloat32, {1, 2}, {1}), Error);
}

TEST(Runtime, SettingsValidated) {
  EXPECT_THROW(set_tc_util(0), Error);
  EXPECT_THROW(set_tc_util(101), Error);
  set_tc_util(90);
  EXPECT_EQ(get_tc_util(), 90);
  set_tc_util(100);
  EXPECT_THROW(set_num_sms(-1), Error);
  set_pdl(true);
  EXPECT_TRUE(get_pdl());
  set_pdl(false);
}

TEST(Runtime, NoGpuIsReportedNotFatal) {
  if (gpu_available()) GTEST_SKIP() << "a GPU is present; this checks the GPU-less path";
  EXPECT_THROW(device_info(), Error);
}

}  // namespace
}  // namespace hopgemm
