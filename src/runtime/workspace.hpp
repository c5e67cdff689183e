#pragma once
// Device scratch memory for ops that need it (split-K partials): one buffer per device, shared by every
// stream. Work on one stream is ordered, so calls reuse it freely; split-K GEMMs on two streams must not run
// at the same time (serialise them, e.g. with an event, or run them on one stream).
#include <cuda_runtime_api.h>

#include <cstddef>

namespace hopgemm::runtime {

// At least `bytes` (> 0) of device memory on the current device, 256-byte aligned, for work enqueued on
// `stream`. Grows with cudaMalloc only when a larger size is first asked for; inside a CUDA-graph capture a
// growth is refused with Error(kJit) naming `op` ("not warmed up": run the op once before capturing). A
// replaced buffer is kept until the process exits (work already enqueued, a captured graph, or a launch
// another thread is preparing may still use it). Thread-safe.
void* workspace(size_t bytes, cudaStream_t stream, const char* op);

// Like workspace(), from a second pool whose memory is zero when handed out for the first time (cleared on
// `stream` when allocated): for counters that the kernels using them return to zero before they finish
// (fused split-K's per-tile counters).
void* zeroed_workspace(size_t bytes, cudaStream_t stream, const char* op);

}  // namespace hopgemm::runtime
