#pragma once
// mbarrier wrappers (sm_90). Barriers are u64 words in shared memory, addressed by 32-bit smem addresses.

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::ptx {

// cvta.to.shared: generic pointer -> 32-bit shared-window address.
HOPGEMM_DEVICE u32 smem_addr(const void* p) { return static_cast<u32>(__cvta_generic_to_shared(p)); }

// mbarrier.init.shared::cta.b64 [addr], count;  (sm_80)
HOPGEMM_DEVICE void mbarrier_init(u64* bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}

// mbarrier.arrive.expect_tx.shared::cta.b64 _, [addr], tx;  (sm_90) one arrival + expect tx bytes.
HOPGEMM_DEVICE void mbarrier_arrive_expect_tx(u64* bar, u32 tx_bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(tx_bytes)
               : "memory");
}

// mbarrier.arrive.shared::cta.b64 _, [addr];  (sm_80)
HOPGEMM_DEVICE void mbarrier_arrive(u64* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}

// mbarrier.arrive.shared::cluster.b64 _, [remote];  (sm_90) arrive on the barrier at the same offset in
// CTA `cta_rank` of the cluster (mapa translates the address). Default .release.cta semantics: a
// .release.cluster arrive made every math warp pay a cluster-scope fence per k-block (measured 2x slower).
HOPGEMM_DEVICE void mbarrier_arrive_cluster(u64* bar, u32 cta_rank) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_addr(bar)),
      "r"(cta_rank)
      : "memory");
}

// mbarrier.try_wait.parity.shared::cta.b64 p, [addr], parity;  (sm_90) spins until the phase with
// the given parity has completed.
HOPGEMM_DEVICE void mbarrier_wait(u64* bar, u32 parity) {
  asm volatile(
      "{\n.reg .pred done;\nwait_loop:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_loop;\n}\n" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
}

// cp.async.mbarrier.arrive.noinc.shared::cta.b64 [addr];  (sm_80) the barrier counts one arrival
// once all prior cp.async of this thread have landed (noinc: the arrival is one of the expected ones).
HOPGEMM_DEVICE void cp_async_mbarrier_arrive_noinc(u64* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}

}  // namespace hopgemm::device::ptx
