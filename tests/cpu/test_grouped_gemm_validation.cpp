// The MoE grouped FP8 GEMMs' bad-input matrix on the CPU (validation_matrix.hpp): M-grouped contiguous (nt and nn, each
// ContiguousLayout), M-grouped masked and K-grouped: dtype, rank, shape, strides (K-major, dense groups, negative,
// overlapping output rows), alignment, d overlapping any input, K % 16, N % 8, devices, host memory, sizes past 2^31,
// scale layouts, grouped_layout / masked_m / ks / ks_tensor / c, expected_m and the recipe; the tn K-grouped form (always
// unsupported on SM90) and set_mk_alignment_for_contiguous_layout's bad values. A valid call on fake pointers must get
// past validation: it then stops at the kernel load (the JIT policy is error_on_miss over an empty cache) or, with no
// driver, at the first driver call, never with kInvalidArgument or kUnsupported.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cpu/validation_matrix.hpp"
#include "hopgemm/grouped_gemm.hpp"
#include "hopgemm/jit.hpp"
#include "hopgemm/layout.hpp"

namespace hopgemm {
namespace {

using testing::fake_address;

constexpr ErrorKind kInvalid = ErrorKind::kInvalidArgument;
constexpr int64_t kPast31 = int64_t{1} << 31;

void offset(TensorView& t, uintptr_t bytes) { t.data = static_cast<char*>(t.data) + bytes; }
void* at(const TensorView& t, int64_t bytes) { return static_cast<char*>(t.data) + bytes; }

// M-grouped shapes: G experts of N x K, M_sum rows (contiguous) or G x M_max rows (masked).
constexpr int64_t kG = 4, kN = 256, kK = 512, kSfN = 2, kSfK = 4;  // kSfN = N / 128, kSfK = K / 128
constexpr int64_t kMSum = 512, kMMax = 128;

// ---------------------------------------------------------------------------------------------------------------------
// M-grouped contiguous (nt form: b [G, N, K]; the nn entry point gets b and sfb transposed).

struct ContiguousCall {
  TensorView a, sfa, b, sfb, d, layout;
  MGroupedContiguousOptions options;
};
using ContiguousRow = testing::Rejection<ContiguousCall>;

int64_t layout_length(ContiguousLayout layout) { return layout == ContiguousLayout::kGroupIds ? kMSum : kG; }

// sfa per 1x128 row-major, sfb [G, N/128, K/128] row-major, every tensor in its own region.
ContiguousCall valid_contiguous(ContiguousLayout layout) {
  ContiguousCall call;
  call.a = make_tensor(fake_address(0), DType::kFloat8E4M3, {kMSum, kK});
  call.sfa = make_tensor(fake_address(1), DType::kFloat32, {kMSum, kSfK});
  call.b = make_tensor(fake_address(2), DType::kFloat8E4M3, {kG, kN, kK});
  call.sfb = make_tensor(fake_address(3), DType::kFloat32, {kG, kSfN, kSfK});
  call.d = make_tensor(fake_address(4), DType::kBFloat16, {kMSum, kN});
  call.layout = make_tensor(fake_address(5), DType::kInt32, {layout_length(layout)});
  call.options.layout = layout;
  return call;
}

std::vector<ContiguousRow> contiguous_rows(ContiguousLayout layout) {
  using C = ContiguousCall;
  const int64_t len = layout_length(layout);
  const std::string len_shape = "[" + std::to_string(len) + "]";
  const bool ids = layout == ContiguousLayout::kGroupIds;
  std::vector<ContiguousRow> rows = {
      // dtype
      {"a in BF16", [](C& c) { c.a.dtype = DType::kBFloat16; }, kInvalid, "a", "must be float8_e4m3fn, got bfloat16"},
      {"b in FP32", [](C& c) { c.b.dtype = DType::kFloat32; }, kInvalid, "b", "must be float8_e4m3fn, got float32"},
      {"d in FP32", [](C& c) { c.d.dtype = DType::kFloat32; }, kInvalid, "d", "must be bfloat16, got float32"},
      {"sfa in BF16", [](C& c) { c.sfa.dtype = DType::kBFloat16; }, kInvalid, "sfa", "must be float32, got bfloat16"},
      {"sfb in FP16", [](C& c) { c.sfb.dtype = DType::kFloat16; }, kInvalid, "sfb", "must be float32, got float16"},
      {"grouped_layout in int64", [](C& c) { c.layout.dtype = DType::kInt64; }, kInvalid, "grouped_layout",
       "must be int32, got int64"},
      // rank
      {"a of rank 3", [](C& c) { c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {1, kMSum, kK}); }, kInvalid, "a",
       "must have 2 dimensions, got 3"},
      {"b of rank 2", [](C& c) { c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kG * kN, kK}); }, kInvalid, "b",
       "must have 3 dimensions, got 2"},
      {"d of rank 3", [](C& c) { c.d = make_tensor(c.d.data, DType::kBFloat16, {1, kMSum, kN}); }, kInvalid, "d",
       "must have 2 dimensions, got 3"},
      {"sfa of rank 3", [](C& c) { c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {1, kMSum, kSfK}); }, kInvalid,
       "sfa", "must have 2 dimensions, got 3"},
      {"sfb of rank 2", [](C& c) { c.sfb = make_tensor(c.sfb.data, DType::kFloat32, {kG * kSfN, kSfK}); }, kInvalid,
       "sfb", "must have 3 dimensions, got 2"},
      {"grouped_layout of rank 2", [=](C& c) { c.layout = make_tensor(c.layout.data, DType::kInt32, {1, len}); },
       kInvalid, "grouped_layout", "must have 1 dimensions, got 2"},
      // shape
      {"a with another K", [](C& c) { c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kMSum, kK + 16}); }, kInvalid,
       "a", "must have K = 512 (b's last dimension), got shape [512, 528]"},
      {"d with another N", [](C& c) { c.d = make_tensor(c.d.data, DType::kBFloat16, {kMSum, kN + 8}); }, kInvalid, "d",
       "must have N = 256 columns (b's size(1)), got shape [512, 264]"},
      {"d a row short", [](C& c) { c.d = make_tensor(c.d.data, DType::kBFloat16, {kMSum - 1, kN}); }, kInvalid, "d",
       "must have M = 512 rows (a's), got shape [511, 256]"},
      {"sfa with a k-block more", [](C& c) { c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {kMSum, kSfK + 1}); },
       kInvalid, "sfa", "must have shape [512, 4], got [512, 5]"},
      {"sfa a row short", [](C& c) { c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {kMSum - 1, kSfK}); }, kInvalid,
       "sfa", "must have shape [512, 4], got [511, 4]"},
      {"sfb a group more", [](C& c) { c.sfb = make_tensor(c.sfb.data, DType::kFloat32, {kG + 1, kSfN, kSfK}); },
       kInvalid, "sfb", "must have shape [4, 2, 4], got [5, 2, 4]"},
      {"sfb an n-block short", [](C& c) { c.sfb = make_tensor(c.sfb.data, DType::kFloat32, {kG, kSfN - 1, kSfK}); },
       kInvalid, "sfb", "must have shape [4, 2, 4], got [4, 1, 4]"},
      {"grouped_layout one short", [=](C& c) { c.layout = make_tensor(c.layout.data, DType::kInt32, {len - 1}); },
       kInvalid, "grouped_layout",
       "must have shape " + len_shape + ", got [" + std::to_string(len - 1) + "]"},
      {ids ? "grouped_layout of G values (the psum form) with group ids"
           : "grouped_layout of M_sum values (the group-ids form) with cumulative ends",
       [=](C& c) { c.layout = make_tensor(c.layout.data, DType::kInt32, {ids ? kG : kMSum}); }, kInvalid,
       "grouped_layout", "must have shape " + len_shape},
      {"b of zero groups",
       [](C& c) {
         c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {0, kN, kK});
         c.sfb = make_tensor(c.sfb.data, DType::kFloat32, {0, kSfN, kSfK});
       },
       kInvalid, "b", "must hold at least one group, got shape [0, 256, 512]"},
      // strides
      {"a MN-major", [](C& c) { c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kMSum, kK}, {1, kMSum}); }, kInvalid,
       "a", "must be K-major"},
      {"b MN-major", [](C& c) { c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kG, kN, kK}, {kN * kK, 1, kN}); },
       kInvalid, "b", "must be K-major"},
      {"b with a gap between groups",
       [](C& c) { c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kG, kN, kK}, {(kN + 1) * kK, kK, 1}); }, kInvalid,
       "b", "must hold its groups densely along N"},
      {"d column-major", [](C& c) { c.d = make_tensor(c.d.data, DType::kBFloat16, {kMSum, kN}, {1, kMSum}); }, kInvalid,
       "d", "must be row-major"},
      {"sfb with a negative stride",
       [](C& c) { c.sfb = make_tensor(c.sfb.data, DType::kFloat32, {kG, kSfN, kSfK}, {kSfN * kSfK, -kSfK, 1}); },
       kInvalid, "sfb", "must have non-negative strides"},
      {"a with a negative row stride",
       [](C& c) { c.a = make_tensor(at(c.a, (kMSum - 1) * kK), DType::kFloat8E4M3, {kMSum, kK}, {-kK, 1}); }, kInvalid,
       "a", "must have non-negative strides"},
      {"b with negative strides (groups and rows reversed)",
       [](C& c) {
         c.b = make_tensor(at(c.b, (kG * kN - 1) * kK), DType::kFloat8E4M3, {kG, kN, kK}, {-kN * kK, -kK, 1});
       },
       kInvalid, "b", "must have non-negative strides"},
      {"d with a negative row stride",
       [](C& c) { c.d = make_tensor(at(c.d, (kMSum - 1) * kN * 2), DType::kBFloat16, {kMSum, kN}, {-kN, 1}); },
       kInvalid, "d", "must have non-negative strides"},
      {"d with overlapping rows (row stride < N)",
       [](C& c) { c.d = make_tensor(c.d.data, DType::kBFloat16, {kMSum, kN}, {kN - 8, 1}); }, kInvalid, "d",
       "must not have overlapping rows"},
      {"grouped_layout strided", [=](C& c) { c.layout = make_tensor(c.layout.data, DType::kInt32, {len}, {2}); },
       kInvalid, "grouped_layout", "must be contiguous"},
      // scale layouts: sfa row-major [M_sum, K/128] or MN-major TMA-aligned
      {"sfa with overlapping rows",
       [](C& c) { c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {kMSum, kSfK}, {3, 1}); }, kInvalid, "sfa",
       "must be row-major [512, 4] or MN-major TMA-aligned"},
      {"sfa MN-major, columns of 510",
       [](C& c) { c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {kMSum, kSfK}, {1, kMSum - 2}); }, kInvalid, "sfa",
       "got strides [1, 510]"},
      {"sfa MN-major, 4 bytes off",
       [](C& c) {
         c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {kMSum, kSfK}, {1, kMSum});
         offset(c.sfa, 4);
       },
       kInvalid, "sfa", "or MN-major TMA-aligned"},
      // alignment (TMA: 16-byte base addresses and row strides)
      {"a 8 bytes off", [](C& c) { offset(c.a, 8); }, kInvalid, "a", "16-byte aligned data pointer"},
      {"b 4 bytes off", [](C& c) { offset(c.b, 4); }, kInvalid, "b", "16-byte aligned data pointer"},
      {"d 2 bytes off", [](C& c) { offset(c.d, 2); }, kInvalid, "d", "16-byte aligned data pointer"},
      {"a rows of 520 bytes",
       [](C& c) { c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kMSum, kK}, {kK + 8, 1}); }, kInvalid, "a",
       "16-byte multiple strides"},
      {"b rows of 520 bytes",
       [](C& c) { c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kG, kN, kK}, {kN * (kK + 8), kK + 8, 1}); },
       kInvalid, "b", "16-byte multiple strides"},
      {"d rows of 520 bytes",
       [](C& c) { c.d = make_tensor(c.d.data, DType::kBFloat16, {kMSum, kN}, {kN + 4, 1}); }, kInvalid, "d",
       "16-byte multiple strides"},
      // d overlapping an input
      {"d over a", [](C& c) { c.d.data = c.a.data; }, kInvalid, "d", "overlaps input 'a'"},
      {"d over sfa", [](C& c) { c.d.data = c.sfa.data; }, kInvalid, "d", "overlaps input 'sfa'"},
      {"d over b's last row", [](C& c) { c.d.data = at(c.b, (kG * kN - 1) * kK); }, kInvalid, "d",
       "overlaps input 'b'"},
      {"d over sfb", [](C& c) { c.d.data = c.sfb.data; }, kInvalid, "d", "overlaps input 'sfb'"},
      {"d ending over grouped_layout",
       [](C& c) { c.d.data = at(c.layout, -(kMSum * kN * 2) + 16); }, kInvalid, "d",
       "overlaps input 'grouped_layout'"},
      // K % 16, N % 8, K and N positive
      {"K = 1000",
       [](C& c) {
         c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kMSum, 1000});
         c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kG, kN, 1000});
         c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {kMSum, 8});
         c.sfb = make_tensor(c.sfb.data, DType::kFloat32, {kG, kSfN, 8});
       },
       kInvalid, "b", "must have K a multiple of 16"},
      {"N = 252",
       [](C& c) {
         c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kG, 252, kK});
         c.d = make_tensor(c.d.data, DType::kBFloat16, {kMSum, 252});
       },
       kInvalid, "d", "must have N a multiple of 8"},
      {"K = 0",
       [](C& c) {
         c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kMSum, 0});
         c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kG, kN, 0});
         c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {kMSum, 0});
         c.sfb = make_tensor(c.sfb.data, DType::kFloat32, {kG, kSfN, 0});
       },
       kInvalid, "b", "must have N > 0 and K > 0"},
      {"N = 0",
       [](C& c) {
         c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kG, 0, kK});
         c.d = make_tensor(c.d.data, DType::kBFloat16, {kMSum, 0});
         c.sfb = make_tensor(c.sfb.data, DType::kFloat32, {kG, 0, kSfK});
       },
       kInvalid, "b", "must have N > 0 and K > 0"},
      // devices
      {"b on device 1", [](C& c) { c.b.device = 1; }, kInvalid, "b", "is on device 1 but 'a' is on device 0"},
      {"d on device 1", [](C& c) { c.d.device = 1; }, kInvalid, "d", "is on device 1 but 'a' is on device 0"},
      {"sfa on device 1", [](C& c) { c.sfa.device = 1; }, kInvalid, "sfa", "is on device 1 but 'a' is on device 0"},
      {"sfb on device 1", [](C& c) { c.sfb.device = 1; }, kInvalid, "sfb", "is on device 1 but 'a' is on device 0"},
      {"grouped_layout on device 1", [](C& c) { c.layout.device = 1; }, kInvalid, "grouped_layout",
       "is on device 1 but 'a' is on device 0"},
      {"a in host memory", [](C& c) { c.a.device = -1; }, kInvalid, "a", "is in host memory"},
      {"b in host memory", [](C& c) { c.b.device = -1; }, kInvalid, "b", "is in host memory"},
      {"d in host memory", [](C& c) { c.d.device = -1; }, kInvalid, "d", "is in host memory"},
      {"sfa in host memory", [](C& c) { c.sfa.device = -1; }, kInvalid, "sfa", "is in host memory"},
      {"sfb in host memory", [](C& c) { c.sfb.device = -1; }, kInvalid, "sfb", "is in host memory"},
      {"grouped_layout in host memory", [](C& c) { c.layout.device = -1; }, kInvalid, "grouped_layout",
       "is in host memory"},
      {"a null", [](C& c) { c.a.data = nullptr; }, kInvalid, "a", "has a null data pointer"},
      {"grouped_layout null", [](C& c) { c.layout.data = nullptr; }, kInvalid, "grouped_layout",
       "has a null data pointer"},
      // sizes past 2^31 (the kernels index rows, G x N and K with 32 bits)
      {"M_sum = 2^31",
       [=](C& c) {
         c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kPast31, kK});
         c.d = make_tensor(c.d.data, DType::kBFloat16, {kPast31, kN});
         c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {kPast31, kSfK});
         if (ids) c.layout = make_tensor(c.layout.data, DType::kInt32, {kPast31});
       },
       kInvalid, "a", "has a dimension beyond 2^31 - 1"},
      {"G x N = 2^31",
       [](C& c) {
         c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kPast31 / kN, kN, kK});
         c.sfb = make_tensor(c.sfb.data, DType::kFloat32, {kPast31 / kN, kSfN, kSfK});
       },
       kInvalid, "a", "has a dimension beyond 2^31 - 1"},
      {"K = 2^31",
       [](C& c) {
         c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kMSum, kPast31});
         c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kG, kN, kPast31});
       },
       kInvalid, "a", "has a dimension beyond 2^31 - 1"},
      // recipe
      {"recipe (1, 1, 128)", [](C& c) { c.options.recipe = {1, 1, 128}; }, ErrorKind::kUnsupported, nullptr,
       "recipe (1, 1, 128) is not supported by the M-grouped GEMMs on SM90; use (1, 128, 128)"},
      {"recipe (1, 64, 128)", [](C& c) { c.options.recipe = {1, 64, 128}; }, ErrorKind::kUnsupported, nullptr,
       "recipe (1, 64, 128) is not supported"},
  };
  // expected_m: a hint of the cumulative-ends layouts only, and positive.
  if (ids) {
    rows.push_back({"expected_m with group ids", [](C& c) { c.options.expected_m = 128; }, kInvalid, "expected_m",
                    "is only taken with the psum and packed layouts"});
  } else {
    rows.push_back({"expected_m = 0", [](C& c) { c.options.expected_m = 0; }, kInvalid, "expected_m",
                    "must be positive, got 0"});
    rows.push_back({"expected_m = -128", [](C& c) { c.options.expected_m = -128; }, kInvalid, "expected_m",
                    "must be positive, got -128"});
  }
  return rows;
}

