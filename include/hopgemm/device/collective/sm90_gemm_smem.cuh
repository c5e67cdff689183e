#pragma once
// A GEMM kernel's shared memory as it addresses it: the regions of gemm_smem_layout (kernels/sm90_gemm_types.cuh,
// which the host sizes the launch with), the stage ring over them, and the scale policy's own regions (Storage).

#include "hopgemm/device/collective/sm90_gemm_traits.cuh"
#include "hopgemm/device/pipeline/sm90_pipeline.cuh"
#include "hopgemm/device/ptx/mbarrier.cuh"

namespace hopgemm::device::collective {

template <class K>  // Sm90GemmTraits
struct Sm90GemmSharedStorage {
  static constexpr Sm90GemmSmem kSmem = K::kSmem;
  u32 d, a, b;      // shared-window addresses: D tile, A and B stage 0
  u32* tensor_maps;  // k_groups: A's then B's descriptor, patched here (32 words each)
  pipeline::MbarrierPipeline<K::kStages> stages;
  typename K::Scales::Storage scales;

  HOPGEMM_DEVICE explicit Sm90GemmSharedStorage(u8* base) : scales(base) {
    d = ptx::smem_addr(base);
    a = d + kSmem.a;
    b = d + kSmem.b;
    tensor_maps = reinterpret_cast<u32*>(base + kSmem.tensor_maps);
    stages = {reinterpret_cast<u64*>(base + kSmem.full), reinterpret_cast<u64*>(base + kSmem.empty)};
  }
  HOPGEMM_DEVICE u32 a_stage(u32 s) const { return a + s * kSmem.a_stage; }
  HOPGEMM_DEVICE u32 b_stage(u32 s) const { return b + s * kSmem.b_stage; }
};

}  // namespace hopgemm::device::collective
