#pragma once
// Compile-time facts of one FP8 GEMM config that more than one collective needs: roles, registers, where each
// scale factor comes from. Derived from the config only (kernels/sm90_fp8_gemm_types.cuh holds the rules).

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/kernels/sm90_fp8_gemm_types.cuh"

namespace hopgemm::device::collective {

template <Sm90Fp8GemmConfig kConfig>
struct Sm90Fp8GemmTraits {
  static constexpr int kBlockM = kConfig.block_m, kBlockN = kConfig.block_n, kBlockK = 128;
  static constexpr int kStages = kConfig.num_stages;
  static constexpr int kMathWgs = num_math_wgs(kConfig);
  static constexpr int kMathThreads = kMathWgs * 128;
  static constexpr int kWgRows = kBlockM / kMathWgs;        // rows per math warpgroup: 64 or 128
  static constexpr int kWaves = waves_per_wg(kConfig);       // m64 wgmma row blocks per math warpgroup
  static constexpr int kClusterSize = cluster_size(kConfig);
  static constexpr bool kMulticastA = kConfig.cluster_n == 2, kMulticastB = kConfig.cluster_m == 2;
  static constexpr bool k1D1D = kConfig.recipe == kRecipe1D1D;
  static constexpr int kSplits = kConfig.k_splits;
  static constexpr Sm90Fp8GemmSmem kSmem = smem_layout(kConfig);

  // Where the scales come from.
  // sfa: MN-major by TMA into each stage; row-major staged by producer warps (kSfaStaged); or row-major by TMA in
  // chunks of 4 k-blocks into a ring of their own (sf_chunks).
  static constexpr bool kSfaTma = kConfig.sfa_k_major == 0;
  static constexpr bool kSfaChunked = sfa_chunked(kConfig);
  static constexpr bool kSfaStaged = !kSfaTma && !kSfaChunked;
  // sfb, 1D1D: MN-major by TMA into each stage, row-major by cp.async into each stage, or in chunks.
  // sfb, 1D2D (the two 128x128 blocks a tile's columns fall into, per k-block): copied into each stage by cp.async,
  // or held in the math warps' registers 32 k-blocks at a time (sfb_regs: no per-stage copy, which cost 1-3% on
  // big tiles).
  static constexpr bool kSfbTma = k1D1D && kConfig.sfb_k_major == 0;
  static constexpr bool kSfbChunked = sfb_chunked(kConfig);
  static constexpr bool kSfbInRegs = !k1D1D && kConfig.sfb_regs == 1;
  static constexpr bool kSfChunks = kSfaChunked || kSfbChunked;
  static constexpr bool kUsesCpAsync = !kSfbTma && !kSfbInRegs && !kSfbChunked;
  // 1D2D: every math thread reads the stage's B block scales (which the producer refills by cp.async) and arrives
  // on its CTA's empty barrier for its own read: racecheck credits only a thread's own arrival.
  static constexpr bool kReadersArrive = !k1D1D;

  // Row-major sfa staging: the last kSfaWarps producer warps each hold 4 consecutive k-blocks of kSfaPasses x 16
  // rows, loaded once per kSfaChunk k-blocks (one full 32-byte sector per row instead of a 4-byte read per row and
  // k-block). Warp 0 (TMA) stays out where it can: its wait for the loads would delay the A/B issue. With two or
  // three math warpgroups the producer has 40 registers and three warps' passes would spill, so all four stage.
  static constexpr int kSfaChunk = 8, kSfaWarps = kMathWgs == 1 ? 3 : 4;
  static constexpr int kSfaPasses = ceil_div(kBlockM, 16 * kSfaWarps);
  static constexpr bool kSfaFullPasses = kBlockM % (16 * kSfaWarps) == 0;  // else the last pass is partial

  // setmaxnreg: the increase waits for registers the CTA got at launch. Two math warpgroups: 168 x 384 at launch,
  // 40 x 128 + 232 x 256 = 64512 exactly, so these move together. One: 248 x 256 at launch, so the producer can
  // keep 64 (row-major sfa staging needs them with split-K). Three: 128 x 512; 40 x 128 + 152 x 384 = 63488.
  static constexpr int kProducerRegs = kMathWgs == 1 ? 64 : 40;
  static constexpr int kConsumerRegs = kMathWgs == 1 ? 248 : kMathWgs == 2 ? 232 : 152;

  // Bytes TMA brings into a stage, and into a chunk slot.
  static constexpr u32 kTxBytes =
      kSmem.a_stage + kSmem.b_stage + (kSfaTma ? kBlockM * 4 : 0) + (kSfbTma ? kBlockN * 4 : 0);
  static constexpr u32 kSfChunkTxBytes = ((kSfaChunked ? kBlockM : 0) + (kSfbChunked ? kBlockN : 0)) * 4 * kSfChunkKBlocks;

  // Stage barrier arrivals. full: the producer's expect_tx, + one cp.async arrival per lane of producer warp 0,
  // + one per lane of the sfa warps (each for its own stores). empty: one per math warp of every CTA in the cluster
  // (multicast writes into both CTAs), + 1D2D: one per math thread of this CTA (kReadersArrive).
  static constexpr u32 kFullArrivals = 1 + (kUsesCpAsync ? 32 : 0) + (kSfaStaged ? kSfaWarps * 32 : 0);
  static constexpr u32 kEmptyArrivals = kClusterSize * kMathWgs * 4 + (kReadersArrive ? kMathThreads : 0);
};

}  // namespace hopgemm::device::collective
