// The grouped GEMMs through the torch-free C++ API against a float64 reference of the dequantised inputs: random FP8
// codes and scales made on the host, NaN-poisoned outputs, and every row of D either checked against the reference
// or checked untouched (where the documented semantics leave it alone).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gpu/gpu_test_util.hpp"
#include "hopgemm/grouped_gemm.hpp"

namespace hopgemm {
namespace {

using testing::DeviceBuffer;

constexpr uint16_t kBf16Nan = 0x7fc0;

double e4m3_value(uint8_t code) {
  const int e = (code >> 3) & 15, m = code & 7;
  const double v = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7);
  return code & 0x80 ? -v : v;
}
float bf16_value(uint16_t bits) {
  const uint32_t word = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &word, 4);
  return f;
}

struct Rng {
  std::mt19937 gen{20261126};
  // FP8 codes of magnitudes 2^-2 .. 2^2 (finite, both signs).
  uint8_t code() {
    const int e = std::uniform_int_distribution<int>(5, 9)(gen), m = std::uniform_int_distribution<int>(0, 7)(gen);
    return uint8_t((std::uniform_int_distribution<int>(0, 1)(gen) << 7) | (e << 3) | m);
  }
  float scale() { return std::uniform_real_distribution<float>(0.25f, 2.0f)(gen); }
  std::vector<uint8_t> codes(size_t n) {
    std::vector<uint8_t> v(n);
    for (auto& x : v) x = code();
    return v;
  }
  std::vector<float> scales(size_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = scale();
    return v;
  }
};

