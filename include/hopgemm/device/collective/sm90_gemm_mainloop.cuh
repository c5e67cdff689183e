#pragma once
// A GEMM kernel's math warpgroups over one work unit: a WGMMA batch per k-block from the stage ring into tensor-core
// accumulators. Without promotion (BF16) the batches add into the FP32 sums directly (run_accumulating). With a
// promoting scale policy (the FP8 recipes) each k-block's batch is promoted on CUDA cores into
// FP32 sums with the policy's row x column scales (the DeepSeek-V3 two-level accumulation). Schedules, one function
// each:
//   run_plain           one batch per wave, waited and promoted in turn;
//   run_overlap         (promote_overlap, one wave) block kb+1's batch runs while kb is promoted;
//   run_wave_pipelined  (promote_overlap, two waves) both waves issued together, wave 0 promoted under wave 1.
// The operand policy gives the WGMMA and its descriptors, the scale policy's Reader the scales, the chunk ring's waits
// and releases, and the promotion.

#include "hopgemm/device/collective/sm90_gemm_smem.cuh"
#include "hopgemm/device/mma/sm90_smem_desc.cuh"
#include "hopgemm/device/ptx/opaque.cuh"
#include "hopgemm/device/ptx/wgmma.cuh"

namespace hopgemm::device::collective {

template <class K>  // Sm90GemmTraits
struct Sm90GemmMainloop {
  using Operands = typename K::Operands;
  using Scales = typename K::Scales::Reader;
  using RowScales = typename Scales::RowScales;
  using ColScales = typename Scales::ColScales;
  using Ring = typename pipeline::MbarrierPipeline<K::kStages>::Ring;
  static constexpr int kBlockN = K::kBlockN, kWaves = K::kWaves;
  static constexpr int kAccSets = K::Scales::kPromoteOverlap == 1 ? 2 : 1;
  static constexpr bool kOverlap = K::Scales::kPromoteOverlap == 1 && kWaves == 1;
  static constexpr bool kWavePipelined = K::Scales::kPromoteOverlap == 1 && kWaves == 2;
  // Column scales held in registers across a k-block's waves where they fit; else each promotion reads them from the
  // stage and the stage is released after the last one.
  static constexpr bool kColScalesInRegs = K::Scales::kColScalesInRegs;
  static constexpr bool kDInStage = K::kDInStage;
  using Acc = float[kBlockN / 2];
  // K-blocks per trip of the math loop, the scale policy's kKUnroll: the loop's test, branch and counter updates once
  // per kKUnroll blocks, and the ring's stage/phase step becomes selects instead of a branch per block (every
  // schedule: run_overlap, already unrolled by two, trips (kKUnroll + 1) / 2 times). Why each policy takes its count:
  // the policies (collective/sm90_fp8_scale_facts.cuh, sm90_no_scales.cuh).
  static constexpr int kKUnroll = K::Scales::kKUnroll;

  const Sm90GemmSharedStorage<K>& smem;
  Scales& scales;
  u32 lane;
  u64 desc_a0, desc_b0;  // descriptors of stage 0 (this warpgroup's first A row, B)
  Ring ring;
  u32 last_stage = 0;  // stage of the unit's last k-block (d_in_stage: D is staged there)

  HOPGEMM_DEVICE Sm90GemmMainloop(const Sm90GemmSharedStorage<K>& s, Scales& sc, u32 wg, u32 lane_)
      : smem(s), scales(sc), lane(lane_) {
    // The warpgroup index broadcast from lane 0, so the compiler knows it is warp-uniform: the descriptors are then
    // built on the uniform datapath instead of per-thread registers moved over with R2UR before every WGMMA.
    const u32 wg_uniform = __shfl_sync(0xffffffffu, wg, 0);
    // A stage or wave is then one add to the 14-bit start-address field (every smem address >> 4 fits it, so the
    // add never carries out).
    desc_a0 = Operands::make_desc_a(smem.a + wg_uniform * K::kWgRows * kSm90KBlockBytes);
    desc_b0 = Operands::make_desc_b(smem.b);
    // Opaque: held in a register instead of rebuilt from the shared-window base after every full-barrier wait, on
    // the path from the wait to the first WGMMA while the tensor cores idle.
    ptx::opaque(desc_b0);
  }

  // One wave's k-block: kBlockK / kMmaK WGMMAs (the operand policy's K steps) into a, one commit group; the first
  // overwrites a unless `accumulate` (the accumulating schedule adds every k-block into the same sums).
  HOPGEMM_DEVICE void issue_mma(Acc& a, u32 s, int w, bool accumulate = false) const {
    const u64 desc_a = mma::advance_desc_bytes(desc_a0, s * K::kSmem.a_stage + w * 64 * kSm90KBlockBytes);
    const u64 desc_b = mma::advance_desc_bytes(desc_b0, s * K::kSmem.b_stage);
    ptx::wgmma_fence_operand(a);
    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < K::kBlockK / Operands::kMmaK; ++kk)
      Operands::template mma<kBlockN>(a, mma::advance_desc_bytes(desc_a, kk * Operands::kAMmaStepBytes),
                                      mma::advance_desc_bytes(desc_b, kk * Operands::kBMmaStepBytes),
                                      accumulate || kk > 0);
    ptx::wgmma_commit_group();
  }