struct ContiguousForm {
  const char* op;
  void (*fn)(const TensorView&, const TensorView&, const TensorView&, const TensorView&, const TensorView&,
             const TensorView&, const MGroupedContiguousOptions&, cudaStream_t);
  bool b_transposed;  // nn: b given as [G, K, N], sfb as [G, K/128, N/128]
};
const ContiguousForm kContiguousForms[] = {
    {"m_grouped_fp8_gemm_nt_contiguous", &m_grouped_fp8_gemm_nt_contiguous, false},
    {"m_grouped_fp8_gemm_nn_contiguous", &m_grouped_fp8_gemm_nn_contiguous, true}};
const ContiguousLayout kLayouts[] = {ContiguousLayout::kGroupIds, ContiguousLayout::kPsum, ContiguousLayout::kPacked};
const char* layout_name(ContiguousLayout layout) {
  return layout == ContiguousLayout::kGroupIds ? "group ids" : layout == ContiguousLayout::kPsum ? "psum" : "packed";
}

void run_contiguous(const ContiguousForm& form, const ContiguousCall& c) {
  form.fn(c.a, c.sfa, form.b_transposed ? transposed(c.b) : c.b, form.b_transposed ? transposed(c.sfb) : c.sfb, c.d,
          c.layout, c.options, nullptr);
}

