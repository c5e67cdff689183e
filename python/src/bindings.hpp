#pragma once
// One bind_* function per group of ops; module.cpp calls them all. A new op is one m.def in its
// group's file: take tensors as nb::handle, convert each with tensor_arg (tensor_arg.hpp), then launch()
// the C++ op. Arguments that may be None (optional tensors, stream) need `"c"_a.none() = nb::none()`.
#include <nanobind/nanobind.h>

namespace hopgemm::python {

void bind_runtime(nanobind::module_& m);       // module.cpp: init, settings, device info, JIT, errors
void bind_layout(nanobind::module_& m);        // layout.cpp
void bind_quantize(nanobind::module_& m);      // quantize.cpp
void bind_gemm(nanobind::module_& m);          // gemm.cpp
void bind_grouped_gemm(nanobind::module_& m);  // grouped_gemm.cpp
void bind_warmup(nanobind::module_& m);        // warmup.cpp: warm-up and kernel-cache archives

}  // namespace hopgemm::python
