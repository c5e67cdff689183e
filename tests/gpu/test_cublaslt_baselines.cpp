// The cuBLASLt baselines of `hopgemm bench` (src/bench/cublaslt_baselines.*) against a float64 host reference of
// the dequantised inputs, and the timer on real calls. Inputs are quantised on the host exactly as DeepGEMM does
// (sf = amax / 448 per 1x128 row group or 128x128 block, x / sf -> E4M3), so the reference sees the same numbers
// as cuBLASLt and calc_diff measures only accumulation and BF16 output rounding.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/cublaslt_baselines.hpp"
#include "bench/timer.hpp"
#include "gpu/gpu_test_util.hpp"
#include "hopgemm/error.hpp"
#include "hopgemm/runtime.hpp"
#include "runtime/cuda_check.hpp"

namespace hopgemm::bench {
namespace {

constexpr float kE4m3Max = 448.0f;

#define SKIP_WITHOUT_SM90()                                                                              \
  do {                                                                                                   \
    if (!gpu_available()) HOPGEMM_SKIP_OR_FAIL("no CUDA GPU/driver on this machine");                    \
    if (device_info().arch_major != 9) HOPGEMM_SKIP_OR_FAIL("cuBLASLt FP8 block scaling needs an SM90 GPU"); \
  } while (0)

// ---- host number formats --------------------------------------------------------------------------------------

// OCP E4M3 ("fn"): bias 7, no infinities, S.1111.111 is NaN, largest finite 448, subnormals m * 2^-9.
double e4m3_to_double(uint8_t bits) {
  const int sign = bits >> 7;
  const int exponent = (bits >> 3) & 0xf;
  const int mantissa = bits & 0x7;
  if (exponent == 0xf && mantissa == 0x7) return std::nan("");
  const double magnitude = exponent == 0 ? std::ldexp(mantissa, -9) : std::ldexp(8 + mantissa, exponent - 10);
  return sign ? -magnitude : magnitude;
}

// Round to nearest, ties to even; saturates to +-448 (as the CUDA __NV_SATFINITE conversion does).
uint8_t double_to_e4m3(double x) {
  if (std::isnan(x)) return 0x7f;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const double a = std::fabs(x);
  if (a >= kE4m3Max) return sign | 0x7e;
  int e2 = 0;
  std::frexp(a, &e2);                              // a = f * 2^e2, f in [0.5, 1)
  const int exponent = std::max(e2 - 1, -6);       // unbiased exponent of the 1.xxx form; -6 for subnormals
  const double ulp = std::ldexp(1.0, exponent - 3);  // 3 mantissa bits
  const double q = std::nearbyint(a / ulp);        // default rounding mode: ties to even
  const double rounded = q * ulp;
  if (rounded >= kE4m3Max) return sign | 0x7e;
  if (rounded < std::ldexp(1.0, -6)) return sign | static_cast<uint8_t>(q);  // subnormal: q in 0..8
  int re = 0;
  const double f = std::frexp(rounded, &re);  // rounded = f * 2^re
  const int biased = re - 1 + 7;
  const int mantissa = static_cast<int>(std::lround((2.0 * f - 1.0) * 8.0));
  return sign | static_cast<uint8_t>(biased << 3) | static_cast<uint8_t>(mantissa);
}

uint16_t float_to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

float bf16_to_float(uint16_t v) {
  const uint32_t bits = uint32_t{v} << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// ---- quantisation (DeepGEMM's per_token_cast_to_fp8 / per_block_cast_to_fp8, on the host) ---------------------

struct Fp8Matrix {
  std::vector<uint8_t> q;       // [rows, cols] E4M3
  std::vector<float> sf;        // scales, row-major [rows or row blocks, col blocks]; one value for per-tensor
  std::vector<double> dequant;  // [rows, cols] q * sf, what the GEMM multiplies
};

// One scale per (row block of `block_rows` rows) x (column block of `block_cols` columns); block_rows = rows and
// block_cols = cols gives per-tensor scaling.
Fp8Matrix quantize(const std::vector<float>& x, int64_t rows, int64_t cols, int64_t block_rows, int64_t block_cols) {
  const int64_t rb = (rows + block_rows - 1) / block_rows;
  const int64_t cb = (cols + block_cols - 1) / block_cols;
  Fp8Matrix out;
  out.q.resize(x.size());
  out.dequant.resize(x.size());
  out.sf.resize(static_cast<size_t>(rb * cb));
  for (int64_t bi = 0; bi < rb; ++bi) {
    for (int64_t bj = 0; bj < cb; ++bj) {
      const int64_t r0 = bi * block_rows, r1 = std::min(rows, r0 + block_rows);
      const int64_t c0 = bj * block_cols, c1 = std::min(cols, c0 + block_cols);
      float amax = 1e-4f;
      for (int64_t r = r0; r < r1; ++r) {
        for (int64_t c = c0; c < c1; ++c) amax = std::max(amax, std::fabs(x[r * cols + c]));
      }
      const float sf = amax / kE4m3Max;
      out.sf[bi * cb + bj] = sf;
      for (int64_t r = r0; r < r1; ++r) {
        for (int64_t c = c0; c < c1; ++c) {
          const uint8_t q = double_to_e4m3(static_cast<double>(x[r * cols + c] / sf));
          out.q[r * cols + c] = q;
          out.dequant[r * cols + c] = e4m3_to_double(q) * static_cast<double>(sf);
        }
      }
    }
  }
  return out;
}

// Normal values; with `varied`, every (row, 128-column) group gets its own power-of-two magnitude in 2^-4..2^4 and
// every 128x128 block another one, so scales that land on the wrong block give large errors, not subtle ones.
std::vector<float> random_matrix(int64_t rows, int64_t cols, uint32_t seed, bool varied) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-4, 4);
  const int64_t cb = (cols + 127) / 128;
  std::vector<float> group_scale(static_cast<size_t>(rows * cb), 1.0f);
  std::vector<float> block_scale(static_cast<size_t>(((rows + 127) / 128) * cb), 1.0f);
  if (varied) {
    for (auto& s : group_scale) s = std::ldexp(1.0f, exponent(rng));
    for (auto& s : block_scale) s = std::ldexp(1.0f, exponent(rng));
  }
  std::vector<float> x(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      x[r * cols + c] = normal(rng) * group_scale[r * cb + c / 128] * block_scale[(r / 128) * cb + c / 128];
    }
  }
  return x;
}

