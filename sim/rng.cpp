#include "sim/rng.hpp"

#include <bit>

namespace lic {
namespace {

// 128-bit products are a GCC/Clang extension on x86-64; both compile it identically.
__extension__ typedef unsigned __int128 u128;

std::uint64_t fmix64(std::uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

}  // namespace

std::uint64_t stable_hash(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return fmix64(h);
}

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Rng::Rng(std::uint64_t seed) : seed_(seed) {
  std::uint64_t sm = seed;
  for (auto& word : s_) word = splitmix64(sm);
}

Rng Rng::from_state(std::uint64_t s0, std::uint64_t s1, std::uint64_t s2, std::uint64_t s3) {
  Rng r(0);
  r.s_[0] = s0;
  r.s_[1] = s1;
  r.s_[2] = s2;
  r.s_[3] = s3;
  return r;
}

Rng Rng::derive(std::string_view name) const {
  std::uint64_t state = seed_ ^ stable_hash(name);
  return Rng(splitmix64(state));
}

Rng Rng::derive(std::uint64_t index) const {
  std::uint64_t state = seed_ ^ (index * 0xd1b54a32d192ed03ULL + 0x8cb92ba72f3d8dd7ULL);
  return Rng(splitmix64(state));
}

std::uint64_t Rng::next_u64() {
  // xoshiro256** 1.0 (Blackman, Vigna).
  const std::uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = std::rotl(s_[3], 45);
  return result;
}

std::uint64_t Rng::uniform(std::uint64_t bound) {
  if (bound == 0) return next_u64();  // the full 64-bit range
  u128 m = static_cast<u128>(next_u64()) * bound;
  auto low = static_cast<std::uint64_t>(m);
  if (low < bound) {
    const std::uint64_t threshold = (0 - bound) % bound;
    while (low < threshold) {
      m = static_cast<u128>(next_u64()) * bound;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

std::int64_t Rng::uniform_range(std::int64_t lo, std::int64_t hi) {
  if (hi <= lo) return lo;
  const std::uint64_t width = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) + 1;
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + uniform(width));
}

bool Rng::chance(Ratio r) {
  // Always draw, so a ratio of 0 or 1 consumes the stream like any other.
  const std::uint64_t draw = uniform(r.den == 0 ? 1 : r.den);
  return draw < r.num;
}

std::uint64_t neg_log_q32(std::uint64_t x) {
  if (x == 0) x = 1;
  // log2(x) = k + log2(y), y = x / 2^k in [1, 2), fraction bits by repeated squaring.
  const int k = 63 - std::countl_zero(x);
  std::uint64_t m = x << (63 - k);  // y in Q1.63
  std::uint64_t frac = 0;
  for (int i = 0; i < 32; ++i) {
    u128 sq = (static_cast<u128>(m) * m) >> 63;  // y^2 in Q.63, may reach 2^65
    frac <<= 1;
    if (sq >= (static_cast<u128>(1) << 64)) {
      frac |= 1;
      sq >>= 1;
    }
    m = static_cast<std::uint64_t>(sq);
  }
  const std::uint64_t log2_q32 = (static_cast<std::uint64_t>(k) << 32) | frac;
  const std::uint64_t neg_log2_q32 = (std::uint64_t{64} << 32) - log2_q32;
  constexpr std::uint64_t kLn2Q64 = 0xb17217f7d1cf79abULL;  // ln(2) * 2^64
  return static_cast<std::uint64_t>((static_cast<u128>(neg_log2_q32) * kLn2Q64) >> 64);
}

Duration Rng::exponential(Duration mean) {
  if (mean.ns <= 0) {
    next_u64();
    return Duration{0};
  }
  const std::uint64_t q = neg_log_q32(next_u64());
  const u128 scaled = (static_cast<u128>(mean.ns) * q) >> 32;
  return Duration{static_cast<std::int64_t>(scaled)};
}

Duration Rng::jitter(Duration d, Ratio r) {
  const std::int64_t span = static_cast<std::int64_t>(
      (static_cast<u128>(d.ns < 0 ? -d.ns : d.ns) * r.num) / (r.den == 0 ? 1 : r.den));
  return Duration{uniform_range(d.ns - span, d.ns + span)};
}

}  // namespace lic
