#pragma once
// wgmma shared-memory matrix descriptors for K-major operands stored with TMA's 128-byte swizzle.

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::mma {

// Tile layout: rows of 128 bytes (128 FP8 K-elements), 8-row swizzle atoms of 1024 bytes, atoms
// stacked along M/N. Descriptor fields (PTX ISA "matrix descriptor"): start address >> 4 in bits
// 0-13, leading byte offset >> 4 in 16-29 (unused for swizzled K-major, set to 1), stride byte offset
// >> 4 in 32-45 (1024: next 8-row atom), base offset 0 (atoms 1024-aligned), layout 1 = SWIZZLE_128B in 62-63.
HOPGEMM_DEVICE u64 make_kmajor_sw128_desc(u32 smem_addr) {
  return static_cast<u64>((smem_addr >> 4) & 0x3FFF) | (1ull << 16) | (static_cast<u64>(1024 >> 4) << 32) | (1ull << 62);
}

// Advancing K by 32 FP8 elements inside the swizzled 128-byte row moves the start address by 32 bytes
// (the hardware applies the swizzle on the final address).
HOPGEMM_DEVICE u64 advance_desc_bytes(u64 desc, u32 bytes) { return desc + (bytes >> 4); }

}  // namespace hopgemm::device::mma