// ---------------------------------------------------------------------------------------------------------------------
// M-grouped masked.

struct MaskedCall {
  TensorView a, sfa, b, sfb, d, masked_m;
  int64_t expected_m = 64;
  GemmOptions options;
};
using MaskedRow = testing::Rejection<MaskedCall>;

MaskedCall valid_masked() {
  MaskedCall call;
  call.a = make_tensor(fake_address(0), DType::kFloat8E4M3, {kG, kMMax, kK});
  call.sfa = make_tensor(fake_address(1), DType::kFloat32, {kG, kMMax, kSfK});
  call.b = make_tensor(fake_address(2), DType::kFloat8E4M3, {kG, kN, kK});
  call.sfb = make_tensor(fake_address(3), DType::kFloat32, {kG, kSfN, kSfK});
  call.d = make_tensor(fake_address(4), DType::kBFloat16, {kG, kMMax, kN});
  call.masked_m = make_tensor(fake_address(5), DType::kInt32, {kG});
  return call;
}

// sfa per group MN-major TMA-aligned: [G, M_max, K/128] with strides (K/128 * M_max, 1, M_max).
TensorView mn_major_masked_sfa(void* data, int64_t column_stride = kMMax) {
  return make_tensor(data, DType::kFloat32, {kG, kMMax, kSfK}, {kSfK * column_stride, 1, column_stride});
}

