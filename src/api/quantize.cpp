// Fused FP8 quantisation ops (include/hopgemm/quantize.hpp): validate -> config -> kernel cache -> launch.
#include "hopgemm/quantize.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "api/suite_sources.hpp"
#include "api/validate.hpp"
#include "hopgemm/device/kernels/sm90_quantize_fp8_types.cuh"
#include "hopgemm/error.hpp"
#include "jit/kernel_cache.hpp"
#include "jit/loader.hpp"

namespace hopgemm {
namespace {

using device::QuantizeConfig;
using device::QuantizeParams;

jit::KernelCache<QuantizeConfig>& kernel_cache() {
  static jit::KernelCache<QuantizeConfig> cache(&api::render_sm90_quantize_fp8);
  return cache;
}

// A 2-D output whose elements would alias one another (e.g. stride 0 over several rows) is rejected.
void check_no_self_overlap(const api::Validator& v, const TensorView& t, const char* arg) {
  if (t.rank != 2 || t.size(0) <= 1 || t.size(1) <= 1) return;
  // 128 bits: |INT64_MIN| and size x stride of hostile views do not fit 64.
  const auto magnitude = [](int64_t x) { return x < 0 ? -static_cast<__int128>(x) : static_cast<__int128>(x); };
  const __int128 s0 = magnitude(t.stride(0)), s1 = magnitude(t.stride(1));
  const bool ok = s0 >= s1 ? s0 >= t.size(1) * s1 && s1 >= 1 : s1 >= t.size(0) * s0 && s0 >= 1;
  if (!ok) v.fail(arg, "has overlapping elements (shape " + api::shape_string(t) + ", strides " + api::stride_string(t) + ")");
}

void cast_to_fp8(const char* op, int kind, const TensorView& x, const TensorView& x_fp8, const TensorView& sf,
                 bool use_ue8m0, int gran_k, cudaStream_t stream) {
  const api::Validator v(op);
  if (gran_k != 32 && gran_k != 64 && gran_k != 128) v.fail("gran_k", "must be 32, 64 or 128, got " + std::to_string(gran_k));
  v.on_device(x, "x");
  v.dtype(x, "x", {DType::kBFloat16, DType::kFloat32});
  v.rank(x, "x", {2});
  v.inner_contiguous(x, "x");
  const int64_t m = x.size(0), n = x.size(1), elem = static_cast<int64_t>(x.element_size());
  if (reinterpret_cast<uintptr_t>(x.data) % elem != 0) {
    v.fail("x", "must have a data pointer aligned to its element size (" + std::to_string(elem) + " bytes)");
  }
  if (kind == device::kQuantPerChannel && m % gran_k != 0) {
    v.fail("x", "must have a row count divisible by gran_k = " + std::to_string(gran_k) + " (per-channel groups), got shape " +
                    api::shape_string(x));
  }
  v.on_device(x_fp8, "x_fp8");
  v.dtype(x_fp8, "x_fp8", {DType::kFloat8E4M3});
  v.same_device(x, "x", x_fp8, "x_fp8");
  v.shape(x_fp8, "x_fp8", {m, n});
  v.inner_contiguous(x_fp8, "x_fp8");
  check_no_self_overlap(v, x_fp8, "x_fp8");
  v.on_device(sf, "sf");
  v.dtype(sf, "sf", {DType::kFloat32});
  v.same_device(x, "x", sf, "sf");
  if (kind == device::kQuantPerToken) v.shape(sf, "sf", {m, device::ceil_div<int64_t>(n, gran_k)});
  else if (kind == device::kQuantPerBlock) v.shape(sf, "sf", {device::ceil_div<int64_t>(m, gran_k), device::ceil_div<int64_t>(n, gran_k)});
  else v.shape(sf, "sf", {m / gran_k, n});
  if (reinterpret_cast<uintptr_t>(sf.data) % 4 != 0) v.fail("sf", "must have a 4-byte aligned data pointer");
  check_no_self_overlap(v, sf, "sf");
  v.no_overlap(x_fp8, "x_fp8", x, "x");
  v.no_overlap(sf, "sf", x, "x");
  v.no_overlap(sf, "sf", x_fp8, "x_fp8");
  if (m == 0 || n == 0) return;

  const QuantizeConfig config{.kind = kind,
                              .in_dtype = x.dtype == DType::kFloat32 ? device::kQuantInFp32 : device::kQuantInBf16,
                              .gran = gran_k,
                              .use_ue8m0 = use_ue8m0 ? 1 : 0};
  const int64_t blocks = device::quantize_num_blocks(config, m, n);
  const int64_t token_groups = m * device::ceil_div<int64_t>(n, gran_k);
  if (m > INT32_MAX || n > INT32_MAX || blocks > INT32_MAX || token_groups > INT32_MAX) {
    v.fail("x", "is too large: shape " + api::shape_string(x));
  }
  const int vec = device::quantize_vec(config);
  const auto addr = [](const TensorView& t) { return reinterpret_cast<uintptr_t>(t.data); };
  // 16-byte loads need every row of x 16-byte aligned, vec-byte stores every row of x_fp8 vec-aligned.
  const bool x_rows_aligned = addr(x) % 16 == 0 && (m == 1 || (x.stride(0) * elem) % 16 == 0);
  const bool out_rows_aligned = addr(x_fp8) % vec == 0 && (m == 1 || x_fp8.stride(0) % vec == 0);

  QuantizeParams params{};
  params.x = x.data;
  params.x_fp8 = x_fp8.data;
  params.sf = static_cast<float*>(sf.data);
  params.x_ld = x.stride(0);
  params.out_ld = x_fp8.stride(0);
  params.sf_ld = sf.stride(0);
  params.sf_cs = sf.stride(1);
  params.m = static_cast<int32_t>(m);
  params.n = static_cast<int32_t>(n);
  params.vector_io = x_rows_aligned && out_rows_aligned ? 1 : 0;
  params.num_col_tiles = static_cast<int32_t>(device::quantize_num_col_tiles(config, n));

  const jit::LoadedKernel& kernel = kernel_cache().get(config, op, stream);
  jit::LaunchGeometry geometry;
  geometry.grid_x = static_cast<unsigned>(blocks);
  geometry.block_x = static_cast<unsigned>(device::quantize_num_threads(config));
  jit::launch(kernel, geometry, &params, stream);
}

}  // namespace

void per_token_cast_to_fp8(const TensorView& x, const TensorView& x_fp8, const TensorView& sf, bool use_ue8m0,
                           int gran_k, cudaStream_t stream) {
  cast_to_fp8("per_token_cast_to_fp8", device::kQuantPerToken, x, x_fp8, sf, use_ue8m0, gran_k, stream);
}

void per_block_cast_to_fp8(const TensorView& x, const TensorView& x_fp8, const TensorView& sf, bool use_ue8m0,
                           int gran_k, cudaStream_t stream) {
  cast_to_fp8("per_block_cast_to_fp8", device::kQuantPerBlock, x, x_fp8, sf, use_ue8m0, gran_k, stream);
}

void per_channel_cast_to_fp8(const TensorView& x, const TensorView& x_fp8, const TensorView& sf, bool use_ue8m0,
                             int gran_k, cudaStream_t stream) {
  cast_to_fp8("per_channel_cast_to_fp8", device::kQuantPerChannel, x, x_fp8, sf, use_ue8m0, gran_k, stream);
}

}  // namespace hopgemm

