#pragma once
// SM90 FP8 GEMM with fine-grained scaling (recipes 1D2D and 1D1D): D = A . B^T (+ D).
// Warp-specialised persistent kernel: one producer warpgroup (warp 0: lane 0 issues TMA, all lanes cp.async
// the B scales that are not TMA-loadable; row-major A scales: warps 1-3 (block_m >= 128: 0-3) stage 8 k-blocks
// of them in registers, one full 32-byte sector per row, and store one column per stage; sf_chunks: lane 0 loads
// the row-major per-row scales by TMA, 4 k-blocks per box, into a chunk ring of their own) and one to three math
// warpgroups (wgmma
// m64nNk32 e4m3 from smem, promotion every 128 K on CUDA cores, swizzled TMA-store epilogue; FP32 D += A B^T
// reduces from registers into D instead: reduces_from_registers).
// Split-K (k_splits > 1): work units are (tile, split); a fused split sums the others' partials itself
// (epilogue/sm90_splitk_fused.cuh), an unfused one stores its FP32 partial into a workspace plane that
// kernels/sm90_splitk_reduce.cuh sums into D.
// Host contract (descriptors, launch): kernels/sm90_fp8_gemm_types.cuh.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/epilogue/sm90_reduce_global.cuh"
#include "hopgemm/device/epilogue/sm90_splitk_fused.cuh"
#include "hopgemm/device/epilogue/sm90_store_tile.cuh"
#include "hopgemm/device/kernels/sm90_fp8_gemm_types.cuh"
#include "hopgemm/device/mma/sm90_fp8_promote.cuh"
#include "hopgemm/device/mma/sm90_smem_desc.cuh"
#include "hopgemm/device/pipeline/sm90_stage_ring.cuh"
#include "hopgemm/device/ptx/barrier.cuh"
#include "hopgemm/device/ptx/cluster.cuh"
#include "hopgemm/device/ptx/cp_async.cuh"
#include "hopgemm/device/ptx/fence.cuh"
#include "hopgemm/device/ptx/griddepcontrol.cuh"
#include "hopgemm/device/ptx/ld_global.cuh"
#include "hopgemm/device/ptx/ld_shared.cuh"
#include "hopgemm/device/ptx/mbarrier.cuh"
#include "hopgemm/device/ptx/opaque.cuh"
#include "hopgemm/device/ptx/setmaxnreg.cuh"
#include "hopgemm/device/ptx/tma.cuh"
#include "hopgemm/device/ptx/wgmma.cuh"
#include "hopgemm/device/scheduler/sm90_dense_scheduler.cuh"

