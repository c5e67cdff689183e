#include "runtime/workspace.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "hopgemm/error.hpp"
#include "runtime/cuda_check.hpp"

namespace hopgemm::runtime {
namespace {

constexpr size_t kAlign = 256;
// 4M counters: a slice is a few hundred bytes (one counter per output tile), so one chunk serves tens of
// thousands of streams and captured graphs.
constexpr size_t kArenaChunkBytes = size_t{16} << 20;
// Partials grow in 2 MiB steps, so that a run of slightly growing shapes allocates rarely.
constexpr size_t kPartialStep = size_t{2} << 20;

size_t align_up(size_t bytes, size_t to) { return (bytes + to - 1) / to * to; }

// Whose scratch a call takes: a stream's outside a capture, or a stream's within one capture sequence (the
// streams a capture forks into run concurrently in the graph, so each has its own).
struct Key {
  int device;
  uintptr_t stream;
  bool capturing;
  unsigned long long capture_id;
  bool operator<(const Key& o) const {
    return std::tie(device, stream, capturing, capture_id) < std::tie(o.device, o.stream, o.capturing, o.capture_id);
  }
};

struct Slot {
  unsigned long long stream_id = 0;  // outside a capture: tells a new stream that reuses a destroyed one's handle
  void* counters = nullptr;
  size_t counter_bytes = 0;
  std::shared_ptr<void> partials;  // outside a capture only
  size_t partial_bytes = 0;
};

struct Chunk {
  char* data;
  size_t bytes;
  size_t used;
};

struct State {
  std::mutex mutex;
  std::map<Key, Slot> slots;
  std::map<int, std::vector<Chunk>> arenas;  // by device; never freed: captured graphs keep using their slices
  // Partials of a destroyed stream whose handle came back: its last kernels may still be running, and freeing in
  // the order of the new stream would not wait for them, so they are kept.
  std::vector<std::shared_ptr<void>> abandoned;
};

State& state() {
  static State* s = new State;  // outlives every static destructor that might still launch work
  return *s;
}

struct Capture {
  bool active = false;
  unsigned long long id = 0;
};

Capture capture_of(cudaStream_t stream, const char* op) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  Capture capture;
  const cudaError_t result = cudaStreamGetCaptureInfo(stream, &status, &capture.id);
  if (result == cudaErrorStreamCaptureImplicit) {
    cudaGetLastError();
    throw Error(ErrorKind::kCuda, std::string(op) +
                                      ": the legacy default stream cannot be used while another stream is being "
                                      "captured into a CUDA graph in global mode; run the op on a stream of your own");
  }
  check_cuda(result, "cudaStreamGetCaptureInfo");
  capture.active = status != cudaStreamCaptureStatusNone;
  return capture;
}

// `bytes` of zeroed counters from the device's arena. A new chunk is allocated, zeroed and waited for on `stream`
// (the only wait on the host in this file), never inside a capture.
void* counter_slice(State& s, int device, size_t bytes, cudaStream_t stream, bool capturing, const char* op) {
  std::vector<Chunk>& chunks = s.arenas[device];
  if (chunks.empty() || chunks.back().bytes - chunks.back().used < bytes) {
    if (capturing) {
      throw Error(ErrorKind::kJit,
                  std::string(op) + ": its split-K tile counters (" + std::to_string(bytes) +
                      " bytes) cannot be set aside while the stream is being captured into a CUDA graph: " +
                      (chunks.empty() ? "no split-K GEMM has run on this device yet (not warmed up); run the op once "
                                        "before capture"
                                      : "the counter arena is used up by earlier streams and captures; run a split-K "
                                        "GEMM outside a capture to extend it"));
    }
    const size_t chunk_bytes = std::max(kArenaChunkBytes, bytes);
    void* data = nullptr;
    HOPGEMM_CUDA_CHECK(cudaMalloc(&data, chunk_bytes));
    HOPGEMM_CUDA_CHECK(cudaMemsetAsync(data, 0, chunk_bytes, stream));
    HOPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));  // zero for every stream and graph from now on
    chunks.push_back({static_cast<char*>(data), chunk_bytes, 0});
  }
  Chunk& chunk = chunks.back();
  void* slice = chunk.data + chunk.used;
  chunk.used += bytes;
  return slice;
}

// A stream's partials, freed in the stream's order once no call holds them (after the last one's kernels), and
// zeroed in the stream's order when allocated (once per allocation; the host does not wait): the K-grouped GEMM
// publishes its patched descriptors into them with tensormap.cp_fenceproxy, which ptxas lowers to one atomic exchange
// per 4 bytes, and compute-sanitizer initcheck counts the discarded old value of every exchange into bytes nothing
// wrote as an uninitialised read (the value is never used).
std::shared_ptr<void> stream_partials(size_t bytes, cudaStream_t stream) {
  void* data = nullptr;
  HOPGEMM_CUDA_CHECK(cudaMallocAsync(&data, bytes, stream));
  std::shared_ptr<void> partials(data, [stream](void* p) {
    if (cudaFreeAsync(p, stream) != cudaSuccess) cudaGetLastError();  // a destructor: nothing left to tell
  });
  HOPGEMM_CUDA_CHECK(cudaMemsetAsync(data, 0, bytes, stream));
  return partials;
}

}  // namespace

Workspace::Workspace(size_t counter_bytes, size_t partial_bytes, cudaStream_t stream, const char* op)
    : stream_(stream) {
  if (counter_bytes == 0 && partial_bytes == 0) return;
  int device = 0;
  HOPGEMM_CUDA_CHECK(cudaGetDevice(&device));
  const Capture capture = capture_of(stream, op);
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    // The id means nothing outside a capture: it stays out of the key there.
    Slot& slot = s.slots[Key{device, reinterpret_cast<uintptr_t>(stream), capture.active,
                             capture.active ? capture.id : 0}];
    if (!capture.active) {
      unsigned long long stream_id = 0;
      HOPGEMM_CUDA_CHECK(cudaStreamGetId(stream, &stream_id));
      if (slot.stream_id != stream_id) {
        if (slot.partials) s.abandoned.push_back(std::move(slot.partials));
        slot = Slot{};
        slot.stream_id = stream_id;
      }
    }
    if (slot.counter_bytes < counter_bytes) {
      const size_t bytes = align_up(counter_bytes, kAlign);
      slot.counters = counter_slice(s, device, bytes, stream, capture.active, op);
      slot.counter_bytes = bytes;
    }
    if (counter_bytes > 0) counters_ = slot.counters;
    if (!capture.active && partial_bytes > 0) {
      if (slot.partial_bytes < partial_bytes) {
        const size_t bytes = align_up(partial_bytes, kPartialStep);
        slot.partials = stream_partials(bytes, stream);
        slot.partial_bytes = bytes;
      }
      stream_partials_ = slot.partials;
      partials_ = stream_partials_.get();
    }
  }
  if (capture.active && partial_bytes > 0) {
    HOPGEMM_CUDA_CHECK(cudaMallocAsync(&partials_, partial_bytes, stream));
    graph_partials_ = true;
  }
}

Workspace::~Workspace() {
  // A capture that failed meanwhile is reported by its end; a destructor has nothing to add.
  if (graph_partials_ && cudaFreeAsync(partials_, stream_) != cudaSuccess) cudaGetLastError();
}

}  // namespace hopgemm::runtime
