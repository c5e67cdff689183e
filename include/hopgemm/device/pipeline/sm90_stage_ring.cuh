#pragma once
// Stage index + phase bit of an mbarrier ring (producer and consumers advance identical copies).

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::pipeline {

template <int kNumStages>
struct StageRing {
  u32 stage = 0;
  u32 phase = 0;  // parity of the barrier phase the consumer waits on; the producer waits on phase ^ 1

  // The ring after `count` advances from the start: for rings whose users count their steps (the scale chunks).
  HOPGEMM_DEVICE static StageRing at(u32 count) { return {count % kNumStages, (count / kNumStages) & 1}; }

  HOPGEMM_DEVICE void advance() {
    if (++stage == kNumStages) {
      stage = 0;
      phase ^= 1;
    }
  }
};

}  // namespace hopgemm::device::pipeline
