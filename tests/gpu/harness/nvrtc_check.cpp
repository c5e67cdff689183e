// Compiles one instantiation of sm90_fp8_gemm_kernel with NVRTC the way the JIT does
// (sm_90a, C++20, -default-device, include/ only) and prints compile time and the ptxas report.
// Build: g++ -std=c++20 nvrtc_check.cpp -I/usr/local/cuda/include -L/usr/local/cuda/lib64 -lnvrtc
// Run:   ./nvrtc_check <repo>/include "<designated initialiser fields>"
#include <nvrtc.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <include dir> \".block_m = 128, .block_n = 128, ...\"\n", argv[0]);
    return 2;
  }
  const std::string src = std::string("#include <hopgemm/device/kernels/sm90_fp8_gemm.cuh>\n") +
                          "template __global__ void hopgemm::device::sm90_fp8_gemm_kernel<hopgemm::device::Sm90Fp8GemmConfig{" +
                          argv[2] + "}>(const __grid_constant__ hopgemm::device::Sm90Fp8GemmParams);\n";
  const std::string inc = std::string("-I") + argv[1];
  std::vector<const char*> opts = {"--gpu-architecture=sm_90a", "-std=c++20", "-default-device", inc.c_str(),
                                   "-Xptxas=-v"};
  const auto t0 = std::chrono::steady_clock::now();
  nvrtcProgram prog;
  nvrtcCreateProgram(&prog, src.c_str(), "kernel.cu", 0, nullptr, nullptr);
  const nvrtcResult r = nvrtcCompileProgram(prog, static_cast<int>(opts.size()), opts.data());
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  nvrtcGetProgramLog(prog, log.data());
  std::printf("%s\n%s: %.0f ms\n", log.c_str(), r == NVRTC_SUCCESS ? "OK" : nvrtcGetErrorString(r), ms);
  size_t cubin_size = 0;
  if (r == NVRTC_SUCCESS) nvrtcGetCUBINSize(prog, &cubin_size);
  nvrtcDestroyProgram(&prog);
  return r == NVRTC_SUCCESS && cubin_size > 0 ? 0 : 1;
}
