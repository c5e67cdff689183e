#pragma once
// Operand policies: how a family's A and B tiles sit in shared memory and reach the tensor cores. A k-block is one
// 128-byte swizzled row per tile row (kBlockK elements of kElemBytes), loaded by one TMA box of the tile's rows, and
// consumed by kBlockK / kMmaK WGMMAs whose descriptors step kMmaK elements (32 bytes) along the row.
//   kElemBytes, kBlockK, kMmaK          element size, elements per k-block, elements per WGMMA
//   make_desc(smem_addr)                the WGMMA descriptor of a tile starting at smem_addr
//   mma<N>(acc, desc_a, desc_b, scale_d)  one m64nNk(kMmaK) WGMMA into acc (scale_d == 0 overwrites)

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/kernels/sm90_gemm_types.cuh"
#include "hopgemm/device/mma/sm90_smem_desc.cuh"
#include "hopgemm/device/ptx/wgmma.cuh"

namespace hopgemm::device::collective {

// FP8 e4m3, both operands K-major (the only form SM90's FP8 WGMMA reads): 128 elements per k-block, k32 WGMMAs.
struct Sm90E4m3Operands {
  static constexpr int kElemBytes = 1;
  static constexpr int kBlockK = kSm90KBlockBytes / kElemBytes;
  static constexpr int kMmaK = 32;
  HOPGEMM_DEVICE static u64 make_desc(u32 smem_addr) { return mma::make_kmajor_sw128_desc(smem_addr); }
  template <int N>
  HOPGEMM_DEVICE static void mma(float (&acc)[N / 2], u64 desc_a, u64 desc_b, u32 scale_d) {
    ptx::WgmmaE4m3<N>::mma(acc, desc_a, desc_b, scale_d);
  }
};

}  // namespace hopgemm::device::collective
