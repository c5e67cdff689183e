#pragma once
// Python objects -> hopgemm::TensorView, and the stream an op runs on.
//
// Tensors come in two ways:
// - torch.Tensor: read directly through a handful of C-implemented attributes (data_ptr, dtype, shape,
//   stride, device). torch's __dlpack__ is a Python method that, for CUDA tensors, also records an event
//   between the current and default streams; going around it keeps a GEMM call within budget.
// - anything else that speaks DLPack (CuPy, JAX, NumPy, ...), through nanobind's nb::ndarray.
// Host memory is rejected with a ValueError naming the argument.
#include <cuda_runtime_api.h>
#include <nanobind/nanobind.h>

#include <utility>

#include "hopgemm/tensor.hpp"

namespace hopgemm::python {

namespace nb = nanobind;

// What the tensor arguments of one call share: the device of the first one (the op runs there), and
// whether any of them was a torch tensor (the default stream is then torch's current stream).
struct CallContext {
  int device = -1;
  bool torch = false;
};

enum ArgFlags : unsigned {
  kArgDefault = 0,
  // For arrays of frameworks without a float8 type (CuPy, NumPy): uint8 holding e4m3 bit patterns is
  // read as float8_e4m3fn. torch tensors must have the real dtype.
  kArgFp8Bytes = 1u << 0,
};

// The view of a device tensor; TypeError if `obj` is not a tensor, ValueError if it lives in host memory,
// has an unsupported dtype or more than 4 dimensions.
TensorView tensor_arg(nb::handle obj, const char* name, CallContext& ctx, unsigned flags = kArgDefault);
// As tensor_arg; None gives a view with data == nullptr and rank == -1.
TensorView optional_tensor_arg(nb::handle obj, const char* name, CallContext& ctx, unsigned flags = kArgDefault);
// A (tensor, scale factors) pair as DeepGEMM's FP8 ops take it: `a=(A, sfa)`.
std::pair<TensorView, TensorView> tensor_pair_arg(nb::handle obj, const char* name, CallContext& ctx,
                                                  unsigned first_flags = kArgDefault);
// The view of any tensor, host memory included (for inspection and tests; ops never take these).
TensorView describe_tensor(nb::handle obj, bool& is_torch);

// None -> torch's current stream of ctx.device if a torch tensor was passed, else the default stream;
// int -> that handle; an object with __cuda_stream__ (CUDA stream protocol), .cuda_stream (torch) or .ptr (CuPy).
cudaStream_t stream_arg(nb::handle stream, const CallContext& ctx);

// Makes `device` current for the scope (no-op when it already is, for device < 0, or where no GPU or driver is usable:
// the op then reports that itself, after its argument checks).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// Runs op(stream) on the call's device with the GIL released.
template <class Op>
void launch(const CallContext& ctx, nb::handle stream, Op&& op) {
  const cudaStream_t s = stream_arg(stream, ctx);
  nb::gil_scoped_release no_gil;
  DeviceGuard guard(ctx.device);
  op(s);
}

}  // namespace hopgemm::python
