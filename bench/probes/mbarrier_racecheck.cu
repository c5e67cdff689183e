// Does compute-sanitizer racecheck accept a warp's shared-memory accesses handed over through an mbarrier
// when only lane 0 arrives? The FP8 GEMM's row-major sfa staging does exactly that (producer warp stores a
// stage's scales, lane 0 arrives on full[s]; math warps read them, lane 0 arrives on empty[s]) and racecheck
// reports hazards there. This probe runs the same ring alone in three release styles:
//   0: lane 0 arrives, no warp barrier            (formally racy for lanes 1..31)
//   1: __syncwarp, then lane 0 arrives             (what the GEMM's producer does)
//   2: every lane arrives (arrival count x32)      (each thread's own release)
// GPU machine:
//   nvcc -O2 -std=c++20 -gencode=arch=compute_90a,code=sm_90a -o /tmp/mbar_probe bench/probes/mbarrier_racecheck.cu
//   for s in 0 1 2; do compute-sanitizer --tool racecheck /tmp/mbar_probe $s; done
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

constexpr int kStages = 4, kSlot = 64, kIters = 64, kConsumerWarps = 2;

__device__ __forceinline__ unsigned smem_addr(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void arrive(unsigned long long* bar) {
  asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void wait(unsigned long long* bar, unsigned parity) {
  asm volatile(
      "{\n.reg .pred p;\nWAIT:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra WAIT;\n}\n" ::"r"(
          smem_addr(bar)),
      "r"(parity)
      : "memory");
}

__global__ void ring(int style, float* out) {
  __shared__ alignas(8) unsigned long long full[kStages], empty[kStages];
  __shared__ float slots[kStages][kSlot];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int per_warp = style == 2 ? 32 : 1;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(&full[s])), "r"(per_warp));
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(&empty[s])), "r"(per_warp * kConsumerWarps));
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  auto release = [&](unsigned long long* bar) {
    if (style == 1) __syncwarp();
    if (style == 2 || lane == 0) arrive(bar);
  };
  float acc = 0.0f;
  for (int it = 0; it < kIters; ++it) {
    const int s = it % kStages;
    const unsigned phase = (it / kStages) & 1;
    if (warp == kConsumerWarps) {  // producer
      wait(&empty[s], phase ^ 1);
      slots[s][lane] = float(it + lane);
      slots[s][lane + 32] = float(it - lane);
      release(&full[s]);
    } else {  // consumers
      wait(&full[s], phase);
      acc += slots[s][(lane + warp) % kSlot] * slots[s][(lane + 33 * warp + 7) % kSlot];
      release(&empty[s]);
    }
  }
  if (warp < kConsumerWarps) out[threadIdx.x] = acc;
}

int main(int argc, char** argv) {
  const int style = argc > 1 ? std::atoi(argv[1]) : 1;
  float* out;
  cudaMalloc(&out, 32 * kConsumerWarps * sizeof(float));
  ring<<<1, 32 * (kConsumerWarps + 1)>>>(style, out);
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("style %d: %s\n", style, cudaGetErrorString(e));
  cudaFree(out);
  return e == cudaSuccess ? 0 : 1;
}
