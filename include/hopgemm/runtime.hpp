#pragma once
// Device properties and the process-wide settings that every op reads (DeepGEMM names).
#include <string>

namespace hopgemm {

// The library's version, "MAJOR.MINOR.PATCH" (the CMake project's and the Python package's).
const char* version();

struct DeviceInfo {
  int device = 0;
  std::string name;
  int arch_major = 0;  // 9 for Hopper
  int arch_minor = 0;
  int num_sms = 0;
  int max_smem_per_block = 0;  // opt-in dynamic shared memory limit, bytes (232448 on H100)
  int l2_size = 0;             // bytes
  int clock_khz = 0;
  int memory_clock_khz = 0;
};

// True if the CUDA driver is present and at least one device is visible.
bool gpu_available();
// Properties of `device` (the current device when -1); cached after the first query.
// Throws Error(kCuda) where no GPU or driver exists.
const DeviceInfo& device_info(int device = -1);
int current_device();

// Number of SMs the persistent kernels use (default: all of the current device). 0 restores the default.
void set_num_sms(int num_sms);
// The SMs in use on `device` (the current device when -1).
int get_num_sms(int device = -1);
// Tensor-core utilisation hint in percent (0..100], read by the heuristics (DeepGEMM semantics).
void set_tc_util(int percent);
int get_tc_util();
// Programmatic dependent launch for every kernel launched afterwards.
void set_pdl(bool enable);
bool get_pdl();

}  // namespace hopgemm