// D[m, n] = sum_k a[m, k] b[n, k] in float64, rows split over threads.
std::vector<double> reference_nt(const std::vector<double>& a, const std::vector<double>& b, int64_t m, int64_t n,
                                 int64_t k) {
  std::vector<double> d(static_cast<size_t>(m * n));
  const int threads = static_cast<int>(std::max(1u, std::min(16u, std::thread::hardware_concurrency())));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int64_t i = t; i < m; i += threads) {
        for (int64_t j = 0; j < n; ++j) {
          const double* ar = &a[i * k];
          const double* br = &b[j * k];
          double acc = 0;
          for (int64_t kk = 0; kk < k; ++kk) acc += ar[kk] * br[kk];
          d[i * n + j] = acc;
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  return d;
}

// DeepGEMM's calc_diff: 1 - 2 sum(xy) / sum(x^2 + y^2).
double calc_diff(const std::vector<double>& x, const std::vector<double>& y) {
  double xy = 0, xx_yy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    xy += x[i] * y[i];
    xx_yy += x[i] * x[i] + y[i] * y[i];
  }
  return xx_yy == 0 ? 0.0 : 1.0 - 2.0 * xy / xx_yy;
}

template <typename T>
DeviceBuffer upload(const std::vector<T>& host) {
  DeviceBuffer buffer(host.size() * sizeof(T));
  HOPGEMM_CUDA_CHECK(cudaMemcpy(buffer.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return buffer;
}

// A BF16 [m, n] device output filled with NaN (0xffff) so elements that are never written fail the comparison.
DeviceBuffer poisoned_bf16(int64_t m, int64_t n) {
  DeviceBuffer d(static_cast<size_t>(m * n) * 2);
  HOPGEMM_CUDA_CHECK(cudaMemset(d.get(), 0xff, d.bytes()));
  return d;
}

std::vector<double> download_bf16(const DeviceBuffer& d) {
  std::vector<uint16_t> host(d.bytes() / 2);
  HOPGEMM_CUDA_CHECK(cudaDeviceSynchronize());
  HOPGEMM_CUDA_CHECK(cudaMemcpy(host.data(), d.get(), d.bytes(), cudaMemcpyDeviceToHost));
  std::vector<double> out(host.size());
  for (size_t i = 0; i < host.size(); ++i) out[i] = bf16_to_float(host[i]);
  return out;
}

size_t count_nonfinite(const std::vector<double>& v) {
  return static_cast<size_t>(std::count_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }));
}

