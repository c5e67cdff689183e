#include "runtime/workspace.hpp"

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "hopgemm/error.hpp"
#include "runtime/cuda_check.hpp"

namespace hopgemm::runtime {
namespace {

struct Buffer {
  void* data = nullptr;
  size_t bytes = 0;
};

struct Pool {
  std::mutex mutex;
  std::map<int, Buffer> buffers;  // by device
  std::vector<void*> retired;  // never freed: see workspace.hpp
};

Pool& pool() {
  static Pool* p = new Pool;  // outlives every static destructor that might still launch work
  return *p;
}

bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t result = cudaStreamIsCapturing(stream, &status);
  // The legacy stream cannot be queried while another stream captures in global mode: that is a capture too.
  if (result == cudaErrorStreamCaptureImplicit) {
    cudaGetLastError();
    return true;
  }
  check_cuda(result, "cudaStreamIsCapturing");
  return status != cudaStreamCaptureStatusNone;
}

void* grow(Pool& p, size_t bytes, cudaStream_t stream, const char* op, bool zeroed) {
  int device = 0;
  HOPGEMM_CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(p.mutex);
  Buffer& buffer = p.buffers[device];
  if (buffer.bytes >= bytes) return buffer.data;
  if (capturing(stream)) {
    throw Error(ErrorKind::kJit, std::string(op) + ": its workspace of " + std::to_string(bytes) +
                                     " bytes is not allocated yet and the stream is being captured into a CUDA "
                                     "graph (not warmed up); run the op once before capture");
  }
  // Round up to 2 MiB so that a run of slightly growing shapes allocates rarely.
  const size_t rounded = (bytes + (size_t{2} << 20) - 1) / (size_t{2} << 20) * (size_t{2} << 20);
  void* data = nullptr;
  HOPGEMM_CUDA_CHECK(cudaMalloc(&data, rounded));
  if (zeroed) {  // zero before any stream may use it (allocation is rare: the wait does not matter)
    HOPGEMM_CUDA_CHECK(cudaMemsetAsync(data, 0, rounded, stream));
    HOPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  if (buffer.data != nullptr) p.retired.push_back(buffer.data);
  buffer = {data, rounded};
  return data;
}

}  // namespace

void* workspace(size_t bytes, cudaStream_t stream, const char* op) { return grow(pool(), bytes, stream, op, false); }

void* zeroed_workspace(size_t bytes, cudaStream_t stream, const char* op) {
  static Pool* zeroed_pool = new Pool;  // outlives every static destructor, like pool()
  return grow(*zeroed_pool, bytes, stream, op, true);
}

}  // namespace hopgemm::runtime
