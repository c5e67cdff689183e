#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "hopgemm/error.hpp"
#include "hopgemm/runtime.hpp"
#include "runtime/cuda_check.hpp"

namespace hopgemm {
namespace {

constexpr int kMaxDevices = 64;

std::atomic<int> g_num_sms{0};  // 0: all SMs of the current device
std::atomic<int> g_tc_util{100};
std::atomic<bool> g_pdl{false};

}  // namespace

bool gpu_available() {
  int count = 0;
  const bool ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  cudaGetLastError();
  return ok;
}

namespace {

// The runtime's first call fails with one of these where there is nothing to run on: say that plainly, as
// `hopgemm info` does, instead of the runtime's words.
void check_device_call(cudaError_t status, const char* call, const char* who) {
  if (status == cudaErrorInsufficientDriver || status == cudaErrorNoDevice) {
    cudaGetLastError();
    int runtime = 0;
    cudaRuntimeGetVersion(&runtime);
    throw Error(ErrorKind::kCuda,
                std::string(who) + ": no GPU to use here: " +
                    (status == cudaErrorNoDevice
                         ? "the NVIDIA driver sees no device (check CUDA_VISIBLE_DEVICES)"
                         : "no NVIDIA driver is installed, or it is older than the CUDA runtime (" +
                               std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10) + ")") +
                    "; kernels can be precompiled without one (hopgemm precompile), not run");
  }
  runtime::check_cuda(status, call);
}

int current_device_of(const char* who) {
  int device = 0;
  check_device_call(cudaGetDevice(&device), "cudaGetDevice", who);
  return device;
}

const DeviceInfo& device_info_of(int device, const char* who) {
  // Read on every op call: a published entry is found without a lock; the lock only orders the first query.
  static std::array<std::atomic<const DeviceInfo*>, kMaxDevices> cache{};
  static std::mutex mutex;
  if (device < 0) device = current_device_of(who);
  if (device >= kMaxDevices) {
    throw Error(ErrorKind::kInvalidArgument, std::string(who) + ": device index " + std::to_string(device) +
                                                 " out of range");
  }
  if (const DeviceInfo* known = cache[device].load(std::memory_order_acquire)) return *known;
  std::lock_guard<std::mutex> lock(mutex);
  if (const DeviceInfo* known = cache[device].load(std::memory_order_acquire)) return *known;
  cudaDeviceProp prop{};
  check_device_call(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties", who);
  auto info = std::make_unique<DeviceInfo>();
  info->device = device;
  info->name = prop.name;
  info->arch_major = prop.major;
  info->arch_minor = prop.minor;
  info->num_sms = prop.multiProcessorCount;
  info->max_smem_per_block = static_cast<int>(prop.sharedMemPerBlockOptin);
  info->l2_size = prop.l2CacheSize;
  HOPGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&info->clock_khz, cudaDevAttrClockRate, device));
  HOPGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&info->memory_clock_khz, cudaDevAttrMemoryClockRate, device));
  const DeviceInfo* published = info.release();  // lives for the process, like the device
  cache[device].store(published, std::memory_order_release);
  return *published;
}

}  // namespace

int current_device() { return current_device_of("current_device"); }

const DeviceInfo& device_info(int device) { return device_info_of(device, "device_info"); }

void set_num_sms(int num_sms) {
  if (num_sms < 0) {
    throw Error(ErrorKind::kInvalidArgument, "set_num_sms: num_sms=" + std::to_string(num_sms) + " must be >= 0");
  }
  if (num_sms > 0 && gpu_available()) {
    const int available = device_info().num_sms;
    if (num_sms > available) {
      throw Error(ErrorKind::kInvalidArgument, "set_num_sms: num_sms=" + std::to_string(num_sms) +
                                                   " exceeds the device's " + std::to_string(available) + " SMs");
    }
  }
  g_num_sms = num_sms;
}

int get_num_sms(int device) {
  const int n = g_num_sms.load();
  return n > 0 ? n : device_info_of(device, "get_num_sms").num_sms;
}

void set_tc_util(int percent) {
  if (percent <= 0 || percent > 100) {
    throw Error(ErrorKind::kInvalidArgument,
                "set_tc_util: percent=" + std::to_string(percent) + " must be in (0, 100]");
  }
  g_tc_util = percent;
}

int get_tc_util() { return g_tc_util.load(); }

void set_pdl(bool enable) { g_pdl = enable; }
bool get_pdl() { return g_pdl.load(); }

}  // namespace hopgemm
