#pragma once
// The scale policy of a family without scale factors (BF16): no shared memory, bytes or barrier arrivals, no producer
// warps beside warp 0, hooks that do nothing, and no promotion: the mainloop adds every k-block's WGMMAs into the FP32
// sums directly (run_accumulating). collective/sm90_gemm_traits.cuh lists a scale policy's members.

#include "hopgemm/device/common.cuh"
#include "hopgemm/device/scheduler/sm90_work_unit.cuh"

namespace hopgemm::device::collective {

template <class ParamsT>
struct Sm90NoScales {
  using Params = ParamsT;
  static constexpr int kSmemBytes = 0, kBarrierBytes = 0;
  static constexpr u32 kStageTxBytes = 0, kFullArrivals = 0, kEmptyArrivals = 0;
  static constexpr bool kReadersArrive = false;
  static constexpr int kProducerWarps = 0;
  static constexpr bool kPromotes = false;
  static constexpr int kPromoteOverlap = 0;
  static constexpr bool kPerColumnScales = false, kColScalesInRegs = true;
  // K-blocks per trip of the math loop (collective/sm90_gemm_mainloop.cuh): eight, as DeepGEMM's BF16 kernels. A BF16
  // k-block is half an FP8 one's K, so the loop's own work weighs twice as much; four has not been timed here (the FP8
  // family's four lost nothing measurable, and ptxas took 2.6x less time on its 256x128 pair kernel).
  static constexpr int kKUnroll = 8;

  struct Storage {
    HOPGEMM_DEVICE explicit Storage(u8*) {}
    HOPGEMM_DEVICE void init() const {}
  };
  HOPGEMM_DEVICE static void prefetch(const Params&) {}

  struct Loader {
    struct KBlock {};
    HOPGEMM_DEVICE Loader(const Params&, const Storage&, u32, u32) {}
    HOPGEMM_DEVICE bool loads() const { return false; }
    template <class Scheduler>
    HOPGEMM_DEVICE void begin_unit(const Scheduler&, const scheduler::WorkUnit&) {}
    HOPGEMM_DEVICE void end_unit(const scheduler::WorkUnit&) {}
    template <class Scheduler>
    HOPGEMM_DEVICE KBlock k_block(const Scheduler&, const scheduler::WorkUnit&, i32, u32) const { return {}; }
    HOPGEMM_DEVICE void before_empty_wait(const scheduler::WorkUnit&, i32) {}
    HOPGEMM_DEVICE void issue_with_operands(const KBlock&, u32, i32) const {}
    template <class Scheduler>
    HOPGEMM_DEVICE void issue_by_operand_warp(const KBlock&, u64*, const Scheduler&, const scheduler::WorkUnit&, i32,
                                              i32) const {}
    HOPGEMM_DEVICE void fill_stage(u32, u64*, i32) const {}
  };

  struct Reader {
    struct RowScales {};
    struct ColScales {};
    HOPGEMM_DEVICE Reader(const Params&, const Storage&, u32, u32) {}
    template <class Scheduler>
    HOPGEMM_DEVICE void begin_unit(const scheduler::WorkUnit&, const Scheduler&) {}
    HOPGEMM_DEVICE void end_unit(const scheduler::WorkUnit&) {}
  };
};

}  // namespace hopgemm::device::collective