std::vector<MaskedRow> masked_rows() {
  using C = MaskedCall;
  constexpr int64_t kMPast = kPast31 / kG;  // G x M_max = 2^31
  return {
      // dtype
      {"a in BF16", [](C& c) { c.a.dtype = DType::kBFloat16; }, kInvalid, "a", "must be float8_e4m3fn, got bfloat16"},
      {"b in FP32", [](C& c) { c.b.dtype = DType::kFloat32; }, kInvalid, "b", "must be float8_e4m3fn, got float32"},
      {"d in FP32", [](C& c) { c.d.dtype = DType::kFloat32; }, kInvalid, "d", "must be bfloat16, got float32"},
      {"sfa in BF16", [](C& c) { c.sfa.dtype = DType::kBFloat16; }, kInvalid, "sfa", "must be float32, got bfloat16"},
      {"sfb in FP16", [](C& c) { c.sfb.dtype = DType::kFloat16; }, kInvalid, "sfb", "must be float32, got float16"},
      {"masked_m in int64", [](C& c) { c.masked_m.dtype = DType::kInt64; }, kInvalid, "masked_m",
       "must be int32, got int64"},
      {"masked_m in FP32", [](C& c) { c.masked_m.dtype = DType::kFloat32; }, kInvalid, "masked_m",
       "must be int32, got float32"},
      // rank
      {"a of rank 2", [](C& c) { c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kG * kMMax, kK}); }, kInvalid, "a",
       "must have 3 dimensions, got 2"},
      {"d of rank 2", [](C& c) { c.d = make_tensor(c.d.data, DType::kBFloat16, {kG * kMMax, kN}); }, kInvalid, "d",
       "must have 3 dimensions, got 2"},
      {"b of rank 4", [](C& c) { c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {1, kG, kN, kK}); }, kInvalid, "b",
       "must have 3 dimensions, got 4"},
      {"sfa of rank 2", [](C& c) { c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {kG * kMMax, kSfK}); }, kInvalid,
       "sfa", "must have 3 dimensions, got 2"},
      {"sfb of rank 2", [](C& c) { c.sfb = make_tensor(c.sfb.data, DType::kFloat32, {kG * kSfN, kSfK}); }, kInvalid,
       "sfb", "must have 3 dimensions, got 2"},
      {"masked_m of rank 2", [](C& c) { c.masked_m = make_tensor(c.masked_m.data, DType::kInt32, {kG, 1}); },
       kInvalid, "masked_m", "must have 1 dimensions, got 2"},
      // shape
      {"a with a group more", [](C& c) { c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kG + 1, kMMax, kK}); },
       kInvalid, "a", "must hold G = 4 groups (b's), got shape [5, 128, 512]"},
      {"a with another K", [](C& c) { c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kG, kMMax, kK - 16}); },
       kInvalid, "a", "must have K = 512 (b's last dimension)"},
      {"d with another M_max", [](C& c) { c.d = make_tensor(c.d.data, DType::kBFloat16, {kG, kMMax + 8, kN}); },
       kInvalid, "d", "must have shape [4, 128, 256], got [4, 136, 256]"},
      {"d a group short", [](C& c) { c.d = make_tensor(c.d.data, DType::kBFloat16, {kG - 1, kMMax, kN}); }, kInvalid,
       "d", "must have shape [4, 128, 256], got [3, 128, 256]"},
      {"d with another N", [](C& c) { c.d = make_tensor(c.d.data, DType::kBFloat16, {kG, kMMax, kN - 8}); }, kInvalid,
       "d", "must have N = 256 columns (b's size(1))"},
      {"sfa with a k-block more", [](C& c) { c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {kG, kMMax, kSfK + 1}); },
       kInvalid, "sfa", "must have shape [4, 128, 4], got [4, 128, 5]"},
      {"sfa a group short", [](C& c) { c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {kG - 1, kMMax, kSfK}); },
       kInvalid, "sfa", "must have shape [4, 128, 4], got [3, 128, 4]"},
      {"sfb a group more", [](C& c) { c.sfb = make_tensor(c.sfb.data, DType::kFloat32, {kG + 1, kSfN, kSfK}); },
       kInvalid, "sfb", "must have shape [4, 2, 4], got [5, 2, 4]"},
      {"masked_m a group short", [](C& c) { c.masked_m = make_tensor(c.masked_m.data, DType::kInt32, {kG - 1}); },
       kInvalid, "masked_m", "must have shape [4], got [3]"},
      {"masked_m of G x M_max values",
       [](C& c) { c.masked_m = make_tensor(c.masked_m.data, DType::kInt32, {kG * kMMax}); }, kInvalid, "masked_m",
       "must have shape [4], got [512]"},
      // strides
      {"a MN-major",
       [](C& c) { c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kG, kMMax, kK}, {kMMax * kK, 1, kMMax}); },
       kInvalid, "a", "must be K-major"},
      {"b MN-major", [](C& c) { c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kG, kN, kK}, {kN * kK, 1, kN}); },
       kInvalid, "b", "must be K-major"},
      {"a with a gap between groups",
       [](C& c) { c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kG, kMMax, kK}, {(kMMax + 16) * kK, kK, 1}); },
       kInvalid, "a", "must hold its groups densely (stride(0) == M_max * stride(1))"},
      {"d with a gap between groups",
       [](C& c) { c.d = make_tensor(c.d.data, DType::kBFloat16, {kG, kMMax, kN}, {(kMMax + 8) * kN, kN, 1}); },
       kInvalid, "d", "must hold its groups densely (stride(0) == M_max * stride(1))"},
      {"b with a gap between groups",
       [](C& c) { c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kG, kN, kK}, {(kN + 16) * kK, kK, 1}); }, kInvalid,
       "b", "must hold its groups densely along N"},
      {"d column-major in each group",
       [](C& c) { c.d = make_tensor(c.d.data, DType::kBFloat16, {kG, kMMax, kN}, {kMMax * kN, 1, kMMax}); }, kInvalid,
       "d", "must be row-major"},
      {"a with negative strides (groups and rows reversed)",
       [](C& c) {
         c.a = make_tensor(at(c.a, (kG * kMMax - 1) * kK), DType::kFloat8E4M3, {kG, kMMax, kK},
                           {-kMMax * kK, -kK, 1});
       },
       kInvalid, "a", "must have non-negative strides"},
      {"d with negative strides (groups and rows reversed)",
       [](C& c) {
         c.d = make_tensor(at(c.d, (kG * kMMax - 1) * kN * 2), DType::kBFloat16, {kG, kMMax, kN},
                           {-kMMax * kN, -kN, 1});
       },
       kInvalid, "d", "must have non-negative strides"},
      {"d with overlapping rows (row stride < N)",
       [](C& c) {
         c.d = make_tensor(c.d.data, DType::kBFloat16, {kG, kMMax, kN}, {kMMax * (kN - 8), kN - 8, 1});
       },
       kInvalid, "d", "must not have overlapping rows"},
      {"sfb with a negative stride",
       [](C& c) { c.sfb = make_tensor(c.sfb.data, DType::kFloat32, {kG, kSfN, kSfK}, {-kSfN * kSfK, kSfK, 1}); },
       kInvalid, "sfb", "must have non-negative strides"},
      {"masked_m strided", [](C& c) { c.masked_m = make_tensor(c.masked_m.data, DType::kInt32, {kG}, {2}); }, kInvalid,
       "masked_m", "must be contiguous"},
      // scale layouts: sfa row-major [G, M_max, K/128] or per group MN-major TMA-aligned
      {"sfa row-major with a gap between groups",
       [](C& c) {
         c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {kG, kMMax, kSfK}, {(kMMax + 1) * kSfK, kSfK, 1});
       },
       kInvalid, "sfa", "must be row-major [G, M_max, ceil(K/128)] or per group MN-major TMA-aligned"},
      {"sfa with overlapping rows",
       [](C& c) { c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {kG, kMMax, kSfK}, {kMMax * 2, 2, 1}); }, kInvalid,
       "sfa", "or per group MN-major TMA-aligned"},
      {"sfa MN-major, columns of 130", [](C& c) { c.sfa = mn_major_masked_sfa(c.sfa.data, kMMax + 2); }, kInvalid,
       "sfa", "got strides [520, 1, 130]"},
      {"sfa MN-major, columns shorter than M_max", [](C& c) { c.sfa = mn_major_masked_sfa(c.sfa.data, kMMax - 4); },
       kInvalid, "sfa", "or per group MN-major TMA-aligned"},
      {"sfa MN-major, 4 bytes off",
       [](C& c) {
         c.sfa = mn_major_masked_sfa(c.sfa.data);
         offset(c.sfa, 4);
       },
       kInvalid, "sfa", "or per group MN-major TMA-aligned"},
      // alignment
      {"a 8 bytes off", [](C& c) { offset(c.a, 8); }, kInvalid, "a", "16-byte aligned data pointer"},
      {"b 4 bytes off", [](C& c) { offset(c.b, 4); }, kInvalid, "b", "16-byte aligned data pointer"},
      {"d 2 bytes off", [](C& c) { offset(c.d, 2); }, kInvalid, "d", "16-byte aligned data pointer"},
      {"a rows of 520 bytes",
       [](C& c) {
         c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kG, kMMax, kK}, {kMMax * (kK + 8), kK + 8, 1});
       },
       kInvalid, "a", "16-byte multiple strides"},
      {"d rows of 520 bytes",
       [](C& c) { c.d = make_tensor(c.d.data, DType::kBFloat16, {kG, kMMax, kN}, {kMMax * (kN + 4), kN + 4, 1}); },
       kInvalid, "d", "16-byte multiple strides"},
      // d overlapping an input
      {"d over a", [](C& c) { c.d.data = c.a.data; }, kInvalid, "d", "overlaps input 'a'"},
      {"d over sfa", [](C& c) { c.d.data = c.sfa.data; }, kInvalid, "d", "overlaps input 'sfa'"},
      {"d over b's last row", [](C& c) { c.d.data = at(c.b, (kG * kN - 1) * kK); }, kInvalid, "d",
       "overlaps input 'b'"},
      {"d over sfb", [](C& c) { c.d.data = c.sfb.data; }, kInvalid, "d", "overlaps input 'sfb'"},
      {"d over masked_m", [](C& c) { c.d.data = c.masked_m.data; }, kInvalid, "d", "overlaps input 'masked_m'"},
      // K % 16, N % 8, K and N positive
      {"K = 1000",
       [](C& c) {
         c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kG, kMMax, 1000});
         c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kG, kN, 1000});
         c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {kG, kMMax, 8});
         c.sfb = make_tensor(c.sfb.data, DType::kFloat32, {kG, kSfN, 8});
       },
       kInvalid, "b", "must have K a multiple of 16"},
      {"N = 252",
       [](C& c) {
         c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kG, 252, kK});
         c.d = make_tensor(c.d.data, DType::kBFloat16, {kG, kMMax, 252});
       },
       kInvalid, "d", "must have N a multiple of 8"},
      {"K = 0",
       [](C& c) {
         c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kG, kMMax, 0});
         c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kG, kN, 0});
         c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {kG, kMMax, 0});
         c.sfb = make_tensor(c.sfb.data, DType::kFloat32, {kG, kSfN, 0});
       },
       kInvalid, "b", "must have N > 0 and K > 0"},
      // devices
      {"b on device 1", [](C& c) { c.b.device = 1; }, kInvalid, "b", "is on device 1 but 'a' is on device 0"},
      {"d on device 1", [](C& c) { c.d.device = 1; }, kInvalid, "d", "is on device 1 but 'a' is on device 0"},
      {"sfa on device 1", [](C& c) { c.sfa.device = 1; }, kInvalid, "sfa", "is on device 1 but 'a' is on device 0"},
      {"sfb on device 1", [](C& c) { c.sfb.device = 1; }, kInvalid, "sfb", "is on device 1 but 'a' is on device 0"},
      {"masked_m on device 1", [](C& c) { c.masked_m.device = 1; }, kInvalid, "masked_m",
       "is on device 1 but 'a' is on device 0"},
      {"a in host memory", [](C& c) { c.a.device = -1; }, kInvalid, "a", "is in host memory"},
      {"b in host memory", [](C& c) { c.b.device = -1; }, kInvalid, "b", "is in host memory"},
      {"d in host memory", [](C& c) { c.d.device = -1; }, kInvalid, "d", "is in host memory"},
      {"sfa in host memory", [](C& c) { c.sfa.device = -1; }, kInvalid, "sfa", "is in host memory"},
      {"sfb in host memory", [](C& c) { c.sfb.device = -1; }, kInvalid, "sfb", "is in host memory"},
      {"masked_m in host memory", [](C& c) { c.masked_m.device = -1; }, kInvalid, "masked_m", "is in host memory"},
      {"masked_m null", [](C& c) { c.masked_m.data = nullptr; }, kInvalid, "masked_m", "has a null data pointer"},
      // sizes past 2^31
      {"G x M_max = 2^31",
       [=](C& c) {
         c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kG, kMPast, kK});
         c.d = make_tensor(c.d.data, DType::kBFloat16, {kG, kMPast, kN});
         c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {kG, kMPast, kSfK});
       },
       kInvalid, "a", "has a dimension beyond 2^31 - 1"},
      {"K = 2^31",
       [](C& c) {
         c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kG, kMMax, kPast31});
         c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kG, kN, kPast31});
       },
       kInvalid, "a", "has a dimension beyond 2^31 - 1"},
      // expected_m, recipe
      {"expected_m = 0", [](C& c) { c.expected_m = 0; }, kInvalid, "expected_m", "must be positive, got 0"},
      {"expected_m = -1", [](C& c) { c.expected_m = -1; }, kInvalid, "expected_m", "must be positive, got -1"},
      {"recipe (1, 1, 128)", [](C& c) { c.options.recipe = {1, 1, 128}; }, ErrorKind::kUnsupported, nullptr,
       "recipe (1, 1, 128) is not supported by the M-grouped GEMMs on SM90; use (1, 128, 128)"},
  };
}

