#pragma once
// The FP8 GEMM's math warpgroups over one work unit: WGMMA batches of 128 K from the stage ring into tensor-core
// accumulators, promoted every 128 K on CUDA cores into FP32 sums with the row x column scales (the DeepSeek-V3
// two-level accumulation). Three schedules, one function each:
//   run_plain           one batch per wave, waited and promoted in turn;
//   run_overlap         (promote_overlap, one wave) block kb+1's batch runs while kb is promoted;
//   run_wave_pipelined  (promote_overlap, two waves) both waves issued together, wave 0 promoted under wave 1.

#include "hopgemm/device/collective/sm90_fp8_scale_reader.cuh"
#include "hopgemm/device/mma/sm90_smem_desc.cuh"
#include "hopgemm/device/ptx/wgmma.cuh"

namespace hopgemm::device::collective {

template <Sm90Fp8GemmConfig kConfig>
struct Sm90Fp8Mainloop {
  using T = Sm90Fp8GemmTraits<kConfig>;
  using Scales = Sm90Fp8ScaleReader<kConfig>;
  using ColScales = typename Scales::ColScales;
  using Ring = typename pipeline::MbarrierPipeline<T::kStages>::Ring;
  static constexpr int kBlockN = T::kBlockN, kWaves = T::kWaves;
  static constexpr int kAccSets = kConfig.promote_overlap == 1 ? 2 : 1;
  static constexpr bool kOverlap = kConfig.promote_overlap == 1 && kWaves == 1;
  static constexpr bool kWavePipelined = kConfig.promote_overlap == 1 && kWaves == 2;
  // Column scales held in registers across a k-block's waves where they fit (col_scales_in_regs); else each
  // promotion reads them from the stage and the stage is released after the last one.
  static constexpr bool kColScalesInRegs = col_scales_in_regs(kConfig);
  static constexpr bool kDInStage = kConfig.d_in_stage == 1;
  using Acc = float[kBlockN / 2];

  const Sm90Fp8GemmSharedStorage<kConfig>& smem;
  Scales& scales;
  u32 lane;
  i32 n0 = 0;  // the unit's first column (1D2D: which 8-column groups fall in which 128-column scale block)
  u64 desc_a0, desc_b0;  // descriptors of stage 0 (this warpgroup's first A row, B)
  Ring ring;
  u32 last_stage = 0;  // stage of the unit's last k-block (d_in_stage: D is staged there)

  HOPGEMM_DEVICE Sm90Fp8Mainloop(const Sm90Fp8GemmSharedStorage<kConfig>& s, Scales& sc, u32 wg, u32 lane_)
      : smem(s), scales(sc), lane(lane_) {
    // The warpgroup index broadcast from lane 0, so the compiler knows it is warp-uniform: the descriptors are then
    // built on the uniform datapath instead of per-thread registers moved over with R2UR before every WGMMA.
    const u32 wg_uniform = __shfl_sync(0xffffffffu, wg, 0);
    // A stage or wave is then one add to the 14-bit start-address field (every smem address >> 4 fits it, so the
    // add never carries out).
    desc_a0 = mma::make_kmajor_sw128_desc(smem.a + wg_uniform * T::kWgRows * 128);
    desc_b0 = mma::make_kmajor_sw128_desc(smem.b);
    // Opaque: held in a register instead of rebuilt from the shared-window base after every full-barrier wait, on
    // the path from the wait to the first WGMMA while the tensor cores idle.
    ptx::opaque(desc_b0);
  }

  // One wave's 128-K block: 4 x m64nNk32 into a, one commit group.
  HOPGEMM_DEVICE void issue_mma(Acc& a, u32 s, int w) const {
    const u64 desc_a = mma::advance_desc_bytes(desc_a0, s * T::kSmem.a_stage + w * 64 * 128);
    const u64 desc_b = mma::advance_desc_bytes(desc_b0, s * T::kSmem.b_stage);
    ptx::wgmma_fence_operand(a);
    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < T::kBlockK / 32; ++kk)
      ptx::WgmmaE4m3<kBlockN>::mma(a, mma::advance_desc_bytes(desc_a, kk * 32), mma::advance_desc_bytes(desc_b, kk * 32),
                                   kk > 0);
    ptx::wgmma_commit_group();
  }

  HOPGEMM_DEVICE void promote(Acc& f, const Acc& a, const RowScales& r, const ColScales& c) const {
    if constexpr (T::k1D1D) {
      mma::promote_1d1d<kBlockN>(f, a, r.sa0, r.sa1, c.sb);
    } else {
      mma::dispatch_former_groups<kBlockN>(static_cast<u32>(n0) % 128, [&]<int kFormer>() {
        mma::promote_1d2d<kBlockN, kFormer>(f, a, r.sa0, r.sa1, c.sb[0].x, c.sb[0].y);
      });
    }
  }

  // Every lane's reads of stage s's scales are done (the producer refills the scale slots with cp.async or stores,
  // which must not overtake another lane's read): a __syncwarp, and for 1D2D each thread's own arrival on its CTA's
  // empty barrier. Where the schedule allows it runs while the tensor cores run the stage's last batch: right before
  // the release the __syncwarp cost 4-7% on 256x128 tiles.
  HOPGEMM_DEVICE void scales_read(u32 s) const {
    __syncwarp();
    if constexpr (T::kReadersArrive) smem.stages.arrive_empty(s);
  }
  HOPGEMM_DEVICE void release(u32 s) const { smem.stages.template release_by_warp<T::kClusterSize>(s, lane); }
  // d_in_stage keeps the unit's last stage for the epilogue's D staging (released after the store has read it).
  HOPGEMM_DEVICE void release_k_block(u32 s, i32 kb, i32 unit_k_blocks) const {
    if (!(kDInStage && kb == unit_k_blocks - 1)) release(s);
  }

