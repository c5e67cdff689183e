// The FP8 GEMMs' bad-input matrix on the CPU (validation_matrix.hpp): dtype, rank, shape, strides, alignment, c
// (dtype, shape, aliasing), d overlapping any input, K % 16, N % 8 (BF16 D) and % 4 (FP32 D), mixed devices, host
// memory, scale layouts, sizes past 2^31 and the recipe, through each of fp8_gemm_nt/nn/tn/tt.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/gemm_internal.hpp"
#include "cpu/validation_matrix.hpp"
#include "hopgemm/gemm.hpp"

namespace hopgemm {
namespace {

using testing::fake_address;

constexpr ErrorKind kInvalid = ErrorKind::kInvalidArgument;
constexpr int64_t kM = 256, kN = 512, kK = 1024, kSfK = 8;  // kSfK = K / 128
constexpr int64_t kPast31 = int64_t{1} << 31;

// fp8_gemm_nt's arguments, in the nt form (A [M, K], B [N, K]).
struct Fp8GemmCall {
  TensorView a, sfa, b, sfb, d;
  std::optional<TensorView> c;
  GemmOptions options;
};
using Row = testing::Rejection<Fp8GemmCall>;

// 1D2D: A and sfa per 1x128 row-major, B and sfb per 128x128, BF16 D; every tensor in its own region.
Fp8GemmCall valid_call() {
  Fp8GemmCall call;
  call.a = make_tensor(fake_address(0), DType::kFloat8E4M3, {kM, kK});
  call.sfa = make_tensor(fake_address(1), DType::kFloat32, {kM, kSfK});
  call.b = make_tensor(fake_address(2), DType::kFloat8E4M3, {kN, kK});
  call.sfb = make_tensor(fake_address(3), DType::kFloat32, {kN / 128, kSfK});
  call.d = make_tensor(fake_address(4), DType::kBFloat16, {kM, kN});
  return call;
}

TensorView c_like_d(DType dtype = DType::kBFloat16) { return make_tensor(fake_address(5), dtype, {kM, kN}); }

void offset(TensorView& t, uintptr_t bytes) { t.data = static_cast<char*>(t.data) + bytes; }

// The rows, each named by what it changes.
std::vector<Row> fp8_gemm_rows() {
  using C = Fp8GemmCall;
  return {
      // dtype
      {"a in BF16", [](C& c) { c.a.dtype = DType::kBFloat16; }, kInvalid, "a", "must be float8_e4m3fn, got bfloat16"},
      {"b in FP32", [](C& c) { c.b.dtype = DType::kFloat32; }, kInvalid, "b", "must be float8_e4m3fn, got float32"},
      {"d in FP16", [](C& c) { c.d.dtype = DType::kFloat16; }, kInvalid, "d", "must be bfloat16 or float32, got float16"},
      {"sfa in BF16", [](C& c) { c.sfa.dtype = DType::kBFloat16; }, kInvalid, "sfa", "must be float32, got bfloat16"},
      {"sfb in FP16", [](C& c) { c.sfb.dtype = DType::kFloat16; }, kInvalid, "sfb", "must be float32, got float16"},
      {"c in FP32 beside a BF16 d", [](C& c) { c.c = c_like_d(DType::kFloat32); }, kInvalid, "c",
       "must be bfloat16, got float32"},
      // rank
      {"a of rank 3", [](C& c) { c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {1, kM, kK}); }, kInvalid, "a",
       "must have 2 dimensions, got 3"},
      {"b of rank 1", [](C& c) { c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kN * kK}); }, kInvalid, "b",
       "must have 2 dimensions, got 1"},
      {"d of rank 3", [](C& c) { c.d = make_tensor(c.d.data, DType::kBFloat16, {1, kM, kN}); }, kInvalid, "d",
       "must have 2 dimensions, got 3"},
      {"sfa of rank 1", [](C& c) { c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {kM * kSfK}); }, kInvalid, "sfa",
       "must have 2 dimensions, got 1"},
      {"sfb of rank 3", [](C& c) { c.sfb = make_tensor(c.sfb.data, DType::kFloat32, {1, 4, kSfK}); }, kInvalid, "sfb",
       "must have 2 dimensions, got 3"},
      {"c of rank 3", [](C& c) { c.c = make_tensor(fake_address(5), DType::kBFloat16, {1, kM, kN}); }, kInvalid, "c",
       "must have 2 dimensions, got 3"},
      // shape
      {"b with another K", [](C& c) { c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kN, kK + 16}); }, kInvalid, "b",
       "must have shape [512, 1024], got [512, 1040]"},
      {"d with another N", [](C& c) { c.d = make_tensor(c.d.data, DType::kBFloat16, {kM, kN + 8}); }, kInvalid, "d",
       "must have shape [256, 512], got [256, 520]"},
      {"d with another M", [](C& c) { c.d = make_tensor(c.d.data, DType::kBFloat16, {kM - 1, kN}); }, kInvalid, "d",
       "must have shape [256, 512], got [255, 512]"},
      {"sfa with a k-block more", [](C& c) { c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {kM, kSfK + 1}); },
       kInvalid, "sfa", "must have shape [256, 8], got [256, 9]"},
      {"sfa a row short", [](C& c) { c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {kM - 1, kSfK}); }, kInvalid,
       "sfa", "must have shape [256, 8], got [255, 8]"},
      {"sfb a block row more", [](C& c) { c.sfb = make_tensor(c.sfb.data, DType::kFloat32, {5, kSfK}); }, kInvalid,
       "sfb", "must have shape [4, 8], got [5, 8]"},
      {"c with another N", [](C& c) { c.c = make_tensor(fake_address(5), DType::kBFloat16, {kM, kN - 8}); }, kInvalid,
       "c", "must have shape [256, 512], got [256, 504]"},
      // strides
      {"a MN-major", [](C& c) { c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kM, kK}, {1, kM}); }, kInvalid, "a",
       "must be K-major"},
      {"b MN-major", [](C& c) { c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kN, kK}, {1, kN}); }, kInvalid, "b",
       "must be K-major"},
      {"d column-major", [](C& c) { c.d = make_tensor(c.d.data, DType::kBFloat16, {kM, kN}, {1, kM}); }, kInvalid, "d",
       "must be row-major"},
      {"c column-major", [](C& c) { c.c = make_tensor(fake_address(5), DType::kBFloat16, {kM, kN}, {1, kM}); }, kInvalid,
       "c", "must be row-major"},
      // alignment (TMA: 16-byte base addresses and row strides)
      {"a 8 bytes off", [](C& c) { offset(c.a, 8); }, kInvalid, "a", "16-byte aligned data pointer"},
      {"b 4 bytes off", [](C& c) { offset(c.b, 4); }, kInvalid, "b", "16-byte aligned data pointer"},
      {"d 2 bytes off", [](C& c) { offset(c.d, 2); }, kInvalid, "d", "16-byte aligned data pointer"},
      {"a rows of 1032 bytes", [](C& c) { c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kM, kK}, {kK + 8, 1}); },
       kInvalid, "a", "16-byte multiple strides"},
      {"d rows of 1032 bytes", [](C& c) { c.d = make_tensor(c.d.data, DType::kBFloat16, {kM, kN}, {kN + 4, 1}); },
       kInvalid, "d", "16-byte multiple strides"},
      // d overlapping an input
      {"d over a", [](C& c) { c.d.data = c.a.data; }, kInvalid, "d", "overlaps input 'a'"},
      {"d over sfa", [](C& c) { c.d.data = c.sfa.data; }, kInvalid, "d", "overlaps input 'sfa'"},
      {"d over b's last row", [](C& c) { c.d.data = static_cast<char*>(c.b.data) + (kN - 1) * kK; }, kInvalid, "d",
       "overlaps input 'b'"},
      {"d over sfb", [](C& c) { c.d.data = c.sfb.data; }, kInvalid, "d", "overlaps input 'sfb'"},
      // c aliasing d
      {"c at d's address with other strides",
       [](C& c) { c.c = make_tensor(c.d.data, DType::kBFloat16, {kM, kN}, {kN + 8, 1}); }, kInvalid, "c",
       "aliases 'd' but has different strides"},
      {"c a row past d's address",
       [](C& c) { c.c = make_tensor(static_cast<char*>(c.d.data) + kN * 2, DType::kBFloat16, {kM, kN}); }, kInvalid,
       "d", "overlaps input 'c'"},
      // K % 16, N % 8 (BF16 D), N % 4 (FP32 D)
      {"K = 1000",
       [](C& c) {
         c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kM, 1000});
         c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kN, 1000});
       },
       kInvalid, "a", "must have K a multiple of 16"},
      {"N = 508 with a BF16 d",
       [](C& c) {
         c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {508, kK});
         c.d = make_tensor(c.d.data, DType::kBFloat16, {kM, 508});
       },
       kInvalid, "d", "must have N a multiple of 8"},
      {"N = 510 with an FP32 d",
       [](C& c) {
         c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {510, kK});
         c.d = make_tensor(c.d.data, DType::kFloat32, {kM, 510});
       },
       kInvalid, "d", "must have N a multiple of 4"},
      // devices
      {"b on device 1", [](C& c) { c.b.device = 1; }, kInvalid, "b", "is on device 1 but 'a' is on device 0"},
      {"d on device 1", [](C& c) { c.d.device = 1; }, kInvalid, "d", "is on device 1 but 'a' is on device 0"},
      {"sfa on device 1", [](C& c) { c.sfa.device = 1; }, kInvalid, "sfa", "is on device 1 but 'a' is on device 0"},
      {"sfb on device 1", [](C& c) { c.sfb.device = 1; }, kInvalid, "sfb", "is on device 1 but 'a' is on device 0"},
      {"c on device 1", [](C& c) { c.c = c_like_d(); c.c->device = 1; }, kInvalid, "c",
       "is on device 1 but 'a' is on device 0"},
      {"a in host memory", [](C& c) { c.a.device = -1; }, kInvalid, "a", "is in host memory"},
      {"b in host memory", [](C& c) { c.b.device = -1; }, kInvalid, "b", "is in host memory"},
      {"d in host memory", [](C& c) { c.d.device = -1; }, kInvalid, "d", "is in host memory"},
      {"sfa in host memory", [](C& c) { c.sfa.device = -1; }, kInvalid, "sfa", "is in host memory"},
      {"sfb in host memory", [](C& c) { c.sfb.device = -1; }, kInvalid, "sfb", "is in host memory"},
      {"c in host memory", [](C& c) { c.c = c_like_d(); c.c->device = -1; }, kInvalid, "c", "is in host memory"},
      {"a null", [](C& c) { c.a.data = nullptr; }, kInvalid, "a", "has a null data pointer"},
      // scale layouts: row-major [rows, K / 128] or MN-major TMA-aligned (strides (1, align(rows, 4)))
      {"sfa with overlapping rows", [](C& c) { c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {kM, kSfK}, {7, 1}); },
       kInvalid, "sfa", "must be row-major [256, 8] or MN-major TMA-aligned"},
      {"sfa MN-major, columns of 255",
       [](C& c) { c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {kM, kSfK}, {1, kM - 1}); }, kInvalid, "sfa",
       "got strides [1, 255]"},
      {"sfa MN-major, 4 bytes off",
       [](C& c) {
         c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {kM, kSfK}, {1, kM});
         offset(c.sfa, 4);
       },
       kInvalid, "sfa", "or MN-major TMA-aligned"},
      {"sfb MN-major, columns of 3", [](C& c) { c.sfb = make_tensor(c.sfb.data, DType::kFloat32, {4, kSfK}, {1, 3}); },
       kInvalid, "sfb", "must be row-major [4, 8] or MN-major TMA-aligned"},
      {"1D1D sfb MN-major, columns shorter than N",
       [](C& c) {
         c.options.recipe = {1, 1, 128};
         c.sfb = make_tensor(c.sfb.data, DType::kFloat32, {kN, kSfK}, {1, kN - 12});
       },
       kInvalid, "sfb", "must be row-major [512, 8] or MN-major TMA-aligned"},
      {"1D1D sfb with 128x128 blocks' shape", [](C& c) { c.options.recipe = {1, 1, 128}; }, kInvalid, "sfb",
       "must have shape [512, 8], got [4, 8]"},
      // sizes past 2^31 (the kernels index with 32-bit M, N, K)
      {"M = 2^31",
       [](C& c) {
         c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kPast31, kK});
         c.d = make_tensor(c.d.data, DType::kBFloat16, {kPast31, kN});
       },
       kInvalid, "a", "has a dimension beyond 2^31 - 1"},
      {"K = 2^31",
       [](C& c) {
         c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kM, kPast31});
         c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kN, kPast31});
       },
       kInvalid, "a", "has a dimension beyond 2^31 - 1"},
      {"N = 2^31 (checked with A's dimensions: the message names 'a')",
       [](C& c) {
         c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kPast31, kK});
         c.d = make_tensor(c.d.data, DType::kBFloat16, {kM, kPast31});
       },
       kInvalid, "a", "has a dimension beyond 2^31 - 1"},
      // recipe
      {"recipe (1, 64, 128)", [](C& c) { c.options.recipe = {1, 64, 128}; }, ErrorKind::kUnsupported, nullptr,
       "recipe (1, 64, 128) is not supported on SM90"},
  };
}

