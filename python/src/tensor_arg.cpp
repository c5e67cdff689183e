#include "tensor_arg.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <memory>
#include <string>

#include "bindings.hpp"
#include "hopgemm/error.hpp"

namespace hopgemm::python {
namespace {

constexpr int kNumDTypes = 7;
// DLPack device types (dlpack.h): only CUDA memory and CUDA managed memory are device-accessible.
constexpr int32_t kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13;
// DLPack dtype codes (dlpack.h, DLPack >= 1.1); spelled as numbers so nanobind 2.x builds too.
constexpr uint8_t kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLFloat8E4M3FN = 10;

[[noreturn]] void invalid(const char* name, const std::string& problem) {
  throw Error(ErrorKind::kInvalidArgument, std::string("argument '") + name + "' " + problem);
}

// An argument whose dtype hopgemm does not take. int8 and float4_e2m1fn_x2 are how DeepGEMM passes FP4 (e2m1) data,
// which only its SM100 kernels read: NotImplementedError naming the architecture; any other dtype is a ValueError.
[[noreturn]] void unknown_dtype(const char* name, const std::string& dtype) {
  const std::string problem = std::string("argument '") + name + "' has dtype " + dtype;
  if (dtype == "torch.int8" || dtype == "int8" || dtype.find("float4_e2m1") != std::string::npos) {
    throw Error(ErrorKind::kUnsupported,
                problem + ": FP4 (e2m1) data, which DeepGEMM packs two to a byte in int8, is read by its SM100 "
                          "(Blackwell) kernels only; hopgemm targets SM90 (Hopper), whose tensor cores have no FP4: "
                          "quantise to FP8 e4m3 instead");
  }
  throw Error(ErrorKind::kInvalidArgument,
              problem + "; hopgemm takes float8_e4m3fn, bfloat16, float16, float32, int32, int64 or uint8");
}

// Steals a new reference; raises the pending Python error if null.
nb::object checked(PyObject* obj) {
  if (!obj) throw nb::python_error();
  return nb::steal(obj);
}

int64_t as_int64(PyObject* obj) {
  const long long v = PyLong_AsLongLong(obj);
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  return v;
}

PyObject* intern(const char* s) { return PyUnicode_InternFromString(s); }

// torch objects, looked up once torch has been imported by the user (never imported here).
struct Torch {
  PyTypeObject* tensor_type = nullptr;  // torch._C.TensorBase: every torch.Tensor and subclass
  PyObject* dtypes[kNumDTypes] = {};    // in hopgemm::DType order
  PyObject* current_raw_stream = nullptr;  // torch._C._cuda_getCurrentRawStream(device) -> int
  PyObject* s_data_ptr = intern("data_ptr");
  PyObject* s_dtype = intern("dtype");
  PyObject* s_shape = intern("shape");
  PyObject* s_stride = intern("stride");
  PyObject* s_is_cuda = intern("is_cuda");
  PyObject* s_get_device = intern("get_device");
  PyObject* s_device = intern("device");
};

// nullptr until `torch` is in sys.modules. Objects are kept alive for the life of the process.
const Torch* torch_api() {
  static Torch* api = nullptr;
  if (api) return api;
  static PyObject* const name = intern("torch");
  nb::object torch = nb::steal(PyImport_GetModule(name));
  if (!torch.is_valid()) {
    PyErr_Clear();
    return nullptr;
  }
  try {
    auto t = std::make_unique<Torch>();
    nb::object c = torch.attr("_C");
    nb::object base = nb::hasattr(c, "TensorBase") ? c.attr("TensorBase") : c.attr("_TensorBase");
    t->tensor_type = reinterpret_cast<PyTypeObject*>(base.release().ptr());
    const char* names[kNumDTypes] = {"float8_e4m3fn", "bfloat16", "float16", "float32", "int32", "int64", "uint8"};
    for (int i = 0; i < kNumDTypes; ++i) t->dtypes[i] = nb::object(torch.attr(names[i])).release().ptr();
    if (nb::hasattr(c, "_cuda_getCurrentRawStream")) {
      t->current_raw_stream = nb::object(c.attr("_cuda_getCurrentRawStream")).release().ptr();
    }
    api = t.release();
  } catch (const nb::python_error&) {
    return nullptr;  // torch is half-imported (we are inside its import); try again next call
  }
  return api;
}

bool is_torch_tensor(const Torch* t, nb::handle obj) {
  return t && PyObject_TypeCheck(obj.ptr(), t->tensor_type);
}

void set_rank(TensorView& view, int64_t rank, const char* name) {
  if (rank > TensorView::kMaxRank) {
    invalid(name, "has " + std::to_string(rank) + " dimensions; hopgemm tensors have at most " +
                      std::to_string(TensorView::kMaxRank));
  }
  view.rank = static_cast<int>(rank);
}

// Fills `view` from a torch tensor; device -1 for tensors not on a CUDA device, whose device string
// goes to `non_cuda` for the error message.
void torch_view(const Torch& t, nb::handle obj, const char* name, TensorView& view, std::string* non_cuda) {
  PyObject* o = obj.ptr();
  nb::object is_cuda = checked(PyObject_GetAttr(o, t.s_is_cuda));
  if (is_cuda.ptr() != Py_True) {
    view.device = -1;
    if (non_cuda) *non_cuda = nb::cast<std::string>(nb::str(checked(PyObject_GetAttr(o, t.s_device))));
  } else {
    view.device = static_cast<int>(as_int64(checked(PyObject_CallMethodNoArgs(o, t.s_get_device)).ptr()));
  }

  nb::object dtype = checked(PyObject_GetAttr(o, t.s_dtype));
  int index = 0;
  while (index < kNumDTypes && t.dtypes[index] != dtype.ptr()) ++index;
  if (index == kNumDTypes) {
    unknown_dtype(name, nb::cast<std::string>(nb::str(dtype)));
  }
  view.dtype = static_cast<DType>(index);

  nb::object shape = checked(PyObject_GetAttr(o, t.s_shape));
  nb::object strides = checked(PyObject_CallMethodNoArgs(o, t.s_stride));
  if (!PyTuple_Check(shape.ptr()) || !PyTuple_Check(strides.ptr())) {
    throw_type_error("torch tensor with non-tuple shape or stride()");
  }
  set_rank(view, PyTuple_GET_SIZE(shape.ptr()), name);
  for (int d = 0; d < view.rank; ++d) {
    view.shape[d] = as_int64(PyTuple_GET_ITEM(shape.ptr(), d));
    view.strides[d] = as_int64(PyTuple_GET_ITEM(strides.ptr(), d));
  }

  nb::object ptr = checked(PyObject_CallMethodNoArgs(o, t.s_data_ptr));
  view.data = PyLong_AsVoidPtr(ptr.ptr());
  if (!view.data && PyErr_Occurred()) throw nb::python_error();
}

std::string dlpack_dtype_name(const nb::dlpack::dtype& dt) {
  static const char* codes[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool",
                                "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
                                "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu"};
  std::string s = dt.code < sizeof(codes) / sizeof(codes[0]) ? codes[dt.code] : "code" + std::to_string(dt.code);
  if (dt.code < 7) s += std::to_string(dt.bits);
  if (dt.lanes != 1) s += "x" + std::to_string(dt.lanes);
  return s;
}

bool dlpack_dtype(const nb::dlpack::dtype& dt, unsigned flags, DType& out) {
  if (dt.lanes != 1) return false;
  switch (dt.code) {
    case kDLFloat:
      if (dt.bits == 32) { out = DType::kFloat32; return true; }
      if (dt.bits == 16) { out = DType::kFloat16; return true; }
      return false;
    case kDLBfloat: if (dt.bits == 16) { out = DType::kBFloat16; return true; } return false;
    case kDLInt:
      if (dt.bits == 32) { out = DType::kInt32; return true; }
      if (dt.bits == 64) { out = DType::kInt64; return true; }
      return false;
    case kDLUInt:
      if (dt.bits == 8) { out = (flags & kArgFp8Bytes) ? DType::kFloat8E4M3 : DType::kUInt8; return true; }
      return false;
    case kDLFloat8E4M3FN: if (dt.bits == 8) { out = DType::kFloat8E4M3; return true; } return false;
    default: return false;
  }
}

std::string python_type_name(nb::handle obj) {
  return nb::cast<std::string>(nb::str(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr())))));
}

