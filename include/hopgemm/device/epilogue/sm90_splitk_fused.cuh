#pragma once
// Fused split-K reduction (config splitk_fused): the splits of a tile meet in global memory instead of in a
// second kernel. Each split stores its FP32 partial in the math threads' own fragment order (float4 chunks,
// chunk-major so a warp's store is 512 contiguous bytes), then counts itself on the tile's counter; the split
// that counts last reads the others' partials, adds them in split order (so the result does not depend
// on which split finished last: reruns are bitwise identical), resets the counter for the next call, and goes
// on to store D like an unsplit tile. No split waits for another, so no ordering of CTAs is assumed.
//
// Memory ordering: every thread fences (gpu scope) after its partial stores, the math threads meet on a named
// barrier, then one thread counts (atomicAdd); the last split's counting thread fences after observing the
// count, and the barrier that spreads the verdict orders the other threads' reads after it (the reads go to L2,
// ld.global.cg, never to a possibly stale L1 line).

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/ptx/barrier.cuh"

namespace hopgemm::device::epilogue {

// fin: this thread's promoted accumulators for the tile (kWaves x kHalfN floats). partials: the workspace,
// [tile][split][chunk][math thread] float4. Returns true in the CTA that must store D, with fin = the sum.
template <int kWaves, int kHalfN, int kSplits, int kMathThreads>
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
  if (!ptx::bar_sync_or(barrier_id, kMathThreads, counted_last)) return false;

  if (thread == 0) tile_counters[tile] = 0;  // every split has counted: ready for the next call
  // Summed in place in fin, in split order (no second set of sums beside fin, which left 256x128 tiles short of
  // registers), in groups of up to 8 chunks whose loads are issued together. Splits 0 and 1 first: when this is one of
  // them, its own partial (in fin) plus the other's, as addition commutes; else both read, and this split's own partial
  // is read back from L2 in its turn (the one extra read, only where k_splits > 2).
  constexpr int kGroup = [] {
    for (int g = 8; g > 1; --g)
      if (kChunks % g == 0) return g;
    return 1;
  }();
  auto add_group = [&](int g0, i32 s, bool assign) {
    float4 v[kGroup];
#pragma unroll
    for (int j = 0; j < kGroup; ++j) v[j] = __ldcg(chunk_ptr(s, g0 + j));
#pragma unroll
    for (int j = 0; j < kGroup; ++j) {
      float* f = &fin[(g0 + j) / kChunksPerWave][4 * ((g0 + j) % kChunksPerWave)];
      // A select, not 0 + v: split 0's partial enters the sum exactly as it is whichever split sums (-0.0 included).
      f[0] = assign ? v[j].x : f[0] + v[j].x;
      f[1] = assign ? v[j].y : f[1] + v[j].y;
      f[2] = assign ? v[j].z : f[2] + v[j].z;
      f[3] = assign ? v[j].w : f[3] + v[j].w;
    }
  };
#pragma unroll
  for (int g0 = 0; g0 < kChunks; g0 += kGroup) {
#pragma unroll 1
    for (i32 s = 0; s < kSplits; ++s)
      if (!(s == split && split <= 1)) add_group(g0, s, s == 0 && split >= 2);
  }
  return true;
}

}  // namespace hopgemm::device::epilogue
