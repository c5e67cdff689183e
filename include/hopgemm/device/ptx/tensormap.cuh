#pragma once
// Patching a TMA descriptor on the device (sm_90a): edit a copy in shared memory, publish it to a global slot for
// the tensormap proxy, and acquire it there before the first TMA that uses it.

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::ptx {

// tensormap.replace.tile.global_address.shared::cta.b1024.b64 [map], address;
HOPGEMM_DEVICE void tensormap_replace_global_address(u32 smem_map, const void* address) {
  asm volatile("tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;\n" ::"r"(smem_map),
               "l"(reinterpret_cast<u64>(address))
               : "memory");
}
// tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [map], 0, size;  (the innermost dimension)
HOPGEMM_DEVICE void tensormap_replace_inner_dim(u32 smem_map, u32 size) {
  asm volatile("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 0, %1;\n" ::"r"(smem_map), "r"(size)
               : "memory");
}
// tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [map], 0, bytes;  (the stride of dimension 1)
HOPGEMM_DEVICE void tensormap_replace_outer_stride(u32 smem_map, u64 bytes) {
  asm volatile("tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], 0, %1;\n" ::"r"(smem_map), "l"(bytes)
               : "memory");
}
// tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [slot], [map], 128;
// Warp-wide: copies the 128-byte descriptor to its global slot and releases it to the tensormap proxy. ptxas lowers
// it to an ld.shared and an atomic exchange per lane (4 bytes each, old value discarded), so compute-sanitizer
// initcheck calls the first copy into a slot nothing wrote an uninitialised read: the host hands out slots in
// memory zeroed when allocated, outside a CUDA-graph capture (src/runtime/workspace.hpp).
HOPGEMM_DEVICE void tensormap_publish(void* global_slot, u32 smem_map) {
  asm volatile(
      "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%0], [%1], 128;\n" ::"l"(
          global_slot),
      "r"(smem_map)
      : "memory");
}
// fence.proxy.tensormap::generic.acquire.gpu [slot], 128;  before the first TMA through a published descriptor.
HOPGEMM_DEVICE void tensormap_acquire(const void* global_slot) {
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;\n" ::"l"(global_slot) : "memory");
}

}  // namespace hopgemm::device::ptx