void run_masked(const MaskedCall& c) {
  m_grouped_fp8_gemm_nt_masked(c.a, c.sfa, c.b, c.sfb, c.d, c.masked_m, c.expected_m, c.options, nullptr);
}

// ---------------------------------------------------------------------------------------------------------------------
// K-grouped: G groups of M x N, group g with K = ks[g]; a and b flat, scales MN-major TMA-aligned.

constexpr int64_t kKM = 256, kKN = 384, kSumK = 768, kKSfK = 6;  // ks = {128, 256, 0, 384}

struct KGroupedCall {
  TensorView a, sfa, b, sfb, d, ks_tensor;
  std::vector<int64_t> ks = {128, 256, 0, 384};
  std::optional<TensorView> c;
  GemmOptions options;
};
using KGroupedRow = testing::Rejection<KGroupedCall>;

TensorView mn_major_sf(void* data, int64_t rows, int64_t sf_k, int64_t column_stride) {
  return make_tensor(data, DType::kFloat32, {rows, sf_k}, {1, column_stride});
}

KGroupedCall valid_k_grouped() {
  KGroupedCall call;
  call.a = make_tensor(fake_address(0), DType::kFloat8E4M3, {kSumK * kKM});
  call.sfa = mn_major_sf(fake_address(1), kKM, kKSfK, kKM);
  call.b = make_tensor(fake_address(2), DType::kFloat8E4M3, {kSumK * kKN});
  call.sfb = mn_major_sf(fake_address(3), kKN, kKSfK, kKN);
  call.d = make_tensor(fake_address(4), DType::kFloat32, {kG, kKM, kKN});
  call.ks_tensor = make_tensor(fake_address(5), DType::kInt32, {kG});
  return call;
}

