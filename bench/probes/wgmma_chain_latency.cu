// How long one warpgroup's 128-deep K block of FP8 WGMMAs takes from issue to wait, by how the four k32 steps
// feed their accumulators. Small-M tiles (64 x 16..64) run 56 k-blocks back to back and measured ~0.28-0.31 us
// per k-block where DeepGEMM's kernels take at most 0.245 us (128x2112x7168: 13.7 us for 56 k-blocks): if the four steps chained into one accumulator set are
// latency-bound, spreading them over independent sets (summed at the promotion) would shorten each k-block.
// GPU machine:
//   nvcc -O2 -std=c++20 -gencode=arch=compute_90a,code=sm_90a -Iinclude -o /tmp/wgmma_chain bench/probes/wgmma_chain_latency.cu
//   /tmp/wgmma_chain
// One CTA, one warpgroup, operands in shared memory (zeros), cycles per iteration over 2000 iterations.
#include <cuda_runtime.h>

#include <cstdio>

#include "hopgemm/device/mma/sm90_smem_desc.cuh"
#include "hopgemm/device/ptx/wgmma.cuh"
#include "hopgemm/device/ptx/wgmma_e4m3.cuh"

using namespace hopgemm::device;

constexpr int kIters = 2000;

// kStyle 0: the four k32 steps accumulate into one set (what the kernel does without promote_overlap).
//        1: steps 0, 2 into set 0 and 1, 3 into set 1 (two independent chains of two).
//        2: each step into its own set (four independent wgmmas).
//        3: style 0, two k-blocks in flight (wait_group 1 with alternating sets: the promote_overlap schedule).
template <int kN, int kStyle>
__global__ void __launch_bounds__(128, 1) chain(long long* cycles, float* sink) {
  extern __shared__ __align__(1024) unsigned char smem[];
  for (int i = threadIdx.x; i < (64 + kN) * 128; i += blockDim.x) smem[i] = 0;
  __syncthreads();
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  const u64 desc_a = mma::make_kmajor_sw128_desc(static_cast<u32>(__cvta_generic_to_shared(smem)));
  const u64 desc_b = mma::make_kmajor_sw128_desc(static_cast<u32>(__cvta_generic_to_shared(smem + 64 * 128)));
  constexpr int kSets = kStyle == 2 ? 4 : kStyle == 0 ? 1 : 2;
  float acc[kSets][kN / 2] = {};
  auto step = [&](float (&d)[kN / 2], int kk, bool accumulate) {
    ptx::WgmmaE4m3<kN>::mma(d, mma::advance_desc_bytes(desc_a, kk * 32), mma::advance_desc_bytes(desc_b, kk * 32),
                            accumulate);
  };
  // One k-block into set `set0` (style 0, 3) or spread over the sets (styles 1, 2); returns after the commit.
  auto issue = [&]<int kFirstSet>() {
#pragma unroll
    for (int s = 0; s < kSets; ++s) ptx::wgmma_fence_operand(acc[s]);
    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      const int set = kStyle == 1 ? kk % 2 : kStyle == 2 ? kk : kFirstSet;
      if (set == 0) step(acc[0], kk, true);
      if constexpr (kSets > 1) if (set == 1) step(acc[1], kk, true);
      if constexpr (kSets > 2) if (set == 2) step(acc[2], kk, true);
      if constexpr (kSets > 3) if (set == 3) step(acc[3], kk, true);
    }
    ptx::wgmma_commit_group();
  };
  long long start = 0;
  for (int it = -10; it < kIters; it += 2) {
    if (it == 0) start = clock64();
    if constexpr (kStyle == 3) {  // two k-blocks in flight: wait for the older group only
      issue.template operator()<0>();
      ptx::wgmma_wait_group<1>();
      ptx::wgmma_fence_operand(acc[1]);
      issue.template operator()<1>();
      ptx::wgmma_wait_group<1>();
      ptx::wgmma_fence_operand(acc[0]);
    } else {
      issue.template operator()<0>();
      ptx::wgmma_wait_group<0>();
      issue.template operator()<0>();
      ptx::wgmma_wait_group<0>();
    }
#pragma unroll
    for (int s = 0; s < kSets; ++s) ptx::wgmma_fence_operand(acc[s]);
  }
  ptx::wgmma_wait_group<0>();
  const long long stop = clock64();
  float total = 0.0f;
#pragma unroll
  for (int s = 0; s < kSets; ++s)
#pragma unroll
    for (int i = 0; i < kN / 2; ++i) total += acc[s][i];
  sink[threadIdx.x] = total;
  if (threadIdx.x == 0) *cycles = stop - start;
}

template <int kN, int kStyle>
void run(const char* name, long long* d_cycles, float* d_sink) {
  const int smem = (64 + kN) * 128 + 1024;
  cudaFuncSetAttribute(chain<kN, kStyle>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  chain<kN, kStyle><<<1, 128, smem>>>(d_cycles, d_sink);
  long long cycles = 0;
  const cudaError_t e = cudaMemcpy(&cycles, d_cycles, sizeof(cycles), cudaMemcpyDeviceToHost);
  std::printf("n%-4d %-44s %7.1f cycles per 64x%dx128 k-block %s\n", kN, name, double(cycles) / kIters, kN,
              e == cudaSuccess ? "" : cudaGetErrorString(e));
}

template <int kN>
void run_all(long long* c, float* s) {
  run<kN, 0>("4 steps chained into one set", c, s);
  run<kN, 1>("2 chains of 2 (sets 0/1 alternate)", c, s);
  if constexpr (kN <= 64) run<kN, 2>("4 independent sets", c, s);
  run<kN, 3>("chained, 2 k-blocks in flight (wait 1)", c, s);
}

int main() {
  long long* cycles;
  float* sink;
  cudaMalloc(&cycles, sizeof(long long));
  cudaMalloc(&sink, 128 * sizeof(float));
  run_all<16>(cycles, sink);
  run_all<32>(cycles, sink);
  run_all<64>(cycles, sink);
  run_all<128>(cycles, sink);
  return 0;
}
