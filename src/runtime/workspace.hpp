#pragma once
// Device scratch memory of split-K GEMMs (FP32 partials and per-tile counters), never shared by work that may run
// at the same time:
// - Outside a CUDA-graph capture, each (device, stream) has partials of its own, allocated with cudaMallocAsync on
//   that stream by the first call that needs them or needs more (stream-ordered: the host does not wait) and kept
//   for later calls on the stream. Calls on one stream are ordered; calls on two streams never share memory. A new
//   buffer is zeroed in the stream's order (once per allocation), so every byte of it is initialised: kernels that
//   write partials with atomic exchanges (the K-grouped GEMM's descriptor slots) read nothing compute-sanitizer's
//   initcheck would call uninitialised.
// - Inside a capture the graph owns the partials: cudaMallocAsync / cudaFreeAsync are captured as memory nodes
//   around the op's kernels, so nothing is allocated while capturing and every graph has partials of its own
//   (replays of different graphs on different streams may overlap). They are not zeroed: a memset node in every
//   replay would cost more than it is worth to the sanitizer (initcheck over a captured K-grouped GEMM reports the
//   descriptor slots' first exchanges, whose old values the kernel discards).
// - Counters are slices of a per-device arena that is zeroed once, when the first split-K call on the device
//   creates it (that call waits for its stream, once). Each stream, and each (capture, stream), has its own slice;
//   the kernels leave their counters zero, so a slice is zero whenever a kernel starts. An arena running out inside
//   a capture is refused (Error kJit naming the op): the memory is never allocated while capturing.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>

namespace hopgemm::runtime {

// The scratch of one op call on `stream` (on the current device). Construct it before the op's first launch and
// keep it until the last one is enqueued. Thread-safe.
class Workspace {
 public:
  // `counter_bytes` of counters that are zero when the op's first kernel starts (its kernels must leave them zero)
  // and `partial_bytes` of memory holding whatever earlier calls on the stream left (zero at first; inside a capture,
  // uninitialised); both 256-byte aligned, null when 0 bytes are asked for. Throws
  // Error naming `op`: kCuda when memory cannot be had, kJit for a refusal inside a capture.
  Workspace(size_t counter_bytes, size_t partial_bytes, cudaStream_t stream, const char* op);
  // Inside a capture: captures the free of the graph's partials after everything enqueued since construction.
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  void* counters() const { return counters_; }
  void* partials() const { return partials_; }

 private:
  void* counters_ = nullptr;
  void* partials_ = nullptr;
  std::shared_ptr<void> stream_partials_;  // outside a capture: the stream's buffer, alive while in use here
  cudaStream_t stream_ = nullptr;
  bool graph_partials_ = false;  // inside a capture: partials_ is the graph's, freed by the destructor
};

}  // namespace hopgemm::runtime
