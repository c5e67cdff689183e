#pragma once
// What a tile scheduler hands out: one CTA's share of the work. Every scheduler (dense, grouped) returns the same
// struct and answers the coordinates of its units itself, so the producer, the mainloop and the epilogue never
// compute a global coordinate.

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::scheduler {

struct WorkUnit {
  i32 m_block, n_block;  // the tile (a phantom tile past the edge keeps its pair's pipelines in step: not stored)
  i32 group;             // 0 for a dense GEMM
  i32 split;             // split-K index, 0 without split-K
  i32 kb_begin, kb_end;  // the unit's k-blocks [kb_begin, kb_end) of the problem's (group's) K
  // A tile of padding rows that D receives zeros for (m_group_ids with zero_padding_blocks, DeepGEMM's behaviour):
  // zero_d stores zeros instead of the product; skip_mainloop (its pair holds no group either) also loads and
  // multiplies nothing. Set by that scheduler alone; false for every other one.
  bool zero_d = false, skip_mainloop = false;
  HOPGEMM_DEVICE i32 num_k_blocks() const { return kb_end - kb_begin; }
};

}  // namespace hopgemm::device::scheduler