TensorView c_like_d(DType dtype = DType::kFloat32) { return make_tensor(fake_address(6), dtype, {kG, kKM, kKN}); }

std::vector<KGroupedRow> k_grouped_rows() {
  using C = KGroupedCall;
  return {
      // dtype
      {"a in BF16", [](C& c) { c.a.dtype = DType::kBFloat16; }, kInvalid, "a", "must be float8_e4m3fn, got bfloat16"},
      {"b in uint8", [](C& c) { c.b.dtype = DType::kUInt8; }, kInvalid, "b", "must be float8_e4m3fn, got uint8"},
      {"d in BF16", [](C& c) { c.d.dtype = DType::kBFloat16; }, kInvalid, "d", "must be float32, got bfloat16"},
      {"sfa in BF16", [](C& c) { c.sfa.dtype = DType::kBFloat16; }, kInvalid, "sfa", "must be float32, got bfloat16"},
      {"sfb in FP16", [](C& c) { c.sfb.dtype = DType::kFloat16; }, kInvalid, "sfb", "must be float32, got float16"},
      {"ks_tensor in int64", [](C& c) { c.ks_tensor.dtype = DType::kInt64; }, kInvalid, "ks_tensor",
       "must be int32, got int64"},
      {"c in BF16", [](C& c) { c.c = c_like_d(DType::kBFloat16); }, kInvalid, "c", "must be float32, got bfloat16"},
      // rank
      {"d of rank 2", [](C& c) { c.d = make_tensor(c.d.data, DType::kFloat32, {kG * kKM, kKN}); }, kInvalid, "d",
       "must have 3 dimensions, got 2"},
      {"sfa of rank 3", [](C& c) { c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {1, kKM, kKSfK}); }, kInvalid,
       "sfa", "must have 2 dimensions, got 3"},
      {"sfb of rank 1", [](C& c) { c.sfb = make_tensor(c.sfb.data, DType::kFloat32, {kKN * kKSfK}); }, kInvalid,
       "sfb", "must have 2 dimensions, got 1"},
      {"ks_tensor of rank 2", [](C& c) { c.ks_tensor = make_tensor(c.ks_tensor.data, DType::kInt32, {kG, 1}); },
       kInvalid, "ks_tensor", "must have 1 dimensions, got 2"},
      {"c of rank 2", [](C& c) { c.c = make_tensor(fake_address(6), DType::kFloat32, {kG * kKM, kKN}); }, kInvalid,
       "c", "must have 3 dimensions, got 2"},
      // ks and the buffers
      {"ks one short", [](C& c) { c.ks.pop_back(); }, kInvalid, "ks",
       "must give one K per group: d holds 4 groups, ks has 3"},
      {"ks one more", [](C& c) { c.ks.push_back(0); }, kInvalid, "ks",
       "must give one K per group: d holds 4 groups, ks has 5"},
      {"ks[1] = 192 (not a multiple of 128)", [](C& c) { c.ks[1] = 192; }, kInvalid, "ks",
       "must hold multiples of 128 (>= 0), got ks[1] = 192"},
      {"ks[1] = -128", [](C& c) { c.ks[1] = -128; }, kInvalid, "ks", "got ks[1] = -128"},
      {"ks[0] = 2^31 (ks_tensor is int32; d and ks_tensor moved past a's and b's 2^39 bytes)",
       [](C& c) {
         c.ks = {kPast31, 0, 0, 0};
         c.d.data = fake_address(32);
         c.ks_tensor.data = fake_address(33);
         c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kPast31 * kKM});
         c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kPast31 * kKN});
         c.sfa = mn_major_sf(c.sfa.data, kKM, kPast31 / 128, kKM);
         c.sfb = mn_major_sf(c.sfb.data, kKN, kPast31 / 128, kKN);
       },
       kInvalid, "ks", "must hold values below 2^31 (ks_tensor is int32), got ks[0] = 2147483648"},
      {"ks summing past a", [](C& c) { c.ks[2] = 128; }, kInvalid, "a",
       "must hold sum(ks) x M = 896 x 256 elements, got 196608"},
      {"b a group's K short",
       [](C& c) { c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {(kSumK - 128) * kKN}); }, kInvalid, "b",
       "must hold sum(ks) x N = 768 x 384 elements, got 245760"},
      {"ks_tensor a group short", [](C& c) { c.ks_tensor = make_tensor(c.ks_tensor.data, DType::kInt32, {kG - 1}); },
       kInvalid, "ks_tensor", "must have shape [4], got [3]"},
      {"ks_tensor strided", [](C& c) { c.ks_tensor = make_tensor(c.ks_tensor.data, DType::kInt32, {kG}, {2}); },
       kInvalid, "ks_tensor", "must be contiguous"},
      // shapes and strides
      {"d not contiguous",
       [](C& c) { c.d = make_tensor(c.d.data, DType::kFloat32, {kG, kKM, kKN}, {kKM * kKN, 1, kKM}); }, kInvalid, "d",
       "must be contiguous"},
      {"a as a transposed [M, sum(ks)] view",
       [](C& c) { c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kKM, kSumK}, {1, kKM}); }, kInvalid, "a",
       "must be contiguous"},
      {"b strided", [](C& c) { c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kSumK * kKN}, {2}); }, kInvalid, "b",
       "must be contiguous"},
      {"sfa with a k-block more", [](C& c) { c.sfa = mn_major_sf(c.sfa.data, kKM, kKSfK + 1, kKM); }, kInvalid, "sfa",
       "must have shape [256, 6], got [256, 7]"},
      {"sfb a row short", [](C& c) { c.sfb = mn_major_sf(c.sfb.data, kKN - 1, kKSfK, kKN); }, kInvalid, "sfb",
       "must have shape [384, 6], got [383, 6]"},
      {"sfa row-major", [](C& c) { c.sfa = make_tensor(c.sfa.data, DType::kFloat32, {kKM, kKSfK}); }, kInvalid, "sfa",
       "must be MN-major TMA-aligned (strides (1, align(rows, 4)), as get_mn_major_tma_aligned_tensor returns it), "
       "got strides [6, 1]"},
      {"sfb row-major", [](C& c) { c.sfb = make_tensor(c.sfb.data, DType::kFloat32, {kKN, kKSfK}); }, kInvalid, "sfb",
       "must be MN-major TMA-aligned"},
      {"sfa MN-major, columns of 258", [](C& c) { c.sfa = mn_major_sf(c.sfa.data, kKM, kKSfK, kKM + 2); }, kInvalid,
       "sfa", "got strides [1, 258]"},
      {"sfb MN-major, columns shorter than N", [](C& c) { c.sfb = mn_major_sf(c.sfb.data, kKN, kKSfK, kKN - 4); },
       kInvalid, "sfb", "must be MN-major TMA-aligned"},
      {"sfa MN-major, 4 bytes off", [](C& c) { offset(c.sfa, 4); }, kInvalid, "sfa", "must be MN-major TMA-aligned"},
      {"c with another N", [](C& c) { c.c = make_tensor(fake_address(6), DType::kFloat32, {kG, kKM, kKN + 4}); },
       kInvalid, "c", "must have shape [4, 256, 384], got [4, 256, 388]"},
      {"c a group short", [](C& c) { c.c = make_tensor(fake_address(6), DType::kFloat32, {kG - 1, kKM, kKN}); },
       kInvalid, "c", "must have shape [4, 256, 384], got [3, 256, 384]"},
      {"c not contiguous",
       [](C& c) { c.c = make_tensor(fake_address(6), DType::kFloat32, {kG, kKM, kKN}, {kKM * kKN, 1, kKM}); },
       kInvalid, "c", "must be contiguous"},
      // N % 4 (FP32 rows of 16 bytes)
      {"N = 382",
       [](C& c) {
         c.b = make_tensor(c.b.data, DType::kFloat8E4M3, {kSumK * 382});
         c.sfb = mn_major_sf(c.sfb.data, 382, kKSfK, 384);
         c.d = make_tensor(c.d.data, DType::kFloat32, {kG, kKM, 382});
       },
       kInvalid, "d", "must have N a multiple of 4"},
      // memory: alignment, d overlapping an input, c partly over d
      {"a 8 bytes off", [](C& c) { offset(c.a, 8); }, kInvalid, "a", "16-byte aligned data pointer"},
      {"b 4 bytes off", [](C& c) { offset(c.b, 4); }, kInvalid, "b", "16-byte aligned data pointer"},
      {"d 4 bytes off", [](C& c) { offset(c.d, 4); }, kInvalid, "d", "16-byte aligned data pointer"},
      {"d over a", [](C& c) { c.d.data = c.a.data; }, kInvalid, "d", "overlaps input 'a'"},
      {"d over b's end", [](C& c) { c.d.data = at(c.b, kSumK * kKN - 16); }, kInvalid, "d", "overlaps input 'b'"},
      {"d over sfa", [](C& c) { c.d.data = c.sfa.data; }, kInvalid, "d", "overlaps input 'sfa'"},
      {"d over sfb", [](C& c) { c.d.data = c.sfb.data; }, kInvalid, "d", "overlaps input 'sfb'"},
      {"d over ks_tensor", [](C& c) { c.d.data = c.ks_tensor.data; }, kInvalid, "d", "overlaps input 'ks_tensor'"},
      {"c a row past d's address",
       [](C& c) { c.c = make_tensor(at(c.d, kKN * 4), DType::kFloat32, {kG, kKM, kKN}); }, kInvalid, "d",
       "overlaps input 'c'"},
      // devices
      {"b on device 1", [](C& c) { c.b.device = 1; }, kInvalid, "b", "is on device 1 but 'a' is on device 0"},
      {"d on device 1", [](C& c) { c.d.device = 1; }, kInvalid, "d", "is on device 1 but 'a' is on device 0"},
      {"sfa on device 1", [](C& c) { c.sfa.device = 1; }, kInvalid, "sfa", "is on device 1 but 'a' is on device 0"},
      {"sfb on device 1", [](C& c) { c.sfb.device = 1; }, kInvalid, "sfb", "is on device 1 but 'a' is on device 0"},
      {"ks_tensor on device 1", [](C& c) { c.ks_tensor.device = 1; }, kInvalid, "ks_tensor",
       "is on device 1 but 'a' is on device 0"},
      {"c on device 1", [](C& c) { c.c = c_like_d(); c.c->device = 1; }, kInvalid, "c",
       "is on device 1 but 'a' is on device 0"},
      {"a in host memory", [](C& c) { c.a.device = -1; }, kInvalid, "a", "is in host memory"},
      {"b in host memory", [](C& c) { c.b.device = -1; }, kInvalid, "b", "is in host memory"},
      {"d in host memory", [](C& c) { c.d.device = -1; }, kInvalid, "d", "is in host memory"},
      {"sfa in host memory", [](C& c) { c.sfa.device = -1; }, kInvalid, "sfa", "is in host memory"},
      {"sfb in host memory", [](C& c) { c.sfb.device = -1; }, kInvalid, "sfb", "is in host memory"},
      {"ks_tensor in host memory", [](C& c) { c.ks_tensor.device = -1; }, kInvalid, "ks_tensor", "is in host memory"},
      {"c in host memory", [](C& c) { c.c = c_like_d(); c.c->device = -1; }, kInvalid, "c", "is in host memory"},
      {"b null", [](C& c) { c.b.data = nullptr; }, kInvalid, "b", "has a null data pointer"},
      {"ks_tensor null", [](C& c) { c.ks_tensor.data = nullptr; }, kInvalid, "ks_tensor", "has a null data pointer"},
      // sizes past 2^31 (D's rows G x M are 32-bit in the kernel)
      {"G x M = 2^31",
       [](C& c) {
         constexpr int64_t m = kPast31 / kG;
         c.a = make_tensor(c.a.data, DType::kFloat8E4M3, {kSumK * m});
         c.sfa = mn_major_sf(c.sfa.data, m, kKSfK, m);
         c.d = make_tensor(c.d.data, DType::kFloat32, {kG, m, kKN});
       },
       kInvalid, "d", "has a dimension beyond 2^31 - 1"},
      // recipe
      {"recipe (1, 128, 128)", [](C& c) { c.options.recipe = {1, 128, 128}; }, ErrorKind::kUnsupported, nullptr,
       "recipe (1, 128, 128) is not supported by the K-grouped GEMM on SM90; use (1, 1, 128)"},
  };
}

