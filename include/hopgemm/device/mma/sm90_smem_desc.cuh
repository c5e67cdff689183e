#pragma once
// wgmma shared-memory matrix descriptors for operands stored with TMA's 128-byte swizzle, K-major or MN-major.

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::mma {

// Tile layout: rows of 128 bytes (128 FP8 K-elements), 8-row swizzle atoms of 1024 bytes, atoms
// stacked along M/N. Descriptor fields (PTX ISA "matrix descriptor"): start address >> 4 in bits
// 0-13, leading byte offset >> 4 in 16-29 (unused for swizzled K-major, set to 1), stride byte offset
// >> 4 in 32-45 (1024: next 8-row atom), base offset 0 (atoms 1024-aligned), layout 1 = SWIZZLE_128B in 62-63.
HOPGEMM_DEVICE u64 make_kmajor_sw128_desc(u32 smem_addr) {
  return static_cast<u64>((smem_addr >> 4) & 0x3FFF) | (1ull << 16) | (static_cast<u64>(1024 >> 4) << 32) | (1ull << 62);
}

// The same for K-major rows of `swizzle_bytes` (32, 64 or 128 bytes, the TMA swizzle of the same width): layout 3, 2
// or 1 in bits 62-63, 8-row atoms of 8 * swizzle_bytes (the stride byte offset). A K extent of one row per operand.
HOPGEMM_DEVICE u64 make_kmajor_desc(u32 smem_addr, int swizzle_bytes) {
  const u64 layout = swizzle_bytes == 128 ? 1 : swizzle_bytes == 64 ? 2 : 3;
  return static_cast<u64>((smem_addr >> 4) & 0x3FFF) | (1ull << 16) |
         (static_cast<u64>((8 * swizzle_bytes) >> 4) << 32) | (layout << 62);
}

// MN-major (16-bit types; the WGMMA's imm-trans bit set): atoms of 64 MN elements (128 bytes) x 8 K-rows, 1024 bytes.
// Stride byte offset (bits 32-45): 1024, the next 8 K-rows; leading byte offset (bits 16-29): mn_atom_bytes, the next
// 64 MN elements (a TMA box of 64 x block_k, which the producer stacks along MN: 64 x 128 bytes for a BF16 k-block).
HOPGEMM_DEVICE u64 make_mnmajor_sw128_desc(u32 smem_addr, u32 mn_atom_bytes) {
  return static_cast<u64>((smem_addr >> 4) & 0x3FFF) | (static_cast<u64>((mn_atom_bytes >> 4) & 0x3FFF) << 16) |
         (static_cast<u64>(1024 >> 4) << 32) | (1ull << 62);
}

// Advancing K by 32 FP8 elements inside the swizzled 128-byte row moves the start address by 32 bytes
// (the hardware applies the swizzle on the final address).
HOPGEMM_DEVICE u64 advance_desc_bytes(u64 desc, u32 bytes) { return desc + (bytes >> 4); }

}  // namespace hopgemm::device::mma