// Why an object that has __dlpack__ could not be imported: the exporter's own error (NumPy refuses the float8
// types ml_dtypes adds to it, for one), with what to do instead.
[[noreturn]] void not_exportable(nb::handle obj, const char* name) {
  std::string why = "its __dlpack__ capsule is not one hopgemm can read";
  try {
    obj.attr("__dlpack__")();
  } catch (nb::python_error& e) {
    why = std::string("__dlpack__() raised ") + e.what();
    while (!why.empty() && (why.back() == '.' || why.back() == '\n' || why.back() == ' ')) why.pop_back();
  }
  std::string message =
      std::string("argument '") + name + "' (" + python_type_name(obj) + ") cannot be exported through DLPack: " + why;
  const nb::object dtype = nb::getattr(obj, "dtype", nb::none());
  if (nb::cast<std::string>(nb::str(nb::handle(dtype.ptr()))).rfind("float8", 0) == 0) {
    message += ". NumPy cannot export float8 arrays (ml_dtypes' types) through DLPack; pass FP8 data as torch "
               "float8_e4m3fn tensors, or as uint8 bit patterns (x.view(numpy.uint8)) from a framework without float8";
  }
  throw_type_error(message.c_str());
}

// Fills `view` from a DLPack-capable object; device -1 for memory a kernel cannot address.
void dlpack_view(nb::handle obj, const char* name, unsigned flags, TensorView& view, std::string* non_cuda) {
  // Read-only import: accepts immutable producers (JAX) and asks for the cheaper unversioned capsule.
  nb::ndarray<nb::ro> array;
  if (!nb::try_cast(obj, array)) {
    if (nb::hasattr(obj, "__dlpack__")) not_exportable(obj, name);
    throw_type_error((std::string("argument '") + name + "' must be a tensor (torch, or any array with "
                      "__dlpack__), got " + python_type_name(obj)).c_str());
  }
  const int32_t device_type = array.device_type();
  if (device_type == kDLCUDA || device_type == kDLCUDAManaged) {
    view.device = array.device_id();
  } else {
    view.device = -1;
    if (non_cuda) {
      *non_cuda = device_type == kDLCPU ? "cpu" : device_type == kDLCUDAHost ? "cuda_host (pinned host)"
                                                 : "DLPack device type " + std::to_string(device_type);
    }
  }
  if (!dlpack_dtype(array.dtype(), flags, view.dtype)) {
    unknown_dtype(name, dlpack_dtype_name(array.dtype()));
  }
  set_rank(view, static_cast<int64_t>(array.ndim()), name);
  for (int d = 0; d < view.rank; ++d) {
    view.shape[d] = static_cast<int64_t>(array.shape(d));
    view.strides[d] = array.stride(d);
  }
  view.data = const_cast<void*>(static_cast<const void*>(array.data()));
}

}  // namespace

