// Validation of the scale-factor layout and FP8 quantisation ops: one test per kind of bad input. Validation
// precedes any CUDA call, so these run on the CPU with fake device pointers; each checks that the message
// names the op and the argument.
#include <gtest/gtest.h>

#include <string>

#include "hopgemm/error.hpp"
#include "hopgemm/layout.hpp"
#include "hopgemm/quantize.hpp"
#include "hopgemm/tensor.hpp"

namespace hopgemm {
namespace {

void* fake(uintptr_t offset = 0) { return reinterpret_cast<void*>((uintptr_t{1} << 32) + offset); }
void* fake2() { return fake(uintptr_t{1} << 28); }   // far from fake(): no overlap
void* fake3() { return fake(uintptr_t{2} << 28); }

template <typename Fn>
std::string error_of(Fn fn, ErrorKind kind = ErrorKind::kInvalidArgument) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error was raised";
  return "";
}

#define EXPECT_MSG(msg, text) EXPECT_NE((msg).find(text), std::string::npos) << (msg)

constexpr cudaStream_t kStream = nullptr;

// ---- helpers -----------------------------------------------------------------------------------------------

TEST(LayoutHelpers, TmaAlignedSize) {
  EXPECT_EQ(get_tma_aligned_size(4097, 4), 4100);
  EXPECT_EQ(get_tma_aligned_size(4096, 4), 4096);
  EXPECT_EQ(get_tma_aligned_size(1, 4), 4);
  EXPECT_EQ(get_tma_aligned_size(3, 1), 16);
  EXPECT_EQ(get_tma_aligned_size(0, 2), 0);
  EXPECT_MSG(error_of([] { get_tma_aligned_size(8, 3); }), "element_size");
  EXPECT_EQ(get_mk_alignment_for_contiguous_layout(), 128);
}

TEST(LayoutHelpers, MnMajorStrides) {
  const int64_t shape2[2] = {65, 57};
  int64_t s2[2] = {};
  mn_major_tma_aligned_strides(2, shape2, 4, s2);
  EXPECT_EQ(s2[0], 1);
  EXPECT_EQ(s2[1], 68);
  const int64_t shape3[3] = {4, 3, 5};
  int64_t s3[3] = {};
  mn_major_tma_aligned_strides(3, shape3, 4, s3);
  EXPECT_EQ(s3[0], 20);
  EXPECT_EQ(s3[1], 1);
  EXPECT_EQ(s3[2], 4);
  EXPECT_TRUE(is_mn_major_tma_aligned(make_tensor(fake(), DType::kFloat32, {4, 3, 5}, {20, 1, 4})));
  EXPECT_TRUE(is_mn_major_tma_aligned(make_tensor(fake(), DType::kFloat32, {65, 57}, {1, 68})));
  EXPECT_FALSE(is_mn_major_tma_aligned(make_tensor(fake(), DType::kFloat32, {65, 57})));
  EXPECT_FALSE(is_mn_major_tma_aligned(make_tensor(fake(), DType::kFloat32, {65, 57}, {1, 65})));  // not padded
}

// ---- get_mn_major_tma_aligned_tensor -------------------------------------------------------------------------

TensorView sf_rowmajor() { return make_tensor(fake(), DType::kFloat32, {65, 57}); }
TensorView sf_out() { return make_tensor(fake2(), DType::kFloat32, {65, 57}, {1, 68}); }

TEST(LayoutValidation, TransposeDType) {
  const auto sf = make_tensor(fake(), DType::kBFloat16, {65, 57});
  const auto msg = error_of([&] { get_mn_major_tma_aligned_tensor(sf, sf_out(), kStream); });
  EXPECT_MSG(msg, "get_mn_major_tma_aligned_tensor: argument 'sf'");
  EXPECT_MSG(msg, "float32");
  const auto out = make_tensor(fake2(), DType::kInt32, {65, 57}, {1, 68});
  EXPECT_MSG(error_of([&] { get_mn_major_tma_aligned_tensor(sf_rowmajor(), out, kStream); }), "argument 'out'");
}

TEST(LayoutValidation, TransposeRank) {
  const auto sf = make_tensor(fake(), DType::kFloat32, {65});
  EXPECT_MSG(error_of([&] { get_mn_major_tma_aligned_tensor(sf, sf_out(), kStream); }), "argument 'sf' must have 2 or 3 dimensions");
}

TEST(LayoutValidation, TransposeShape) {
  const auto out = make_tensor(fake2(), DType::kFloat32, {64, 57}, {1, 64});
  EXPECT_MSG(error_of([&] { get_mn_major_tma_aligned_tensor(sf_rowmajor(), out, kStream); }), "argument 'out' must have shape [65, 57]");
}

TEST(LayoutValidation, TransposeStrides) {
  const auto row_major = make_tensor(fake2(), DType::kFloat32, {65, 57});
  const auto msg = error_of([&] { get_mn_major_tma_aligned_tensor(sf_rowmajor(), row_major, kStream); });
  EXPECT_MSG(msg, "argument 'out' must have the MN-major TMA-aligned strides [1, 68]");
  const auto unpadded = make_tensor(fake2(), DType::kFloat32, {65, 57}, {1, 65});
  EXPECT_MSG(error_of([&] { get_mn_major_tma_aligned_tensor(sf_rowmajor(), unpadded, kStream); }), "[1, 68]");
  const auto bad_group = make_tensor(fake2(), DType::kFloat32, {2, 65, 57}, {68 * 57 + 4, 1, 68});
  const auto sf3 = make_tensor(fake(), DType::kFloat32, {2, 65, 57});
  EXPECT_MSG(error_of([&] { get_mn_major_tma_aligned_tensor(sf3, bad_group, kStream); }), "[3876, 1, 68]");
}

TEST(LayoutValidation, TransposeAlignment) {
  const auto out = make_tensor(fake2() , DType::kFloat32, {65, 57}, {1, 68});
  TensorView shifted = out;
  shifted.data = static_cast<char*>(out.data) + 4;
  EXPECT_MSG(error_of([&] { get_mn_major_tma_aligned_tensor(sf_rowmajor(), shifted, kStream); }), "16-byte aligned");
  TensorView sf = sf_rowmajor();
  sf.data = static_cast<char*>(sf.data) + 2;
  EXPECT_MSG(error_of([&] { get_mn_major_tma_aligned_tensor(sf, out, kStream); }), "argument 'sf' must have a 4-byte aligned");
}

TEST(LayoutValidation, TransposeHostMemory) {
  const auto sf = make_tensor(fake(), DType::kFloat32, {65, 57}, -1);
  EXPECT_MSG(error_of([&] { get_mn_major_tma_aligned_tensor(sf, sf_out(), kStream); }), "argument 'sf' is in host memory");
  const auto out = make_tensor(fake2(), DType::kFloat32, {65, 57}, {1, 68}, -1);
  EXPECT_MSG(error_of([&] { get_mn_major_tma_aligned_tensor(sf_rowmajor(), out, kStream); }), "argument 'out' is in host memory");
}

TEST(LayoutValidation, TransposeOtherDevice) {
  const auto out = make_tensor(fake2(), DType::kFloat32, {65, 57}, {1, 68}, 1);
  EXPECT_MSG(error_of([&] { get_mn_major_tma_aligned_tensor(sf_rowmajor(), out, kStream); }), "is on device 1");
}

TEST(LayoutValidation, TransposeOverlap) {
  const auto out = make_tensor(fake(64), DType::kFloat32, {65, 57}, {1, 68});
  EXPECT_MSG(error_of([&] { get_mn_major_tma_aligned_tensor(sf_rowmajor(), out, kStream); }), "argument 'out' overlaps input 'sf'");
}

TEST(LayoutValidation, TransposeTooManyGroups) {
  const auto sf = make_tensor(fake(), DType::kFloat32, {70000, 1, 1});
  const auto out = make_tensor(fake2(), DType::kFloat32, {70000, 1, 1}, {4, 1, 4});
  EXPECT_MSG(error_of([&] { get_mn_major_tma_aligned_tensor(sf, out, kStream); }), "65535");
}

TEST(LayoutValidation, EmptyTransposeIsANoOp) {
  const auto sf = make_tensor(fake(), DType::kFloat32, {0, 57});
  const auto out = make_tensor(fake2(), DType::kFloat32, {0, 57}, {1, 0});
  EXPECT_NO_THROW(get_mn_major_tma_aligned_tensor(sf, out, kStream));
}

// ---- packed UE8M0 -------------------------------------------------------------------------------------------

TEST(LayoutValidation, PackedDTypeAndShape) {
  const char* op = "get_mn_major_tma_aligned_packed_ue8m0_tensor";
  const auto fp32_out = make_tensor(fake2(), DType::kFloat32, {65, 15}, {1, 68});
  auto msg = error_of([&] { get_mn_major_tma_aligned_packed_ue8m0_tensor(sf_rowmajor(), fp32_out, kStream); });
  EXPECT_MSG(msg, std::string(op) + ": argument 'out' must be int32");
  const auto wide = make_tensor(fake2(), DType::kInt32, {65, 57}, {1, 68});
  msg = error_of([&] { get_mn_major_tma_aligned_packed_ue8m0_tensor(sf_rowmajor(), wide, kStream); });
  EXPECT_MSG(msg, "must have shape [65, 15]");
  const auto row_major = make_tensor(fake2(), DType::kInt32, {65, 15});
  msg = error_of([&] { get_mn_major_tma_aligned_packed_ue8m0_tensor(sf_rowmajor(), row_major, kStream); });
  EXPECT_MSG(msg, "[1, 68]");
}

// ---- K-grouped packed UE8M0 ---------------------------------------------------------------------------------

TEST(LayoutValidation, KGroupedShapes) {
  const char* op = "get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor";
  const std::vector<int> ks = {256, 640, 0};                        // sf rows 2 + 5 + 0, packed rows 1 + 2 + 0
  const auto sf = make_tensor(fake(), DType::kFloat32, {7, 96});
  const auto out = make_tensor(fake2(), DType::kInt32, {3, 96});
  const auto bad_sf = make_tensor(fake(), DType::kFloat32, {8, 96});
  auto msg = error_of([&] { get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(bad_sf, ks, out, kStream); });
  EXPECT_MSG(msg, std::string(op) + ": argument 'sf' must have shape [sum(ceil(ks / 128)) = 7, mn]");
  const auto bad_out = make_tensor(fake2(), DType::kInt32, {4, 96});
  EXPECT_MSG(error_of([&] { get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, ks, bad_out, kStream); }),
             "argument 'out' must have shape [3, 96]");
  const auto strided_out = make_tensor(fake2(), DType::kInt32, {3, 96}, {100, 1});
  EXPECT_MSG(error_of([&] { get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, ks, strided_out, kStream); }),
             "argument 'out' must be contiguous");
  EXPECT_MSG(error_of([&] { get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, {256, -128}, out, kStream); }),
             "argument 'ks' must be >= 0");
  const auto host_sf = make_tensor(fake(), DType::kFloat32, {7, 96}, -1);
  EXPECT_MSG(error_of([&] { get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(host_sf, ks, out, kStream); }),
             "host memory");
  const auto overlapping = make_tensor(fake(16), DType::kInt32, {3, 96});
  EXPECT_MSG(error_of([&] { get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(sf, ks, overlapping, kStream); }),
             "overlaps input 'sf'");
  const auto empty_sf = make_tensor(fake(), DType::kFloat32, {0, 96});
  const auto empty_out = make_tensor(fake2(), DType::kInt32, {0, 96});
  EXPECT_NO_THROW(get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(empty_sf, {0, 0}, empty_out, kStream));
}

