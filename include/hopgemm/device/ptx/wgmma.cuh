#pragma once
// Warpgroup MMA synchronisation (sm_90a). The MMA instructions themselves are in wgmma_e4m3.cuh (generated).

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/ptx/wgmma_e4m3.cuh"

namespace hopgemm::device::ptx {

// wgmma.fence.sync.aligned;  (sm_90a) orders register/smem accesses before the next wgmma.mma_async.
HOPGEMM_DEVICE void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }

// wgmma.commit_group.sync.aligned;  (sm_90a) closes the current group of wgmma.mma_async.
HOPGEMM_DEVICE void wgmma_commit_group() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }

// wgmma.wait_group.sync.aligned N;  (sm_90a) waits until at most N groups are pending.
template <int N>
HOPGEMM_DEVICE void wgmma_wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// Compiler-only fence on accumulator registers: keeps the compiler from moving their uses across
// wgmma.fence / wait_group (the asm above does not name the registers).
template <int N>
HOPGEMM_DEVICE void wgmma_fence_operand(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
// The same for a WGMMA's A fragments in registers: kept live (and unmoved) up to this point, so that the compiler
// gives registers written meanwhile other homes than those the WGMMAs in flight still read.
template <int R, int C>
HOPGEMM_DEVICE void wgmma_fence_operand(u32 (&a)[R][C]) {
#pragma unroll
  for (int i = 0; i < R; ++i)
#pragma unroll
    for (int j = 0; j < C; ++j) asm volatile("" : "+r"(a[i][j])::"memory");
}

}  // namespace hopgemm::device::ptx
