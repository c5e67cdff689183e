#pragma once
// Operand policies: how a family's A and B tiles sit in shared memory and reach the tensor cores. A k-block of a tile
// takes 128 bytes per tile row (kBlockK elements of kElemBytes), kSm90KBlockBytes x rows in all, and is consumed by
// kBlockK / kMmaK WGMMAs. A policy provides:
//   kElemBytes, kBlockK, kMmaK          element size, elements per k-block, elements per WGMMA
//   make_desc_a/_b(smem_addr)           the WGMMA descriptor of an A / B tile starting at smem_addr
//   kAMmaStepBytes, kBMmaStepBytes      how far a descriptor's start moves for the next WGMMA along K
//   LoadA, LoadB                        the TMA of a tile's rows for one k-block (Sm90OperandTileLoad: load<kRows>,
//                                       load_multicast<kRows>)
//   mma<N>(acc, desc_a, desc_b, scale_d)  one m64nNk(kMmaK) WGMMA into acc (scale_d == 0 overwrites)
// Tile rows are 64-row steps apart by 64 x 128 bytes in either major (a wave's and a warpgroup's rows: the mainloop).

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/kernels/sm90_gemm_types.cuh"
#include "hopgemm/device/mma/sm90_smem_desc.cuh"
#include "hopgemm/device/ptx/tma.cuh"
#include "hopgemm/device/ptx/wgmma.cuh"

namespace hopgemm::device::collective {

// The TMA of an operand tile's kRows rows for one k-block.
//   K-major:  one box of the map's rows x 128 bytes of K at (k0, row0): row r at r x 128 bytes, swizzled.
//   MN-major: the map is [K, rows] with rows contiguous; one box of 64 rows (128 bytes) x kBlockK K-rows per 64 tile
//             rows, at (row0 + 64 i, k0), box i at i x 64 x 128 bytes: the same bytes per 64 rows as K-major.
// kBatched: the map is 3-D, `batch` its outermost coordinate (a batched scheduler's); else 2-D and batch unused.
template <bool kKMajor, int kBlockK>
struct Sm90OperandTileLoad {
  static constexpr bool kIsKMajor = kKMajor;
  static constexpr int kAtomRows = 64, kAtomBytes = kAtomRows * kSm90KBlockBytes;
  template <int kRows, bool kBatched = false>
  HOPGEMM_DEVICE static void load(u32 dst, const TmaDescriptor* map, i32 k0, i32 row0, i32 batch, u32 bar) {
    if constexpr (kKMajor) {
      copy<kBatched>(dst, map, k0, row0, batch, bar);
    } else {
      static_assert(kRows % kAtomRows == 0, "an MN-major tile loads whole 64-row atoms");
#pragma unroll
      for (int i = 0; i < kRows / kAtomRows; ++i) copy<kBatched>(dst + i * kAtomBytes, map, row0 + i * kAtomRows, k0, batch, bar);
    }
  }
  template <int kRows, bool kBatched = false>
  HOPGEMM_DEVICE static void load_multicast(u32 dst, const TmaDescriptor* map, i32 k0, i32 row0, i32 batch, u32 bar,
                                            u16 mask) {
    if constexpr (kKMajor) {
      copy_multicast<kBatched>(dst, map, k0, row0, batch, bar, mask);
    } else {
      static_assert(kRows % kAtomRows == 0, "an MN-major tile loads whole 64-row atoms");
#pragma unroll
      for (int i = 0; i < kRows / kAtomRows; ++i)
        copy_multicast<kBatched>(dst + i * kAtomBytes, map, row0 + i * kAtomRows, k0, batch, bar, mask);
    }
  }

 private:
  template <bool kBatched>
  HOPGEMM_DEVICE static void copy(u32 dst, const TmaDescriptor* map, i32 x, i32 y, i32 batch, u32 bar) {
    if constexpr (kBatched)
      ptx::cp_async_bulk_tensor_3d_g2s(dst, map, x, y, batch, bar);
    else
      ptx::cp_async_bulk_tensor_2d_g2s(dst, map, x, y, bar);
  }
  template <bool kBatched>
  HOPGEMM_DEVICE static void copy_multicast(u32 dst, const TmaDescriptor* map, i32 x, i32 y, i32 batch, u32 bar,
                                            u16 mask) {
    if constexpr (kBatched)
      ptx::cp_async_bulk_tensor_3d_g2s_multicast(dst, map, x, y, batch, bar, mask);
    else
      ptx::cp_async_bulk_tensor_2d_g2s_multicast(dst, map, x, y, bar, mask);
  }
};

// FP8 e4m3, both operands K-major (the only form SM90's FP8 WGMMA reads): 128 elements per k-block, k32 WGMMAs.
struct Sm90E4m3Operands {
  static constexpr int kElemBytes = 1;
  static constexpr int kBlockK = kSm90KBlockBytes / kElemBytes;
  static constexpr int kMmaK = 32;
  static constexpr u32 kAMmaStepBytes = kMmaK * kElemBytes, kBMmaStepBytes = kAMmaStepBytes;
  using LoadA = Sm90OperandTileLoad<true, kBlockK>;
  using LoadB = LoadA;
  HOPGEMM_DEVICE static u64 make_desc_a(u32 smem_addr) { return mma::make_kmajor_sw128_desc(smem_addr); }
  HOPGEMM_DEVICE static u64 make_desc_b(u32 smem_addr) { return mma::make_kmajor_sw128_desc(smem_addr); }
  template <int N>
  HOPGEMM_DEVICE static void mma(float (&acc)[N / 2], u64 desc_a, u64 desc_b, u32 scale_d) {
    ptx::WgmmaE4m3<N>::mma(acc, desc_a, desc_b, scale_d);
  }
};

}  // namespace hopgemm::device::collective
