#pragma once
// Memory/proxy fences (sm_90).

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::ptx {

// fence.proxy.async.shared::cta;  (sm_90) makes generic-proxy smem writes (st.shared, stmatrix)
// visible to the async proxy (TMA store, wgmma) of this CTA.
HOPGEMM_DEVICE void fence_proxy_async_shared_cta() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// fence.mbarrier_init.release.cluster;  (sm_90) publishes mbarrier.init to the cluster (peer CTAs
// arrive remotely and TMA multicast signals them).
HOPGEMM_DEVICE void fence_mbarrier_init_release_cluster() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

}  // namespace hopgemm::device::ptx
