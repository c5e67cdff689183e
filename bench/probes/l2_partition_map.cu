// Which SMs share an L2 partition. The H100's L2 is split in two halves joined by a fabric; an SM reading a line
// homed in the far half pays the crossing (notes v19: cuBLASLt's kernels cross 0.58x as often as ours per byte, so a
// tile order that keeps the CTAs sharing a panel on one half could pay). This probe times, from every SM in turn, a
// dependent chain of atomic adds to each of kLines lines. Atomics are performed where the line is homed (a plain load
// may hit a copy the SM's own half keeps once it has been read), so a line homed in the SM's own half answers
// sooner. SMs whose latency profiles over the lines agree are on the same half.
// GPU machine:
//   nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o /tmp/l2_partition_map bench/probes/l2_partition_map.cu
//   /tmp/l2_partition_map
// Prints per SM id its mean chain latency (cycles per atomic), the half it falls in (by correlation with SM 0's
// profile) and the two halves' SM ids.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <vector>

constexpr int kLines = 64;          // probed lines, kStride bytes apart
constexpr int kStride = 64 * 1024;  // far enough apart to land on different slices
constexpr int kChain = 32;          // dependent loads per line and SM

__device__ unsigned smid() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

// One warp per CTA, one CTA per SM (the shared memory request keeps a second CTA off). CTAs take turns through
// `turn` (polled every 2 us) so that only one SM works at a time. Each atomic's address depends on the previous one's
// result times `zero` (0 at run time, unknown to the compiler), so the chain is serial without moving.
__global__ void __launch_bounds__(32, 1) probe(unsigned* lines, unsigned zero, unsigned* turn, float* latency,
                                               unsigned* ids) {
  extern __shared__ unsigned char keep_one_cta_per_sm[];
  if (threadIdx.x != 0) return;
  const unsigned me = blockIdx.x;
  while (*reinterpret_cast<volatile unsigned*>(turn) != me) __nanosleep(2000);  // light polling: little L2 traffic
  const unsigned sm = smid();
  ids[me] = sm;
  for (int l = 0; l < kLines; ++l) {
    unsigned* p = lines + size_t(l) * kStride / sizeof(unsigned);
    unsigned offset = 0;
    for (int i = 0; i < 4; ++i) offset = atomicAdd(p + offset, 1u) * zero;  // warm: the line into L2, the TLB
    const long long start = clock64();
    for (int i = 0; i < kChain; ++i) offset = atomicAdd(p + offset, 1u) * zero;
    const long long stop = clock64();
    latency[me * kLines + l] = float(stop - start + offset) / kChain;
  }
  keep_one_cta_per_sm[0] = 0;
  __threadfence();
  atomicAdd(turn, 1);
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  unsigned *lines, *turn, *ids;
  float* latency;
  cudaMalloc(&lines, size_t(kLines) * kStride);
  cudaMemset(lines, 0, size_t(kLines) * kStride);
  cudaMalloc(&turn, sizeof(unsigned));
  cudaMemset(turn, 0, sizeof(unsigned));
  cudaMalloc(&ids, sms * sizeof(unsigned));
  cudaMalloc(&latency, size_t(sms) * kLines * sizeof(float));
  const int smem = 200 * 1024;
  cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  probe<<<sms, 32, smem>>>(lines, 0u, turn, latency, ids);
  if (cudaDeviceSynchronize() != cudaSuccess) {
    std::printf("probe failed: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  std::vector<float> lat(size_t(sms) * kLines);
  std::vector<unsigned> id(sms);
  cudaMemcpy(lat.data(), latency, lat.size() * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(id.data(), ids, id.size() * sizeof(unsigned), cudaMemcpyDeviceToHost);

  // Each SM's profile relative to its own mean; the half of an SM: the sign of its correlation with CTA 0's SM.
  auto centred = [&](int c) {
    std::vector<double> v(kLines);
    double mean = 0;
    for (int l = 0; l < kLines; ++l) mean += lat[c * kLines + l];
    mean /= kLines;
    for (int l = 0; l < kLines; ++l) v[l] = lat[c * kLines + l] - mean;
    return std::make_pair(v, mean);
  };
  const auto [ref, ref_mean] = centred(0);
  std::vector<int> half(sms);
  std::vector<std::vector<unsigned>> members(2);
  std::printf("cta  smid  mean-cycles  corr-with-cta0  half\n");
  for (int c = 0; c < sms; ++c) {
    const auto [v, mean] = centred(c);
    double dot = 0, a = 0, b = 0;
    for (int l = 0; l < kLines; ++l) {
      dot += v[l] * ref[l];
      a += v[l] * v[l];
      b += ref[l] * ref[l];
    }
    const double corr = dot / std::sqrt(a * b + 1e-30);
    half[c] = corr >= 0 ? 0 : 1;
    members[half[c]].push_back(id[c]);
    std::printf("%3d  %4u  %11.1f  %14.3f  %4d\n", c, id[c], mean, corr, half[c]);
  }
  for (int h = 0; h < 2; ++h) {
    std::printf("half %d (%zu SMs):", h, members[h].size());
    for (unsigned s : members[h]) std::printf(" %u", s);
    std::printf("\n");
  }
  // The raw profiles, for grouping offline (more than two groups, e.g. by GPC, show up here).
  std::printf("raw: smid then %d per-line cycles\n", kLines);
  for (int c = 0; c < sms; ++c) {
    std::printf("%u", id[c]);
    for (int l = 0; l < kLines; ++l) std::printf(" %.0f", lat[c * kLines + l]);
    std::printf("\n");
  }
  return 0;
}