struct Shape {
  int64_t m, n, k;
};

std::string shape_name(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

// A baseline that reports a shape unsupported says which shape and leaves its output untouched (still NaN): "correct
// or unsupported" then asserts something on either path.
void expect_clean_refusal(const Error& e, const Shape& s, const DeviceBuffer& d) {
  const std::string shape = "M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k);
  EXPECT_NE(std::string(e.what()).find(shape), std::string::npos) << e.what();
  EXPECT_EQ(count_nonfinite(download_bf16(d)), static_cast<size_t>(s.m * s.n)) << "an unsupported call wrote to d";
}

// Runs the blockwise baseline on host-quantised data; nullopt where cuBLASLt reports the shape unsupported.
// `mn_major_pad` > 0 hands the converter DeepGEMM's MN-major sfa with that many padding columns (TMA-aligned
// layout) instead of a row-major one.
std::optional<double> blockwise_diff(CublasLtBaselines& lt, const Shape& s, uint32_t seed, int64_t mn_major_pad = 0) {
  const int64_t kb = (s.k + 127) / 128;
  const Fp8Matrix a = quantize(random_matrix(s.m, s.k, seed, true), s.m, s.k, 1, 128);
  const Fp8Matrix b = quantize(random_matrix(s.n, s.k, seed + 1, true), s.n, s.k, 128, 128);
  DeviceBuffer a_dev = upload(a.q), b_dev = upload(b.q), sfb_dev = upload(b.sf);
  DeviceBuffer d_dev = poisoned_bf16(s.m, s.n);
  DeviceBuffer sfa_dev;
  TensorView sfa;
  if (mn_major_pad > 0) {
    const int64_t ld = s.m + mn_major_pad;
    std::vector<float> mn_major(static_cast<size_t>(kb * ld), -1.0f);
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < kb; ++j) mn_major[j * ld + i] = a.sf[i * kb + j];
    }
    sfa_dev = upload(mn_major);
    sfa = make_tensor(sfa_dev.get(), DType::kFloat32, {s.m, kb}, {1, ld});
  } else {
    sfa_dev = upload(a.sf);
    sfa = make_tensor(sfa_dev.get(), DType::kFloat32, {s.m, kb});
  }
  const TensorView sfb = make_tensor(sfb_dev.get(), DType::kFloat32, {(s.n + 127) / 128, kb});
  const CublasLtBlockScales scales = to_cublaslt_block_scales(sfa, sfb);
  const TensorView av = make_tensor(a_dev.get(), DType::kFloat8E4M3, {s.m, s.k});
  const TensorView bv = make_tensor(b_dev.get(), DType::kFloat8E4M3, {s.n, s.k});
  const TensorView dv = make_tensor(d_dev.get(), DType::kBFloat16, {s.m, s.n});
  try {
    lt.fp8_blockwise(av, scales.sfa, bv, scales.sfb, dv, nullptr);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kUnsupported) throw;
    std::printf("  fp8_blockwise %s: unsupported (%s)\n", shape_name(s).c_str(), e.what());
    expect_clean_refusal(e, s, d_dev);
    return std::nullopt;
  }
  const std::vector<double> d = download_bf16(d_dev);
  EXPECT_EQ(count_nonfinite(d), 0u) << shape_name(s);
  const double diff = calc_diff(d, reference_nt(a.dequant, b.dequant, s.m, s.n, s.k));
  std::printf("  fp8_blockwise %s%s: calc_diff %.3e\n", shape_name(s).c_str(),
              mn_major_pad > 0 ? " (MN-major padded sfa)" : "", diff);
  return diff;
}