  HOPGEMM_DEVICE void run_plain(float (&fin)[kWaves][kBlockN / 2], Acc (&acc)[kAccSets], i32 unit_k_blocks) {
    for (i32 kb = 0; kb < unit_k_blocks; ++kb, ring.advance()) {
      const u32 s = ring.stage;
      smem.stages.wait_full(ring);
      scales.wait_chunk(kb);
      const ColScales cs = kColScalesInRegs ? scales.col_scales(s, kb) : ColScales{};
#pragma unroll
      for (int w = 0; w < kWaves; ++w) {
        const RowScales rs = scales.row_scales(s, kb, w);
        issue_mma(acc[0], s, w);
        if (kColScalesInRegs && w == kWaves - 1) scales_read(s);
        ptx::wgmma_wait_group<0>();
        ptx::wgmma_fence_operand(acc[0]);
        // Before the last promotion: refill starts sooner.
        if (kColScalesInRegs && w == kWaves - 1) release_k_block(s, kb, unit_k_blocks);
        promote(fin[w], acc[0], rs, kColScalesInRegs ? cs : scales.col_scales(s, kb));
      }
      if (!kColScalesInRegs) {
        scales_read(s);
        release_k_block(s, kb, unit_k_blocks);
      }
      scales.release_chunk(kb, unit_k_blocks);
      last_stage = s;
    }
  }

  // Block kb lives in acc[kBuf]: issue block kb+1 into the other set, wait until only it is in flight, promote kb.
  // The last block drains and promotes. Unrolled by two so the set index is static, and every path issues and waits
  // the same way (else ptxas serialises the WGMMAs).
  HOPGEMM_DEVICE void run_overlap(float (&fin)[kWaves][kBlockN / 2], Acc (&acc)[kAccSets], i32 unit_k_blocks) {
    RowScales rs[2];
    smem.stages.wait_full(ring);
    scales.wait_chunk(0);
    rs[0] = scales.row_scales(ring.stage, 0, 0);
    issue_mma(acc[0], ring.stage, 0);
    auto consume = [&]<int kBuf>(bool last, i32 kb) {
      Ring next = ring;
      next.advance();
      if (last) {
        ptx::wgmma_wait_group<0>();
      } else {
        smem.stages.wait_full(next);
        scales.wait_chunk(kb + 1);
        rs[kBuf ^ 1] = scales.row_scales(next.stage, kb + 1, 0);
        issue_mma(acc[kBuf ^ 1], next.stage, 0);
        ptx::wgmma_wait_group<1>();
      }
      ptx::wgmma_fence_operand(acc[kBuf]);
      // Two accumulator sets leave no registers for 1D1D's per-column scales ahead of time: they are read during
      // the promotion, so that stage is released after it.
      const ColScales cs = scales.col_scales(ring.stage, kb);
      if constexpr (!T::k1D1D) {
        scales_read(ring.stage);
        release(ring.stage);
        scales.release_chunk(kb, unit_k_blocks);
      }
      promote(fin[0], acc[kBuf], rs[kBuf], cs);
      if constexpr (T::k1D1D) {
        scales_read(ring.stage);
        release(ring.stage);
        scales.release_chunk(kb, unit_k_blocks);
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
  }

  // Both waves' batches go out together; wave 0 is promoted while wave 1 runs on the tensor cores, so only wave 1's
  // promotion is exposed (the other warpgroup's batches cover it).
  HOPGEMM_DEVICE void run_wave_pipelined(float (&fin)[kWaves][kBlockN / 2], Acc (&acc)[kAccSets], i32 unit_k_blocks) {
    for (i32 kb = 0; kb < unit_k_blocks; ++kb, ring.advance()) {
      const u32 s = ring.stage;
      smem.stages.wait_full(ring);
      scales.wait_chunk(kb);
      const ColScales cs = kColScalesInRegs ? scales.col_scales(s, kb) : ColScales{};
      const RowScales rs0 = scales.row_scales(s, kb, 0), rs1 = scales.row_scales(s, kb, 1);
      issue_mma(acc[0], s, 0);
      issue_mma(acc[kAccSets - 1], s, 1);
      if (kColScalesInRegs) scales_read(s);
      ptx::wgmma_wait_group<1>();
      ptx::wgmma_fence_operand(acc[0]);
      promote(fin[0], acc[0], rs0, kColScalesInRegs ? cs : scales.col_scales(s, kb));
      ptx::wgmma_wait_group<0>();
      ptx::wgmma_fence_operand(acc[kAccSets - 1]);
      if (kColScalesInRegs) release_k_block(s, kb, unit_k_blocks);
      promote(fin[kWaves - 1], acc[kAccSets - 1], rs1, kColScalesInRegs ? cs : scales.col_scales(s, kb));
      if (!kColScalesInRegs) {
        scales_read(s);
        release_k_block(s, kb, unit_k_blocks);
      }
      scales.release_chunk(kb, unit_k_blocks);
      last_stage = s;
    }
  }

  // One unit's k-blocks into fin (zeroed first) by the config's schedule.
  HOPGEMM_DEVICE void run(float (&fin)[kWaves][kBlockN / 2], Acc (&acc)[kAccSets], i32 unit_k_blocks) {
#pragma unroll
    for (int w = 0; w < kWaves; ++w)
#pragma unroll
      for (int i = 0; i < kBlockN / 2; ++i) fin[w][i] = 0.0f;
    if constexpr (kOverlap)
      run_overlap(fin, acc, unit_k_blocks);
    else if constexpr (kWavePipelined)
      run_wave_pipelined(fin, acc, unit_k_blocks);
    else
      run_plain(fin, acc, unit_k_blocks);
  }
};

}  // namespace hopgemm::device::collective