template <class T>
struct Device {
  std::vector<T> host;
  DeviceBuffer buffer;
  explicit Device(std::vector<T> v) : host(std::move(v)), buffer(std::max<size_t>(host.size(), 1) * sizeof(T)) {
    cudaMemcpy(buffer.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  }
  std::vector<T> read() const {
    std::vector<T> out(host.size());
    cudaMemcpy(out.data(), buffer.get(), host.size() * sizeof(T), cudaMemcpyDeviceToHost);
    return out;
  }
  void* get() const { return buffer.get(); }
};

// |got - want| within BF16 rounding of the value plus accumulation noise relative to the row's scale.
void expect_close(double got, double want, double row_scale, const char* what, int64_t row, int64_t col) {
  const double tol = 1.0 / 128 * std::fabs(want) + 1e-3 * row_scale;
  EXPECT_LE(std::fabs(got - want), tol) << what << " row " << row << " col " << col << ": got " << got << " want " << want;
}

// The M-grouped problem of the tests: A [rows, K] (row-major codes, row-major sfa), B [G, N, K], block scales.
struct MGroupedInputs {
  int64_t rows, n, k, groups, sf_k;
  Device<uint8_t> a, b;
  Device<float> sfa, sfb;
  MGroupedInputs(Rng& rng, int64_t rows_, int64_t n_, int64_t k_, int64_t groups_)
      : rows(rows_), n(n_), k(k_), groups(groups_), sf_k((k_ + 127) / 128), a(rng.codes(rows_ * k_)),
        b(rng.codes(groups_ * n_ * k_)), sfa(rng.scales(rows_ * sf_k)), sfb(rng.scales(groups_ * ((n_ + 127) / 128) * sf_k)) {}
  // The reference of row r of A against group g's B, column c.
  double reference(int64_t r, int64_t g, int64_t c) const {
    double sum = 0;
    for (int64_t kb = 0; kb < sf_k; ++kb) {
      double block = 0;
      for (int64_t kk = kb * 128; kk < std::min(k, kb * 128 + 128); ++kk)
        block += e4m3_value(a.host[r * k + kk]) * e4m3_value(b.host[(g * n + c) * k + kk]);
      sum += block * sfa.host[r * sf_k + kb] * sfb.host[(g * ((n + 127) / 128) + c / 128) * sf_k + kb];
    }
    return sum;
  }
  TensorView a_view(std::initializer_list<int64_t> shape) const { return make_tensor(a.get(), DType::kFloat8E4M3, shape); }
  TensorView sfa_view(std::initializer_list<int64_t> shape) const { return make_tensor(sfa.get(), DType::kFloat32, shape); }
  TensorView b_view() const { return make_tensor(b.get(), DType::kFloat8E4M3, {groups, n, k}); }
  TensorView sfb_view() const {
    return make_tensor(sfb.get(), DType::kFloat32, {groups, (n + 127) / 128, sf_k});
  }
};

constexpr int kUntouched = -1, kAnything = -2, kZeroed = -3;

// Checks D rows: row r must hold group_of[r]'s result, stay NaN where group_of[r] is kUntouched, hold +0 where it is
// kZeroed, and may hold anything where it is kAnything.
void check_rows(const MGroupedInputs& in, const std::vector<uint16_t>& d, const std::vector<int>& group_of) {
  for (int64_t r = 0; r < in.rows; ++r) {
    const int g = group_of[r];
    if (g == kAnything) continue;
    if (g == kZeroed) {
      for (int64_t c = 0; c < in.n; ++c) ASSERT_EQ(d[r * in.n + c], 0) << "row " << r << " must be zeroed";
      continue;
    }
    if (g == kUntouched) {
      for (int64_t c = 0; c < in.n; ++c) ASSERT_EQ(d[r * in.n + c], kBf16Nan) << "row " << r << " must stay untouched";
      continue;
    }
    std::vector<double> want(in.n);
    double scale = 0;
    for (int64_t c = 0; c < in.n; ++c) scale = std::max(scale, std::fabs(want[c] = in.reference(r, g, c)));
    for (int64_t c = 0; c < in.n; ++c) expect_close(bf16_value(d[r * in.n + c]), want[c], scale, "d", r, c);
    if (::testing::Test::HasFailure()) return;
  }
}

// Whole aligned blocks of -1 ids: zeroed (DeepGEMM's behaviour, the default) or, with zero_padding_blocks = false,
// left untouched; -1 rows inside a group's block receive A_pad @ B[g]^T or, where a tile of fewer rows than the
// alignment holds only them, are left untouched (either way: anything).
void run_group_ids_padding_blocks(bool zero_padding_blocks) {
  Rng rng;
  // Blocks of 128 rows: [padding][g0: 129 rows -> 2 blocks][g2: 1 row][padding][g3: 200 rows -> 2 blocks]; g1 empty.
  const std::vector<std::pair<int, int>> segments = {{-1, 128}, {0, 129}, {2, 1}, {-1, 128}, {3, 200}};
  std::vector<int> layout, group_of;
  for (auto [g, count] : segments) {
    const int aligned = (count + 127) / 128 * 128;
    for (int i = 0; i < aligned; ++i) {
      layout.push_back(i < count ? g : -1);
      group_of.push_back(g < 0 ? (zero_padding_blocks ? kZeroed : kUntouched) : i < count ? g : kAnything);
    }
  }
  const int64_t rows = int64_t(layout.size()), n = 384, k = 640, groups = 4;
  MGroupedInputs in(rng, rows, n, k, groups);
  Device<int32_t> ids(std::vector<int32_t>(layout.begin(), layout.end()));
  Device<uint16_t> d(std::vector<uint16_t>(rows * n, kBf16Nan));
  MGroupedContiguousOptions options;
  options.zero_padding_blocks = zero_padding_blocks;
  m_grouped_fp8_gemm_nt_contiguous(in.a_view({rows, k}), in.sfa_view({rows, in.sf_k}), in.b_view(), in.sfb_view(),
                                   make_tensor(d.get(), DType::kBFloat16, {rows, n}),
                                   make_tensor(ids.get(), DType::kInt32, {rows}), options, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  check_rows(in, d.read(), group_of);
}

TEST(GroupedGemmApi, ContiguousGroupIdsZeroPaddingBlocks) {
  HOPGEMM_SKIP_WITHOUT_GPU();
  run_group_ids_padding_blocks(true);
}

TEST(GroupedGemmApi, ContiguousGroupIdsKeepPaddingBlocksUntouched) {
  HOPGEMM_SKIP_WITHOUT_GPU();
  run_group_ids_padding_blocks(false);
}

// Row ranges from cumulative ends: packed (no padding) and psum (aligned starts).
void run_ranges(ContiguousLayout layout_kind, const std::vector<int>& sizes) {
  Rng rng;
  const int align = layout_kind == ContiguousLayout::kPsum ? 128 : 1;
  std::vector<int32_t> ends;
  std::vector<int> group_of;
  int end = 0;
  for (size_t g = 0; g < sizes.size(); ++g) {
    const int begin = g == 0 ? 0 : (end + align - 1) / align * align;
    group_of.resize(begin, -1);  // alignment padding stays untouched
    end = begin + sizes[g];
    group_of.resize(end, int(g));
    ends.push_back(end);
  }
  group_of.resize((end + 127) / 128 * 128 + 64, -1);  // rows past the last group stay untouched too
  const int64_t rows = int64_t(group_of.size()), n = 256, k = 384, groups = int64_t(sizes.size());
  MGroupedInputs in(rng, rows, n, k, groups);
  Device<int32_t> layout(ends);
  Device<uint16_t> d(std::vector<uint16_t>(rows * n, kBf16Nan));
  MGroupedContiguousOptions options;
  options.layout = layout_kind;
  m_grouped_fp8_gemm_nt_contiguous(in.a_view({rows, k}), in.sfa_view({rows, in.sf_k}), in.b_view(), in.sfb_view(),
                                   make_tensor(d.get(), DType::kBFloat16, {rows, n}),
                                   make_tensor(layout.get(), DType::kInt32, {groups}), options, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  check_rows(in, d.read(), group_of);
}

TEST(GroupedGemmApi, ContiguousPackedWritesEachRowOnce) {
  HOPGEMM_SKIP_WITHOUT_GPU();
  run_ranges(ContiguousLayout::kPacked, {1, 130, 0, 77, 255, 3});
}

TEST(GroupedGemmApi, ContiguousPsumLeavesPaddingUntouched) {
  HOPGEMM_SKIP_WITHOUT_GPU();
  run_ranges(ContiguousLayout::kPsum, {1, 130, 0, 77, 255, 3});
}

TEST(GroupedGemmApi, MaskedWritesExactlyTheMaskedRows) {
  HOPGEMM_SKIP_WITHOUT_GPU();
  Rng rng;
  const int64_t groups = 4, m_max = 200, n = 256, k = 512;
  const std::vector<int32_t> masked = {0, 5, 200, 999};  // 999 > M_max: clamped to M_max
  MGroupedInputs in(rng, groups * m_max, n, k, groups);
  Device<int32_t> masked_m(masked);
  Device<uint16_t> d(std::vector<uint16_t>(groups * m_max * n, kBf16Nan));
  m_grouped_fp8_gemm_nt_masked(in.a_view({groups, m_max, k}), in.sfa_view({groups, m_max, in.sf_k}), in.b_view(),
                               in.sfb_view(), make_tensor(d.get(), DType::kBFloat16, {groups, m_max, n}),
                               make_tensor(masked_m.get(), DType::kInt32, {groups}), 64, {}, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<int> group_of(groups * m_max, -1);
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t r = 0; r < std::min<int64_t>(masked[g], m_max); ++r) group_of[g * m_max + r] = int(g);
  check_rows(in, d.read(), group_of);
}

TEST(GroupedGemmApi, KGroupedAddsEachGroupIntoC) {
  HOPGEMM_SKIP_WITHOUT_GPU();
  Rng rng;
  const std::vector<int64_t> ks = {256, 0, 128, 384, 0, 128};
  const int64_t groups = int64_t(ks.size()), m = 192, n = 264;
  int64_t sum_k = 0;
  for (int64_t x : ks) sum_k += x;
  const int64_t sf_k = sum_k / 128, m4 = (m + 3) / 4 * 4, n4 = (n + 3) / 4 * 4;
  Device<uint8_t> a(rng.codes(sum_k * m)), b(rng.codes(sum_k * n));
  Device<float> sfa(rng.scales(m4 * sf_k)), sfb(rng.scales(n4 * sf_k));  // MN-major: (r, j) at j * align(rows, 4) + r
  std::vector<float> c(groups * m * n);
  for (auto& x : c) x = rng.scale() - 1.0f;
  Device<float> d(c);
  Device<int32_t> ks_tensor(std::vector<int32_t>(ks.begin(), ks.end()));
  k_grouped_fp8_gemm_nt_contiguous(
      make_tensor(a.get(), DType::kFloat8E4M3, {sum_k * m}), make_tensor(sfa.get(), DType::kFloat32, {m, sf_k}, {1, m4}),
      make_tensor(b.get(), DType::kFloat8E4M3, {sum_k * n}), make_tensor(sfb.get(), DType::kFloat32, {n, sf_k}, {1, n4}),
      make_tensor(d.get(), DType::kFloat32, {groups, m, n}), ks, make_tensor(ks_tensor.get(), DType::kInt32, {groups}),
      nullptr, {}, nullptr);
  // c = nullptr: D = A B^T; run again with c = d to add a second time (D = 2 A B^T).
  const TensorView dv = make_tensor(d.get(), DType::kFloat32, {groups, m, n});
  k_grouped_fp8_gemm_nt_contiguous(
      make_tensor(a.get(), DType::kFloat8E4M3, {sum_k * m}), make_tensor(sfa.get(), DType::kFloat32, {m, sf_k}, {1, m4}),
      make_tensor(b.get(), DType::kFloat8E4M3, {sum_k * n}), make_tensor(sfb.get(), DType::kFloat32, {n, sf_k}, {1, n4}),
      dv, ks, make_tensor(ks_tensor.get(), DType::kInt32, {groups}), &dv, {}, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<float> got = d.read();
  int64_t off = 0;
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t kg = ks[g];
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t col = 0; col < n; ++col) {
        // hopgemm.testing's bound, sum over K blocks of ||A_blk|| ||B_blk|| (dequantised), which each block's rounding
        // in the tensor cores is proportional to, at 2^-8 of it rather than 2^-10: these codes are all of magnitude
        // 1/4..4 (no small values), so the tensor cores' truncating FP8 accumulation runs on larger partial sums than
        // with quantised Gaussian inputs (measured up to 2^-10.1 here). A scale or tile taken from the wrong place is
        // off by a large fraction of the bound.
        double sum = 0, scale = 0;
        for (int64_t kb = 0; kb < kg / 128; ++kb) {
          double block = 0, a2 = 0, b2 = 0;
          for (int64_t kk = kb * 128; kk < kb * 128 + 128; ++kk) {
            const double x = e4m3_value(a.host[off * m + r * kg + kk]), y = e4m3_value(b.host[off * n + col * kg + kk]);
            block += x * y;
            a2 += x * x;
            b2 += y * y;
          }
          const int64_t j = off / 128 + kb;
          const double s_ab = double(sfa.host[j * m4 + r]) * sfb.host[j * n4 + col];
          sum += block * s_ab;
          scale += std::sqrt(a2 * b2) * s_ab;
        }
        const double want = 2 * sum, tol = std::ldexp(2 * scale, -8) + 1e-6 * std::fabs(want);
        ASSERT_LE(std::fabs(got[(g * m + r) * n + col] - want), tol) << "group " << g << " row " << r << " col " << col;
      }
    }
    off += kg;
  }
}

}  // namespace
}  // namespace hopgemm
