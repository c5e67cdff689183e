#include "bench/timer.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hopgemm/device/kernels/l2_sweep_types.cuh"
#include "hopgemm/error.hpp"
#include "hopgemm/runtime.hpp"
#include "jit/kernel_cache.hpp"
#include "jit/kernel_source.hpp"
#include "jit/loader.hpp"
#include "runtime/cuda_check.hpp"

namespace hopgemm::bench {

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes > 0) HOPGEMM_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) cudaFree(ptr_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  if (values.size() % 2 == 1) return values[mid];
  const double upper = values[mid];
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return 0.5 * (lower + upper);
}

namespace {

constexpr size_t kMinFlushBytes = size_t{256} << 20;
constexpr int kMaxDevices = 64;

// The L2 flush scratch of the current device: max(256 MiB, 4 x L2), allocated on first use. Deliberately never
// freed: it lives for the process, and freeing it during static destruction races the CUDA runtime's teardown.
const DeviceBuffer& flush_buffer() {
  static std::array<DeviceBuffer*, kMaxDevices> buffers{};
  static std::mutex mutex;
  const int device = current_device();
  std::lock_guard<std::mutex> lock(mutex);
  if (buffers[device] == nullptr) {
    const size_t bytes = std::max(kMinFlushBytes, size_t{4} * static_cast<size_t>(device_info(device).l2_size));
    buffers[device] = new DeviceBuffer(bytes);
  }
  return *buffers[device];
}

}  // namespace

jit::KernelSource render_l2_sweep(const device::L2SweepConfig& c) {
  static constexpr jit::KernelFamily kFamily{"l2_sweep", "hopgemm/device/kernels/l2_sweep.cuh",
                                             "hopgemm::device::l2_sweep_kernel", "hopgemm::device::L2SweepConfig"};
  return jit::render_kernel(kFamily, [&](jit::ConfigWriter& w) { w.field("unused", c.unused); });
}

namespace {

// One read of the flush buffer after its write (L2Flush::kWriteThenRead).
void sweep_l2(const DeviceBuffer& flush, cudaStream_t stream) {
  static jit::KernelCache<device::L2SweepConfig> cache(&render_l2_sweep);
  const jit::LoadedKernel& kernel = cache.get(device::L2SweepConfig{}, "bench l2 flush", stream);
  // The (practically never taken) sink write lands in the flush buffer itself: scratch on the right device.
  device::L2SweepParams params{flush.get(), static_cast<int64_t>(flush.bytes() / 16), static_cast<uint32_t*>(flush.get())};
  jit::LaunchGeometry geometry;
  geometry.device = current_device();
  geometry.grid_x = static_cast<unsigned>(device_info(geometry.device).num_sms) * 4;
  geometry.block_x = device::kL2SweepThreads;
  jit::launch(kernel, geometry, &params, stream);
}

// The L2 flush before a call: `flush` overwritten (with `fill`, so no write is ever a no-op), and read back once with
// L2Flush::kWriteThenRead.
void flush_l2(const DeviceBuffer& flush, int fill, L2Flush mode, cudaStream_t stream) {
  HOPGEMM_CUDA_CHECK(cudaMemsetAsync(flush.get(), fill & 0xff, flush.bytes(), stream));
  if (mode == L2Flush::kWriteThenRead) sweep_l2(flush, stream);
}

// Owns a set of timing events.
class EventPairs {
 public:
  explicit EventPairs(int count) : starts_(count, nullptr), stops_(count, nullptr) {
    for (int i = 0; i < count; ++i) {
      HOPGEMM_CUDA_CHECK(cudaEventCreate(&starts_[i]));
      HOPGEMM_CUDA_CHECK(cudaEventCreate(&stops_[i]));
    }
  }
  ~EventPairs() {
    for (cudaEvent_t e : starts_) if (e != nullptr) cudaEventDestroy(e);
    for (cudaEvent_t e : stops_) if (e != nullptr) cudaEventDestroy(e);
  }
  EventPairs(const EventPairs&) = delete;
  EventPairs& operator=(const EventPairs&) = delete;
  cudaEvent_t start(int i) const { return starts_[i]; }
  cudaEvent_t stop(int i) const { return stops_[i]; }
  // Waits for the last pair, then returns every pair's elapsed time in microseconds.
  std::vector<double> elapsed_us() const {
    HOPGEMM_CUDA_CHECK(cudaEventSynchronize(stops_.back()));
    std::vector<double> out(starts_.size());
    for (size_t i = 0; i < starts_.size(); ++i) {
      float ms = 0;
      HOPGEMM_CUDA_CHECK(cudaEventElapsedTime(&ms, starts_[i], stops_[i]));
      out[i] = 1e3 * static_cast<double>(ms);
    }
    return out;
  }

 private:
  std::vector<cudaEvent_t> starts_;
  std::vector<cudaEvent_t> stops_;
};

Timing summarise(const std::vector<double>& samples, double divisor, bool graph) {
  Timing t;
  t.samples = static_cast<int>(samples.size());
  t.median_us = median(samples) / divisor;
  t.min_us = *std::min_element(samples.begin(), samples.end()) / divisor;
  t.max_us = *std::max_element(samples.begin(), samples.end()) / divisor;
  t.graph = graph;
  return t;
}

// Captures `calls` back-to-back calls of fn into an executable graph; nullptr if fn cannot be captured.
cudaGraphExec_t capture_calls(const std::function<void(cudaStream_t)>& fn, int calls) {
  cudaStream_t capture_stream = nullptr;
  HOPGEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&capture_stream, cudaStreamNonBlocking));
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  bool ok = cudaStreamBeginCapture(capture_stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
  if (ok) {
    try {
      for (int i = 0; i < calls; ++i) fn(capture_stream);
    } catch (const std::exception&) {
      ok = false;
    }
    ok = cudaStreamEndCapture(capture_stream, &graph) == cudaSuccess && ok;
  }
  if (ok) ok = cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
  if (graph != nullptr) cudaGraphDestroy(graph);
  cudaStreamDestroy(capture_stream);
  cudaGetLastError();  // a failed capture leaves a sticky-free error behind; clear it
  return ok ? exec : nullptr;
}

