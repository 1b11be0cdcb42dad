#pragma once
// Seeded randomness with an integer API. One root seed; named, independent streams derived from
// it, so adding a consumer never shifts another consumer's draws. Every algorithm here is our own
// integer arithmetic (never std::*_distribution, whose output differs between standard libraries);
// rng_test.cpp pins the outputs with known-answer tests.

#include <cstdint>
#include <string_view>

#include "sim/time.hpp"

namespace lic {

/// A probability as an exact fraction num/den (0 <= num <= den, den > 0): `2%` is {2, 100}.
struct Ratio {
  std::uint64_t num = 0;
  std::uint64_t den = 1;

  static constexpr Ratio never() { return {0, 1}; }
  static constexpr Ratio always() { return {1, 1}; }
  static constexpr Ratio percent(std::uint64_t p) { return {p, 100}; }
  constexpr bool operator==(const Ratio&) const = default;
};

/// part / whole <= r, exactly (in 128-bit integers).
constexpr bool fraction_at_most(std::uint64_t part, std::uint64_t whole, Ratio r) {
  __extension__ using Wide = unsigned __int128;
  return static_cast<Wide>(part) * r.den <= static_cast<Wide>(whole) * r.num;
}
/// part / whole >= r, exactly; a whole of 0 is at least 0 only.
constexpr bool fraction_at_least(std::uint64_t part, std::uint64_t whole, Ratio r) {
  __extension__ using Wide = unsigned __int128;
  return whole == 0 ? r.num == 0 : static_cast<Wide>(part) * r.den >= static_cast<Wide>(whole) * r.num;
}

/// Stable 64-bit hash of a string (FNV-1a then a finaliser); used to name streams and atoms.
std::uint64_t stable_hash(std::string_view text);

/// splitmix64 step: advances `state` and returns the next output (Steele, Lea, Flood 2014).
std::uint64_t splitmix64(std::uint64_t& state);

/// A stream of pseudo-random numbers (xoshiro256**, seeded through splitmix64).
class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0);
  /// A stream with an explicit xoshiro256** state (known-answer tests against the reference).
  static Rng from_state(std::uint64_t s0, std::uint64_t s1, std::uint64_t s2, std::uint64_t s3);

  /// An independent stream named `name`, derived from this stream's seed (not its position):
  /// deriving never consumes draws, and derive("x") is the same whenever it is called.
  Rng derive(std::string_view name) const;
  /// The same for a numbered stream (per process, per link).
  Rng derive(std::uint64_t index) const;

  std::uint64_t seed() const { return seed_; }

  /// Next raw 64-bit value.
  std::uint64_t next_u64();
  /// Uniform in [0, bound) without modulo bias (Lemire's multiply-and-reject); bound > 0.
  std::uint64_t uniform(std::uint64_t bound);
  /// Uniform in [lo, hi] inclusive.
  std::int64_t uniform_range(std::int64_t lo, std::int64_t hi);
  /// True with probability r.num / r.den, exactly.
  bool chance(Ratio r);
  /// Exponentially distributed duration with the given mean, by inverse transform over a
  /// fixed-point logarithm (integer arithmetic only), rounded to whole nanoseconds.
  Duration exponential(Duration mean);
  /// Uniform in [d - d*r, d + d*r] (e.g. jitter(1s, 10%) is within 900ms..1100ms).
  Duration jitter(Duration d, Ratio r);

 private:
  std::uint64_t seed_;
  std::uint64_t s_[4];
};

/// -ln(x / 2^64) in Q32.32 fixed point for x in [1, 2^64-1]; exposed for its own tests.
std::uint64_t neg_log_q32(std::uint64_t x);

}  // namespace lic
