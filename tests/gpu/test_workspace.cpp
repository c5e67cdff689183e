// The scratch memory of an op call (src/runtime/workspace.hpp) on the GPU: a stream's new partials are zeroed in the
// stream's order, so no kernel reads a byte of them that nothing wrote. The K-grouped GEMM publishes its descriptors
// into them with atomic exchanges, whose old values compute-sanitizer initcheck counts as reads: over unzeroed
// partials the grouped sanitizer subset reported 10,624 uninitialised reads (H200, 2026-11-28).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "gpu_test_util.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/workspace.hpp"

namespace hopgemm {
namespace {

TEST(Workspace, NewStreamPartialsAreZeroedInStreamOrder) {
  HOPGEMM_SKIP_WITHOUT_GPU();
  constexpr size_t kBytes = size_t{2} << 20;  // the partials' allocation step: the workspace asks for exactly this
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  // Garbage where the workspace's allocation is likely to land: a block of the same size freed on the same stream
  // just before, which the stream-ordered pool hands back without waiting.
  void* garbage = nullptr;
  HOPGEMM_CUDA_CHECK(cudaMallocAsync(&garbage, kBytes, stream));
  HOPGEMM_CUDA_CHECK(cudaMemsetAsync(garbage, 0xA5, kBytes, stream));
  HOPGEMM_CUDA_CHECK(cudaFreeAsync(garbage, stream));
  std::vector<uint8_t> host(kBytes, 0xFF);
  {
    const runtime::Workspace workspace(0, kBytes, stream, "test_workspace");
    ASSERT_NE(workspace.partials(), nullptr);
    std::printf("partials %s the freed garbage block\n", workspace.partials() == garbage ? "reuse" : "do not reuse");
    HOPGEMM_CUDA_CHECK(cudaMemcpyAsync(host.data(), workspace.partials(), kBytes, cudaMemcpyDeviceToHost, stream));
    HOPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  const auto nonzero = std::find_if(host.begin(), host.end(), [](uint8_t b) { return b != 0; });
  EXPECT_EQ(nonzero, host.end()) << "byte " << (nonzero - host.begin()) << " of the new partials is "
                                 << int(nonzero == host.end() ? 0 : *nonzero);
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

}  // namespace
}  // namespace hopgemm
