#pragma once
// Programmatic dependent launch (sm_90). Both are no-ops when the grid was launched without the
// programmatic-stream-serialization attribute.

#include "hopgemm/device/common.cuh"

namespace hopgemm::device::ptx {

// griddepcontrol.wait;  (sm_90) waits until the prerequisite grid has completed and its writes are visible.
HOPGEMM_DEVICE void griddepcontrol_wait() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }

// griddepcontrol.launch_dependents;  (sm_90) lets the dependent grid start launching.
HOPGEMM_DEVICE void griddepcontrol_launch_dependents() { asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory"); }

}  // namespace hopgemm::device::ptx