namespace hopgemm::api {

jit::KernelSource render_sm90_quantize_fp8(const device::QuantizeConfig& c) {
  static constexpr jit::KernelFamily kFamily{"sm90_quantize_fp8", "hopgemm/device/kernels/sm90_quantize_fp8.cuh",
                                             "hopgemm::device::sm90_quantize_fp8_kernel",
                                             "hopgemm::device::QuantizeConfig"};
  return jit::render_kernel(kFamily, [&](jit::ConfigWriter& w) {
    w.field("kind", c.kind).field("in_dtype", c.in_dtype).field("gran", c.gran).field("use_ue8m0", c.use_ue8m0);
  });
}

std::vector<device::QuantizeConfig> quantize_suite_configs() {
  std::vector<device::QuantizeConfig> configs;
  for (int kind : {device::kQuantPerToken, device::kQuantPerBlock, device::kQuantPerChannel}) {
    for (int in_dtype : {device::kQuantInBf16, device::kQuantInFp32}) {
      for (int ue8m0 : {0, 1}) configs.push_back({.kind = kind, .in_dtype = in_dtype, .gran = 128, .use_ue8m0 = ue8m0});
    }
  }
  return configs;
}

std::vector<jit::KernelSource> quantize_suite_sources() {
  std::vector<jit::KernelSource> sources;
  for (const auto& c : quantize_suite_configs()) sources.push_back(render_sm90_quantize_fp8(c));
  return sources;
}

}  // namespace hopgemm::api