// ---- transform_sf_into_required_layout planning ---------------------------------------------------------------

TEST(SfTransformPlan, PerTokenFp32NeedsTransposeUnlessAligned) {
  // sfa of an M=4097, K=7168 GEMM: [4097, 56].
  const auto sfa = make_tensor(fake(), DType::kFloat32, {4097, 56});
  EXPECT_EQ(plan_transform_sf_into_required_layout(sfa, 4097, 7168, 1, 128), SfTransform::kMnMajorTmaAligned);
  const auto aligned = make_tensor(fake(), DType::kFloat32, {4097, 56}, {1, 4100});
  EXPECT_EQ(plan_transform_sf_into_required_layout(aligned, 4097, 7168, 1, 128), SfTransform::kNone);
  const auto grouped = make_tensor(fake(), DType::kFloat32, {2, 4097, 56});
  EXPECT_EQ(plan_transform_sf_into_required_layout(grouped, 4097, 7168, 1, 128, 2), SfTransform::kMnMajorTmaAligned);
}

TEST(SfTransformPlan, BlockFp32IsCheckedNotTransformed) {
  const auto sfb = make_tensor(fake(), DType::kFloat32, {56, 57});  // N=7168, K=7296
  EXPECT_EQ(plan_transform_sf_into_required_layout(sfb, 7168, 7296, 128, 128), SfTransform::kNone);
  const auto mn_major = make_tensor(fake(), DType::kFloat32, {56, 57}, {1, 56});
  EXPECT_EQ(plan_transform_sf_into_required_layout(mn_major, 7168, 7296, 128, 128), SfTransform::kNone);
  const auto strided = make_tensor(fake(), DType::kFloat32, {56, 57}, {64, 1});
  EXPECT_MSG(error_of([&] { plan_transform_sf_into_required_layout(strided, 7168, 7296, 128, 128); }),
             "transform_sf_into_required_layout: argument 'sf' with recipe (128, 128) must be contiguous");
  const auto sparse_groups = make_tensor(fake(), DType::kFloat32, {4, 56, 57}, {4000, 57, 1});
  EXPECT_MSG(error_of([&] { plan_transform_sf_into_required_layout(sparse_groups, 7168, 7296, 128, 128, 4); }),
             "dense groups");
}

