#pragma once
// A bad-input matrix for an op family, run on the CPU: a valid call on fake device pointers (validation precedes any
// CUDA call, so they are never dereferenced) and rows that each change one thing about it. Every row must be rejected
// with its error kind and a message that names the op and the argument ("argument 'x'") and says what is required.
// A new op family writes its call struct, a function that makes a valid one and its rows.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hopgemm/error.hpp"
#include "hopgemm/runtime.hpp"

namespace hopgemm::testing {

// Fake device addresses: operand `region` (0, 1, ...) starts 2^36 bytes after the previous one, so no two operands
// overlap unless a row makes them.
inline void* fake_address(int region, uintptr_t offset = 0) {
  return reinterpret_cast<void*>((uintptr_t{1} << 40) + (uintptr_t(region) << 36) + offset);
}

template <class Call>
struct Rejection {
  const char* what;                  // the bad input, for failure messages
  std::function<void(Call&)> change;  // applied to a valid call
  ErrorKind kind;
  const char* arg;                   // the argument the message names; nullptr for a call-wide problem
  std::string requirement;           // part of what the message says
};

// The device's SM count is read before some checks; with no GPU it must be set (restored on destruction).
class ScopedNumSms {
 public:
  explicit ScopedNumSms(int num_sms) { set_num_sms(num_sms); }
  ~ScopedNumSms() { set_num_sms(0); }
};

// Applies each row to `valid` and runs `run(op, call)`, which must throw the row's error.
template <class Call, class Run>
void expect_every_row_rejected(const char* op, const Call& valid, const std::vector<Rejection<Call>>& rows, Run run) {
  for (const auto& row : rows) {
    SCOPED_TRACE(std::string(op) + ": " + row.what);
    Call call = valid;
    row.change(call);
    try {
      run(call);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_EQ(e.kind(), row.kind) << message;
      EXPECT_EQ(message.rfind(std::string(op) + ": ", 0), 0u) << message;
      if (row.arg != nullptr) {
        EXPECT_NE(message.find(std::string("argument '") + row.arg + "'"), std::string::npos) << message;
      }
      EXPECT_NE(message.find(row.requirement), std::string::npos) << message;
    }
  }
}

}  // namespace hopgemm::testing