void run_k_grouped(const KGroupedCall& c) {
  k_grouped_fp8_gemm_nt_contiguous(c.a, c.sfa, c.b, c.sfb, c.d, c.ks, c.ks_tensor, c.c ? &*c.c : nullptr, c.options,
                                   nullptr);
}

// ---------------------------------------------------------------------------------------------------------------------
// A valid call gets past validation: with an empty kernel cache under error_on_miss it stops at the kernel load (kJit;
// the M-grouped ops encode their tensor maps first, which without a driver is a kCuda error). Nothing is launched.

class ValidCallScope {
 public:
  ValidCallScope() : sms_(16), before_(get_jit_policy()) {
    dir_ = std::filesystem::temp_directory_path() /
           ("hopgemm_grouped_validation_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    set_cache_dir(dir_.string());
    set_jit_policy(JitPolicy::kErrorOnMiss);
  }
  ~ValidCallScope() {
    set_jit_policy(before_);
    set_cache_dir("");
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

 private:
  testing::ScopedNumSms sms_;
  JitPolicy before_;
  std::filesystem::path dir_;
};

template <class Fn>
void expect_past_validation(const std::string& what, Fn fn) {
  SCOPED_TRACE(what);
  try {
    fn();
    ADD_FAILURE() << "returned: a kernel was loaded from an empty cache";
  } catch (const Error& e) {
    EXPECT_TRUE(e.kind() == ErrorKind::kJit || e.kind() == ErrorKind::kCuda)
        << error_kind_name(e.kind()) << ": " << e.what();
  }
}

TEST(GroupedGemmValidation, ValidContiguousCallsPassValidation) {
  const ValidCallScope scope;
  for (const ContiguousForm& form : kContiguousForms) {
    for (ContiguousLayout layout : kLayouts) {
      ContiguousCall call = valid_contiguous(layout);
      expect_past_validation(std::string(form.op) + ", " + layout_name(layout), [&] { run_contiguous(form, call); });
      // The other accepted forms: MN-major TMA-aligned sfa, an explicit recipe, expected_m where it is taken.
      call.sfa = make_tensor(call.sfa.data, DType::kFloat32, {kMSum, kSfK}, {1, kMSum});
      call.options.recipe = {1, 128, 128};
      if (layout != ContiguousLayout::kGroupIds) call.options.expected_m = 96;
      expect_past_validation(std::string(form.op) + ", " + layout_name(layout) + ", MN-major sfa",
                             [&] { run_contiguous(form, call); });
    }
  }
}

TEST(GroupedGemmValidation, ValidMaskedCallsPassValidation) {
  const ValidCallScope scope;
  MaskedCall call = valid_masked();
  expect_past_validation("row-major sfa", [&] { run_masked(call); });
  call.sfa = mn_major_masked_sfa(call.sfa.data);
  call.expected_m = 4 * kMMax;  // above M_max: clamped for the heuristics
  expect_past_validation("MN-major sfa", [&] { run_masked(call); });
}

TEST(GroupedGemmValidation, ValidKGroupedCallsPassValidation) {
  const ValidCallScope scope;
  KGroupedCall call = valid_k_grouped();
  expect_past_validation("no c", [&] { run_k_grouped(call); });
  call.c = c_like_d();
  expect_past_validation("c apart from d", [&] { run_k_grouped(call); });
  call.c = call.d;
  call.options.recipe = {1, 1, 128};
  expect_past_validation("c = d", [&] { run_k_grouped(call); });
}

// Empty problems are no-ops that enqueue nothing (no CUDA call): M_sum = 0, M_max = 0.
TEST(GroupedGemmValidation, EmptyMGroupedCallsReturn) {
  const testing::ScopedNumSms sms(16);
  for (const ContiguousForm& form : kContiguousForms) {
    for (ContiguousLayout layout : kLayouts) {
      ContiguousCall call = valid_contiguous(layout);
      call.a = make_tensor(call.a.data, DType::kFloat8E4M3, {0, kK});
      call.sfa = make_tensor(call.sfa.data, DType::kFloat32, {0, kSfK});
      call.d = make_tensor(call.d.data, DType::kBFloat16, {0, kN});
      if (layout == ContiguousLayout::kGroupIds) call.layout = make_tensor(call.layout.data, DType::kInt32, {0});
      EXPECT_NO_THROW(run_contiguous(form, call)) << form.op << ", " << layout_name(layout);
    }
  }
  MaskedCall call = valid_masked();
  call.a = make_tensor(call.a.data, DType::kFloat8E4M3, {kG, 0, kK});
  call.sfa = make_tensor(call.sfa.data, DType::kFloat32, {kG, 0, kSfK});
  call.d = make_tensor(call.d.data, DType::kBFloat16, {kG, 0, kN});
  EXPECT_NO_THROW(run_masked(call));
}

// ---------------------------------------------------------------------------------------------------------------------
// The matrices.

TEST(GroupedGemmValidation, ContiguousFormsRejectEveryBadInput) {
  const testing::ScopedNumSms sms(16);
  for (const ContiguousForm& form : kContiguousForms) {
    for (ContiguousLayout layout : kLayouts) {
      SCOPED_TRACE(layout_name(layout));
      testing::expect_every_row_rejected(form.op, valid_contiguous(layout), contiguous_rows(layout),
                                         [&](const ContiguousCall& c) { run_contiguous(form, c); });
    }
  }
}

TEST(GroupedGemmValidation, MaskedRejectsEveryBadInput) {
  const testing::ScopedNumSms sms(16);
  testing::expect_every_row_rejected("m_grouped_fp8_gemm_nt_masked", valid_masked(), masked_rows(), run_masked);
}

TEST(GroupedGemmValidation, KGroupedRejectsEveryBadInput) {
  const testing::ScopedNumSms sms(16);
  testing::expect_every_row_rejected("k_grouped_fp8_gemm_nt_contiguous", valid_k_grouped(), k_grouped_rows(),
                                     run_k_grouped);
}

// SM90 has no MN-major FP8 WGMMA: the tn form refuses every call, valid or not, as unsupported (never a launch).
TEST(GroupedGemmValidation, KGroupedTnIsUnsupported) {
  const testing::ScopedNumSms sms(16);
  std::vector<KGroupedCall> calls(3, valid_k_grouped());
  calls[1].c = c_like_d();
  calls[2].ks.pop_back();  // a bad input is refused the same way
  for (const KGroupedCall& c : calls) {
    try {
      k_grouped_fp8_gemm_tn_contiguous(c.a, c.sfa, c.b, c.sfb, c.d, c.ks, c.ks_tensor, c.c ? &*c.c : nullptr,
                                       c.options, nullptr);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUnsupported) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("k_grouped_fp8_gemm_tn_contiguous: not supported on SM90", 0), 0u)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("k_grouped_fp8_gemm_nt_contiguous"), std::string::npos) << e.what();
    }
  }
}

TEST(GroupedGemmValidation, MkAlignmentRejectsBadValues) {
  ASSERT_EQ(get_mk_alignment_for_contiguous_layout(), 128);
  for (int bad : {0, -64, -128, 1, 32, 100, 96, 129, 200}) {
    SCOPED_TRACE(bad);
    try {
      set_mk_alignment_for_contiguous_layout(bad);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << message;
      EXPECT_EQ(message.rfind("set_mk_alignment_for_contiguous_layout: alignment must be a positive multiple of 64",
                              0),
                0u)
          << message;
      EXPECT_NE(message.find("got " + std::to_string(bad)), std::string::npos) << message;
    }
    EXPECT_EQ(get_mk_alignment_for_contiguous_layout(), 128);  // a refused value changes nothing
  }
  for (int good : {64, 192, 256}) {
    set_mk_alignment_for_contiguous_layout(good);
    EXPECT_EQ(get_mk_alignment_for_contiguous_layout(), good);
  }
  set_mk_alignment_for_contiguous_layout(128);
  EXPECT_EQ(get_mk_alignment_for_contiguous_layout(), 128);
}

}  // namespace
}  // namespace hopgemm