const Shape kCheckShapes[] = {{256, 512, 768}, {128, 2112, 7168}};

TEST(CublasltBaselines, HostE4m3ConversionIsExactOnEveryCode) {
  for (int code = 0; code < 256; ++code) {
    if ((code & 0x7f) == 0x7f) continue;  // NaN
    const double v = e4m3_to_double(static_cast<uint8_t>(code));
    const uint8_t back = double_to_e4m3(v);
    if (v == 0.0) {
      EXPECT_EQ(back & 0x7f, 0) << code;
    } else {
      EXPECT_EQ(back, code) << code;
    }
  }
  EXPECT_EQ(e4m3_to_double(0x7e), 448.0);
  EXPECT_EQ(e4m3_to_double(0x01), std::ldexp(1.0, -9));
  EXPECT_EQ(double_to_e4m3(1000.0), 0x7e);                  // saturates
  EXPECT_EQ(double_to_e4m3(-1000.0), 0xfe);
  EXPECT_EQ(double_to_e4m3(1.0625), 0x38);                  // tie between 1.0 and 1.125: to even (1.0)
  EXPECT_EQ(double_to_e4m3(1.1875), 0x3a);                  // tie between 1.125 and 1.25: to even (1.25)
  EXPECT_EQ(double_to_e4m3(std::ldexp(1.5, -10)), 0x01);    // 0.75 ulp of the subnormal range rounds up
  EXPECT_EQ(double_to_e4m3(std::ldexp(0.5, -9)), 0x00);     // half the smallest subnormal: tie to even (0)
  EXPECT_EQ(double_to_e4m3(std::ldexp(15.5, -10)), 0x08);   // rounds up into the smallest normal 2^-6
}

TEST(CublasltBaselines, Fp8BlockwiseMatchesFloat64Reference) {
  SKIP_WITHOUT_SM90();
  CublasLtBaselines lt;
  uint32_t seed = 11;
  for (const Shape& s : kCheckShapes) {
    const std::optional<double> diff = blockwise_diff(lt, s, seed += 2);
    ASSERT_TRUE(diff.has_value()) << shape_name(s) << " must be supported";
    EXPECT_LT(*diff, 1e-3) << shape_name(s);
  }
  // DeepGEMM's TMA-aligned MN-major sfa goes through the same converter.
  const std::optional<double> padded = blockwise_diff(lt, {256, 512, 768}, 97, 4);
  ASSERT_TRUE(padded.has_value());
  EXPECT_LT(*padded, 1e-3);
}

TEST(CublasltBaselines, Fp8BlockwiseOddMIsCorrectOrUnsupported) {
  SKIP_WITHOUT_SM90();
  CublasLtBaselines lt;
  for (const Shape& s : {Shape{1, 2112, 7168}, Shape{33, 512, 768}, Shape{4, 512, 768}}) {
    const std::optional<double> diff = blockwise_diff(lt, s, 31);
    if (diff) {
      EXPECT_LT(*diff, 1e-3) << shape_name(s);
    }
  }
}

TEST(CublasltBaselines, Fp8BlockwiseRejectsRowMajorScales) {
  SKIP_WITHOUT_SM90();
  CublasLtBaselines lt;
  const Shape s{256, 512, 768};
  DeviceBuffer a(s.m * s.k), b(s.n * s.k), d(s.m * s.n * 2), sfa(s.m * 6 * 4), sfb(4 * 8 * 4);
  const TensorView av = make_tensor(a.get(), DType::kFloat8E4M3, {s.m, s.k});
  const TensorView bv = make_tensor(b.get(), DType::kFloat8E4M3, {s.n, s.k});
  const TensorView dv = make_tensor(d.get(), DType::kBFloat16, {s.m, s.n});
  const TensorView sfa_row_major = make_tensor(sfa.get(), DType::kFloat32, {s.m, 6});
  const TensorView sfb_ok = make_tensor(sfb.get(), DType::kFloat32, {4, 6}, {8, 1});
  try {
    lt.fp8_blockwise(av, sfa_row_major, bv, sfb_ok, dv, nullptr);
    FAIL() << "row-major sfa must be rejected";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("sfa"), std::string::npos) << e.what();
  }
}