TEST(SfTransformPlan, ShapeRankAndDType) {
  const auto sfa = make_tensor(fake(), DType::kFloat32, {4096, 56});
  EXPECT_MSG(error_of([&] { plan_transform_sf_into_required_layout(sfa, 4096, 7296, 1, 128); }),
             "argument 'sf' must have shape [4096, 57]");
  EXPECT_MSG(error_of([&] { plan_transform_sf_into_required_layout(sfa, 4096, 7168, 1, 128, 2); }),
             "argument 'sf' must have 3 dimensions");
  const auto grouped = make_tensor(fake(), DType::kFloat32, {3, 4096, 56});
  EXPECT_MSG(error_of([&] { plan_transform_sf_into_required_layout(grouped, 4096, 7168, 1, 128, 2); }),
             "must have shape [2, 4096, 56]");
  const auto bf16 = make_tensor(fake(), DType::kBFloat16, {4096, 56});
  EXPECT_MSG(error_of([&] { plan_transform_sf_into_required_layout(bf16, 4096, 7168, 1, 128); }), "float32 or int32");
  const auto host = make_tensor(fake(), DType::kFloat32, {4096, 56}, -1);
  EXPECT_MSG(error_of([&] { plan_transform_sf_into_required_layout(host, 4096, 7168, 1, 128); }), "host memory");
}

