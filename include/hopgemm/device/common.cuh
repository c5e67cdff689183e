#pragma once
// Base definitions for every JIT-compiled device header.
// These headers are compiled by NVRTC (default) and NVCC for sm_90a at run time, and their parameter
// structs are also included by host C++: so no host-only standard headers, only fundamental types.

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define HOPGEMM_DEVICE __device__ __forceinline__
#define HOPGEMM_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define HOPGEMM_DEVICE inline
#define HOPGEMM_HOST_DEVICE inline
#endif

namespace hopgemm::device {

using i32 = int;
using u32 = unsigned int;
using i64 = long long;
using u64 = unsigned long long;
using u16 = unsigned short;
using u8 = unsigned char;

static_assert(sizeof(u64) == 8 && sizeof(u32) == 4 && sizeof(u16) == 2, "unexpected integer sizes");

// A TMA tensor map as a kernel sees it: 128 opaque bytes, 64-byte aligned. Under NVRTC <cuda.h>'s
// CUtensorMap is not available, so parameter structs hold this type and the host copies the
// CUtensorMap bytes produced by cuTensorMapEncodeTiled into it.
struct alignas(64) TmaDescriptor {
  u64 opaque[16];
};
static_assert(sizeof(TmaDescriptor) == 128, "a tensor map is 128 bytes");

// The few <concepts> the device headers need (NVRTC has no standard library).
template <class T, class U>
inline constexpr bool kIsSame = false;
template <class T>
inline constexpr bool kIsSame<T, T> = true;
template <class T, class U>
concept SameAs = kIsSame<T, U> && kIsSame<U, T>;
// std::conditional_t.
template <bool kCondition, class IfTrue, class IfFalse>
struct Conditional {
  using Type = IfTrue;
};
template <class IfTrue, class IfFalse>
struct Conditional<false, IfTrue, IfFalse> {
  using Type = IfFalse;
};
template <class T>
concept ConvertibleToBool = requires(T t) { static_cast<bool>(t); };
template <class T>
concept ConvertibleToInt = requires(T t) { static_cast<int>(t); };

template <typename T>
HOPGEMM_HOST_DEVICE constexpr T ceil_div(T a, T b) { return (a + b - 1) / b; }
template <typename T>
HOPGEMM_HOST_DEVICE constexpr T align_up(T a, T b) { return ceil_div(a, b) * b; }

}  // namespace hopgemm::device
