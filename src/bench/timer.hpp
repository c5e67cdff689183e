#pragma once
// GPU timing for `hopgemm bench`: CUDA events around each call, an L2 flush before each timed
// call (outside the events), median of the samples; CUDA-graph replays for short calls timed warm; and the
// device-to-device copy bandwidth that the roofline numbers are compared with.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <vector>

#include "hopgemm/device/kernels/l2_sweep_types.cuh"
#include "jit/kernel_source.hpp"

namespace hopgemm::bench {

// Owning cudaMalloc allocation (benchmark setup only: ops themselves never allocate).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Allocates `bytes` on the current device; throws Error(kCuda) on failure.
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Calls shorter than this (median, microseconds) are re-timed as CUDA-graph replays when the L2 is not flushed.
inline constexpr double kGraphThresholdUs = 20.0;

// How the L2 is flushed before each timed call (outside the events).
enum class L2Flush {
  kWrite,         // write >= 256 MB (DeepGEMM's and Triton's method): L2 is left full of dirty lines, which the
                  // timed call pays to write back to HBM (~50 MB on an H100: ~10 us on a 50 us kernel)
  kWriteThenRead  // the same write, then one read of the buffer (l2_sweep kernel): the timed call starts on a
                  // clean, cold L2 and moves only its own bytes
};

struct TimerOptions {
  int warmups = 5;
  int iters = 30;           // samples; the median is reported
  bool flush_l2 = true;     // write >= 256 MB before each timed call (not inside the events)
  L2Flush flush_mode = L2Flush::kWrite;
  bool allow_graph = true;  // without flush: replay `graph_calls` captured calls for calls under kGraphThresholdUs
  int graph_calls = 20;
  // Before the samples, repeat (flush +) call back to back for this long: an H100 running big FP8 GEMMs for
  // seconds settles 3-21% slower than in a burst of 30 calls (clocks under the power limit), and a training loop
  // lives in that settled state. 0: burst timing only.
  int sustain_ms = 0;
};

struct Timing {
  double median_us = 0;
  double min_us = 0;
  double max_us = 0;
  int samples = 0;
  bool graph = false;  // true: per-call time from CUDA-graph replays of graph_calls back-to-back calls
};

// Times `fn(stream)`, which enqueues one call of the op on the stream it is given (it may be another stream
// than `stream` in graph mode: the capture stream). Modes:
//   flush_l2: each sample = events right around one call, preceded by a cudaMemsetAsync of a scratch buffer of
//     max(256 MiB, 4 x L2) so the call starts with a cold L2 (inputs come from HBM, as in a model's forward).
//     The memset keeps the GPU busy while the host enqueues the call, so host launch cost is not measured.
//   no flush: back-to-back calls; if the median is under kGraphThresholdUs (and allow_graph), graph_calls calls
//     are captured into one CUDA graph and each sample is (one replay) / graph_calls: warm-L2 throughput without
//     launch gaps or event granularity.
//   sustain_ms > 0: either mode, after the warm-ups, runs the (flush +) call loop untimed for sustain_ms first.
// Exceptions from fn (e.g. Error(kUnsupported) from a baseline) propagate from the first warm-up call.
// The JIT source of the L2 sweep kernel the kWriteThenRead flush launches (for compile tests and precompile).
jit::KernelSource render_l2_sweep(const device::L2SweepConfig& config);

Timing time_call(const std::function<void(cudaStream_t)>& fn, cudaStream_t stream, const TimerOptions& options);

// Median microseconds of `iters` timed calls after `warmups` untimed ones (time_call with those options).
double time_us(const std::function<void(cudaStream_t)>& fn, cudaStream_t stream, int warmups, int iters,
               bool flush_l2);

// Device-to-device cudaMemcpyAsync bandwidth in GB/s (1e9 B/s) for a copy of `bytes`, counting the bytes read
// plus the bytes written (2 x bytes), median of 20 copies: the practical HBM roofline (~3.0 TB/s on H100 SXM).
double copy_bandwidth_gbps(size_t bytes = size_t{1} << 30);

// Median of `values` (the mean of the middle two for an even count); 0 for an empty vector. Pure: CPU-tested.
double median(std::vector<double> values);

}  // namespace hopgemm::bench