TEST(SfTransformPlan, UnknownTransformationsAreUnsupported) {
  const auto packed = make_tensor(fake(), DType::kInt32, {4096, 14});  // UE8M0 (SM100 format)
  EXPECT_MSG(error_of([&] { plan_transform_sf_into_required_layout(packed, 4096, 7168, 1, 128); }, ErrorKind::kUnsupported),
             "unknown SF transformation");
  const auto gran32 = make_tensor(fake(), DType::kFloat32, {4096, 224});
  EXPECT_MSG(error_of([&] { plan_transform_sf_into_required_layout(gran32, 4096, 7168, 1, 32); }, ErrorKind::kUnsupported),
             "unknown SF transformation");
}

// ---- quantisation -------------------------------------------------------------------------------------------

struct QuantArgs {
  TensorView x = make_tensor(fake(), DType::kBFloat16, {256, 7168});
  TensorView x_fp8 = make_tensor(fake2(), DType::kFloat8E4M3, {256, 7168});
  TensorView sf_token = make_tensor(fake3(), DType::kFloat32, {256, 56});
  TensorView sf_block = make_tensor(fake3(), DType::kFloat32, {2, 56});
  TensorView sf_channel = make_tensor(fake3(), DType::kFloat32, {2, 7168});
};

TEST(QuantizeValidation, DType) {
  QuantArgs a;
  a.x.dtype = DType::kFloat16;
  auto msg = error_of([&] { per_token_cast_to_fp8(a.x, a.x_fp8, a.sf_token, false, 128, kStream); });
  EXPECT_MSG(msg, "per_token_cast_to_fp8: argument 'x' must be bfloat16 or float32, got float16");
  QuantArgs b;
  b.x_fp8.dtype = DType::kUInt8;
  EXPECT_MSG(error_of([&] { per_block_cast_to_fp8(b.x, b.x_fp8, b.sf_block, false, 128, kStream); }), "argument 'x_fp8'");
  QuantArgs c;
  c.sf_channel.dtype = DType::kBFloat16;
  EXPECT_MSG(error_of([&] { per_channel_cast_to_fp8(c.x, c.x_fp8, c.sf_channel, false, 128, kStream); }), "argument 'sf'");
}

