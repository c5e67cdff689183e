#pragma once
// Bytewise equality and hash of a padding-free POD (a kernel config, a GEMM problem): the key of the in-memory
// tables on the call path (the JIT's kernel caches, the heuristics' memo), where a hit costs one hash of a few bytes.
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace hopgemm::runtime {

template <typename Pod>
struct PodKey {
  static_assert(std::has_unique_object_representations_v<Pod>, "keys must be padding-free PODs");
  Pod value;
  bool operator==(const PodKey& other) const { return std::memcmp(&value, &other.value, sizeof(Pod)) == 0; }
};

// FNV-1a over the key's bytes.
struct PodKeyHash {
  template <typename Pod>
  size_t operator()(const PodKey<Pod>& key) const {
    const auto* bytes = reinterpret_cast<const unsigned char*>(&key.value);
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < sizeof(Pod); ++i) h = (h ^ bytes[i]) * 0x100000001b3ull;
    return static_cast<size_t>(h);
  }
};

}  // namespace hopgemm::runtime
