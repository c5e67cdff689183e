// tf32_hc_prenorm_gemm (include/hopgemm/hc_prenorm.hpp): validate -> config (the tile width from N, the deepest ring)
// -> kernel (cached) -> descriptors -> a grid of one CTA per (64-row block, split).
#include "hopgemm/hc_prenorm.hpp"

#include <cuda_runtime_api.h>

#include <string>
#include <utility>

#include "api/hc_prenorm_internal.hpp"
#include "api/validate.hpp"
#include "hopgemm/device/kernels/sm90_tf32_hc_prenorm_gemm_types.cuh"
#include "hopgemm/error.hpp"
#include "jit/kernel_cache.hpp"
#include "jit/kernel_source.hpp"
#include "jit/loader.hpp"
#include "tma/tensor_map.hpp"

namespace hopgemm {
namespace {

using device::Sm90HcPrenormConfig;

// The config for N: the WGMMA width N rounds up to, and as many stages as fit (12 at most: a 64-row block's K is read
// once, a deeper ring only holds more of it in flight).
Sm90HcPrenormConfig hc_config(int64_t n) {
  Sm90HcPrenormConfig c;
  c.block_n = n <= 16 ? 16 : 32;
  for (c.num_stages = 12; c.num_stages > 2 && !device::is_valid(c); --c.num_stages) {
  }
  return c;
}

}  // namespace

namespace api {

jit::KernelSource render_sm90_hc_prenorm(const Sm90HcPrenormConfig& c) {
  static constexpr jit::KernelFamily kFamily{"sm90_tf32_hc_prenorm_gemm",
                                             "hopgemm/device/kernels/sm90_tf32_hc_prenorm_gemm.cuh",
                                             "hopgemm::device::sm90_tf32_hc_prenorm_gemm_kernel",
                                             "hopgemm::device::Sm90HcPrenormConfig"};
  return jit::render_kernel(kFamily, [&](jit::ConfigWriter& w) {
#define HOPGEMM_WRITE_FIELD(name, default_value, tunable) w.field(#name, c.name);
    HOPGEMM_SM90_HC_PRENORM_FIELDS(HOPGEMM_WRITE_FIELD)
#undef HOPGEMM_WRITE_FIELD
  });
}

}  // namespace api

void tf32_hc_prenorm_gemm(const TensorView& a, const TensorView& b, const TensorView& d, const TensorView& sqr_sum,
                          int num_splits, cudaStream_t stream) {
  constexpr const char* op = "tf32_hc_prenorm_gemm";
  api::Validator v(op);
  for (auto [t, name] : {std::pair{&a, "a"}, {&b, "b"}, {&d, "d"}, {&sqr_sum, "sqr_sum"}}) {
    v.on_device(*t, name);
    v.non_negative_strides(*t, name);
  }
  v.rank(a, "a", {2});
  v.rank(b, "b", {2});
  v.dtype(a, "a", {DType::kBFloat16});
  v.dtype(b, "b", {DType::kFloat32});
  v.dtype(d, "d", {DType::kFloat32});
  v.dtype(sqr_sum, "sqr_sum", {DType::kFloat32});
  if (num_splits < 0) v.fail("num_splits", "must be None or >= 1, got " + std::to_string(num_splits));
  const int64_t m = a.size(0), k = a.size(1), n = b.size(0);
  v.shape(b, "b", {n, k});
  if (num_splits == 0) {
    v.rank(d, "d", {2});
    v.rank(sqr_sum, "sqr_sum", {1});
    v.shape(d, "d", {m, n});
    v.shape(sqr_sum, "sqr_sum", {m});
  } else {
    v.rank(d, "d", {3});
    v.rank(sqr_sum, "sqr_sum", {2});
    v.shape(d, "d", {num_splits, m, n});
    v.shape(sqr_sum, "sqr_sum", {num_splits, m});
  }
  for (auto [t, name] : {std::pair{&a, "a"}, {&b, "b"}, {&d, "d"}}) v.inner_contiguous(*t, name);
  v.contiguous(sqr_sum, "sqr_sum");
  for (auto [t, name] : {std::pair{&b, "b"}, {&d, "d"}, {&sqr_sum, "sqr_sum"}}) v.same_device(a, "a", *t, name);
  if (n % 8 != 0 || n > 32) {
    v.unsupported("N must be a multiple of 8 up to 32 (DeepGEMM's SM90 kernel takes the same), got N = " +
                  std::to_string(n));
  }
  if (k % 8 != 0) v.fail("a", "must have K a multiple of 8 (TMA rows of 16 bytes), got K = " + std::to_string(k));
  if (m > INT32_MAX || k > INT32_MAX) v.fail("a", "has a dimension beyond 2^31 - 1");
  const int splits = num_splits == 0 ? 1 : num_splits;
  if (m == 0 || n == 0) return;
  if (k == 0) v.fail("a", "must have K > 0");
  v.tma_aligned(a, "a");
  v.tma_aligned(b, "b");
  if ((d.stride(-2) * 4) % 8 != 0 || reinterpret_cast<uintptr_t>(d.data) % 8 != 0) {
    v.fail("d", "must have 8-byte aligned rows (pairs of columns are stored together)");
  }
  for (auto [t, name] : {std::pair{&a, "a"}, {&b, "b"}}) {
    v.no_overlap(d, "d", *t, name);
    v.no_overlap(sqr_sum, "sqr_sum", *t, name);
  }
  v.no_overlap(d, "d", sqr_sum, "sqr_sum");
  if (static_cast<int64_t>(splits) * device::ceil_div<int64_t>(m, device::kHcBlockM) > INT32_MAX) {
    v.fail("num_splits", "makes a grid beyond 2^31 - 1 blocks");
  }

  const Sm90HcPrenormConfig config = hc_config(n);
  static jit::KernelCache<Sm90HcPrenormConfig> cache(&api::render_sm90_hc_prenorm);
  const jit::LoadedKernel& kernel = cache.get(config, op, stream);
  device::Sm90HcPrenormParams params{};
  params.tma_a = tma::encode_2d({DType::kBFloat16, a.data, uint64_t(k), uint64_t(m), uint64_t(a.stride(0) * 2),
                                 uint32_t(device::kHcBlockK), uint32_t(device::kHcBlockM), tma::Swizzle::k128B},
                                op);
  // B rounded to TF32 by the copy, as torch's TF32 matmul and DeepGEMM round it (its test holds calc_diff < 1e-8
  // against torch: truncated by the WGMMA instead, m = 13, n = 24, k = 28672 read 1.58e-7).
  params.tma_b = tma::encode_2d({DType::kFloat32, b.data, uint64_t(k), uint64_t(n), uint64_t(b.stride(0) * 4), 32u,
                                 uint32_t(config.block_n), tma::Swizzle::k128B, /*round_to_tf32=*/true},
                                op);
  params.d = static_cast<float*>(d.data);
  params.sqr_sum = static_cast<float*>(sqr_sum.data);
  params.ldd = d.stride(-2);
  params.d_split_stride = num_splits == 0 ? 0 : d.stride(0);
  params.m = static_cast<int>(m);
  params.n = static_cast<int>(n);
  params.k = static_cast<int>(k);
  params.num_splits = splits;
  jit::LaunchGeometry geometry;
  geometry.grid_x = static_cast<unsigned>(device::ceil_div<int64_t>(m, device::kHcBlockM) * splits);
  geometry.block_x = device::kHcThreads;
  geometry.smem_bytes = device::smem_bytes(config);
  geometry.device = a.device;
  jit::launch(kernel, geometry, &params, stream);
}

}  // namespace hopgemm
