// The BF16 GEMMs' bad-input matrix on the CPU (validation_matrix.hpp): dtype, shape, a layout with no unit stride,
// TMA alignment of each operand in its major (an MN-major operand's K stride), K % 8, N % 8 (BF16 D) and % 4 (FP32 D),
// D not row-major, C (dtype, aliasing with other strides, overlap), D overlapping an input, host memory, mixed devices,
// through each of bf16_gemm_nt/nn/tn/tt; and the grouped BF16 ops' own rows (grouped B in either major: unit stride,
// group stride, TMA alignment; the masked form's K-major B; layout lengths, K-group multiples of 64).
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cpu/validation_matrix.hpp"
#include "hopgemm/bf16_gemm.hpp"
#include "hopgemm/grouped_gemm.hpp"

namespace hopgemm {
namespace {

using testing::fake_address;

constexpr ErrorKind kInvalid = ErrorKind::kInvalidArgument;
constexpr int64_t kM = 256, kN = 512, kK = 1024;

// bf16_gemm_nt's arguments in the nt form: A [M, K], B [N, K], each K-major or MN-major.
struct Bf16GemmCall {
  TensorView a, b, d;
  std::optional<TensorView> c;
};
using Row = testing::Rejection<Bf16GemmCall>;

Bf16GemmCall valid_call() {
  return {make_tensor(fake_address(0), DType::kBFloat16, {kM, kK}),
          make_tensor(fake_address(1), DType::kBFloat16, {kN, kK}),
          make_tensor(fake_address(2), DType::kBFloat16, {kM, kN}), std::nullopt};
}

// An MN-major [rows, kK] view of a buffer whose K stride is `ld` elements.
TensorView mn_major(int region, int64_t rows, int64_t ld) {
  return make_tensor(fake_address(region), DType::kBFloat16, {rows, kK}, {1, ld});
}

std::vector<Row> bf16_gemm_rows() {
  using C = Bf16GemmCall;
  return {
      {"a in FP8", [](C& c) { c.a.dtype = DType::kFloat8E4M3; }, kInvalid, "a", "must be bfloat16, got float8_e4m3fn"},
      {"b in FP32", [](C& c) { c.b.dtype = DType::kFloat32; }, kInvalid, "b", "must be bfloat16, got float32"},
      {"d in FP16", [](C& c) { c.d.dtype = DType::kFloat16; }, kInvalid, "d", "must be bfloat16 or float32, got float16"},
      {"b of another K", [](C& c) { c.b = make_tensor(c.b.data, DType::kBFloat16, {kN, kK / 2}); }, kInvalid, "b",
       "must have shape"},
      {"d of another N", [](C& c) { c.d = make_tensor(c.d.data, DType::kBFloat16, {kM, kN / 2}); }, kInvalid, "d",
       "must have shape"},
      {"a with no unit stride", [](C& c) { c.a = make_tensor(c.a.data, DType::kBFloat16, {kM, kK}, {2 * kK, 2}); },
       kInvalid, "a", "must be K-major or MN-major (one unit stride)"},
      {"a K-major with a row stride of 4 elements past K",
       [](C& c) { c.a = make_tensor(c.a.data, DType::kBFloat16, {kM, kK}, {kK + 4, 1}); }, kInvalid, "a",
       "16-byte multiple strides"},
      {"b MN-major with a K stride of N + 4", [](C& c) { c.b = mn_major(1, kN, kN + 4); }, kInvalid, "b",
       "16-byte multiple strides"},
      {"a at 8 bytes past 16", [](C& c) { c.a.data = fake_address(0, 8); }, kInvalid, "a", "16-byte aligned"},
      {"K not a multiple of 8",
       [](C& c) {
         c.a = make_tensor(c.a.data, DType::kBFloat16, {kM, 1020}, {1024, 1});
         c.b = make_tensor(c.b.data, DType::kBFloat16, {kN, 1020}, {1024, 1});
       },
       kInvalid, "a", "K a multiple of 8"},
      {"N not a multiple of 8 (BF16 D)",
       [](C& c) {
         c.b = make_tensor(c.b.data, DType::kBFloat16, {kN - 4, kK});
         c.d = make_tensor(c.d.data, DType::kBFloat16, {kM, kN - 4}, {kN, 1});
       },
       kInvalid, "d", "N a multiple of 8"},
      {"N not a multiple of 4 (FP32 D)",
       [](C& c) {
         c.b = make_tensor(c.b.data, DType::kBFloat16, {kN - 2, kK});
         c.d = make_tensor(c.d.data, DType::kFloat32, {kM, kN - 2}, {kN, 1});
       },
       kInvalid, "d", "N a multiple of 4"},
      {"d column-major", [](C& c) { c.d = make_tensor(c.d.data, DType::kBFloat16, {kM, kN}, {1, kM}); }, kInvalid,
       "d", "row-major"},
      {"c of another dtype", [](C& c) { c.c = make_tensor(fake_address(3), DType::kFloat32, {kM, kN}); }, kInvalid,
       "c", "must be bfloat16, got float32"},
      {"c aliasing d with other strides",
       [](C& c) { c.c = make_tensor(c.d.data, DType::kBFloat16, {kM, kN}, {kN + 8, 1}); }, kInvalid, "c",
       "aliases 'd' but has different strides"},
      {"c overlapping d", [](C& c) { c.c = make_tensor(fake_address(2, 16), DType::kBFloat16, {kM, kN}); }, kInvalid,
       "d", "overlaps input 'c'"},
      {"d overlapping a", [](C& c) { c.d.data = c.a.data; }, kInvalid, "d", "overlaps input 'a'"},
      {"b in host memory", [](C& c) { c.b.device = -1; }, kInvalid, "b", "host memory"},
      {"b on another device", [](C& c) { c.b.device = 1; }, kInvalid, "b", "is on device 1"},
  };
}

TEST(Bf16GemmValidation, EveryFormRejectsEveryBadInput) {
  struct Form {
    const char* op;
    decltype(&bf16_gemm_nt) fn;
    bool a_transposed, b_transposed;
  };
  static constexpr Form kForms[] = {{"bf16_gemm_nt", &bf16_gemm_nt, false, false},
                                    {"bf16_gemm_nn", &bf16_gemm_nn, false, true},
                                    {"bf16_gemm_tn", &bf16_gemm_tn, true, true},
                                    {"bf16_gemm_tt", &bf16_gemm_tt, true, false}};
  const testing::ScopedNumSms sms(16);
  const auto rows = bf16_gemm_rows();
  for (const Form& form : kForms) {
    testing::expect_every_row_rejected(form.op, valid_call(), rows, [&](const Bf16GemmCall& c) {
      form.fn(form.a_transposed ? transposed(c.a) : c.a, form.b_transposed ? transposed(c.b) : c.b, c.d,
              c.c ? &*c.c : nullptr, {}, nullptr);
    });
  }
}

TEST(Bf16GemmValidation, GroupedFormsRejectTheirOwnBadInputs) {
  const testing::ScopedNumSms sms(16);
  const int64_t groups = 4, rows = 512;
  const TensorView a = make_tensor(fake_address(0), DType::kBFloat16, {rows, kK});
  const TensorView b = make_tensor(fake_address(1), DType::kBFloat16, {groups, kN, kK});
  const TensorView d = make_tensor(fake_address(2), DType::kBFloat16, {rows, kN});
  const TensorView ids = make_tensor(fake_address(3), DType::kInt32, {rows});
  auto expect = [](const char* what, auto call, const char* arg, const char* requirement) {
    SCOPED_TRACE(what);
    try {
      call();
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("argument '") + arg + "'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(requirement), std::string::npos) << e.what();
    }
  };
  // B [G, N, K] K-major (groups dense along N) or MN-major (N contiguous; K and group strides TMA takes).
  auto b_with_strides = [&](int64_t group, int64_t n, int64_t k) {
    return make_tensor(b.data, DType::kBFloat16, {groups, kN, kK}, {group, n, k});
  };
  auto contiguous_with = [&](const TensorView& bad_b) {
    return [&, bad_b] { m_grouped_bf16_gemm_nt_contiguous(a, bad_b, d, ids, {}, nullptr); };
  };
  expect("grouped B with no unit stride", contiguous_with(b_with_strides(2 * kN * kK, 2, 2 * kN)), "b",
         "must be K-major (stride(-1) == 1) or MN-major (stride(1) == 1)");
  expect("K-major grouped B with a group stride past N rows", contiguous_with(b_with_strides((kN + 8) * kK, kK, 1)),
         "b", "densely along N");
  expect("MN-major grouped B with a K stride of N + 4", contiguous_with(b_with_strides((kN + 4) * kK, 1, kN + 4)),
         "b", "16-byte multiple strides");
  expect("MN-major grouped B with a group stride of N K + 4", contiguous_with(b_with_strides(kN * kK + 4, 1, kN)),
         "b", "16-byte multiple strides");
  expect("MN-major grouped B broadcast over the groups", contiguous_with(b_with_strides(0, 1, kN)), "b",
         "positive stride");
  // The nn form takes B as [G, K, N]: a view with neither K nor N contiguous is refused as the nt form's B.
  const TensorView b_kn_strided = make_tensor(b.data, DType::kBFloat16, {groups, kK, kN}, {2 * kN * kK, 2 * kN, 2});
  expect("nn B with no unit stride",
         [&] { m_grouped_bf16_gemm_nn_contiguous(a, b_kn_strided, d, ids, {}, nullptr); }, "b",
         "or MN-major (stride(1) == 1)");
  const TensorView short_ids = make_tensor(ids.data, DType::kInt32, {rows - 1});
  expect("group ids of the wrong length", [&] { m_grouped_bf16_gemm_nt_contiguous(a, b, d, short_ids, {}, nullptr); },
         "grouped_layout", "must have shape");
  const TensorView a3 = make_tensor(a.data, DType::kBFloat16, {groups, rows / groups, kK});
  const TensorView d3 = make_tensor(d.data, DType::kBFloat16, {groups, rows / groups, kN});
  const TensorView masked_m = make_tensor(ids.data, DType::kInt32, {groups});
  expect("non-positive expected_m", [&] { m_grouped_bf16_gemm_nt_masked(a3, b, d3, masked_m, 0, {}, nullptr); },
         "expected_m", "must be positive");
  // The masked form takes a K-major B only, as DeepGEMM's.
  const TensorView b_mn = b_with_strides(kN * kK, 1, kN);
  expect("masked MN-major B", [&] { m_grouped_bf16_gemm_nt_masked(a3, b_mn, d3, masked_m, 64, {}, nullptr); }, "b",
         "must be K-major (stride(-1) == 1) on SM90");
  // K-grouped: A [sum(ks), M] and B [sum(ks), N] MN-major, ks multiples of 64.
  const std::vector<int64_t> ks = {96, 32};
  const TensorView ka = make_tensor(fake_address(0), DType::kBFloat16, {128, kM});
  const TensorView kb = make_tensor(fake_address(1), DType::kBFloat16, {128, kN});
  const TensorView kd = make_tensor(fake_address(2), DType::kFloat32, {2, kM, kN});
  const TensorView ks_tensor = make_tensor(fake_address(3), DType::kInt32, {2});
  expect("ks not multiples of 64", [&] { k_grouped_bf16_gemm_tn_contiguous(ka, kb, kd, ks, ks_tensor, nullptr, {}, nullptr); },
         "ks", "multiples of 64");
  const std::vector<int64_t> good_ks = {64, 64};
  const TensorView ka_k_major = make_tensor(ka.data, DType::kBFloat16, {128, kM}, {1, 128});
  expect("K-grouped A not MN-major",
         [&] { k_grouped_bf16_gemm_tn_contiguous(ka_k_major, kb, kd, good_ks, ks_tensor, nullptr, {}, nullptr); }, "a",
         "row-major");
}

}  // namespace
}  // namespace hopgemm
