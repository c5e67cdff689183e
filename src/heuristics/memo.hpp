#pragma once
// A thread-safe memo table for pure functions of a padding-free POD key (problem -> config): the
// heuristics run once per distinct problem, a hit costs one hash of the key and a shared lock.
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "runtime/pod_key.hpp"

namespace hopgemm::heuristics {

template <typename Key, typename Value>
class Memo {
 public:
  // Returns the memoised value of `key`, computing it with `compute(key)` on a miss; `on_insert(value)`
  // runs once per distinct key (HOPGEMM_PRINT_CONFIGS uses it).
  template <typename Compute, typename OnInsert>
  const Value& get(const Key& key, Compute compute, OnInsert on_insert) {
    const runtime::PodKey<Key> k{key};
    {
      std::shared_lock lock(mutex_);
      auto it = table_.find(k);
      if (it != table_.end()) return it->second;
    }
    Value value = compute(key);
    std::unique_lock lock(mutex_);
    auto [it, inserted] = table_.try_emplace(k, std::move(value));
    if (inserted) on_insert(it->second);
    return it->second;
  }

 private:
  std::shared_mutex mutex_;
  std::unordered_map<runtime::PodKey<Key>, Value, runtime::PodKeyHash> table_;
};

}  // namespace hopgemm::heuristics
