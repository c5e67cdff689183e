// hopgemm._C: the nanobind extension. Torch-free: tensors arrive as torch tensors or DLPack arrays
// (tensor_arg.hpp), errors leave as Python exceptions chosen by hopgemm::ErrorKind.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "bindings.hpp"
#include "hopgemm/error.hpp"
#include "hopgemm/jit.hpp"
#include "hopgemm/runtime.hpp"
#include "tensor_arg.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace hopgemm::python {
namespace {

// Invalid arguments leave as ValueError / TypeError subclasses that are also RuntimeError: DeepGEMM's checks raise
// RuntimeError, so code written for it (`except RuntimeError`) catches hopgemm's too. Made by bind_runtime.
PyObject* g_value_error = nullptr;  // hopgemm.HopgemmValueError(ValueError, RuntimeError)
PyObject* g_type_error = nullptr;   // hopgemm.HopgemmTypeError(TypeError, RuntimeError)

PyObject* new_exception_type(nb::module_& m, const char* name, PyObject* base, const char* doc) {
  // Named in the extension's module as it is imported (hopgemm._C; _C where the stub generator loads it alone).
  const std::string qualified = nb::cast<std::string>(m.attr("__name__")) + "." + name;
  nb::object bases = nb::steal(PyTuple_Pack(2, base, PyExc_RuntimeError));
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (type == nullptr) throw nb::python_error();
  m.attr(name) = nb::borrow(type);  // the module keeps it; `type`'s own reference lives as long as the process
  return type;
}

PyObject* exception_type(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument: return g_value_error;
    case ErrorKind::kUnsupported: return PyExc_NotImplementedError;
    case ErrorKind::kJit: case ErrorKind::kCuda: return PyExc_RuntimeError;
  }
  return PyExc_RuntimeError;
}

void translate_error(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const Error& e) {
    PyErr_SetString(exception_type(e.kind()), e.what());
  }
}

std::string fspath(nb::handle path) {
  return nb::cast<std::string>(nb::module_::import_("os").attr("fspath")(path));
}

nb::dict describe(nb::handle x) {
  bool is_torch = false;
  const TensorView v = describe_tensor(x, is_torch);
  nb::list shape, strides;
  for (int d = 0; d < v.rank; ++d) {
    shape.append(v.shape[d]);
    strides.append(v.strides[d]);
  }
  nb::dict out;
  out["data_ptr"] = reinterpret_cast<uintptr_t>(v.data);
  out["dtype"] = dtype_name(v.dtype);
  out["shape"] = nb::tuple(shape);
  out["strides"] = nb::tuple(strides);
  out["device"] = v.device;
  out["torch"] = is_torch;
  return out;
}

}  // namespace

void throw_type_error(const std::string& message) {
  PyErr_SetString(g_type_error, message.c_str());
  throw nb::python_error();
}

