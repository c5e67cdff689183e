// The ptxas --verbose report parser, on logs captured from NVRTC 13.0 and NVCC 13.0.
#include <gtest/gtest.h>

#include <string>

#include "jit/compiler.hpp"

namespace {

using hopgemm::jit::first_error_line;
using hopgemm::jit::parse_ptxas_report;
using hopgemm::jit::ResourceUsage;

// NVRTC program log (nvrtcGetProgramLog) for a one-kernel TU.
const char* kNvrtcLog =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function '_ZN1t4kernIXtlNS_3CfgELi3ELi4EEEEEvPi' for 'sm_90a'\n"
    "ptxas info    : Function properties for _ZN1t4kernIXtlNS_3CfgELi3ELi4EEEEEvPi\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 10 registers, used 0 barriers\n"
    "ptxas info    : Compile time = 12.047 ms\n";

// nvcc -Xptxas -v: the resources line has no "ptxas ." prefix; a non-inlined device function spills,
// the entry itself does not, and the entry uses many registers.
const char* kNvccLogWithDeviceFunction =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Function properties for _Z6helperPf\n"
    "    48 bytes stack frame, 40 bytes spill stores, 40 bytes spill loads\n"
    "ptxas info    : Compiling entry function '_ZN7hopgemm6device4gemmILi128EEEvNS0_6ParamsE' for 'sm_90a'\n"
    "ptxas info    : Function properties for _ZN7hopgemm6device4gemmILi128EEEvNS0_6ParamsE\n"
    "    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 168 registers, used 1 barriers, 16 bytes cumulative stack size, 896 bytes cmem[0]\n"
    "ptxas info    : Compile time = 301.5 ms\n";

const char* kSpillingLog =
    "ptxas info    : Compiling entry function '_Z5spillv' for 'sm_90a'\n"
    "ptxas info    : Function properties for _Z5spillv\n"
    "ptxas         .     1024 bytes stack frame, 1020 bytes spill stores, 996 bytes spill loads\n"
    "ptxas info    : Used 255 registers, used 0 barriers\n";

TEST(PtxasReport, Nvrtc) {
  std::string entry;
  ResourceUsage usage;
  ASSERT_TRUE(parse_ptxas_report(kNvrtcLog, entry, usage));
  EXPECT_EQ(entry, "_ZN1t4kernIXtlNS_3CfgELi3ELi4EEEEEvPi");
  EXPECT_EQ(usage.registers, 10);
  EXPECT_EQ(usage.stack_frame_bytes, 0);
  EXPECT_EQ(usage.spill_store_bytes, 0);
  EXPECT_EQ(usage.spill_load_bytes, 0);
  EXPECT_FALSE(usage.spills());
}

TEST(PtxasReport, NvccWithADeviceFunction) {
  std::string entry;
  ResourceUsage usage;
  ASSERT_TRUE(parse_ptxas_report(kNvccLogWithDeviceFunction, entry, usage));
  EXPECT_EQ(entry, "_ZN7hopgemm6device4gemmILi128EEEvNS0_6ParamsE");
  EXPECT_EQ(usage.registers, 168);
  EXPECT_EQ(usage.stack_frame_bytes, 16);
  EXPECT_EQ(usage.spill_store_bytes, 0);
  EXPECT_EQ(usage.spill_load_bytes, 0);
}

TEST(PtxasReport, Spills) {
  std::string entry;
  ResourceUsage usage;
  ASSERT_TRUE(parse_ptxas_report(kSpillingLog, entry, usage));
  EXPECT_EQ(entry, "_Z5spillv");
  EXPECT_EQ(usage.registers, 255);
  EXPECT_EQ(usage.stack_frame_bytes, 1024);
  EXPECT_EQ(usage.spill_store_bytes, 1020);
  EXPECT_EQ(usage.spill_load_bytes, 996);
  EXPECT_TRUE(usage.spills());
}

TEST(PtxasReport, NoEntryOrSeveralEntries) {
  std::string entry = "unchanged";
  ResourceUsage usage;
  EXPECT_FALSE(parse_ptxas_report("", entry, usage));
  EXPECT_FALSE(parse_ptxas_report("kernel.cu(3): error: identifier \"x\" is undefined\n", entry, usage));
  EXPECT_FALSE(parse_ptxas_report(std::string(kNvrtcLog) + kSpillingLog, entry, usage));
  EXPECT_EQ(entry, "unchanged");
}

TEST(PtxasReport, CrLfLineEndings) {
  std::string log = kNvrtcLog;
  for (size_t at = log.find('\n'); at != std::string::npos; at = log.find('\n', at + 2)) log.insert(at, "\r");
  std::string entry;
  ResourceUsage usage;
  ASSERT_TRUE(parse_ptxas_report(log, entry, usage));
  EXPECT_EQ(entry, "_ZN1t4kernIXtlNS_3CfgELi3ELi4EEEEEvPi");
  EXPECT_EQ(usage.registers, 10);
  EXPECT_EQ(usage.spill_store_bytes, 0);
}

TEST(CompilerLog, FirstErrorLine) {
  EXPECT_EQ(first_error_line("\n  note: a\nkernel.cu(7): error: expected a \";\"\nmore\n"),
            "kernel.cu(7): error: expected a \";\"");
  EXPECT_EQ(first_error_line("\n\n  something odd \nsecond\n"), "something odd");
  EXPECT_EQ(first_error_line(""), "");
}

}  // namespace