// Runs the per-tensor baseline; both scales live in one buffer, scale_b `scale_b_offset` floats after scale_a
// (4: 16-byte aligned, 1: only 4-byte aligned). nullopt where cuBLASLt reports the shape unsupported; other
// errors propagate.
std::optional<double> per_tensor_diff(CublasLtBaselines& lt, const Shape& s, uint32_t seed, int scale_b_offset = 4) {
  const Fp8Matrix a = quantize(random_matrix(s.m, s.k, seed, false), s.m, s.k, s.m, s.k);
  const Fp8Matrix b = quantize(random_matrix(s.n, s.k, seed + 1, false), s.n, s.k, s.n, s.k);
  std::vector<float> host_scales(8, 0.0f);
  host_scales[0] = a.sf[0];
  host_scales[scale_b_offset] = b.sf[0];
  DeviceBuffer a_dev = upload(a.q), b_dev = upload(b.q), scales = upload(host_scales);
  DeviceBuffer d_dev = poisoned_bf16(s.m, s.n);
  try {
    lt.fp8_per_tensor(make_tensor(a_dev.get(), DType::kFloat8E4M3, {s.m, s.k}),
                      make_tensor(b_dev.get(), DType::kFloat8E4M3, {s.n, s.k}),
                      make_tensor(d_dev.get(), DType::kBFloat16, {s.m, s.n}), scales.as<float>(),
                      scales.as<float>() + scale_b_offset, nullptr);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kUnsupported) throw;
    std::printf("  fp8_per_tensor %s (scale_b at +%d floats): unsupported (%s)\n", shape_name(s).c_str(),
                scale_b_offset, e.what());
    expect_clean_refusal(e, s, d_dev);
    return std::nullopt;
  }
  const std::vector<double> d = download_bf16(d_dev);
  EXPECT_EQ(count_nonfinite(d), 0u) << shape_name(s);
  const double diff = calc_diff(d, reference_nt(a.dequant, b.dequant, s.m, s.n, s.k));
  std::printf("  fp8_per_tensor %s (scale_b at +%d floats): calc_diff %.3e\n", shape_name(s).c_str(),
              scale_b_offset, diff);
  return diff;
}

TEST(CublasltBaselines, Fp8PerTensorMatchesFloat64Reference) {
  SKIP_WITHOUT_SM90();
  CublasLtBaselines lt;
  uint32_t seed = 41;
  for (const Shape& s : kCheckShapes) {
    const std::optional<double> diff = per_tensor_diff(lt, s, seed += 2);
    ASSERT_TRUE(diff.has_value()) << shape_name(s) << " must be supported";
    EXPECT_LT(*diff, 1e-3) << shape_name(s);
  }
}

// Decode shapes: correct or reported unsupported, never a crash (measured: M = 1 and M = 4 run and are correct).
TEST(CublasltBaselines, Fp8PerTensorSmallMIsCorrectOrUnsupported) {
  SKIP_WITHOUT_SM90();
  CublasLtBaselines lt;
  for (const Shape& s : {Shape{1, 2112, 7168}, Shape{4, 512, 768}}) {
    const std::optional<double> diff = per_tensor_diff(lt, s, 53);
    if (diff) {
      EXPECT_LT(*diff, 1e-3) << shape_name(s);
    }
  }
}

// cublasLtMatmul answers NOT_SUPPORTED for 4-byte-aligned scale pointers (seen on the H100 for M = 1 and 128):
// the baseline rejects them up front with a message saying what to pass instead.
TEST(CublasltBaselines, Fp8PerTensorRejectsMisalignedScales) {
  SKIP_WITHOUT_SM90();
  CublasLtBaselines lt;
  try {
    per_tensor_diff(lt, {128, 2112, 7168}, 59, 1);
    FAIL() << "4-byte-aligned scale_b must be rejected";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("16-byte aligned"), std::string::npos) << e.what();
  }
}

