#pragma once
// The descriptors the producer loads A and B through: a scheduler's loader hook. Most schedulers' units read the
// kernel parameters' own tma_a / tma_b (FixedOperandMaps); a scheduler whose groups are separate matrices names
// the descriptors it needs as `template <int kStages> using OperandMaps` (the K-grouped one: GroupPatchedMaps), and
// the producer enters every unit through them before its loads.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/kernels/sm90_gemm_types.cuh"
#include "hopgemm/device/ptx/tensormap.cuh"
#include "hopgemm/device/scheduler/sm90_work_unit.cuh"

namespace hopgemm::device::scheduler {

// The descriptors are taken from the parameters at each load rather than held: a pointer to a __grid_constant__
// parameter kept in a variable made ptxas rebuild the loads' operands (the producer of a 1D1D 128x144 kernel grew from
// 1232 to 1464 instructions).
struct FixedOperandMaps {
  HOPGEMM_DEVICE explicit FixedOperandMaps(const Sm90GemmParams&) {}
  template <class Scheduler>
  HOPGEMM_DEVICE void enter(const Sm90GemmParams&, u32*, const Scheduler&, const WorkUnit&, u32) {}
  HOPGEMM_DEVICE const TmaDescriptor* a(const Sm90GemmParams& p) const { return &p.tma_a; }
  HOPGEMM_DEVICE const TmaDescriptor* b(const Sm90GemmParams& p) const { return &p.tma_b; }
};

// K-grouped: A_g and B_g are separate [M, k_g] / [N, k_g] K-major matrices in flat buffers, so the loads go through
// descriptors patched for the group: the host's tma_a / tma_b with the group's base address, K and row stride,
// published to this CTA's ring of global slots. A slot is rewritten only once every load through it has landed: a
// group switch patches before the wait for its first stage, by which time every fill kStages or more before it was
// consumed; the previous user of the slot is k_group_map_slots(kStages) = kStages + 1 switches back, and each switch
// took at least one fill. The scheduler answers group_k_begin() (the group's first K in the flat buffers) and
// group_k().
template <int kElemBytes, int kStages>
struct GroupPatchedMaps {
  static constexpr int kSlots = k_group_map_slots(kStages);
  const TmaDescriptor* map_a;
  const TmaDescriptor* map_b;
  i32 group = -1;
  u32 switches = 0;

  HOPGEMM_DEVICE explicit GroupPatchedMaps(const Sm90GemmParams& p) : map_a(&p.tma_a), map_b(&p.tma_b) {}
  HOPGEMM_DEVICE const TmaDescriptor* a(const Sm90GemmParams&) const { return map_a; }
  HOPGEMM_DEVICE const TmaDescriptor* b(const Sm90GemmParams&) const { return map_b; }

  // Warp-wide (the publishing copy is .sync.aligned); lane 0 issues the loads afterwards. smem_maps: 256 bytes of
  // shared memory (A's descriptor, then B's) where they are patched.
  template <class Scheduler>
  HOPGEMM_DEVICE void enter(const Sm90GemmParams& p, u32* smem_maps, const Scheduler& sched, const WorkUnit& u,
                            u32 lane) {
    if (u.group == group) return;
    group = u.group;
    TmaDescriptor* slot = p.tensor_map_slots + (blockIdx.x * kSlots + switches % kSlots) * 2;
    ++switches;
    smem_maps[lane] = reinterpret_cast<const u32*>(&p.tma_a)[lane];
    smem_maps[32 + lane] = reinterpret_cast<const u32*>(&p.tma_b)[lane];
    __syncwarp();
    const u32 smem_a = ptx::smem_addr(smem_maps), smem_b = smem_a + 128;
    if (lane == 0) {
      const i64 k_begin = sched.group_k_begin();
      const u32 k = static_cast<u32>(sched.group_k());
      ptx::tensormap_replace_global_address(smem_a, p.a_base + k_begin * p.schedule.group_rows * kElemBytes);
      ptx::tensormap_replace_inner_dim(smem_a, k);
      ptx::tensormap_replace_outer_stride(smem_a, k * kElemBytes);
      ptx::tensormap_replace_global_address(smem_b, p.b_base + k_begin * p.schedule.n * kElemBytes);
      ptx::tensormap_replace_inner_dim(smem_b, k);
      ptx::tensormap_replace_outer_stride(smem_b, k * kElemBytes);
    }
    __syncwarp();
    ptx::tensormap_publish(slot, smem_a);
    ptx::tensormap_publish(slot + 1, smem_b);
    if (lane == 0) {
      ptx::tensormap_acquire(slot);
      ptx::tensormap_acquire(slot + 1);
    }
    map_a = slot;
    map_b = slot + 1;
  }
};

// The descriptors scheduler S's units load through, with a pipeline of kStages stages.
template <class S, int kStages>
struct OperandMapsOf {
  using Type = FixedOperandMaps;
};
template <class S, int kStages>
  requires requires { typename S::template OperandMaps<kStages>; }
struct OperandMapsOf<S, kStages> {
  using Type = typename S::template OperandMaps<kStages>;
};

}  // namespace hopgemm::device::scheduler