void bind_runtime(nb::module_& m) {
  g_value_error = new_exception_type(m, "HopgemmValueError", PyExc_ValueError,
                                     "An invalid argument: a ValueError that is also a RuntimeError (as DeepGEMM's "
                                     "checks raise).");
  g_type_error = new_exception_type(m, "HopgemmTypeError", PyExc_TypeError,
                                    "An argument of the wrong type: a TypeError that is also a RuntimeError.");
  nb::register_exception_translator(translate_error);

  m.def("init", [](nb::handle include_dir) { set_device_include_dir(fspath(include_dir)); }, "include_dir"_a,
        nb::sig("def init(include_dir: str | os.PathLike[str]) -> None"),
        "Tells the JIT where the package's bundled device headers are. Called by `import hopgemm`.");
  m.def("_describe", &describe, "x"_a,
        "The TensorView hopgemm would see for `x` (host arrays included): data_ptr, dtype, shape, strides in "
        "elements, device (-1 for host memory), torch.");
  m.def("_check_tensor", [](nb::handle x, const std::string& name) {
    CallContext ctx;
    tensor_arg(x, name.c_str(), ctx);
  }, "x"_a.none(), "name"_a,
        "Raises the error an op would raise for argument `name` = `x` (host memory, dtype, type).");
  m.def("_stream", [](nb::handle stream, nb::handle like) {
    CallContext ctx;
    if (!like.is_none()) tensor_arg(like, "like", ctx);
    return reinterpret_cast<uintptr_t>(stream_arg(stream, ctx));
  }, "stream"_a.none(), "like"_a.none() = nb::none(),
        "The cudaStream_t an op with tensor argument `like` would run on for this `stream=` argument.");

  nb::class_<DeviceInfo>(m, "DeviceInfo")
      .def_ro("device", &DeviceInfo::device)
      .def_ro("name", &DeviceInfo::name)
      .def_ro("arch_major", &DeviceInfo::arch_major)
      .def_ro("arch_minor", &DeviceInfo::arch_minor)
      .def_ro("num_sms", &DeviceInfo::num_sms)
      .def_ro("max_smem_per_block", &DeviceInfo::max_smem_per_block)
      .def_ro("l2_size", &DeviceInfo::l2_size)
      .def_ro("clock_khz", &DeviceInfo::clock_khz)
      .def_ro("memory_clock_khz", &DeviceInfo::memory_clock_khz)
      .def("__repr__", [](const DeviceInfo& d) {
        return "DeviceInfo(device=" + std::to_string(d.device) + ", name='" + d.name + "', sm_" +
               std::to_string(d.arch_major) + std::to_string(d.arch_minor) + ", num_sms=" +
               std::to_string(d.num_sms) + ")";
      });
  m.def("gpu_available", &gpu_available, "True if a CUDA driver is present and a device is visible.");
  m.def("device_info", &device_info, "device"_a = -1, nb::rv_policy::reference,
        "Properties of `device` (-1: the current device). RuntimeError where there is no GPU.");

  m.def("set_num_sms", &set_num_sms, "num_sms"_a,
        "Number of SMs the persistent kernels use; 0 restores all SMs of the device.");
  m.def("get_num_sms", [] { return get_num_sms(); }, "Number of SMs the persistent kernels use (current device).");
  m.def("set_tc_util", &set_tc_util, "percent"_a, "Tensor-core utilisation hint in percent, in (0, 100].");
  m.def("get_tc_util", &get_tc_util, "The tensor-core utilisation hint in percent (set_tc_util).");
  m.def("set_pdl", &set_pdl, "enable"_a, "Programmatic dependent launch for kernels launched afterwards.");
  m.def("get_pdl", &get_pdl, "Whether programmatic dependent launch is on (set_pdl; off by default).");

  m.def("set_jit_policy", [](const std::string& policy) { set_jit_policy(parse_jit_policy(policy)); }, "policy"_a,
        "What an op does on a kernel-cache miss: 'allow' (compile), 'warn_on_miss' or 'error_on_miss'.");
  m.def("get_jit_policy", [] { return std::string(jit_policy_name(get_jit_policy())); },
        "The JIT policy: 'allow', 'warn_on_miss' or 'error_on_miss' (set_jit_policy, $HOPGEMM_JIT_POLICY).");
  m.def("set_cache_dir", [](nb::handle path) { set_cache_dir(fspath(path)); }, "path"_a,
        nb::sig("def set_cache_dir(path: str | os.PathLike[str]) -> None"),
        "Root of the disk cache of compiled kernels; '' restores the default.");
  m.def("get_cache_dir", &get_cache_dir,
        "The disk cache's root: set_cache_dir's, else $HOPGEMM_CACHE_DIR (or $DG_JIT_CACHE_DIR), else "
        "$XDG_CACHE_HOME/hopgemm, else ~/.cache/hopgemm.");

  nb::class_<PrecompileReport>(m, "PrecompileReport")
      .def_ro("num_kernels", &PrecompileReport::num_kernels)
      .def_ro("num_compiled", &PrecompileReport::num_compiled)
      .def_ro("num_cached", &PrecompileReport::num_cached)
      .def_ro("num_stored", &PrecompileReport::num_stored)
      .def_ro("num_loaded", &PrecompileReport::num_loaded)
      .def_ro("seconds", &PrecompileReport::seconds)
      .def_ro("errors", &PrecompileReport::errors)
      .def_ro("compiler", &PrecompileReport::compiler)
      .def("__repr__", [](const PrecompileReport& r) {
        return "PrecompileReport(num_kernels=" + std::to_string(r.num_kernels) + ", num_compiled=" +
               std::to_string(r.num_compiled) + ", num_cached=" + std::to_string(r.num_cached) +
               ", num_stored=" + std::to_string(r.num_stored) +
               ", seconds=" + std::to_string(r.seconds) + ", errors=" + std::to_string(r.errors.size()) + ")";
      });
  m.def("precompile_suites", &precompile_suites, "Names of the embedded shape suites.");
  m.def("precompile", &precompile_suite, "suite"_a, "num_sms"_a = 132, "jobs"_a = 0,
        "show_progress"_a = false, nb::call_guard<nb::gil_scoped_release>(),
        "Compiles every kernel `suite` needs on an SM90 device with `num_sms` SMs, on `jobs` threads "
        "(0: all cores); show_progress redraws a progress line on stderr. Needs no GPU.");
}

}  // namespace hopgemm::python

NB_MODULE(_C, m) {
  m.doc() = "hopgemm native extension (FP8 GEMM kernels for Hopper); use the `hopgemm` package.";
  hopgemm::python::bind_runtime(m);
  hopgemm::python::bind_layout(m);
  hopgemm::python::bind_quantize(m);
  hopgemm::python::bind_mqa_logits(m);
  hopgemm::python::bind_gemm(m);
  hopgemm::python::bind_bf16_gemm(m);
  hopgemm::python::bind_einsum(m);
  hopgemm::python::bind_hc_prenorm(m);
  hopgemm::python::bind_grouped_gemm(m);
  hopgemm::python::bind_warmup(m);
  hopgemm::python::bind_tuning(m);
}