using Fp8GemmFn = void (*)(const TensorView&, const TensorView&, const TensorView&, const TensorView&,
                           const TensorView&, const TensorView*, const GemmOptions&, cudaStream_t);

// Each public form with the views it takes for the same nt problem: nn takes B as [K, N], tn both transposed, tt A.
struct Form {
  const char* op;
  Fp8GemmFn fn;
  bool a_transposed, b_transposed;
};
const Form kForms[] = {{"fp8_gemm_nt", &fp8_gemm_nt, false, false},
                       {"fp8_gemm_nn", &fp8_gemm_nn, false, true},
                       {"fp8_gemm_tn", &fp8_gemm_tn, true, true},
                       {"fp8_gemm_tt", &fp8_gemm_tt, true, false}};

TEST(GemmValidation, TheValidCallPassesValidation) {
  const testing::ScopedNumSms sms(16);
  Fp8GemmCall call = valid_call();
  EXPECT_NO_THROW(api::fp8_gemm_problem(call.a, call.sfa, call.b, call.sfb, call.d, nullptr, call.options));
  call.c = c_like_d();
  const auto p = api::fp8_gemm_problem(call.a, call.sfa, call.b, call.sfb, call.d, &*call.c, call.options);
  EXPECT_EQ(p.m, kM);
  EXPECT_EQ(p.accumulate, 1);
  EXPECT_EQ(p.num_sms, 16);
}

TEST(GemmValidation, EveryFormRejectsEveryBadInput) {
  const testing::ScopedNumSms sms(16);
  const auto rows = fp8_gemm_rows();
  for (const Form& form : kForms) {
    testing::expect_every_row_rejected(form.op, valid_call(), rows, [&](const Fp8GemmCall& c) {
      const TensorView* cp = c.c ? &*c.c : nullptr;
      form.fn(form.a_transposed ? transposed(c.a) : c.a, form.a_transposed ? transposed(c.sfa) : c.sfa,
              form.b_transposed ? transposed(c.b) : c.b, form.b_transposed ? transposed(c.sfb) : c.sfb, c.d, cp,
              c.options, nullptr);
    });
  }
}

}  // namespace
}  // namespace hopgemm