// The untimed back-to-back loop of TimerOptions::sustain_ms: batches of calls, one batch always queued behind the
// one running, so the GPU never waits for the host.
void sustain(const std::function<void(cudaStream_t)>& fn, cudaStream_t stream, const DeviceBuffer* flush,
             const TimerOptions& options) {
  constexpr int kBatch = 8;
  using Event = std::unique_ptr<std::remove_pointer_t<cudaEvent_t>, cudaError_t (*)(cudaEvent_t)>;
  auto make_event = [] {
    cudaEvent_t e = nullptr;
    HOPGEMM_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return Event(e, cudaEventDestroy);
  };
  const std::array<Event, 2> done{make_event(), make_event()};
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(options.sustain_ms);
  for (int batch = 0; std::chrono::steady_clock::now() < until; ++batch) {
    for (int i = 0; i < kBatch; ++i) {
      if (flush != nullptr) flush_l2(*flush, i, options.flush_mode, stream);
      fn(stream);
    }
    HOPGEMM_CUDA_CHECK(cudaEventRecord(done[batch % 2].get(), stream));
    if (batch > 0) HOPGEMM_CUDA_CHECK(cudaEventSynchronize(done[(batch + 1) % 2].get()));
  }
  HOPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace

Timing time_call(const std::function<void(cudaStream_t)>& fn, cudaStream_t stream, const TimerOptions& options) {
  if (options.iters < 1 || options.warmups < 0 || options.graph_calls < 1 || options.sustain_ms < 0) {
    throw Error(ErrorKind::kInvalidArgument, "time_call: iters=" + std::to_string(options.iters) +
                                                 " warmups=" + std::to_string(options.warmups) + " graph_calls=" +
                                                 std::to_string(options.graph_calls) + " sustain_ms=" +
                                                 std::to_string(options.sustain_ms) +
                                                 " (need iters >= 1, warmups >= 0, graph_calls >= 1, sustain_ms >= 0)");
  }
  const DeviceBuffer* flush = options.flush_l2 ? &flush_buffer() : nullptr;
  for (int i = 0; i < options.warmups; ++i) fn(stream);
  if (options.sustain_ms > 0) sustain(fn, stream, flush, options);

  EventPairs events(options.iters);
  for (int i = 0; i < options.iters; ++i) {
    if (flush != nullptr) flush_l2(*flush, i, options.flush_mode, stream);
    HOPGEMM_CUDA_CHECK(cudaEventRecord(events.start(i), stream));
    fn(stream);
    HOPGEMM_CUDA_CHECK(cudaEventRecord(events.stop(i), stream));
  }
  const Timing per_call = summarise(events.elapsed_us(), 1.0, false);
  if (flush != nullptr || !options.allow_graph || per_call.median_us >= kGraphThresholdUs) return per_call;

  cudaGraphExec_t exec = capture_calls(fn, options.graph_calls);
  if (exec == nullptr) return per_call;
  std::unique_ptr<std::remove_pointer_t<cudaGraphExec_t>, cudaError_t (*)(cudaGraphExec_t)> owned(
      exec, cudaGraphExecDestroy);
  HOPGEMM_CUDA_CHECK(cudaGraphLaunch(exec, stream));  // first replay uploads the graph; untimed
  EventPairs replay_events(options.iters);
  for (int i = 0; i < options.iters; ++i) {
    HOPGEMM_CUDA_CHECK(cudaEventRecord(replay_events.start(i), stream));
    HOPGEMM_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    HOPGEMM_CUDA_CHECK(cudaEventRecord(replay_events.stop(i), stream));
  }
  return summarise(replay_events.elapsed_us(), static_cast<double>(options.graph_calls), true);
}

double time_us(const std::function<void(cudaStream_t)>& fn, cudaStream_t stream, int warmups, int iters,
               bool flush_l2) {
  TimerOptions options;
  options.warmups = warmups;
  options.iters = iters;
  options.flush_l2 = flush_l2;
  return time_call(fn, stream, options).median_us;
}

double copy_bandwidth_gbps(size_t bytes) {
  if (bytes == 0) throw Error(ErrorKind::kInvalidArgument, "copy_bandwidth_gbps: bytes must be > 0");
  DeviceBuffer src(bytes);
  DeviceBuffer dst(bytes);
  HOPGEMM_CUDA_CHECK(cudaMemset(src.get(), 1, bytes));
  cudaStream_t stream = nullptr;
  HOPGEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::unique_ptr<std::remove_pointer_t<cudaStream_t>, cudaError_t (*)(cudaStream_t)> owned(stream,
                                                                                             cudaStreamDestroy);
  TimerOptions options;
  options.warmups = 3;
  options.iters = 20;
  options.flush_l2 = false;  // a copy far larger than L2 streams through HBM anyway
  options.allow_graph = false;
  const Timing t = time_call(
      [&](cudaStream_t s) {
        HOPGEMM_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, s));
      },
      stream, options);
  return 2.0 * static_cast<double>(bytes) / (t.median_us * 1e3);
}

}  // namespace hopgemm::bench
