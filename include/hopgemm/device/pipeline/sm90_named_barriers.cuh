#pragma once
// Named-barrier ids (bar.sync / bar.arrive) of the GEMM kernels, one place so no two users collide.

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::pipeline {

enum NamedBarrier : u32 {
  kBarrierCta = 0,          // __syncthreads
  kBarrierWarpgroup0 = 1,   // 1 .. 3: one per math warpgroup (its epilogue passes, D staged in a stage)
  kBarrierMathThreads = 7,  // every math thread (split-K's verdict)
};

}  // namespace hopgemm::device::pipeline
