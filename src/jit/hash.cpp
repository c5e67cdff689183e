// Hash128 (declared in disk_cache.hpp): two 64-bit lanes, each fed one 8-byte word per 16-byte block
// through a multiply-rotate-multiply premix, cross-coupled after every block, and finalised with the
// splitmix64 avalanche. Good dispersion for cache keys and corruption checks; not cryptographic.
#include <algorithm>
#include <cstring>
#include <string>

#include "jit/disk_cache.hpp"

namespace hopgemm::jit {
namespace {

constexpr uint64_t kC1 = 0x87c37b91114253d5ull;
constexpr uint64_t kC2 = 0x4cf5ad432745937full;

constexpr uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

constexpr uint64_t avalanche(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

uint64_t load_le64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];  // little-endian on every host: digests are portable
  return v;
}

}  // namespace

void Hash128::block(uint64_t k1, uint64_t k2) {
  h1_ ^= rotl(k1 * kC1, 31) * kC2;
  h1_ = rotl(h1_, 27) + h2_;
  h1_ = h1_ * 5 + 0x52dce729;
  h2_ ^= rotl(k2 * kC2, 33) * kC1;
  h2_ = rotl(h2_, 31) + h1_;
  h2_ = h2_ * 5 + 0x38495ab5;
}

Hash128& Hash128::update(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  length_ += size;
  if (tail_size_ > 0) {
    const size_t take = std::min(size, sizeof(tail_) - tail_size_);
    std::memcpy(tail_ + tail_size_, p, take);
    tail_size_ += take;
    p += take;
    size -= take;
    if (tail_size_ < sizeof(tail_)) return *this;
    block(load_le64(tail_), load_le64(tail_ + 8));
    tail_size_ = 0;
  }
  for (; size >= 16; p += 16, size -= 16) block(load_le64(p), load_le64(p + 8));
  std::memcpy(tail_, p, size);
  tail_size_ = size;
  return *this;
}

Hash128& Hash128::field(std::string_view text) {
  unsigned char prefix[8];
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i, n >>= 8) prefix[i] = static_cast<unsigned char>(n);
  update(prefix, sizeof(prefix));
  return update(text);
}

std::string Hash128::hex() const {
  // Finalise a copy: the pending tail (zero-padded) is one more block, then the length is folded in.
  unsigned char last[16] = {};
  std::memcpy(last, tail_, tail_size_);
  Hash128 copy = *this;
  copy.block(load_le64(last), load_le64(last + 8) ^ (static_cast<uint64_t>(tail_size_) << 56));
  uint64_t a = copy.h1_ ^ length_, b = copy.h2_ ^ rotl(length_, 32);
  a += b;
  b += a;
  a = avalanche(a);
  b = avalanche(b ^ kC1);
  a += b;
  b += a;
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(32, '0');
  for (int i = 0; i < 16; ++i) {
    out[15 - i] = kDigits[(a >> (4 * i)) & 0xf];
    out[31 - i] = kDigits[(b >> (4 * i)) & 0xf];
  }
  return out;
}

std::string hash128_hex(std::string_view data) { return Hash128().update(data).hex(); }

}  // namespace hopgemm::jit
