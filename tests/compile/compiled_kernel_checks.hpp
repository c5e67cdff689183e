#pragma once
// Shared checks of the compile tests: a JIT-compiled kernel produced a cubin with an entry point, and the
// ptxas report shows no spills and no stack frame.
#include <gtest/gtest.h>

#include "jit/compiler.hpp"

namespace hopgemm::testing {

inline void expect_clean(const jit::CompiledKernel& k, const jit::KernelSource& s) {
  EXPECT_FALSE(k.cubin.empty()) << s.code;
  EXPECT_FALSE(k.entry.empty()) << s.code;
  EXPECT_EQ(k.resources.spill_store_bytes, 0) << s.code << k.log;
  EXPECT_EQ(k.resources.spill_load_bytes, 0) << s.code << k.log;
  EXPECT_EQ(k.resources.stack_frame_bytes, 0) << s.code << k.log;
}

}  // namespace hopgemm::testing