namespace hopgemm::device {

template <Sm90Fp8GemmConfig kConfig>
__global__ void __launch_bounds__(num_threads(kConfig), 1)
    sm90_fp8_gemm_kernel(const __grid_constant__ Sm90Fp8GemmParams params) {
  // ---- static checks -------------------------------------------------------------------------
  static_assert(is_valid(kConfig), "invalid Sm90Fp8GemmConfig (see is_valid)");
  constexpr int kBlockM = kConfig.block_m, kBlockN = kConfig.block_n, kBlockK = 128;
  constexpr int kStages = kConfig.num_stages;
  constexpr int kMathWgs = num_math_wgs(kConfig);
  constexpr int kWgRows = kBlockM / kMathWgs;  // rows per math warpgroup: 64 or 128
  constexpr int kWaves = waves_per_wg(kConfig);  // m64 wgmma row-blocks per math warpgroup
  constexpr int kClusterSize = cluster_size(kConfig);
  constexpr bool kMulticastA = kConfig.cluster_n == 2, kMulticastB = kConfig.cluster_m == 2;
  constexpr bool k1D1D = kConfig.recipe == kRecipe1D1D;
  constexpr bool kSfaTma = kConfig.sfa_k_major == 0;
  constexpr int kSplits = kConfig.k_splits;
  // Split-K partials: to the [k_splits, M, N] workspace by TMA (a reduce kernel follows), or fused: the last
  // split of each tile sums them and stores D (epilogue/sm90_splitk_fused.cuh).
  constexpr bool kFusedSplitK = kSplits > 1 && kConfig.splitk_fused == 1;
  constexpr bool kPartialStore = kSplits > 1 && !kFusedSplitK;
  constexpr bool kSfbTma = k1D1D && kConfig.sfb_k_major == 0;
  // 1D2D B scales (the two 128x128 blocks a tile's columns fall into, per k-block): copied into each stage by the
  // producer (cp.async), or with sfb_regs held in the math warps' registers, 32 k-blocks per chunk (lane j: k-block
  // 32c + j), loaded a chunk ahead and read with a shuffle: no per-stage copy, which cost 1-3% on big tiles
  // (bench/results/h100-2026-11-22-ab-sfb-path.txt). Row-major 1D1D B scales come by cp.async, one per row.
  constexpr bool kSfbInRegs = !k1D1D && kConfig.sfb_regs == 1;
  // sf_chunks: the row-major per-row scales come by TMA in chunks of kSfChunkKBlocks k-blocks (a box of one 16-byte
  // row segment per tile row) into a ring of kSfChunkSlots slots with barriers of their own: a chunk starts at every
  // 4th k-block of a unit and is released after its last k-block's scales are read. Rows are read at a 16-byte
  // stride (conflict-free: 8 rows of a warp's read fall in 8 different bank groups).
  constexpr bool kSfaChunked = sfa_chunked(kConfig), kSfbChunked = sfb_chunked(kConfig);
  constexpr bool kSfChunks = kSfaChunked || kSfbChunked;
  constexpr bool kUsesCpAsync = !kSfbTma && !kSfbInRegs && !kSfbChunked;
  // Row-major sfa: the last kSfaWarps producer warps each hold 4 consecutive k-blocks of kSfaPasses x 16 rows
  // (16 rows x 2 halves of a 32-byte row sector per warp and pass), loaded once per kSfaChunk k-blocks; per-stage
  // 4-byte cp.async reads cost one L2 sector per row per k-block (8x the bytes, +25% L2 traffic on 256x128 A2).
  // Warp 0 (TMA) stays out where it can: its wait for a chunk's loads delays the A/B issue of the next stages
  // (-4% at 128x7168x16384, block_m 64, one tile per CTA). With two math warpgroups the producer has 40 registers
  // and 3 warps' passes spill (block_m 128: 12 data registers + the partial-pass guards; 256: 24), so all four
  // warps stage there; those tiles are compute bound and the producer runs stages ahead, hiding the wait.
  constexpr bool kSfaStaged = !kSfaTma && !kSfaChunked;
  constexpr int kSfaChunk = 8, kSfaWarps = kMathWgs == 1 ? 3 : 4, kSfaPasses = ceil_div(kBlockM, 16 * kSfaWarps);
  constexpr bool kSfaFullPasses = kBlockM % (16 * kSfaWarps) == 0;  // else the last pass is partial
  // setmaxnreg.inc waits for registers the CTA got at launch (168 x 384 = 64512 for 3 warpgroups):
  // 40 x 128 + 232 x 256 = 64512 exactly, so these two move together. One math warpgroup: the CTA got 248 x 256
  // at launch, so the producer can keep 64 (the row-major sfa staging needs them with split-K). Three: 128 x 512 at
  // launch; 40 x 128 + 152 x 384 = 63488.
  constexpr int kProducerRegs = kMathWgs == 1 ? 64 : 40;
  constexpr int kConsumerRegs = kMathWgs == 1 ? 248 : kMathWgs == 2 ? 232 : 152;
  constexpr Sm90Fp8GemmSmem kSmem = smem_layout(kConfig);
  constexpr u32 kTxBytes = kSmem.a_stage + kSmem.b_stage + (kSfaTma ? kBlockM * 4 : 0) + (kSfbTma ? kBlockN * 4 : 0);
  constexpr u32 kSfChunkTxBytes = ((kSfaChunked ? kBlockM : 0) + (kSfbChunked ? kBlockN : 0)) * 4 * kSfChunkKBlocks;

  const i32 m = params.m;
  const i32 n = kConfig.shape_n > 0 ? kConfig.shape_n : params.n;
  const i32 k = kConfig.shape_k > 0 ? kConfig.shape_k : params.k;
  const i32 num_k_blocks = ceil_div(k, kBlockK);  // the last block may be partial (TMA zero-fills)
  const i32 k_blocks_per_split = ceil_div(num_k_blocks, kSplits);  // the host keeps every split non-empty
  // The last tile row, where M leaves it partly empty (no A-sharing pair): A's box holds only M's rows (rounded up to
  // 8, from tma_a_tail) and the stage's other rows keep what they held (their D rows are never stored), instead of a
  // box zero-filled past M. M below one tile: 8x28672x7168 12% faster, 1x2112x7168 3%, eight other decode shapes
  // within 1.3% (bench/results/h100-2026-11-22-ab-a-box-of-m.txt). M above one tile: a partly empty second row of
  // 128-row tiles made 160x8192x8192 take longer than 256x8192x8192 (44.7 vs 40.9 us; ...-try-padded-128-rows.txt);
  // with the box of M's rows 300x4096x7168 on 256x64 took 0.615 of the time, 144x7168x7168 on 128x128 0.875,
  // 160x8192x8192 0.908, 4000x7168x7168 on 256x64 0.928, small tails or many waves 0.996-1.022 (...-ab-a-tail-box.txt).
  const bool has_a_tail = !kMulticastA && params.a_tail_rows > 0;
  const i32 a_tail_m0 = has_a_tail ? m / kBlockM * kBlockM : -1;
  const u32 a_tail_tx_bytes = kTxBytes - static_cast<u32>(kBlockM - params.a_tail_rows) * kBlockK;

  // ---- shared memory carve-up: [D tile][A x stages][B x stages][SFA x stages][SFB x stages][scale chunks][barriers]
  extern __shared__ __align__(1024) u8 smem[];
  const u32 smem_d = ptx::smem_addr(smem);  // kBlockM x (kBlockN / d_passes) out dtype, swizzled atoms
  const u32 smem_a = smem_d + kSmem.d;                                   // per stage kBlockM x 128 e4m3, SW128
  const u32 smem_b = smem_a + kStages * kSmem.a_stage;                   // per stage kBlockN x 128 e4m3, SW128
  float* const sfa = reinterpret_cast<float*>(smem + kSmem.d + kStages * (kSmem.a_stage + kSmem.b_stage));
  float* const sfb = sfa + kStages * kSmem.sfa_stage / 4;                // 1D2D: 2 floats, 1D1D: kBlockN
  u8* const sf_chunk_ring = reinterpret_cast<u8*>(sfb + kStages * kSmem.sfb_stage / 4);  // sf_chunks: the slots
  u64* const full = reinterpret_cast<u64*>(sf_chunk_ring + (kSfChunks ? kSfChunkSlots * kSmem.sf_chunk : 0));
  u64* const empty = full + kStages;
  u64* const sf_full = empty + kStages;  // sf_chunks: a chunk slot loaded / read (kSfChunkSlots each)
  u64* const sf_empty = sf_full + kSfChunkSlots;
  const u32 sf_chunk_addr = ptx::smem_addr(sf_chunk_ring);
  // Chunks are aligned to k-block multiples of 4 (a box must start 16-byte aligned: TMA faults otherwise), so a split-K
  // unit starting elsewhere begins with a partial chunk. The chunk of k-block kb (absolute) of the unit starting at
  // sf_kb_begin: the CTA's chunks so far (both roles count them alike) + its chunk within the unit; its slot and the
  // parity of the slot's barrier phase follow (the chunk ring after that many chunks).
  using SfChunkRing = pipeline::StageRing<kSfChunkSlots>;
  u32 sf_chunks_before = 0;
  i32 sf_kb_begin = 0;
  auto sf_chunk_of = [&](i32 kb) {
    return sf_chunks_before + static_cast<u32>(kb / kSfChunkKBlocks - sf_kb_begin / kSfChunkKBlocks);
  };
  auto sf_chunk_starts = [&](i32 kb) { return kb % kSfChunkKBlocks == 0 || kb == sf_kb_begin; };
  // After a unit [kb_begin, kb_end): its chunks counted.
  auto count_sf_chunks = [&](i32 kb_end) { sf_chunks_before = sf_chunk_of(kb_end - 1) + 1; };
  // 1D2D: every lane of a math warp reads the stage's B block scales (one broadcast load), which the producer
  // refills by cp.async. Besides its warp's release, each math thread arrives on its CTA's empty barrier for its
  // own read (kReadersArrive): one arrival per reading thread is what racecheck accepts (a __syncwarp and one
  // arrival per warp order the reads too, but racecheck reports the refill: bench/probes/mbarrier_racecheck.cu).
  // The threads arrive while their WGMMA batch runs (scales_read), before their warp's release.
  constexpr bool kReadersArrive = !k1D1D;
  const u32 sfa_addr = ptx::smem_addr(sfa), sfb_addr = ptx::smem_addr(sfb);

  // ---- barrier init ----------------------------------------------------------------------------
  // full: the producer's expect_tx arrival (+ one cp.async arrival per lane of producer warp 0, + one arrival
  // per lane of the sfa warps after it stored its rows of row-major sfa: each thread releases its own stores.
  // One arrival per warp after a __syncwarp orders them too, but compute-sanitizer racecheck only credits a
  // thread's own arrival there: bench/probes/mbarrier_racecheck.cu).
  // empty: one arrival per math warp of every CTA in the cluster (multicast writes into both CTAs), + 1D2D: one
  // per math thread of this CTA (kReadersArrive).
  const u32 warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const u32 cta_rank = kClusterSize > 1 ? ptx::cluster_ctarank() : 0;
  if (threadIdx.x == kMathWgs * 128) {
    for (int s = 0; s < kStages; ++s) {
      ptx::mbarrier_init(&full[s], 1 + (kUsesCpAsync ? 32 : 0) + (kSfaStaged ? kSfaWarps * 32 : 0));
      ptx::mbarrier_init(&empty[s], kClusterSize * kMathWgs * 4 + (kReadersArrive ? kMathWgs * 128 : 0));
    }
    if constexpr (kSfChunks) {
      for (int s = 0; s < kSfChunkSlots; ++s) {
        ptx::mbarrier_init(&sf_full[s], 1);                   // the producer's expect_tx arrival
        ptx::mbarrier_init(&sf_empty[s], kMathWgs * 4);       // one per math warp of this CTA
      }
    }
    ptx::fence_mbarrier_init_release_cluster();
  } else if (threadIdx.x == kMathWgs * 128 + 32) {
    if (m >= kBlockM || !has_a_tail) ptx::prefetch_tensormap(&params.tma_a);
    if (has_a_tail) ptx::prefetch_tensormap(&params.tma_a_tail);
    ptx::prefetch_tensormap(&params.tma_b);
    ptx::prefetch_tensormap(&params.tma_d);
    if constexpr (kSfaTma) ptx::prefetch_tensormap(&params.tma_sfa);
    if constexpr (kSfbTma) ptx::prefetch_tensormap(&params.tma_sfb);
  }
  if constexpr (kClusterSize > 1)
    ptx::cluster_sync();
  else
    __syncthreads();
  // PDL: nothing global is read or written before the previous grid is done.
  ptx::griddepcontrol_wait();

  scheduler::Sm90DenseScheduler<kBlockM, kBlockN, kConfig.cluster_m, kConfig.cluster_n, kConfig.raster_band, kSplits>
      sched(m, n, cta_rank);
  pipeline::StageRing<kStages> ring;
  i32 m_block, n_block;
  // The k-blocks of the unit sched.next() returned last: all of them without split-K.
  auto k_block_range = [&](i32& begin, i32& end) {
    begin = sched.k_split * k_blocks_per_split;
    end = min(begin + k_blocks_per_split, num_k_blocks);
  };

  // ---- role split ------------------------------------------------------------------------------
  if (threadIdx.x >= kMathWgs * 128) {
    ptx::setmaxnreg_dec<kProducerRegs>();
    const u32 pwarp = warp - kMathWgs * 4;  // producer warp 0..3
    // Row-major sfa staging warps: [kFirstSfaWarp, 4).
    constexpr u32 kFirstSfaWarp = 4 - kSfaWarps;
    const bool sfa_warp = kSfaStaged && pwarp >= kFirstSfaWarp;
    if (pwarp == 0 || sfa_warp) {
      // ---- producer loop: warp 0 (+ the sfa warps for row-major sfa) ----------------------------
      const i32 num_sfb_rows = ceil_div(n, 128);
      // Row-major sfa staging: lane = 2 x (row in the warp's 16) + half (k-blocks 4*half .. +3 of a chunk);
      // pass p covers tile rows [16 kSfaWarps p, 16 kSfaWarps (p + 1)).
      const u32 sfa_half = lane & 1, sfa_row = (pwarp - kFirstSfaWarp) * 16 + lane / 2;
      const bool sfa_vec = (reinterpret_cast<u64>(params.sfa) % 16 == 0) && (params.sfa_ld % 4 == 0);
      float sv[kSfaPasses][4];
      auto load_sfa_chunk = [&](i32 m0, i32 c0) {
        const i32 c = c0 + static_cast<i32>(sfa_half) * 4;
#pragma unroll
        for (int p = 0; p < kSfaPasses; ++p) {
          const i32 row = m0 + p * 16 * kSfaWarps + static_cast<i32>(sfa_row);
          const float* src = params.sfa + static_cast<i64>(min(row, m - 1)) * params.sfa_ld + c;
          const bool valid = row < m && (kSfaFullPasses || p * 16 * kSfaWarps + static_cast<i32>(sfa_row) < kBlockM);
          if (valid && sfa_vec && c + 4 <= num_k_blocks) {
            ptx::ld_global_v4_f32(src, sv[p][0], sv[p][1], sv[p][2], sv[p][3]);
          } else {
#pragma unroll
            for (int j = 0; j < 4; ++j) sv[p][j] = valid && c + j < num_k_blocks ? ptx::ld_global_f32(src + j) : 0.0f;
          }
        }
      };
      while (sched.next(m_block, n_block)) {
        const i32 m0 = m_block * kBlockM, n0 = n_block * kBlockN;
        i32 kb_begin, kb_end;
        k_block_range(kb_begin, kb_end);
        sf_kb_begin = kb_begin;
        for (i32 kb = kb_begin; kb < kb_end; ++kb, ring.advance()) {
          const u32 s = ring.stage;
          // Issued before the empty wait, so the loads' latency hides behind it.
          if constexpr (kSfaStaged)
            if (sfa_warp && (kb == kb_begin || kb % kSfaChunk == 0)) load_sfa_chunk(m0, kb / kSfaChunk * kSfaChunk);
          ptx::mbarrier_wait(&empty[s], ring.phase ^ 1);
          const u32 bar = ptx::smem_addr(&full[s]);
          const u32 a_dst = smem_a + s * kSmem.a_stage, b_dst = smem_b + s * kSmem.b_stage;
          const u32 sfa_dst = sfa_addr + s * kSmem.sfa_stage, sfb_dst = sfb_addr + s * kSmem.sfb_stage;
          if (pwarp == 0) {
            if (lane == 0) {
              const bool a_tail = m0 == a_tail_m0;
              ptx::mbarrier_arrive_expect_tx(&full[s], a_tail ? a_tail_tx_bytes : kTxBytes);
              // The shared operand: each CTA of the pair loads one half and multicasts it to both.
              if constexpr (kMulticastA) {
                constexpr int kHalf = kBlockM / 2;
                ptx::cp_async_bulk_tensor_2d_g2s_multicast(a_dst + cta_rank * kHalf * 128, &params.tma_a, kb * kBlockK,
                                                           m0 + cta_rank * kHalf, bar, 0b11);
              } else {
                ptx::cp_async_bulk_tensor_2d_g2s(a_dst, a_tail ? &params.tma_a_tail : &params.tma_a, kb * kBlockK, m0,
                                                 bar);
              }
              if constexpr (kMulticastB) {
                constexpr int kHalf = kBlockN / 2;
                ptx::cp_async_bulk_tensor_2d_g2s_multicast(b_dst + cta_rank * kHalf * 128, &params.tma_b, kb * kBlockK,
                                                           n0 + cta_rank * kHalf, bar, 0b11);
              } else {
                ptx::cp_async_bulk_tensor_2d_g2s(b_dst, &params.tma_b, kb * kBlockK, n0, bar);
              }
              if constexpr (kSfaTma) ptx::cp_async_bulk_tensor_2d_g2s(sfa_dst, &params.tma_sfa, m0, kb, bar);
              if constexpr (kSfbTma) ptx::cp_async_bulk_tensor_2d_g2s(sfb_dst, &params.tma_sfb, n0, kb, bar);
            }
            if constexpr (kSfChunks) {
              // A chunk's first k-block: its slot, once the math warps have read the chunk it held. The whole warp
              // waits (as for the stage) and lane 0 issues: with lane 0 alone waiting here and the other lanes
              // spinning on the next stages' empty barriers, 64-row tiles hung (the warp kept running the spinning
              // lanes; H100, 2026-11-22).
              if (sf_chunk_starts(kb)) {
                const SfChunkRing chunk = SfChunkRing::at(sf_chunk_of(kb));
                const u32 slot = chunk.stage;
                ptx::mbarrier_wait(&sf_empty[slot], chunk.phase ^ 1);
                if (lane == 0) {
                  ptx::mbarrier_arrive_expect_tx(&sf_full[slot], kSfChunkTxBytes);
                  const u32 dst = sf_chunk_addr + slot * kSmem.sf_chunk, sf_bar = ptx::smem_addr(&sf_full[slot]);
                  const i32 x = kb / kSfChunkKBlocks * kSfChunkKBlocks;
                  if constexpr (kSfaChunked) ptx::cp_async_bulk_tensor_2d_g2s(dst, &params.tma_sfa, x, m0, sf_bar);
                  if constexpr (kSfbChunked)
                    ptx::cp_async_bulk_tensor_2d_g2s(dst + kSmem.sf_chunk_sfa, &params.tma_sfb, x, n0, sf_bar);
                }
                __syncwarp();
              }
            }
            if constexpr (kUsesCpAsync) {
              if constexpr (!k1D1D) {  // (not with kSfbInRegs: kUsesCpAsync is false then)
                // The (at most two) 128x128 B-scale blocks this tile's columns fall into.
                const i32 row = n0 / 128 + static_cast<i32>(lane);
                if (lane < 2)
                  ptx::cp_async_ca_4(sfb_dst + lane * 4,
                                     params.sfb + static_cast<i64>(min(row, num_sfb_rows - 1)) * params.sfb_ld +
                                         static_cast<i64>(kb) * params.sfb_kstride,
                                     row < num_sfb_rows);
              } else {
                // Row-major scales: one strided 4-byte copy per row; rows past the edge read as zero.
#pragma unroll 1  // keeps the producer within its 40 registers
                for (i32 r = lane; r < kBlockN; r += 32) {
                  const i32 row = n0 + r;
                  ptx::cp_async_ca_4(sfb_dst + r * 4, params.sfb + static_cast<i64>(min(row, n - 1)) * params.sfb_ld + kb,
                                     row < n);
                }
              }
              ptx::cp_async_mbarrier_arrive_noinc(&full[s]);
            }
          }
          if (sfa_warp) {
            // This stage's column of the staged chunk: the half that holds it stores its rows.
            const u32 j = static_cast<u32>(kb) % kSfaChunk;
            if (j / 4 == sfa_half) {
              float* dst = sfa + s * kSmem.sfa_stage / 4 + sfa_row;
#pragma unroll
              for (int p = 0; p < kSfaPasses; ++p) {
                const u32 q = j % 4;
                if (kSfaFullPasses || p * 16 * kSfaWarps + sfa_row < kBlockM)
                  dst[p * 16 * kSfaWarps] = q == 0 ? sv[p][0] : q == 1 ? sv[p][1] : q == 2 ? sv[p][2] : sv[p][3];
              }
            }
            ptx::mbarrier_arrive(&full[s]);  // every lane, for its own stores
          }
        }
        count_sf_chunks(kb_end);
      }
      ptx::griddepcontrol_launch_dependents();
    }
  } else {
    ptx::setmaxnreg_inc<kConsumerRegs>();
    // ---- consumer loop: math warpgroup wg owns rows [wg * kWgRows, (wg + 1) * kWgRows) ---------
    const u32 wg = threadIdx.x / 128, warp_in_wg = warp % 4;
    // The same index broadcast from lane 0, so the compiler knows it is warp-uniform: the WGMMA descriptors are
    // then built on the uniform datapath instead of per-thread registers moved over with R2UR before every
    // WGMMA (used only there: elsewhere the uniform copy made ptxas spill in the FP32-out configs).
    const u32 wg_uniform = __shfl_sync(0xffffffffu, wg, 0);
    float fin[kWaves][kBlockN / 2];  // promoted accumulators, wgmma layout per wave

    // Descriptors of stage 0 (this warpgroup's first A row, B), built once: a stage or wave is then one add to
    // the 14-bit start-address field (every smem address >> 4 fits it, so the add never carries out).
    const u64 desc_a0 = mma::make_kmajor_sw128_desc(smem_a + wg_uniform * kWgRows * 128);
    u64 desc_b0 = mma::make_kmajor_sw128_desc(smem_b);
    // Opaque to the compiler (as the A-scale address below): held in registers instead of being rebuilt from the
    // CTA's shared-window base after every full-barrier wait, on the path from the wait to the first WGMMA that
    // both warpgroups walk while the tensor cores idle (docs/notes/fp8_gemm_kernel.md v8: 40 -> 31 instructions
    // there at 256x128; H100 A/B 4096x7168x16384 700 -> 690 us, 8192^3 820 -> 805).
    ptx::opaque(desc_b0);
    // One wave's 128-K block: 4 x m64nNk32 into a, one commit group.
    auto issue_mma = [&](float (&a)[kBlockN / 2], u32 s, int w) {
      const u64 desc_a = mma::advance_desc_bytes(desc_a0, s * kSmem.a_stage + w * 64 * 128);
      const u64 desc_b = mma::advance_desc_bytes(desc_b0, s * kSmem.b_stage);
      ptx::wgmma_fence_operand(a);
      ptx::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kBlockK / 32; ++kk)
        ptx::WgmmaE4m3<kBlockN>::mma(a, mma::advance_desc_bytes(desc_a, kk * 32), mma::advance_desc_bytes(desc_b, kk * 32),
                                     kk > 0);
      ptx::wgmma_commit_group();
    };
    // Scales, read from the stage into registers before the WGMMA wait where registers allow (see
    // kColScalesInRegs): the thread's A scales (rows lane/4 and +8 of its warp's 16 in wave w) and the tile's
    // B scales (1D2D: the two 128-column blocks the tile can touch; 1D1D: one per column of the thread, float2
    // per 8-column group).
    struct RowScales {
      float sa0, sa1;
    };
    struct ColScales {
      float2 sb[k1D1D ? kBlockN / 8 : 1];
    };
    const u32 thread_row = wg * kWgRows + warp_in_wg * 16 + lane / 4;  // in wave 0; the other row is 8 below
    u32 sfa_thread = kSfaChunked ? sf_chunk_addr + thread_row * 16 : ptx::smem_addr(sfa + thread_row);  // stage 0
    ptx::opaque(sfa_thread);
    // sf_chunks: the byte offset of the unit's k-block kb in the chunk ring (its slot, its column in the slot's rows).
    // (The consumer counts k-blocks from its unit's first: kb here is relative, sf_kb_begin + kb absolute.)
    auto sf_chunk_offset = [&](i32 kb) {
      kb += sf_kb_begin;
      return SfChunkRing::at(sf_chunk_of(kb)).stage * kSmem.sf_chunk + (static_cast<u32>(kb) % kSfChunkKBlocks) * 4;
    };
    auto load_row_scales = [&](u32 s, i32 kb, int w) {
      if constexpr (kSfaChunked) {
        const u32 sfa_s = sfa_thread + sf_chunk_offset(kb) + w * 64 * 16;
        return RowScales{ptx::ld_shared_f32(sfa_s), ptx::ld_shared_f32(sfa_s + 8 * 16)};
      } else {
        const u32 sfa_s = sfa_thread + (s * kSmem.sfa_stage / 4 + w * 64) * 4;
        return RowScales{ptx::ld_shared_f32(sfa_s), ptx::ld_shared_f32(sfa_s + 8 * 4)};
      }
    };
    // sf_chunks: a chunk's first k-block waits for the chunk too; its last one (or the unit's) hands the slot back once
    // every lane of the warp has read it.
    auto wait_sf_chunk = [&](i32 kb) {
      if constexpr (kSfChunks) {
        kb += sf_kb_begin;
        if (sf_chunk_starts(kb)) {
          const SfChunkRing chunk = SfChunkRing::at(sf_chunk_of(kb));
          ptx::mbarrier_wait(&sf_full[chunk.stage], chunk.phase);
        }
      }
    };
    auto release_sf_chunk = [&](i32 kb, i32 unit_k_blocks) {
      if constexpr (kSfChunks) {
        const i32 kb_abs = sf_kb_begin + kb;
        if (kb_abs % kSfChunkKBlocks == kSfChunkKBlocks - 1 || kb == unit_k_blocks - 1) {
          __syncwarp();
          if (lane == 0) ptx::mbarrier_arrive(&sf_empty[SfChunkRing::at(sf_chunk_of(kb_abs)).stage]);
        }
      }
    };
    // kSfbInRegs: the current and the next chunk of the B scales (x: the tile's first 128-column block, y: the
    // next one; zero past the edge or past the unit's k-blocks), and where the next chunk comes from once this
    // unit's chunks are used up: the CTA's next unit (a copy of the scheduler looked one unit ahead).
    constexpr i32 kSfbChunk = 32;
    float2 sfb_cur = make_float2(0.0f, 0.0f), sfb_next = make_float2(0.0f, 0.0f);
    const i32 num_sfb_blocks = ceil_div(n, 128);
    auto load_sfb_chunk = [&](i32 n_blk, i32 kb0, i32 kb_stop) {  // issued now, waited for at first use
      const i32 row = n_blk * kBlockN / 128, kb = kb0 + static_cast<i32>(lane);
      const float* src = params.sfb + static_cast<i64>(min(kb, kb_stop - 1)) * params.sfb_kstride;
      float2 v = make_float2(0.0f, 0.0f);
      if (kb < kb_stop) {
        v.x = ptx::ld_global_f32(src + static_cast<i64>(min(row, num_sfb_blocks - 1)) * params.sfb_ld);
        v.y = ptx::ld_global_f32(src + static_cast<i64>(min(row + 1, num_sfb_blocks - 1)) * params.sfb_ld);
        if (row >= num_sfb_blocks) v.x = 0.0f;
        if (row + 1 >= num_sfb_blocks) v.y = 0.0f;
      }
      return v;
    };
    i32 sfb_n_block = 0, sfb_kb_begin = 0, sfb_kb_end = 0;                 // this unit
    bool sfb_has_next = false;
    i32 sfb_next_n_block = 0, sfb_next_kb_begin = 0, sfb_next_kb_end = 0;  // the CTA's next unit
    // After chunk c of this unit became current: the next one, or the next unit's first.
    auto prefetch_sfb = [&](i32 c) {
      if (sfb_kb_begin + (c + 1) * kSfbChunk < sfb_kb_end)
        sfb_next = load_sfb_chunk(sfb_n_block, sfb_kb_begin + (c + 1) * kSfbChunk, sfb_kb_end);
      else if (sfb_has_next)
        sfb_next = load_sfb_chunk(sfb_next_n_block, sfb_next_kb_begin, sfb_next_kb_end);
    };
    // Column scales of the unit's k-block kb (k-block order, once each; kb only matters with kSfbInRegs).
    auto load_col_scales = [&](u32 s, i32 kb) {
      ColScales c;
      const float* sfb_s = sfb + s * kSmem.sfb_stage / 4;
      if constexpr (kSfbChunked) {
        mma::load_col_scales_1d1d_chunked<kBlockN>(c.sb, sf_chunk_addr + kSmem.sf_chunk_sfa + sf_chunk_offset(kb), lane);
      } else if constexpr (k1D1D) {
        mma::load_col_scales_1d1d<kBlockN>(c.sb, sfb_s, lane);
      } else if constexpr (kSfbInRegs) {
        if (kb % kSfbChunk == 0 && kb > 0) {
          sfb_cur = sfb_next;
          prefetch_sfb(kb / kSfbChunk);
        }
        const int src_lane = kb % kSfbChunk;
        c.sb[0] = make_float2(__shfl_sync(0xffffffffu, sfb_cur.x, src_lane), __shfl_sync(0xffffffffu, sfb_cur.y, src_lane));
      } else {
        c.sb[0] = make_float2(sfb_s[0], sfb_s[1]);
      }
      return c;
    };
    auto promote = [&](float (&f)[kBlockN / 2], const float (&a)[kBlockN / 2], const RowScales& r, const ColScales& c) {
      if constexpr (k1D1D) {
        mma::promote_1d1d<kBlockN>(f, a, r.sa0, r.sa1, c.sb);
      } else {
        mma::dispatch_former_groups<kBlockN>(static_cast<u32>(n_block * kBlockN) % 128, [&]<int kFormer>() {
          mma::promote_1d2d<kBlockN, kFormer>(f, a, r.sa0, r.sa1, c.sb[0].x, c.sb[0].y);
        });
      }
    };
    // Stage consumed: one arrival per warp on every CTA of the cluster (multicast filled both), by lane 0 after
    // scales_read(s) ordered every lane's reads of the stage's scales before it (producer threads refill the
    // scale slots with cp.async or stores, which must not overtake another lane's read): a __syncwarp, and
    // for 1D2D each thread's own arrival on its CTA's empty barrier (kReadersArrive). Where the schedule allows
    // it runs after the stage's last WGMMA batch is issued, while the tensor cores run it: right before the
    // release arrival the __syncwarp cost 4-7% on 256x128 tiles (H100 A/B,
    // bench/results/h100-2026-11-21-ab-syncwarp.json), and one release arrival per thread instead 8% (2 x 256
    // arrivals per stage with a cluster of 2). The cross-block overlap schedule (64-row tiles) and column scales
    // read during the promotion keep it right before the release: no measurable cost on 64-row tiles.
    auto scales_read = [&](u32 s) {
      __syncwarp();
      if constexpr (kReadersArrive) ptx::mbarrier_arrive(&empty[s]);
    };
    auto release = [&](u32 s) {
      if constexpr (kClusterSize > 1) {
        if (lane < kClusterSize) ptx::mbarrier_arrive_cluster(&empty[s], lane);
      } else {
        if (lane == 0) ptx::mbarrier_arrive(&empty[s]);
      }
    };

    // promote_overlap (one wave, block_n <= 128: two accumulator sets fit): block kb+1's wgmmas run on
    // the tensor cores while block kb is promoted on the CUDA cores (DeepGEMM waits for every block).
    // With two waves per warpgroup (block_m 256, block_n <= 96) the same field pipelines the waves instead.
    constexpr bool kOverlap = kConfig.promote_overlap == 1 && kWaves == 1;
    constexpr bool kWavePipelined = kConfig.promote_overlap == 1 && kWaves == 2;
    float acc[kConfig.promote_overlap == 1 ? 2 : 1][kBlockN / 2];  // tensor-core partial sums of one 128-K block
    // Column scales held in registers across a k-block's waves where they fit (col_scales_in_regs); else each
    // promotion reads them from the stage and the stage is released after the last one.
    constexpr bool kColScalesInRegs = col_scales_in_regs(kConfig);
    // wg_order: the math warpgroups take turns issuing their per-wave WGMMA batches in a ring (named barriers
    // kTurnBarrier + wg: "wg may issue"; wg grants wg + 1 after its issue), so the tensor cores run one WG's batch
    // while another promotes instead of all finishing together and promoting while the tensor cores idle. The last
    // WG grants WG 0 the first turn; WG 0 consumes the last WG's last grant after its loop, so every barrier
    // phase completes.
    constexpr bool kDInStage = kConfig.d_in_stage == 1;
    u32 last_stage = 0;  // stage of the tile's last k-block (d_in_stage: D is staged there)
    constexpr bool kOrdered = kConfig.wg_order == 1;
    constexpr u32 kTurnBarrier = 4;  // 4 .. 6 (0: __syncthreads, 1 .. 3: epilogue per warpgroup, 7: split-K)
    if constexpr (kOrdered)
      if (wg == kMathWgs - 1) ptx::bar_arrive(kTurnBarrier, 256);
    bool first_unit = true;  // kSfbInRegs: its first B-scale chunk is loaded at the unit start, later ones ahead
    while (sched.next(m_block, n_block)) {
      i32 kb_begin, kb_end;
      k_block_range(kb_begin, kb_end);
      const i32 unit_k_blocks = kb_end - kb_begin;
      sf_kb_begin = kb_begin;
      if constexpr (kSfbInRegs) {
        sfb_n_block = n_block;
        sfb_kb_begin = kb_begin;
        sfb_kb_end = kb_end;
        // The first unit's first chunk now (its latency overlaps the first full-barrier wait); later units'
        // were prefetched during the previous unit.
        sfb_cur = first_unit ? load_sfb_chunk(n_block, kb_begin, kb_end) : sfb_next;
        first_unit = false;
        auto ahead = sched;
        i32 next_m_block;
        sfb_has_next = ahead.next(next_m_block, sfb_next_n_block);
        sfb_next_kb_begin = ahead.k_split * k_blocks_per_split;
        sfb_next_kb_end = min(sfb_next_kb_begin + k_blocks_per_split, num_k_blocks);
        prefetch_sfb(0);
      }
      // Stage s of k-block kb consumed. d_in_stage keeps the tile's last stage for the epilogue's D staging
      // and releases it after the store has read it.
      auto release_k_block = [&](u32 s, i32 kb) {
        if (!(kDInStage && kb == unit_k_blocks - 1)) release(s);
      };
#pragma unroll
      for (int w = 0; w < kWaves; ++w)
#pragma unroll
        for (int i = 0; i < kBlockN / 2; ++i) fin[w][i] = 0.0f;

      if constexpr (kOverlap) {
        RowScales rs[2];
        ptx::mbarrier_wait(&full[ring.stage], ring.phase);
        wait_sf_chunk(0);
        rs[0] = load_row_scales(ring.stage, 0, 0);
        issue_mma(acc[0], ring.stage, 0);
        // Block kb lives in acc[kBuf]. step: issue block kb+1 into the other buffer, wait until only
        // it is in flight, promote kb. finish: last block, drain and promote. Unrolled by two so the
        // buffer index is static, and every path issues/waits the same way (else ptxas serialises).
        auto consume = [&]<int kBuf>(bool last, i32 kb) {
          pipeline::StageRing<kStages> next = ring;
          next.advance();
          if (last) {
            ptx::wgmma_wait_group<0>();
          } else {
            ptx::mbarrier_wait(&full[next.stage], next.phase);
            wait_sf_chunk(kb + 1);
            rs[kBuf ^ 1] = load_row_scales(next.stage, kb + 1, 0);
            issue_mma(acc[kBuf ^ 1], next.stage, 0);
            ptx::wgmma_wait_group<1>();
          }
          ptx::wgmma_fence_operand(acc[kBuf]);
          // Two accumulator sets leave no registers for 1D1D's per-column scales ahead of time: they are
          // read during the promotion, so that stage is released after it.
          const ColScales cs = load_col_scales(ring.stage, kb);
          if constexpr (!k1D1D) {
            scales_read(ring.stage);
            release(ring.stage);
            release_sf_chunk(kb, unit_k_blocks);
          }
          promote(fin[0], acc[kBuf], rs[kBuf], cs);
          if constexpr (k1D1D) {
            scales_read(ring.stage);
            release(ring.stage);
            release_sf_chunk(kb, unit_k_blocks);
          }
          ring = next;
        };
        for (i32 kb = 0;; kb += 2) {
          if (kb + 1 >= unit_k_blocks) {
            consume.template operator()<0>(true, kb);
            break;
          }
          consume.template operator()<0>(false, kb);
          if (kb + 2 >= unit_k_blocks) {
            consume.template operator()<1>(true, kb + 1);
            break;
          }
          consume.template operator()<1>(false, kb + 1);
        }
      } else if constexpr (kWavePipelined) {
        // Both waves' WGMMA batches go out together; wave 0 is promoted while wave 1 runs on the tensor
        // cores, so only wave 1's promotion is exposed (the other warpgroup's batches cover it).
        for (i32 kb = 0; kb < unit_k_blocks; ++kb, ring.advance()) {
          const u32 s = ring.stage;
          ptx::mbarrier_wait(&full[s], ring.phase);
          wait_sf_chunk(kb);
          const ColScales cs = kColScalesInRegs ? load_col_scales(s, kb) : ColScales{};
          const RowScales rs0 = load_row_scales(s, kb, 0), rs1 = load_row_scales(s, kb, 1);
          issue_mma(acc[0], s, 0);
          issue_mma(acc[1], s, 1);
          if (kColScalesInRegs) scales_read(s);
          ptx::wgmma_wait_group<1>();
          ptx::wgmma_fence_operand(acc[0]);
          promote(fin[0], acc[0], rs0, kColScalesInRegs ? cs : load_col_scales(s, kb));
          ptx::wgmma_wait_group<0>();
          ptx::wgmma_fence_operand(acc[1]);
          if (kColScalesInRegs) release_k_block(s, kb);
          promote(fin[1], acc[1], rs1, kColScalesInRegs ? cs : load_col_scales(s, kb));
          if (!kColScalesInRegs) {
            scales_read(s);
            release_k_block(s, kb);
          }
          release_sf_chunk(kb, unit_k_blocks);
          last_stage = s;
        }
      } else {
        for (i32 kb = 0; kb < unit_k_blocks; ++kb, ring.advance()) {
          const u32 s = ring.stage;
          ptx::mbarrier_wait(&full[s], ring.phase);
          wait_sf_chunk(kb);
          const ColScales cs = kColScalesInRegs ? load_col_scales(s, kb) : ColScales{};
#pragma unroll
          for (int w = 0; w < kWaves; ++w) {
            const RowScales rs = load_row_scales(s, kb, w);
            if constexpr (kOrdered) ptx::bar_sync(kTurnBarrier + wg, 256);  // wait for this WG's turn
            issue_mma(acc[0], s, w);
            if constexpr (kOrdered) ptx::bar_arrive(kTurnBarrier + (wg + 1) % kMathWgs, 256);  // the next WG's turn
            if (kColScalesInRegs && w == kWaves - 1) scales_read(s);
            ptx::wgmma_wait_group<0>();
            ptx::wgmma_fence_operand(acc[0]);
            // Before the last promotion: refill starts sooner.
            if (kColScalesInRegs && w == kWaves - 1) release_k_block(s, kb);
            promote(fin[w], acc[0], rs, kColScalesInRegs ? cs : load_col_scales(s, kb));
          }
          if (!kColScalesInRegs) {
            scales_read(s);
            release_k_block(s, kb);
          }
          release_sf_chunk(kb, unit_k_blocks);
          last_stage = s;
        }
      }
      count_sf_chunks(kb_end);

      // ---- epilogue ------------------------------------------------------------------------------
      // No D store for a phantom tile (past the matrix edge), nor for a fused split that did not finish last.
      bool skip_store = sched.is_phantom(m_block, n_block);
      if constexpr (kFusedSplitK) {
        // Only the tile's last split to finish stores D (barrier 7: the math threads; 1-6 are taken).
        constexpr u32 kSplitKBarrier = 7;
        // Registers a math thread has beside its accumulator sets and promoted sums, less a reserve for addresses,
        // for the other splits' partials in flight.
        constexpr int kLoadFloats = kConsumerRegs - (kConfig.promote_overlap == 1 ? 2 : 1) * kBlockN / 2 -
                                    kWaves * kBlockN / 2 - 80;
        skip_store = !epilogue::splitk_fused_reduce<kWaves, kBlockN / 2, kSplits, kMathWgs * 128, kLoadFloats>(
            fin, params.partials, params.tile_counters, m_block * sched.num_n_blocks + n_block, sched.k_split,
            kSplitKBarrier);
      }
      const u32 d_buf = kDInStage ? smem_a + last_stage * kSmem.a_stage : smem_d;
      if constexpr (reduces_from_registers(kConfig)) {
        if (!skip_store)
          epilogue::reduce_tile_global<kBlockN, kWgRows>(fin, params.d, params.ldd, m, n, wg, m_block * kBlockM,
                                                         n_block * kBlockN);
      } else if (!skip_store)
        epilogue::store_tile<kBlockM, kBlockN, kWgRows, stores_fp32(kConfig), kConfig.accumulate == 1 && !kPartialStore,
                             d_swizzle_bytes(kConfig), kConfig.d_passes, kPartialStore>(
            fin, d_buf, &params.tma_d, wg, m_block * kBlockM, n_block * kBlockN, sched.k_split);
      if constexpr (kDInStage) {
        // This warpgroup's stores must have read the stage before the producers may refill it.
        if (!skip_store) {
          if (threadIdx.x % 128 == 0) ptx::cp_async_bulk_wait_group_read<0>();
          ptx::bar_sync(1 + wg, 128);
        }
        release(last_stage);
      }
    }
    if constexpr (kOrdered)
      if (wg == 0) ptx::bar_sync(kTurnBarrier, 256);
    // The last TMA store must land before the CTA exits.
    if (threadIdx.x % 128 == 0) ptx::cp_async_bulk_wait_group<0>();
  }

  // No CTA may exit while its peer can still arrive on its barriers.
  if constexpr (kClusterSize > 1) ptx::cluster_sync();
}

}  // namespace hopgemm::device