TEST(QuantizeValidation, Rank) {
  QuantArgs a;
  const auto x3 = make_tensor(fake(), DType::kBFloat16, {2, 128, 7168});
  EXPECT_MSG(error_of([&] { per_token_cast_to_fp8(x3, a.x_fp8, a.sf_token, false, 128, kStream); }),
             "argument 'x' must have 2 dimensions");
}

TEST(QuantizeValidation, Shape) {
  QuantArgs a;
  EXPECT_MSG(error_of([&] { per_token_cast_to_fp8(a.x, a.x_fp8, a.sf_block, false, 128, kStream); }),
             "argument 'sf' must have shape [256, 56]");
  EXPECT_MSG(error_of([&] { per_block_cast_to_fp8(a.x, a.x_fp8, a.sf_token, false, 128, kStream); }),
             "argument 'sf' must have shape [2, 56]");
  EXPECT_MSG(error_of([&] { per_channel_cast_to_fp8(a.x, a.x_fp8, a.sf_token, false, 128, kStream); }),
             "argument 'sf' must have shape [2, 7168]");
  const auto small = make_tensor(fake2(), DType::kFloat8E4M3, {256, 7167});
  EXPECT_MSG(error_of([&] { per_token_cast_to_fp8(a.x, small, a.sf_token, false, 128, kStream); }),
             "argument 'x_fp8' must have shape [256, 7168]");
  // Odd n: sf has ceil(n / 128) columns.
  const auto x_odd = make_tensor(fake(), DType::kFloat32, {3, 4097});
  const auto q_odd = make_tensor(fake2(), DType::kFloat8E4M3, {3, 4097});
  const auto sf_odd = make_tensor(fake3(), DType::kFloat32, {3, 32});
  EXPECT_MSG(error_of([&] { per_token_cast_to_fp8(x_odd, q_odd, sf_odd, false, 128, kStream); }),
             "must have shape [3, 33]");
}

TEST(QuantizeValidation, Granularity) {
  QuantArgs a;
  EXPECT_MSG(error_of([&] { per_token_cast_to_fp8(a.x, a.x_fp8, a.sf_token, false, 96, kStream); }),
             "argument 'gran_k' must be 32, 64 or 128, got 96");
  const auto x = make_tensor(fake(), DType::kBFloat16, {200, 7168});
  const auto q = make_tensor(fake2(), DType::kFloat8E4M3, {200, 7168});
  EXPECT_MSG(error_of([&] { per_channel_cast_to_fp8(x, q, a.sf_channel, false, 128, kStream); }),
             "per_channel_cast_to_fp8: argument 'x' must have a row count divisible by gran_k = 128");
}

