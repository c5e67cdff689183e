#pragma once
// One bind_* function per group of ops; module.cpp calls them all. A new op is one m.def in its
// group's file: take tensors as nb::handle, convert each with tensor_arg (tensor_arg.hpp), then launch()
// the C++ op. Arguments that may be None (optional tensors, stream) need `"c"_a.none() = nb::none()`.
#include <nanobind/nanobind.h>

#include <string>

namespace hopgemm::python {

// Raises hopgemm.HopgemmTypeError (a TypeError that is also a RuntimeError, module.cpp) with `message`.
[[noreturn]] void throw_type_error(const std::string& message);

void bind_runtime(nanobind::module_& m);       // module.cpp: init, settings, device info, JIT, errors
void bind_layout(nanobind::module_& m);        // layout.cpp
void bind_quantize(nanobind::module_& m);      // quantize.cpp
void bind_mqa_logits(nanobind::module_& m);    // mqa_logits.cpp
void bind_gemm(nanobind::module_& m);          // gemm.cpp
void bind_bf16_gemm(nanobind::module_& m);     // bf16_gemm.cpp
void bind_einsum(nanobind::module_& m);        // einsum.cpp
void bind_hc_prenorm(nanobind::module_& m);    // hc_prenorm.cpp
void bind_grouped_gemm(nanobind::module_& m);  // grouped_gemm.cpp
void bind_warmup(nanobind::module_& m);        // warmup.cpp: warm-up and kernel-cache archives
void bind_tuning(nanobind::module_& m);        // tuning.cpp: configurations without tensors (tests, tools)

}  // namespace hopgemm::python