  HOPGEMM_DEVICE void promote(Acc& f, const Acc& a, const RowScales& r, const ColScales& c) const {
    scales.promote(f, a, r, c);
  }

  // Every lane's reads of stage s's scales are done (the producer refills the scale slots with cp.async or stores,
  // which must not overtake another lane's read): a __syncwarp, and where the scale policy says so (FP8 1D2D) each
  // thread's own arrival on its CTA's empty barrier. Where the schedule allows it runs while the tensor cores run the
  // stage's last batch: right before the release the __syncwarp cost 4-7% on 256x128 tiles.
  HOPGEMM_DEVICE void scales_read(u32 s) const {
    __syncwarp();
    if constexpr (K::Scales::kReadersArrive) smem.stages.arrive_empty(s);
  }
  HOPGEMM_DEVICE void release(u32 s) const { smem.stages.template release_by_warp<K::kClusterSize>(s, lane); }
  // d_in_stage keeps the unit's last stage for the epilogue's D staging (released after the store has read it).
  HOPGEMM_DEVICE void release_k_block(u32 s, i32 kb, i32 unit_k_blocks) const {
    if (!(kDInStage && kb == unit_k_blocks - 1)) release(s);
  }

  HOPGEMM_DEVICE void run_plain(float (&fin)[kWaves][kBlockN / 2], Acc (&acc)[kAccSets], i32 unit_k_blocks) {
#pragma unroll kKUnroll
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
      // Two accumulator sets leave no registers for per-column scales (1D1D) ahead of time: they are read during the
      // promotion, so that stage is released after it.
      const ColScales cs = scales.col_scales(ring.stage, kb);
      if constexpr (!K::Scales::kPerColumnScales) {
        scales_read(ring.stage);
        release(ring.stage);
        scales.release_chunk(kb, unit_k_blocks);
      }
      promote(fin[0], acc[kBuf], rs[kBuf], cs);
      if constexpr (K::Scales::kPerColumnScales) {
        scales_read(ring.stage);
        release(ring.stage);
        scales.release_chunk(kb, unit_k_blocks);
      }
      ring = next;
    };
#pragma unroll (kKUnroll + 1) / 2
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
#pragma unroll kKUnroll
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

  // Without promotion (a scale policy that does not promote: BF16) every k-block's WGMMAs add into fin itself. Block
  // kb's batches are issued before block kb-1's are waited for (the tensor cores chain WGMMAs on one accumulator),
  // and kb-1's stage is released as soon as they are done.
  HOPGEMM_DEVICE void run_accumulating(float (&fin)[kWaves][kBlockN / 2], i32 unit_k_blocks) {
    u32 prev_stage = 0;
    for (i32 kb = 0; kb < unit_k_blocks; ++kb, ring.advance()) {
      const u32 s = ring.stage;
      smem.stages.wait_full(ring);
#pragma unroll
      for (int w = 0; w < kWaves; ++w) issue_mma(fin[w], s, w, /*accumulate=*/true);
      ptx::wgmma_wait_group<kWaves>();
      if (kb > 0) release_k_block(prev_stage, kb - 1, unit_k_blocks);
      prev_stage = s;
    }
    ptx::wgmma_wait_group<0>();
#pragma unroll
    for (int w = 0; w < kWaves; ++w) ptx::wgmma_fence_operand(fin[w]);
    release_k_block(prev_stage, unit_k_blocks - 1, unit_k_blocks);
    last_stage = prev_stage;
  }

  // One unit's k-blocks into fin (zeroed first) by the config's schedule.
  HOPGEMM_DEVICE void run(float (&fin)[kWaves][kBlockN / 2], Acc (&acc)[kAccSets], i32 unit_k_blocks) {
#pragma unroll
    for (int w = 0; w < kWaves; ++w)
#pragma unroll
      for (int i = 0; i < kBlockN / 2; ++i) fin[w][i] = 0.0f;
    if constexpr (!K::Scales::kPromotes)
      run_accumulating(fin, unit_k_blocks);
    else if constexpr (kOverlap)
      run_overlap(fin, acc, unit_k_blocks);
    else if constexpr (kWavePipelined)
      run_wave_pipelined(fin, acc, unit_k_blocks);
    else
      run_plain(fin, acc, unit_k_blocks);
  }
};

}  // namespace hopgemm::device::collective
