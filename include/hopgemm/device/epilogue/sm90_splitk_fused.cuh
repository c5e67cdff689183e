#pragma once
// Split-K reduction fused into the GEMM (k_splits > 1): the splits of a tile meet in global memory instead of in a
// second kernel. Each split stores its FP32 partial in the math threads' own fragment order (float4 chunks,
// chunk-major so a warp's store is 512 contiguous bytes), then counts itself on the tile's counter; the split
// that counts last reads the others' partials (every split's at once where registers allow), adds them in split
// order (so the result does not depend on which split finished last: reruns are bitwise identical), resets the
// counter for the next call, and goes on to store D like an unsplit tile. No split waits for another, so no
// ordering of CTAs is assumed.
//
// Memory ordering: every thread fences (gpu scope) after its partial stores, the math threads meet on a named
// barrier, then one thread counts (atomicAdd); the last split's counting thread fences after observing the
// count, and the barrier that spreads the verdict orders the other threads' reads after it (the reads go to L2,
// ld.global.cg, never to a possibly stale L1 line).

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/ptx/barrier.cuh"

namespace hopgemm::device::epilogue {

// fin: this thread's promoted accumulators for the tile (kWaves x kHalfN floats). partials: the workspace,
// [tile][split][chunk][math thread] float4. kLoadFloats: the registers a thread has free beside fin for partials in
// flight. Returns true in the CTA that must store D, with fin = the sum.
template <int kWaves, int kHalfN, int kSplits, int kMathThreads, int kLoadFloats>
HOPGEMM_DEVICE bool splitk_fused_reduce(float (&fin)[kWaves][kHalfN], float* partials, u32* tile_counters, i32 tile,
                                        i32 split, u32 barrier_id) {
  static_assert(kHalfN % 4 == 0, "float4 chunks of the thread's fragment");
  constexpr int kChunksPerWave = kHalfN / 4, kChunks = kWaves * kChunksPerWave;
  const u32 thread = threadIdx.x;  // the math threads are 0 .. kMathThreads - 1
  float4* const tile_base = reinterpret_cast<float4*>(partials) + static_cast<i64>(tile) * kSplits * kChunks * kMathThreads;
  auto chunk_ptr = [&](i32 s, int c) { return tile_base + (static_cast<i64>(s) * kChunks + c) * kMathThreads + thread; };

#pragma unroll
  for (int w = 0; w < kWaves; ++w)
#pragma unroll
    for (int c = 0; c < kChunksPerWave; ++c)
      *chunk_ptr(split, w * kChunksPerWave + c) =
          make_float4(fin[w][4 * c], fin[w][4 * c + 1], fin[w][4 * c + 2], fin[w][4 * c + 3]);
  __threadfence();
  ptx::bar_sync(barrier_id, kMathThreads);
  bool counted_last = false;
  if (thread == 0) {
    counted_last = atomicAdd(tile_counters + tile, 1u) == kSplits - 1;
    __threadfence();
  }
  // The verdict broadcast from lane 0, so that ptxas knows it is warp-uniform. Taken as it is, the branch on it counted
  // as divergent and the persistent loop's WGMMA descriptors left the uniform datapath: 48 R2UR per k-block in a 64x64
  // decode kernel's mainloop (SASS); without them seven decode rows took 1-2.4% less time
  // (bench/results/h100-2026-11-22-ab-fused-verdict-and-tail-code.txt).
  if (!__shfl_sync(0xffffffffu, ptx::bar_sync_or(barrier_id, kMathThreads, counted_last), 0)) return false;

  if (thread == 0) tile_counters[tile] = 0;  // every split has counted: ready for the next call
  // Summed in split order whichever split finishes last (reruns are bitwise identical), in groups of chunks.
  // Where the registers allow, a group's chunks of every split are loaded at once (this split's own taken from fin)
  // and then summed: the reads overlap instead of costing one L2 round trip per split. Else one split at a time, in
  // place in fin: splits 0 and 1 first (when this is one of them, its own plus the other's, as addition commutes),
  // and a later split's own partial read back from L2 in its turn.
  constexpr int kBudget = kLoadFloats < 32 ? 32 : kLoadFloats;  // one group of 8 chunks always fits (ptxas)
  auto largest_group = [](int splits_at_once) {
    for (int g = kChunks; g > 1; --g)
      if (kChunks % g == 0 && splits_at_once * g * 4 <= kBudget) return g;
    return 1;
  };
  // L2 round trips: all splits at once, kChunks / group of them; one split at a time, (kSplits - 1) x kChunks / group.
  constexpr bool kAllAtOnce =
      kSplits * 4 <= kLoadFloats && kChunks / largest_group(kSplits) < (kSplits - 1) * (kChunks / largest_group(1));
  constexpr int kGroup = largest_group(kAllAtOnce ? kSplits : 1);
  auto fin_chunk = [&](int c) -> float* { return &fin[c / kChunksPerWave][4 * (c % kChunksPerWave)]; };
#pragma unroll
  for (int g0 = 0; g0 < kChunks; g0 += kGroup) {
    if constexpr (kAllAtOnce) {
      float4 v[kSplits][kGroup];
#pragma unroll
      for (int s = 0; s < kSplits; ++s)
#pragma unroll
        for (int j = 0; j < kGroup; ++j) {
          const float* f = fin_chunk(g0 + j);
          v[s][j] = s == split ? make_float4(f[0], f[1], f[2], f[3]) : __ldcg(chunk_ptr(s, g0 + j));
        }
#pragma unroll
      for (int j = 0; j < kGroup; ++j) {
        float4 sum = v[0][j];
#pragma unroll
        for (int s = 1; s < kSplits; ++s) sum.x += v[s][j].x, sum.y += v[s][j].y, sum.z += v[s][j].z, sum.w += v[s][j].w;
        float* f = fin_chunk(g0 + j);
        f[0] = sum.x, f[1] = sum.y, f[2] = sum.z, f[3] = sum.w;
      }
    } else {
#pragma unroll 1
      for (i32 s = 0; s < kSplits; ++s) {
        if (s == split && split <= 1) continue;
        const bool assign = s == 0 && split >= 2;
        float4 v[kGroup];
#pragma unroll
        for (int j = 0; j < kGroup; ++j) v[j] = __ldcg(chunk_ptr(s, g0 + j));
#pragma unroll
        for (int j = 0; j < kGroup; ++j) {
          // A select, not 0 + v: split 0's partial enters the sum exactly as it is (-0.0 included).
          float* f = fin_chunk(g0 + j);
          f[0] = assign ? v[j].x : f[0] + v[j].x;
          f[1] = assign ? v[j].y : f[1] + v[j].y;
          f[2] = assign ? v[j].z : f[2] + v[j].z;
          f[3] = assign ? v[j].w : f[3] + v[j].w;
        }
      }
    }
  }
  return true;
}

}  // namespace hopgemm::device::epilogue