TensorView tensor_arg(nb::handle obj, const char* name, CallContext& ctx, unsigned flags) {
  TensorView view;
  std::string non_cuda;
  const Torch* t = torch_api();
  if (is_torch_tensor(t, obj)) {
    torch_view(*t, obj, name, view, &non_cuda);
    ctx.torch = true;
  } else {
    dlpack_view(obj, name, flags, view, &non_cuda);
  }
  if (view.device < 0) {
    if (non_cuda == "cpu") {
      invalid(name, "is in host memory; hopgemm ops take CUDA device tensors (move it to the GPU first)");
    }
    invalid(name, "is on device '" + non_cuda + "'; hopgemm ops take CUDA device tensors");
  }
  if (ctx.device < 0) ctx.device = view.device;
  return view;
}

TensorView optional_tensor_arg(nb::handle obj, const char* name, CallContext& ctx, unsigned flags) {
  if (obj.is_none()) {
    TensorView none;
    none.rank = -1;
    return none;
  }
  return tensor_arg(obj, name, ctx, flags);
}

std::pair<TensorView, TensorView> tensor_pair_arg(nb::handle obj, const char* name, CallContext& ctx,
                                                  unsigned first_flags) {
  if (!PyTuple_Check(obj.ptr()) && !PyList_Check(obj.ptr())) {
    throw_type_error((std::string("argument '") + name + "' must be a (tensor, scale factors) pair").c_str());
  }
  nb::sequence seq = nb::borrow<nb::sequence>(obj);
  if (nb::len(seq) != 2) {
    throw_type_error((std::string("argument '") + name + "' must be a (tensor, scale factors) pair, got " +
                      std::to_string(nb::len(seq)) + " items").c_str());
  }
  const std::string sf_name = std::string("sf") + name;  // a=(A, sfa) -> 'a', 'sfa'
  TensorView first = tensor_arg(seq[0], name, ctx, first_flags);
  TensorView second = tensor_arg(seq[1], sf_name.c_str(), ctx);
  return {first, second};
}

