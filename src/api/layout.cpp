// Scale-factor layout ops (include/hopgemm/layout.hpp): validate -> config -> kernel cache -> launch.
#include "hopgemm/layout.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "api/suite_sources.hpp"
#include "api/validate.hpp"
#include "hopgemm/device/kernels/sm90_sf_layout_types.cuh"
#include "hopgemm/error.hpp"
#include "jit/kernel_cache.hpp"
#include "jit/loader.hpp"

namespace hopgemm {
namespace {

using device::SfLayoutConfig;
using device::SfLayoutParams;
using device::kSfLayoutMaxKGroups;
using device::kSfLayoutThreads;
using device::kSfLayoutTile;

constexpr int64_t kMaxGridYZ = 65535;

std::string list_string(const int64_t* values, int n) {
  std::string out = "[";
  for (int i = 0; i < n; ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

jit::KernelCache<SfLayoutConfig>& kernel_cache() {
  static jit::KernelCache<SfLayoutConfig> cache(&api::render_sm90_sf_layout);
  return cache;
}

// `out` must be [.., mn, cols] with exactly the MN-major TMA-aligned strides and a 16-byte aligned base.
void check_mn_major_out(const api::Validator& v, const TensorView& out) {
  int64_t expected[3] = {};
  mn_major_tma_aligned_strides(out.rank, out.shape, static_cast<int64_t>(out.element_size()), expected);
  for (int d = 0; d < out.rank; ++d) {
    if (out.strides[d] != expected[d]) {
      v.fail("out", "must have the MN-major TMA-aligned strides " + list_string(expected, out.rank) + " for shape " +
                        api::shape_string(out) + ", got " + api::stride_string(out));
    }
  }
  if (reinterpret_cast<uintptr_t>(out.data) % 16 != 0) v.fail("out", "must have a 16-byte aligned data pointer (TMA)");
}

void check_sf_input(const api::Validator& v, const TensorView& sf, std::initializer_list<int> ranks) {
  v.on_device(sf, "sf");
  v.dtype(sf, "sf", {DType::kFloat32});
  v.rank(sf, "sf", ranks);
  if (reinterpret_cast<uintptr_t>(sf.data) % 4 != 0) v.fail("sf", "must have a 4-byte aligned data pointer");
}

// Shared by the FP32 transpose and the plain UE8M0 pack: sf [.., mn, sf_k] -> out [.., mn, cols].
void launch_plain(const char* op, const TensorView& sf, const TensorView& out, int pack, cudaStream_t stream) {
  const api::Validator v(op);
  check_sf_input(v, sf, {2, 3});
  v.on_device(out, "out");
  v.dtype(out, "out", {pack ? DType::kInt32 : DType::kFloat32});
  v.same_device(sf, "sf", out, "out");
  const int64_t groups = sf.rank == 3 ? sf.size(0) : 1, mn = sf.size(-2), sf_k = sf.size(-1);
  const int64_t cols = pack ? device::ceil_div<int64_t>(sf_k, 4) : sf_k;
  if (sf.rank == 3) v.shape(out, "out", {groups, mn, cols});
  else v.shape(out, "out", {mn, cols});
  check_mn_major_out(v, out);
  v.no_overlap(out, "out", sf, "sf");
  if (groups > kMaxGridYZ) v.fail("sf", "has " + std::to_string(groups) + " groups; at most 65535 are supported");
  if (mn > INT32_MAX || device::ceil_div<int64_t>(sf_k, kSfLayoutTile) > kMaxGridYZ) {
    v.fail("sf", "is too large: shape " + api::shape_string(sf));
  }
  if (groups == 0 || mn == 0 || sf_k == 0) return;

  const SfLayoutConfig config{.pack_ue8m0 = pack, .max_groups = 0};
  const jit::LoadedKernel& kernel = kernel_cache().get(config, op, stream);
  SfLayoutParams<0> params{};
  params.sf = static_cast<const float*>(sf.data);
  params.out = out.data;
  params.sf_stride_group = sf.rank == 3 ? sf.stride(0) : 0;
  params.sf_stride_mn = sf.stride(-2);
  params.sf_stride_k = sf.stride(-1);
  params.out_stride_group = out.rank == 3 ? out.stride(0) : 0;
  params.out_stride_k = out.stride(-1);
  params.mn = static_cast<int32_t>(mn);
  params.sf_k = static_cast<int32_t>(sf_k);
  params.k_fast = params.sf_stride_k == 1 && params.sf_stride_mn != 1;
  params.num_groups = static_cast<int32_t>(groups);
  jit::LaunchGeometry geometry;
  geometry.grid_x = static_cast<unsigned>(device::ceil_div<int64_t>(mn, kSfLayoutTile));
  geometry.grid_y = static_cast<unsigned>(device::ceil_div<int64_t>(sf_k, kSfLayoutTile));
  geometry.grid_z = static_cast<unsigned>(groups);
  geometry.block_x = kSfLayoutThreads;
  jit::launch(kernel, geometry, &params, stream);
}

// Extent-1 dimensions may carry any stride (torch gives them arbitrary ones).
bool stride_is(const TensorView& t, int dim, int64_t expected) { return t.size(dim) == 1 || t.stride(dim) == expected; }

}  // namespace

int64_t get_tma_aligned_size(int64_t x, int64_t element_size) {
  if (element_size <= 0 || 16 % element_size != 0) {
    throw Error(ErrorKind::kInvalidArgument, "get_tma_aligned_size: argument 'element_size' must divide 16, got " +
                                                 std::to_string(element_size));
  }
  if (x < 0) throw Error(ErrorKind::kInvalidArgument, "get_tma_aligned_size: argument 'x' must be >= 0, got " + std::to_string(x));
  const int64_t alignment = 16 / element_size;
  return device::ceil_div<int64_t>(x, alignment) * alignment;
}

void mn_major_tma_aligned_strides(int rank, const int64_t* shape, int64_t element_size, int64_t* strides) {
  if (rank != 2 && rank != 3) {
    throw Error(ErrorKind::kInvalidArgument,
                "mn_major_tma_aligned_strides: shape must be [mn, k] or [G, mn, k], got rank " + std::to_string(rank));
  }
  const int64_t mn = shape[rank - 2], k = shape[rank - 1];
  const int64_t tma_mn = get_tma_aligned_size(mn, element_size);
  if (rank == 3) strides[0] = tma_mn * k;
  strides[rank - 2] = 1;
  strides[rank - 1] = tma_mn;
}

// DeepGEMM's exact test (no allowance for extent-1 dimensions): what it returns unchanged, we return unchanged.
bool is_mn_major_tma_aligned(const TensorView& sf) {
  const int64_t elem = static_cast<int64_t>(sf.element_size());
  if ((sf.rank != 2 && sf.rank != 3) || elem == 0 || 16 % elem != 0) return false;
  const int64_t tma_mn = get_tma_aligned_size(sf.size(-2), elem);
  return (sf.rank == 2 || sf.stride(0) == tma_mn * sf.size(-1)) && sf.stride(-2) == 1 && sf.stride(-1) == tma_mn;
}

void get_mn_major_tma_aligned_tensor(const TensorView& sf, const TensorView& out, cudaStream_t stream) {
  launch_plain("get_mn_major_tma_aligned_tensor", sf, out, /*pack=*/0, stream);
}

void get_mn_major_tma_aligned_packed_ue8m0_tensor(const TensorView& sf, const TensorView& out, cudaStream_t stream) {
  launch_plain("get_mn_major_tma_aligned_packed_ue8m0_tensor", sf, out, /*pack=*/1, stream);
}

void get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor(const TensorView& sf, const std::vector<int>& ks,
                                                            const TensorView& out, cudaStream_t stream) {
  const char* op = "get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor";
  const api::Validator v(op);
  check_sf_input(v, sf, {2});
  int64_t sf_rows = 0, out_rows = 0;
  for (size_t g = 0; g < ks.size(); ++g) {
    if (ks[g] < 0) v.fail("ks", "must be >= 0, got ks[" + std::to_string(g) + "] = " + std::to_string(ks[g]));
    sf_rows += device::ceil_div<int64_t>(ks[g], 128);
    out_rows += device::ceil_div<int64_t>(ks[g], 512);
  }
  const int64_t mn = sf.size(1);
  if (sf.size(0) != sf_rows) {
    v.fail("sf", "must have shape [sum(ceil(ks / 128)) = " + std::to_string(sf_rows) + ", mn], got " +
                     api::shape_string(sf));
  }
  v.on_device(out, "out");
  v.dtype(out, "out", {DType::kInt32});
  v.same_device(sf, "sf", out, "out");
  v.shape(out, "out", {out_rows, mn});
  v.contiguous(out, "out");
  if (reinterpret_cast<uintptr_t>(out.data) % 16 != 0) v.fail("out", "must have a 16-byte aligned data pointer (TMA)");
  v.no_overlap(out, "out", sf, "sf");
  if (mn > INT32_MAX || sf_rows > INT32_MAX) v.fail("sf", "is too large: shape " + api::shape_string(sf));
  if (mn == 0 || out_rows == 0) return;

  constexpr SfLayoutConfig config{.pack_ue8m0 = 1, .max_groups = kSfLayoutMaxKGroups};
  const jit::LoadedKernel& kernel = kernel_cache().get(config, op, stream);
  // Groups go kSfLayoutMaxKGroups per launch, each launch carrying its groups' row offsets.
  int64_t sf_start = 0, out_start = 0;
  for (size_t first = 0; first < ks.size(); first += kSfLayoutMaxKGroups) {
    const int count = static_cast<int>(std::min<size_t>(kSfLayoutMaxKGroups, ks.size() - first));
    SfLayoutParams<kSfLayoutMaxKGroups> params{};
    params.sf = static_cast<const float*>(sf.data);
    params.out = out.data;
    params.sf_stride_mn = sf.stride(1);
    params.sf_stride_k = sf.stride(0);
    params.out_stride_k = out.stride(0);
    params.mn = static_cast<int32_t>(mn);
    params.k_fast = params.sf_stride_k == 1 && params.sf_stride_mn != 1;
    params.num_groups = count;
    int64_t max_sf_k = 0;
    for (int g = 0; g <= count; ++g) {
      params.group_sf_start[g] = static_cast<int32_t>(sf_start);
      params.group_out_start[g] = static_cast<int32_t>(out_start);
      if (g == count) break;
      const int64_t sf_k = device::ceil_div<int64_t>(ks[first + g], 128);
      max_sf_k = std::max(max_sf_k, sf_k);
      sf_start += sf_k;
      out_start += device::ceil_div<int64_t>(sf_k, 4);
    }
    if (max_sf_k == 0) continue;
    jit::LaunchGeometry geometry;
    geometry.grid_x = static_cast<unsigned>(device::ceil_div<int64_t>(mn, kSfLayoutTile));
    geometry.grid_y = static_cast<unsigned>(device::ceil_div<int64_t>(max_sf_k, kSfLayoutTile));
    geometry.grid_z = static_cast<unsigned>(count);
    geometry.block_x = kSfLayoutThreads;
    jit::launch(kernel, geometry, &params, stream);
  }
}

SfTransform plan_transform_sf_into_required_layout(const TensorView& sf, int64_t mn, int64_t k, int gran_mn,
                                                   int gran_k, int num_groups) {
  const api::Validator v("transform_sf_into_required_layout");
  v.positive(gran_mn, "recipe (gran_mn)");
  v.positive(gran_k, "recipe (gran_k)");
  if (mn < 0) v.fail("mn", "must be >= 0, got " + std::to_string(mn));
  if (k < 0) v.fail("k", "must be >= 0, got " + std::to_string(k));
  v.on_device(sf, "sf");
  v.dtype(sf, "sf", {DType::kFloat32, DType::kInt32});
  const bool has_groups = num_groups >= 0;
  v.rank(sf, "sf", {has_groups ? 3 : 2});
  const bool fp32 = sf.dtype == DType::kFloat32;
  const int64_t rows = device::ceil_div<int64_t>(mn, gran_mn), cols = device::ceil_div<int64_t>(k, int64_t{gran_k} * (fp32 ? 1 : 4));
  if (has_groups) v.shape(sf, "sf", {num_groups, rows, cols});
  else v.shape(sf, "sf", {rows, cols});

  if (fp32 && gran_mn == 1 && gran_k == 128) {
    return is_mn_major_tma_aligned(sf) ? SfTransform::kNone : SfTransform::kMnMajorTmaAligned;
  }
  if (fp32 && gran_mn == 128 && gran_k == 128) {
    // The 1D2D kernel reads SFB by pointer with either major-ness; each group must be dense.
    if (has_groups && !stride_is(sf, 0, rows * cols)) {
      v.fail("sf", "must have dense groups (stride(0) == " + std::to_string(rows * cols) + "), got strides " +
                       api::stride_string(sf));
    }
    const bool k_major = stride_is(sf, -1, 1) && stride_is(sf, -2, cols);
    const bool mn_major = stride_is(sf, -1, rows) && stride_is(sf, -2, 1);
    if (!k_major && !mn_major) {
      v.fail("sf", "with recipe (128, 128) must be contiguous K-major or contiguous MN-major, got shape " +
                       api::shape_string(sf) + " strides " + api::stride_string(sf));
    }
    return SfTransform::kNone;
  }
  v.unsupported("unknown SF transformation for " + std::string(dtype_name(sf.dtype)) + " scale factors with granularity (" +
                std::to_string(gran_mn) + ", " + std::to_string(gran_k) +
                "); SM90 supports FP32 with (1, 128) and (128, 128)");
}

}  // namespace hopgemm

namespace hopgemm::api {

jit::KernelSource render_sm90_sf_layout(const device::SfLayoutConfig& c) {
  // One family, two entry points: the kernel's name says which transform it does (profilers filter by it).
  static constexpr jit::KernelFamily kTranspose{"sm90_sf_layout", "hopgemm/device/kernels/sm90_sf_layout.cuh",
                                                "hopgemm::device::sm90_sf_transpose_kernel",
                                                "hopgemm::device::SfLayoutConfig"};
  static constexpr jit::KernelFamily kPack{"sm90_sf_layout", "hopgemm/device/kernels/sm90_sf_layout.cuh",
                                           "hopgemm::device::sm90_sf_pack_fp32_into_ue8m0_kernel",
                                           "hopgemm::device::SfLayoutConfig"};
  return jit::render_kernel(c.pack_ue8m0 ? kPack : kTranspose, [&](jit::ConfigWriter& w) {
    w.field("pack_ue8m0", c.pack_ue8m0).field("max_groups", c.max_groups);
  });
}

std::vector<device::SfLayoutConfig> layout_suite_configs() {
  return {{.pack_ue8m0 = 0, .max_groups = 0},
          {.pack_ue8m0 = 1, .max_groups = 0},
          {.pack_ue8m0 = 1, .max_groups = device::kSfLayoutMaxKGroups}};
}

std::vector<jit::KernelSource> layout_suite_sources() {
  std::vector<jit::KernelSource> sources;
  for (const auto& c : layout_suite_configs()) sources.push_back(render_sm90_sf_layout(c));
  return sources;
}

}  // namespace hopgemm::api
