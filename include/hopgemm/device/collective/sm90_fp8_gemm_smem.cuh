#pragma once
// The FP8 GEMM's shared memory as the kernel addresses it: the regions of smem_layout (kernels/sm90_fp8_gemm_types.cuh,
// which the host sizes the launch with) and the two barrier rings over them.

#include "hopgemm/device/collective/sm90_fp8_gemm_traits.cuh"
#include "hopgemm/device/pipeline/sm90_pipeline.cuh"
#include "hopgemm/device/ptx/mbarrier.cuh"

namespace hopgemm::device::collective {

template <Sm90Fp8GemmConfig kConfig>
struct Sm90Fp8GemmSharedStorage {
  using Traits = Sm90Fp8GemmTraits<kConfig>;
  static constexpr Sm90Fp8GemmSmem kSmem = Traits::kSmem;
  u32 d, a, b, sf_chunks;  // shared-window addresses: D tile, A and B stage 0, chunk slot 0
  u32* tensor_maps;        // k_groups: A's then B's descriptor, patched here (32 words each)
  float* sfa;              // stage 0's A scales (generic pointer: the staging warps store through it)
  float* sfb;              // stage 0's B scales (1D2D: 2 floats, 1D1D: kBlockN)
  pipeline::MbarrierPipeline<Traits::kStages> stages;
  pipeline::MbarrierPipeline<kSfChunkSlots> chunks;  // sf_chunks only

  HOPGEMM_DEVICE explicit Sm90Fp8GemmSharedStorage(u8* base) {
    d = ptx::smem_addr(base);
    a = d + kSmem.a;
    b = d + kSmem.b;
    sf_chunks = d + kSmem.sf_chunks;
    sfa = reinterpret_cast<float*>(base + kSmem.sfa);
    sfb = reinterpret_cast<float*>(base + kSmem.sfb);
    tensor_maps = reinterpret_cast<u32*>(base + kSmem.tensor_maps);
    stages = {reinterpret_cast<u64*>(base + kSmem.full), reinterpret_cast<u64*>(base + kSmem.empty)};
    chunks = {reinterpret_cast<u64*>(base + kSmem.sf_full), reinterpret_cast<u64*>(base + kSmem.sf_empty)};
  }
  HOPGEMM_DEVICE u32 a_stage(u32 s) const { return a + s * kSmem.a_stage; }
  HOPGEMM_DEVICE u32 b_stage(u32 s) const { return b + s * kSmem.b_stage; }
  HOPGEMM_DEVICE float* sfa_stage(u32 s) const { return sfa + s * kSmem.sfa_stage / 4; }
  HOPGEMM_DEVICE float* sfb_stage(u32 s) const { return sfb + s * kSmem.sfb_stage / 4; }
  HOPGEMM_DEVICE u32 chunk_slot(u32 slot) const { return sf_chunks + slot * kSmem.sf_chunk; }
};

}  // namespace hopgemm::device::collective
