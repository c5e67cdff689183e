#include "api/sm90_launch.hpp"

#include <algorithm>

#include "hopgemm/gemm.hpp"
#include "runtime/cuda_check.hpp"
#include "tma/tensor_map.hpp"

namespace hopgemm::api::sm90 {

namespace {

device::TmaDescriptor encode(const tma::TensorMap2d& map, int64_t elem, Batches batches, const char* op) {
  if (batches.count == 0) return tma::encode_2d(map, op);
  return tma::encode_3d(map, uint64_t(batches.count), uint64_t(batches.stride * elem), op);
}

}  // namespace

device::TmaDescriptor operand_map(const TensorView& t, int64_t rows, int64_t k, uint32_t box_rows, const char* op,
                                  Batches batches) {
  const int64_t elem = t.element_size();
  return encode({t.dtype, t.data, uint64_t(k), uint64_t(rows), uint64_t(t.stride(0) * elem),
                 uint32_t(device::kSm90KBlockBytes / elem), box_rows, tma::Swizzle::k128B},
                elem, batches, op);
}

device::TmaDescriptor mn_major_operand_map(const TensorView& t, int64_t rows, int64_t k, uint32_t k_block,
                                           const char* op, Batches batches) {
  // [k, rows] with rows contiguous is the K-major map of the transposed view, in boxes of k_block K-rows.
  return operand_map(transposed(t), k, rows, k_block, op, batches);
}

// Rows of a K-major operand's box: the tile's, or a CTA pair's share of its shared operand
// (device::shared_operand_box_rows). MN-major operands load 64-row boxes whatever the pair.
static int shared_box_rows(int block_rows, int pair) {
  return pair == 2 ? device::shared_operand_box_rows(block_rows) : block_rows;
}

void set_operand_maps(device::Sm90GemmParams& p, const GemmTile& tile, const TensorView& a, int64_t m,
                      const TensorView& b, int64_t n, int64_t k, bool a_tail, const char* op, bool a_k_major,
                      bool b_k_major, Batches a_batches, Batches b_batches) {
  const uint32_t k_block = uint32_t(device::kSm90KBlockBytes / a.element_size());
  const int64_t m_tail = m % tile.block_m;
  const bool tail = a_tail && a_batches.count == 0 && a_k_major && tile.cluster_n == 1 && m_tail != 0;
  if (!a_k_major) {
    p.tma_a = mn_major_operand_map(a, m, k, k_block, op, a_batches);
  } else if (!tail || m >= tile.block_m) {
    p.tma_a = operand_map(a, m, k, uint32_t(shared_box_rows(tile.block_m, tile.cluster_n)), op, a_batches);
  }
  if (tail) {
    p.a_tail_rows = static_cast<int>((m_tail + 7) / 8 * 8);
    p.tma_a_tail = operand_map(a, m, k, uint32_t(p.a_tail_rows), op);
  }
  p.tma_b = b_k_major
                ? operand_map(b, n, k, uint32_t(shared_box_rows(tile.block_n, tile.cluster_m)), op, b_batches)
                : mn_major_operand_map(b, n, k, k_block, op, b_batches);
}

device::TmaDescriptor d_map(const GemmTile& tile, const TensorView& d, int64_t rows, int64_t cols, const char* op,
                            Batches batches) {
  return encode({d.dtype, d.data, uint64_t(cols), uint64_t(rows), uint64_t(d.stride(0)) * d.element_size(),
                 uint32_t(tile.d_swizzle_bytes / tile.out_elem_bytes), uint32_t(tile.block_m / tile.math_wgs),
                 tma::swizzle_for_bytes(tile.d_swizzle_bytes)},
                d.element_size(), batches, op);
}

device::TmaDescriptor mn_major_scale_map(const TensorView& sf, int64_t rows, int64_t sf_k, uint32_t box_rows,
                                         const char* op) {
  return tma::encode_2d({DType::kFloat32, sf.data, uint64_t(rows), uint64_t(sf_k), uint64_t(sf.stride(1)) * 4, box_rows,
                         1, tma::Swizzle::kNone},
                        op);
}

device::TmaDescriptor row_scale_chunk_map(const TensorView& sf, int64_t rows, int64_t sf_k, int64_t ld,
                                          uint32_t chunk_k, uint32_t box_rows, const char* op) {
  return tma::encode_2d({DType::kFloat32, sf.data, uint64_t(sf_k), uint64_t(rows), uint64_t(ld) * 4, chunk_k, box_rows,
                         tma::Swizzle::kNone},
                        op);
}

void set_gemm_schedule(device::Sm90GemmParams& p, const GemmTile& tile, int k_splits, int64_t m, int64_t n, int64_t k,
                       int raster_band, const TensorView& d, void* partials, void* tile_counters) {
  p.schedule.m = static_cast<int>(m);
  p.schedule.n = static_cast<int>(n);
  p.schedule.k = static_cast<int>(k);
  p.schedule.raster_band = raster_band;
  if (tile.reduces_from_registers) {  // D by pointer (row stride even: TMA-aligned)
    p.d = d.data;
    p.ldd = d.stride(0);
  }
  if (k_splits > 1) {  // partials in the threads' fragment order, one counter per tile
    p.partials = static_cast<float*>(partials);
    p.tile_counters = static_cast<uint32_t*>(tile_counters);
  }
}

void prefill_output(const TensorView& d, const TensorView* c, bool copy_c, cudaStream_t stream) {
  const size_t row_bytes = d.size(1) * d.element_size();
  if (copy_c) {
    HOPGEMM_CUDA_CHECK(cudaMemcpy2DAsync(d.data, d.stride(0) * d.element_size(), c->data,
                                         c->stride(0) * c->element_size(), row_bytes, d.size(0),
                                         cudaMemcpyDeviceToDevice, stream));
  } else if (c == nullptr) {
    HOPGEMM_CUDA_CHECK(cudaMemset2DAsync(d.data, d.stride(0) * d.element_size(), 0, row_bytes, d.size(0), stream));
  }
}

SplitKScratch splitk_scratch(const GemmTile& tile, int k_splits, int64_t m, int64_t n) {
  if (k_splits <= 1) return {};
  const size_t tiles =
      size_t(device::ceil_div<int64_t>(m, tile.block_m)) * size_t(device::ceil_div<int64_t>(n, tile.block_n));
  return {tiles * 4, tiles * size_t(k_splits) * size_t(tile.block_m) * size_t(tile.block_n) * 4};
}

void launch_persistent(const jit::LoadedKernel& kernel, const PersistentLaunch& launch, const void* params,
                       cudaStream_t stream) {
  jit::LaunchGeometry geometry;
  geometry.cluster_x = unsigned(launch.cluster);
  geometry.grid_x = unsigned(launch.num_sms - launch.num_sms % launch.cluster);
  geometry.block_x = launch.threads;
  geometry.smem_bytes = launch.smem_bytes;
  geometry.device = launch.device;
  if (geometry.cluster_x > 1) {
    const unsigned resident = kernel.max_active_clusters(launch.device, geometry) * geometry.cluster_x;
    geometry.grid_x = std::min(geometry.grid_x, resident);
  }
  jit::launch(kernel, geometry, params, stream);
}

}  // namespace hopgemm::api::sm90