TensorView describe_tensor(nb::handle obj, bool& is_torch) {
  TensorView view;
  const Torch* t = torch_api();
  is_torch = is_torch_tensor(t, obj);
  if (is_torch) {
    torch_view(*t, obj, "x", view, nullptr);
  } else {
    dlpack_view(obj, "x", kArgDefault, view, nullptr);
  }
  return view;
}

cudaStream_t stream_arg(nb::handle stream, const CallContext& ctx) {
  PyObject* s = stream.ptr();
  if (s == Py_None) {
    if (!ctx.torch) return nullptr;
    const Torch* t = torch_api();
    if (!t->current_raw_stream) return nullptr;  // torch without CUDA support cannot own CUDA tensors
    nb::object device = nb::int_(ctx.device);
    nb::object handle = checked(PyObject_CallOneArg(t->current_raw_stream, device.ptr()));
    return reinterpret_cast<cudaStream_t>(PyLong_AsVoidPtr(handle.ptr()));
  }
  nb::object value;
  if (PyLong_Check(s) && !PyBool_Check(s)) {
    value = nb::borrow(stream);
  } else if (nb::hasattr(stream, "__cuda_stream__")) {
    // CUDA stream protocol: __cuda_stream__() -> (version, handle); accept an attribute or a bare int too.
    value = stream.attr("__cuda_stream__");
    if (PyCallable_Check(value.ptr())) value = value();
    if (PyTuple_Check(value.ptr()) && PyTuple_GET_SIZE(value.ptr()) == 2) value = nb::borrow(value[1]);
  } else if (nb::hasattr(stream, "cuda_stream")) {
    value = stream.attr("cuda_stream");  // torch.cuda.Stream / ExternalStream
  } else if (nb::hasattr(stream, "ptr")) {
    value = stream.attr("ptr");  // cupy.cuda.Stream
  }
  if (!value.is_valid() || !PyLong_Check(value.ptr()) || PyBool_Check(value.ptr())) {
    throw_type_error("stream must be None, an int (cudaStream_t), a torch.cuda.Stream, or an object with "
                         "__cuda_stream__");
  }
  const unsigned long long handle = PyLong_AsUnsignedLongLong(value.ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    throw Error(ErrorKind::kInvalidArgument, "stream handle must be a non-negative integer");
  }
  return reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(handle));
}

DeviceGuard::DeviceGuard(int device) {
  if (device < 0) return;
  int current = 0;
  cudaError_t status = cudaGetDevice(&current);
  if (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver) {
    // No usable GPU at all: nothing can run, and the op says so itself once it has checked its arguments (which it
    // does before anything else), so a bad argument is still reported as such on this machine.
    cudaGetLastError();
    return;
  }
  if (status == cudaSuccess && current != device) status = cudaSetDevice(device);
  if (status != cudaSuccess) {
    cudaGetLastError();
    throw Error(ErrorKind::kCuda, std::string("cannot make device ") + std::to_string(device) +
                                      " current: " + cudaGetErrorString(status));
  }
  if (current != device) previous_ = current;
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

}  // namespace hopgemm::python
