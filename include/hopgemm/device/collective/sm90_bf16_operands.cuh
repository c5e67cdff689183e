#pragma once
// The BF16 family's operand policy (collective/sm90_operands.cuh lists a policy's members): 64 elements (128 bytes) of
// K per k-block, m64nNk16 WGMMAs, and each of A and B K-major or MN-major as the caller gives it: SM90's 16-bit WGMMA
// reads an MN-major tile natively (the instruction's transpose bit and an MN-major descriptor), so no operand is
// transposed in memory.
//   K-major tile:  row r of the tile at r x 128 bytes (K along the row); a WGMMA's K step is 16 elements = 32 bytes.
//   MN-major tile: 64-row atoms of kBlockK K-rows x 128 bytes (64 MN elements along the row), one TMA box each; a
//                  WGMMA's K step is 16 K-rows = 2048 bytes.

#include "hopgemm/device/collective/sm90_operands.cuh"
#include "hopgemm/device/ptx/wgmma_bf16.cuh"

namespace hopgemm::device::collective {

template <bool kAKMajor, bool kBKMajor>
struct Sm90Bf16Operands {
  static constexpr int kElemBytes = 2;
  static constexpr int kBlockK = kSm90KBlockBytes / kElemBytes;
  static constexpr int kMmaK = 16;
  using LoadA = Sm90OperandTileLoad<kAKMajor, kBlockK>;
  using LoadB = Sm90OperandTileLoad<kBKMajor, kBlockK>;
  static constexpr u32 kKMajorStepBytes = kMmaK * kElemBytes, kMnMajorStepBytes = kMmaK * kSm90KBlockBytes;
  static constexpr u32 kAMmaStepBytes = kAKMajor ? kKMajorStepBytes : kMnMajorStepBytes;
  static constexpr u32 kBMmaStepBytes = kBKMajor ? kKMajorStepBytes : kMnMajorStepBytes;

  HOPGEMM_DEVICE static u64 make_desc(u32 smem_addr, bool k_major) {
    return k_major ? mma::make_kmajor_sw128_desc(smem_addr)
                   : mma::make_mnmajor_sw128_desc(smem_addr, LoadA::kAtomBytes);
  }
  HOPGEMM_DEVICE static u64 make_desc_a(u32 smem_addr) { return make_desc(smem_addr, kAKMajor); }
  HOPGEMM_DEVICE static u64 make_desc_b(u32 smem_addr) { return make_desc(smem_addr, kBKMajor); }
  template <int N>
  HOPGEMM_DEVICE static void mma(float (&acc)[N / 2], u64 desc_a, u64 desc_b, u32 scale_d) {
    ptx::WgmmaBf16<N>::template mma<kAKMajor ? 0 : 1, kBKMajor ? 0 : 1>(acc, desc_a, desc_b, scale_d);
  }
};

}  // namespace hopgemm::device::collective
