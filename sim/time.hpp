#pragma once
// Virtual time: integer nanoseconds in two strong types. Nothing in sim/ or supervision/ ever
// reads a wall clock; the only clock is Simulation::now().

#include <compare>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace lic {

/// A signed span of virtual time, in nanoseconds.
struct Duration {
  std::int64_t ns = 0;

  constexpr Duration() = default;
  constexpr explicit Duration(std::int64_t nanos) : ns(nanos) {}

  static constexpr Duration zero() { return Duration{0}; }
  static constexpr Duration max() { return Duration{std::numeric_limits<std::int64_t>::max()}; }

  constexpr auto operator<=>(const Duration&) const = default;
  constexpr Duration operator+(Duration o) const { return Duration{ns + o.ns}; }
  constexpr Duration operator-(Duration o) const { return Duration{ns - o.ns}; }
  constexpr Duration operator*(std::int64_t k) const { return Duration{ns * k}; }
  constexpr Duration operator/(std::int64_t k) const { return Duration{ns / k}; }
  constexpr Duration& operator+=(Duration o) { ns += o.ns; return *this; }
  constexpr Duration& operator-=(Duration o) { ns -= o.ns; return *this; }
  /// `5 * kSecond` as well as `kSecond * 5`.
  friend constexpr Duration operator*(std::int64_t k, Duration d) { return Duration{k * d.ns}; }
};

/// A point in virtual time: nanoseconds since the simulation began.
struct Time {
  std::int64_t ns = 0;

  constexpr Time() = default;
  constexpr explicit Time(std::int64_t nanos) : ns(nanos) {}

  static constexpr Time zero() { return Time{0}; }
  static constexpr Time max() { return Time{std::numeric_limits<std::int64_t>::max()}; }

  constexpr auto operator<=>(const Time&) const = default;
  /// Saturates at Time::max() so "now + infinity" stays a valid deadline.
  constexpr Time operator+(Duration d) const {
    if (d.ns > 0 && ns > std::numeric_limits<std::int64_t>::max() - d.ns) return max();
    return Time{ns + d.ns};
  }
  constexpr Time operator-(Duration d) const { return Time{ns - d.ns}; }
  constexpr Duration operator-(Time o) const { return Duration{ns - o.ns}; }
};

inline constexpr Duration kNanosecond{1};
inline constexpr Duration kMicrosecond{1'000};
inline constexpr Duration kMillisecond{1'000'000};
inline constexpr Duration kSecond{1'000'000'000};
inline constexpr Duration kMinute{60'000'000'000};
inline constexpr Duration kHour{3'600'000'000'000};

namespace literals {
constexpr Duration operator""_ns(unsigned long long v) { return Duration{static_cast<std::int64_t>(v)}; }
constexpr Duration operator""_us(unsigned long long v) { return kMicrosecond * static_cast<std::int64_t>(v); }
constexpr Duration operator""_ms(unsigned long long v) { return kMillisecond * static_cast<std::int64_t>(v); }
constexpr Duration operator""_s(unsigned long long v) { return kSecond * static_cast<std::int64_t>(v); }
constexpr Duration operator""_min(unsigned long long v) { return kMinute * static_cast<std::int64_t>(v); }
constexpr Duration operator""_h(unsigned long long v) { return kHour * static_cast<std::int64_t>(v); }
}  // namespace literals

/// Result of parsing a duration: either a value or an error with the 0-based column it is at.
struct DurationParse {
  bool ok = false;
  Duration value{};
  std::size_t error_column = 0;
  std::string error;
};

/// Parses `250ms`, `5s`, `1m`, `1h`, `1.5s`, `10us`, `100ns`, `0` (units: ns us ms s m min h).
/// Decimals are exact (integer arithmetic); anything that would not be a whole number of
/// nanoseconds, a negative value, a missing unit or an overflow is an error.
DurationParse parse_duration(std::string_view text);

/// Prints with the largest unit that represents the value exactly: 250ms, 5s, 1m, 1h, 1500us.
std::string format_duration(Duration d);

/// Seconds with up to nine decimals, for tables: 12.5 -> "12.500000000" trimmed to "12.5s".
std::string format_time(Time t);

}  // namespace lic
