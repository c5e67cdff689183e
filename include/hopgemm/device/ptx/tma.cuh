#pragma once
// Bulk tensor copies (TMA) and their completion groups (sm_90). Descriptors live in kernel param
// space (__grid_constant__), so their generic address is passed straight to the instruction.

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::ptx {

// prefetch.tensormap [addr];  (sm_90) warms the descriptor cache.
HOPGEMM_DEVICE void prefetch_tensormap(const TmaDescriptor* desc) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<u64>(desc)) : "memory");
}

// cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [dst], [desc, {x, y}], [bar];
// (sm_90) x is the innermost coordinate (elements).
HOPGEMM_DEVICE void cp_async_bulk_tensor_2d_g2s(u32 dst, const TmaDescriptor* desc, i32 x, i32 y, u32 bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<u64>(desc)), "r"(x), "r"(y), "r"(bar)
      : "memory");
}

// cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster
//   [dst], [desc, {x, y}], [bar], mask;  (sm_90) writes the box (and signals the barrier) at the same
// smem offsets in every CTA of the cluster named in mask.
HOPGEMM_DEVICE void cp_async_bulk_tensor_2d_g2s_multicast(u32 dst, const TmaDescriptor* desc, i32 x, i32 y, u32 bar,
                                                         u16 mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
      "[%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<u64>(desc)), "r"(x), "r"(y), "r"(bar), "h"(mask)
      : "memory");
}

// cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [desc, {x, y}], [src];  (sm_90)
HOPGEMM_DEVICE void cp_async_bulk_tensor_2d_s2g(const TmaDescriptor* desc, i32 x, i32 y, u32 src) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(
                   reinterpret_cast<u64>(desc)),
               "r"(x), "r"(y), "r"(src)
               : "memory");
}

// The 3-D forms (sm_90): {x, y, z}, x innermost. The batched schedulers' operands and outputs: z is the batch.
// cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [dst], [desc, {x, y, z}], [bar];
HOPGEMM_DEVICE void cp_async_bulk_tensor_3d_g2s(u32 dst, const TmaDescriptor* desc, i32 x, i32 y, i32 z, u32 bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(dst),
      "l"(reinterpret_cast<u64>(desc)), "r"(x), "r"(y), "r"(z), "r"(bar)
      : "memory");
}

// cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster
//   [dst], [desc, {x, y, z}], [bar], mask;
HOPGEMM_DEVICE void cp_async_bulk_tensor_3d_g2s_multicast(u32 dst, const TmaDescriptor* desc, i32 x, i32 y, i32 z,
                                                         u32 bar, u16 mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
      "[%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(dst),
      "l"(reinterpret_cast<u64>(desc)), "r"(x), "r"(y), "r"(z), "r"(bar), "h"(mask)
      : "memory");
}

// cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [desc, {x, y, z}], [src];
HOPGEMM_DEVICE void cp_async_bulk_tensor_3d_s2g(const TmaDescriptor* desc, i32 x, i32 y, i32 z, u32 src) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3}], [%4];\n" ::"l"(
                   reinterpret_cast<u64>(desc)),
               "r"(x), "r"(y), "r"(z), "r"(src)
               : "memory");
}

// cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [desc, {x, y}], [src];  (sm_90)
// element-wise global += smem box, in the descriptor's dtype.
HOPGEMM_DEVICE void cp_reduce_async_bulk_tensor_2d_add(const TmaDescriptor* desc, i32 x, i32 y, u32 src) {
  asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(
                   reinterpret_cast<u64>(desc)),
               "r"(x), "r"(y), "r"(src)
               : "memory");
}

// cp.async.bulk.commit_group;  (sm_90)
HOPGEMM_DEVICE void cp_async_bulk_commit_group() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }

// cp.async.bulk.wait_group.read N;  (sm_90) at most N groups may still be reading their smem source.
template <int N>
HOPGEMM_DEVICE void cp_async_bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}

// cp.async.bulk.wait_group N;  (sm_90) at most N groups may still be pending (writes included).
template <int N>
HOPGEMM_DEVICE void cp_async_bulk_wait_group() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}

}  // namespace hopgemm::device::ptx
