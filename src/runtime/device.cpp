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

int current_device() {
  int device = 0;
  HOPGEMM_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

const DeviceInfo& device_info(int device) {
  // Read on every op call: a published entry is found without a lock; the lock only orders the first query.
  static std::array<std::atomic<const DeviceInfo*>, kMaxDevices> cache{};
  static std::mutex mutex;
  if (device < 0) device = current_device();
  if (device >= kMaxDevices) {
    throw Error(ErrorKind::kInvalidArgument, "device_info: device index " + std::to_string(device) + " out of range");
  }
  if (const DeviceInfo* known = cache[device].load(std::memory_order_acquire)) return *known;
  std::lock_guard<std::mutex> lock(mutex);
  if (const DeviceInfo* known = cache[device].load(std::memory_order_acquire)) return *known;
  cudaDeviceProp prop{};
  HOPGEMM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
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
  return n > 0 ? n : device_info(device).num_sms;
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
