#pragma once
// sf_chunks: the row-major per-row scales come by TMA in chunks of kSfChunkKBlocks k-blocks (a box of one 16-byte
// row segment per tile row) into a ring of kSfChunkSlots slots with barriers of their own: a chunk starts at every
// 4th k-block of a unit and is released after its last k-block's scales are read. Both roles count the chunks the
// same way, so they agree on each chunk's slot and phase.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/kernels/sm90_fp8_gemm_types.cuh"
#include "hopgemm/device/pipeline/sm90_stage_ring.cuh"

namespace hopgemm::device::collective {

struct SfChunkCounter {
  using Ring = pipeline::StageRing<kSfChunkSlots>;
  u32 chunks_before = 0;  // the CTA's chunks in earlier units
  i32 kb_begin = 0;       // the current unit's first k-block (absolute)

  // Chunks are aligned to k-block multiples of 4 (a box must start 16-byte aligned: TMA faults otherwise), so a
  // split-K unit starting elsewhere begins with a partial chunk. The chunk of absolute k-block kb: the chunks so
  // far + its chunk within the unit.
  HOPGEMM_DEVICE u32 chunk_of(i32 kb) const {
    return chunks_before + static_cast<u32>(kb / kSfChunkKBlocks - kb_begin / kSfChunkKBlocks);
  }
  HOPGEMM_DEVICE Ring ring_of(i32 kb) const { return Ring::at(chunk_of(kb)); }
  HOPGEMM_DEVICE bool starts(i32 kb) const { return kb % kSfChunkKBlocks == 0 || kb == kb_begin; }
  // After a unit [kb_begin, kb_end): its chunks counted.
  HOPGEMM_DEVICE void end_unit(i32 kb_end) { chunks_before = chunk_of(kb_end - 1) + 1; }
};

}  // namespace hopgemm::device::collective
