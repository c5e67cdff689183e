// Argument errors come before anything asks the device: with no SM count set (so on this GPU-less machine any device
// query throws "no GPU"), a bad dtype, recipe or negative extent is reported as what it is, naming the argument.
// The validation matrices set an SM count (validation_matrix.hpp's ScopedNumSms) and so cannot see this order.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>

#include "cpu/validation_matrix.hpp"
#include "hopgemm/gemm.hpp"
#include "hopgemm/grouped_gemm.hpp"
#include "hopgemm/runtime.hpp"

namespace hopgemm {
namespace {

using testing::fake_address;

constexpr int64_t kM = 256, kN = 512, kK = 1024, kSfK = 8;

struct DenseCall {
  TensorView a = make_tensor(fake_address(0), DType::kFloat8E4M3, {kM, kK});
  TensorView sfa = make_tensor(fake_address(1), DType::kFloat32, {kM, kSfK});
  TensorView b = make_tensor(fake_address(2), DType::kFloat8E4M3, {kN, kK});
  TensorView sfb = make_tensor(fake_address(3), DType::kFloat32, {kN / 128, kSfK});
  TensorView d = make_tensor(fake_address(4), DType::kBFloat16, {kM, kN});
  GemmOptions options;
};

// `call` must throw an Error of `kind` whose message says `expected` and nothing about the device.
void expect_argument_error(const std::function<void()>& call, ErrorKind kind, const std::string& expected) {
  SCOPED_TRACE(expected);
  try {
    call();
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.kind(), kind) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_EQ(message.find("get_num_sms"), std::string::npos) << message;
    EXPECT_EQ(message.find("GPU"), std::string::npos) << message;
  }
}

void run_dense(const DenseCall& c) { fp8_gemm_nt(c.a, c.sfa, c.b, c.sfb, c.d, nullptr, c.options, nullptr); }

TEST(ErrorsBeforeDevice, DenseGemmReportsItsArguments) {
  set_num_sms(0);  // the device's own count: a query, which fails without a GPU
  {
    DenseCall c;
    c.sfa.dtype = DType::kBFloat16;
    expect_argument_error([&] { run_dense(c); }, ErrorKind::kInvalidArgument,
                          "fp8_gemm_nt: argument 'sfa' must be float32, got bfloat16");
  }
  {
    DenseCall c;
    c.options.recipe = {2, 2, 2};
    expect_argument_error([&] { run_dense(c); }, ErrorKind::kUnsupported,
                          "fp8_gemm_nt: recipe (2, 2, 2) is not supported on SM90");
  }
  {
    DenseCall c;
    c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {-4, kK});
    expect_argument_error([&] { run_dense(c); }, ErrorKind::kInvalidArgument,
                          "fp8_gemm_nt: argument 'a' has a negative extent: shape [-4, 1024]");
  }
  {
    // -1 is what a shape check reads as "any extent": a tensor that has it is still refused.
    DenseCall c;
    c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {-1, kK});
    c.d = make_tensor(c.d.data, DType::kBFloat16, {-1, kN});
    expect_argument_error([&] { run_dense(c); }, ErrorKind::kInvalidArgument, "argument 'a' has a negative extent");
  }
}

TEST(ErrorsBeforeDevice, GroupedGemmsReportTheirArguments) {
  set_num_sms(0);
  constexpr int64_t kG = 4, kGN = 256, kGK = 512;
  const TensorView a = make_tensor(fake_address(0), DType::kFloat8E4M3, {512, kGK});
  const TensorView sfa = make_tensor(fake_address(1), DType::kFloat32, {512, 4});
  const TensorView b = make_tensor(fake_address(2), DType::kFloat8E4M3, {kG, kGN, kGK});
  const TensorView sfb = make_tensor(fake_address(3), DType::kFloat32, {kG, 2, 4});
  const TensorView d = make_tensor(fake_address(4), DType::kBFloat16, {512, kGN});
  const TensorView ids = make_tensor(fake_address(5), DType::kInt32, {512});
  MGroupedContiguousOptions options;
  TensorView bad_sfa = sfa;
  bad_sfa.dtype = DType::kFloat16;
  expect_argument_error([&] { m_grouped_fp8_gemm_nt_contiguous(a, bad_sfa, b, sfb, d, ids, options, nullptr); },
                        ErrorKind::kInvalidArgument, "argument 'sfa' must be float32, got float16");
  const TensorView negative_b = make_tensor(b.data, DType::kFloat8E4M3, {kG, -kGN, kGK});
  expect_argument_error([&] { m_grouped_fp8_gemm_nt_contiguous(a, sfa, negative_b, sfb, d, ids, options, nullptr); },
                        ErrorKind::kInvalidArgument, "argument 'b' has a negative extent");
}

}  // namespace
}  // namespace hopgemm