TEST(CublasltBaselines, Bf16MatchesFloat64Reference) {
  SKIP_WITHOUT_SM90();
  CublasLtBaselines lt;
  uint32_t seed = 71;
  for (const Shape& s : kCheckShapes) {
    std::vector<uint16_t> a16(static_cast<size_t>(s.m * s.k)), b16(static_cast<size_t>(s.n * s.k));
    std::vector<double> a(a16.size()), b(b16.size());
    const std::vector<float> af = random_matrix(s.m, s.k, seed += 2, false);
    const std::vector<float> bf = random_matrix(s.n, s.k, seed + 1, false);
    for (size_t i = 0; i < a16.size(); ++i) a[i] = bf16_to_float(a16[i] = float_to_bf16(af[i]));
    for (size_t i = 0; i < b16.size(); ++i) b[i] = bf16_to_float(b16[i] = float_to_bf16(bf[i]));
    DeviceBuffer a_dev = upload(a16), b_dev = upload(b16);
    DeviceBuffer d_dev = poisoned_bf16(s.m, s.n);
    lt.bf16(make_tensor(a_dev.get(), DType::kBFloat16, {s.m, s.k}), make_tensor(b_dev.get(), DType::kBFloat16, {s.n, s.k}),
            make_tensor(d_dev.get(), DType::kBFloat16, {s.m, s.n}), nullptr);
    const std::vector<double> d = download_bf16(d_dev);
    EXPECT_EQ(count_nonfinite(d), 0u);
    const double diff = calc_diff(d, reference_nt(a, b, s.m, s.n, s.k));
    std::printf("  bf16 %s: calc_diff %.3e\n", shape_name(s).c_str(), diff);
    EXPECT_LT(diff, 1e-5) << shape_name(s);
  }
}