TEST(QuantizeValidation, Strides) {
  QuantArgs a;
  const auto x_cols = make_tensor(fake(), DType::kBFloat16, {256, 7168}, {1, 256});
  EXPECT_MSG(error_of([&] { per_token_cast_to_fp8(x_cols, a.x_fp8, a.sf_token, false, 128, kStream); }),
             "argument 'x' must be row-major");
  const auto q_cols = make_tensor(fake2(), DType::kFloat8E4M3, {256, 7168}, {1, 256});
  EXPECT_MSG(error_of([&] { per_token_cast_to_fp8(a.x, q_cols, a.sf_token, false, 128, kStream); }),
             "argument 'x_fp8' must be row-major");
  const auto q_aliased_rows = make_tensor(fake2(), DType::kFloat8E4M3, {256, 7168}, {0, 1});
  EXPECT_MSG(error_of([&] { per_token_cast_to_fp8(a.x, q_aliased_rows, a.sf_token, false, 128, kStream); }),
             "argument 'x_fp8' has overlapping elements");
}

TEST(QuantizeValidation, Alignment) {
  QuantArgs a;
  TensorView x = a.x;
  x.data = static_cast<char*>(x.data) + 1;
  EXPECT_MSG(error_of([&] { per_token_cast_to_fp8(x, a.x_fp8, a.sf_token, false, 128, kStream); }),
             "argument 'x' must have a data pointer aligned to its element size (2 bytes)");
  TensorView sf = a.sf_token;
  sf.data = static_cast<char*>(sf.data) + 2;
  EXPECT_MSG(error_of([&] { per_token_cast_to_fp8(a.x, a.x_fp8, sf, false, 128, kStream); }),
             "argument 'sf' must have a 4-byte aligned data pointer");
}

TEST(QuantizeValidation, HostMemory) {
  QuantArgs a;
  a.x.device = -1;
  EXPECT_MSG(error_of([&] { per_token_cast_to_fp8(a.x, a.x_fp8, a.sf_token, false, 128, kStream); }),
             "argument 'x' is in host memory");
  QuantArgs b;
  b.sf_token.device = -1;
  EXPECT_MSG(error_of([&] { per_token_cast_to_fp8(b.x, b.x_fp8, b.sf_token, false, 128, kStream); }),
             "argument 'sf' is in host memory");
}

TEST(QuantizeValidation, Overlap) {
  QuantArgs a;
  const auto q_on_x = make_tensor(fake(4096), DType::kFloat8E4M3, {256, 7168});
  EXPECT_MSG(error_of([&] { per_token_cast_to_fp8(a.x, q_on_x, a.sf_token, false, 128, kStream); }),
             "argument 'x_fp8' overlaps input 'x'");
  const auto sf_on_x = make_tensor(fake(64), DType::kFloat32, {256, 56});
  EXPECT_MSG(error_of([&] { per_token_cast_to_fp8(a.x, a.x_fp8, sf_on_x, false, 128, kStream); }),
             "argument 'sf' overlaps input 'x'");
  const auto sf_on_q = make_tensor(fake2(), DType::kFloat32, {256, 56});
  EXPECT_MSG(error_of([&] { per_token_cast_to_fp8(a.x, a.x_fp8, sf_on_q, false, 128, kStream); }),
             "argument 'sf' overlaps input 'x_fp8'");
}

TEST(QuantizeValidation, EmptyInputIsANoOp) {
  const auto x = make_tensor(fake(), DType::kBFloat16, {0, 7168});
  const auto q = make_tensor(fake2(), DType::kFloat8E4M3, {0, 7168});
  const auto sf = make_tensor(fake3(), DType::kFloat32, {0, 56});
  EXPECT_NO_THROW(per_token_cast_to_fp8(x, q, sf, false, 128, kStream));
}

}  // namespace
}  // namespace hopgemm
