#include "api/sm90_launch.hpp"

#include <algorithm>

#include "runtime/cuda_check.hpp"
#include "tma/tensor_map.hpp"

namespace hopgemm::api::sm90 {

device::TmaDescriptor fp8_operand_map(const TensorView& t, int64_t rows, int64_t k, uint32_t box_rows, const char* op) {
  return tma::encode_2d({DType::kFloat8E4M3, t.data, uint64_t(k), uint64_t(rows), uint64_t(t.stride(0)), 128, box_rows,
                         tma::Swizzle::k128B},
                        op);
}

device::TmaDescriptor mn_major_scale_map(const TensorView& sf, int64_t rows, int64_t sf_k, uint32_t box_rows,
                                         const char* op) {
  return tma::encode_2d({DType::kFloat32, sf.data, uint64_t(rows), uint64_t(sf_k), uint64_t(sf.stride(1)) * 4, box_rows,
                         1, tma::Swizzle::kNone},
                        op);
}

device::TmaDescriptor row_scale_chunk_map(const TensorView& sf, int64_t rows, int64_t sf_k, int64_t ld, uint32_t chunk_k,
                                          uint32_t box_rows, const char* op) {
  return tma::encode_2d({DType::kFloat32, sf.data, uint64_t(sf_k), uint64_t(rows), uint64_t(ld) * 4, chunk_k, box_rows,
                         tma::Swizzle::kNone},
                        op);
}

device::TmaDescriptor output_map(const TensorView& d, int64_t rows, int64_t cols, uint32_t box_cols, uint32_t box_rows,
                                 int swizzle_bytes, const char* op) {
  return tma::encode_2d({d.dtype, d.data, uint64_t(cols), uint64_t(rows), uint64_t(d.stride(0)) * d.element_size(),
                         box_cols, box_rows, tma::swizzle_for_bytes(swizzle_bytes)},
                        op);
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