// Prints the baselines' times on anchor shapes (reference/anchors_h100.md has torch-profiler numbers for the same
// shapes) and checks they are physically plausible: positive, under the FP8 dense peak, repeatable.
TEST(CublasltBaselines, PrintsTimesOnAnchorShapes) {
  SKIP_WITHOUT_SM90();
  std::printf("  device copy bandwidth: %.0f GB/s (read + write)\n", copy_bandwidth_gbps());
  CublasLtBaselines lt;
  cudaStream_t stream = nullptr;
  HOPGEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  // Timing inputs: codes of quantised normal values (realistic bit patterns, hence realistic power), scales 1.
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<uint8_t> fp8_table(4096);
  std::vector<uint16_t> bf16_table(4096);
  for (size_t i = 0; i < fp8_table.size(); ++i) {
    const float v = normal(rng);
    fp8_table[i] = double_to_e4m3(v * 100.0);
    bf16_table[i] = float_to_bf16(v);
  }
  const Shape shapes[] = {{1, 2112, 7168}, {128, 2112, 7168}, {128, 7168, 16384}, {4096, 7168, 16384}};
  int64_t max_mk = 0, max_nk = 0, max_mn = 0;
  for (const Shape& s : shapes) {
    max_mk = std::max(max_mk, s.m * s.k);
    max_nk = std::max(max_nk, s.n * s.k);
    max_mn = std::max(max_mn, s.m * s.n);
  }
  std::vector<uint8_t> a8(static_cast<size_t>(max_mk)), b8(static_cast<size_t>(max_nk));
  std::vector<uint16_t> a16(a8.size()), b16(b8.size());
  for (size_t i = 0; i < a8.size(); ++i) a8[i] = fp8_table[rng() & 4095], a16[i] = bf16_table[rng() & 4095];
  for (size_t i = 0; i < b8.size(); ++i) b8[i] = fp8_table[rng() & 4095], b16[i] = bf16_table[rng() & 4095];
  DeviceBuffer a8_dev = upload(a8), b8_dev = upload(b8), a16_dev = upload(a16), b16_dev = upload(b16);
  DeviceBuffer d_dev(static_cast<size_t>(max_mn) * 2);
  DeviceBuffer ones = upload(std::vector<float>(8, 1.0f));  // scale_a at +0, scale_b at +4 (16-byte aligned)

  std::printf("  %-18s %12s %12s %12s   (median us, L2 flushed; TFLOPS in brackets)\n", "shape", "fp8 blockwise",
              "fp8 per-tensor", "bf16");
  for (const Shape& s : shapes) {
    const int64_t kb = (s.k + 127) / 128;
    const TensorView av = make_tensor(a8_dev.get(), DType::kFloat8E4M3, {s.m, s.k});
    const TensorView bv = make_tensor(b8_dev.get(), DType::kFloat8E4M3, {s.n, s.k});
    const TensorView a16v = make_tensor(a16_dev.get(), DType::kBFloat16, {s.m, s.k});
    const TensorView b16v = make_tensor(b16_dev.get(), DType::kBFloat16, {s.n, s.k});
    const TensorView dv = make_tensor(d_dev.get(), DType::kBFloat16, {s.m, s.n});
    DeviceBuffer sfa_dev = upload(std::vector<float>(static_cast<size_t>(s.m * kb), 1.0f));
    DeviceBuffer sfb_dev = upload(std::vector<float>(static_cast<size_t>((s.n + 127) / 128 * kb), 1.0f));
    const CublasLtBlockScales scales =
        to_cublaslt_block_scales(make_tensor(sfa_dev.get(), DType::kFloat32, {s.m, kb}),
                                 make_tensor(sfb_dev.get(), DType::kFloat32, {(s.n + 127) / 128, kb}));
    const double flops = 2.0 * s.m * s.n * s.k;
    std::string line;
    auto measure = [&](const std::function<void(cudaStream_t)>& fn) {
      char cell[48];
      try {
        double us = time_us(fn, stream, 5, 30, true);
        const double again = time_us(fn, stream, 2, 30, true);
        // The timer is broken if two medians of the same call disagree; one outlier median (seen once on a lent
        // machine: 64.5 vs 92.6 us) is interference, so a third measurement must agree with one of the two.
        auto close = [](double x, double y) { return std::fabs(x - y) / std::min(x, y) < 0.25; };
        if (!close(us, again)) {
          const double third = time_us(fn, stream, 2, 30, true);
          EXPECT_TRUE(close(third, us) || close(third, again))
              << shape_name(s) << ": three medians disagree: " << us << ", " << again << ", " << third;
          if (close(third, again)) us = std::min(again, third);
        }
        EXPECT_GT(us, 0.0);
        EXPECT_LT(flops / (us * 1e6), 1979.0) << shape_name(s) << ": faster than the FP8 dense peak";
        std::snprintf(cell, sizeof(cell), "%8.1f [%4.0f]", us, flops / (us * 1e6));
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::kUnsupported) throw;
        std::snprintf(cell, sizeof(cell), "%15s", "n/a");
      }
      line += std::string(" ") + cell;
    };
    measure([&](cudaStream_t st) { lt.fp8_blockwise(av, scales.sfa, bv, scales.sfb, dv, st); });
    measure([&](cudaStream_t st) { lt.fp8_per_tensor(av, bv, dv, ones.as<float>(), ones.as<float>() + 4, st); });
    measure([&](cudaStream_t st) { lt.bf16(a16v, b16v, dv, st); });
    std::printf("  %-18s%s\n", shape_name(s).c_str(), line.c_str());
  }

  // Warm-L2 throughput of a short call: graph replays, without the flush.
  const Shape s{128, 2112, 7168};
  const TensorView av = make_tensor(a8_dev.get(), DType::kFloat8E4M3, {s.m, s.k});
  const TensorView bv = make_tensor(b8_dev.get(), DType::kFloat8E4M3, {s.n, s.k});
  const TensorView dv = make_tensor(d_dev.get(), DType::kBFloat16, {s.m, s.n});
  TimerOptions warm;
  warm.flush_l2 = false;
  const Timing t = time_call(
      [&](cudaStream_t st) { lt.fp8_per_tensor(av, bv, dv, ones.as<float>(), ones.as<float>() + 4, st); }, stream,
      warm);
  std::printf("  fp8_per_tensor %s warm L2: %.2f us (min %.2f, max %.2f, %s)\n", shape_name(s).c_str(), t.median_us,
              t.min_us, t.max_us, t.graph ? "graph replays" : "events");
  EXPECT_GT(t.median_us, 0.0);
  HOPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace hopgemm::bench
