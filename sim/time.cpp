#include "sim/time.hpp"

#include <array>

namespace lic {
namespace {

__extension__ typedef __int128 i128;

struct Unit {
  std::string_view name;
  std::int64_t ns;
};

// Longest names first so "ms" is not read as "m" followed by junk.
constexpr std::array<Unit, 7> kUnits{{{"min", 60'000'000'000},
                                      {"ns", 1},
                                      {"us", 1'000},
                                      {"ms", 1'000'000},
                                      {"s", 1'000'000'000},
                                      {"m", 60'000'000'000},
                                      {"h", 3'600'000'000'000}}};

DurationParse fail(std::size_t column, std::string message) {
  DurationParse r;
  r.error_column = column;
  r.error = std::move(message);
  return r;
}

}  // namespace

DurationParse parse_duration(std::string_view text) {
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  std::size_t i = 0;
  if (text.empty()) return fail(0, "empty duration; expected a number and a unit such as 250ms");
  if (text[0] == '-') return fail(0, "a duration cannot be negative");
  std::int64_t whole = 0;
  std::size_t digits = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    const int digit = text[i] - '0';
    if (whole > (kMax - digit) / 10) return fail(0, "duration is too large");
    whole = whole * 10 + digit;
    ++i;
    ++digits;
  }
  // Fraction kept as numerator/denominator so 1.5s is exactly 1'500'000'000 ns.
  std::int64_t frac_num = 0;
  std::int64_t frac_den = 1;
  if (i < text.size() && text[i] == '.') {
    ++i;
    std::size_t frac_digits = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (frac_digits == 12) return fail(i, "too many decimal places in duration");
      frac_num = frac_num * 10 + (text[i] - '0');
      frac_den *= 10;
      ++i;
      ++frac_digits;
    }
    if (frac_digits == 0) return fail(i, "expected digits after the decimal point");
  }
  if (digits == 0) return fail(0, "expected a number at the start of the duration");
  std::string_view unit_text = text.substr(i);
  if (unit_text.empty()) {
    if (whole == 0 && frac_num == 0) return DurationParse{true, Duration{0}, 0, {}};
    return fail(i, "missing unit; write e.g. 250ms, 5s, 1m or 1h");
  }
  for (const Unit& u : kUnits) {
    if (unit_text != u.name) continue;
    if (whole > kMax / u.ns) return fail(0, "duration is too large");
    std::int64_t total = whole * u.ns;
    // u.ns * frac_num fits: frac_num < 10^12, u.ns <= 3.6e12 -> use 128-bit to be safe.
    i128 part = static_cast<i128>(u.ns) * frac_num;
    if (part % frac_den != 0) return fail(0, "duration is not a whole number of nanoseconds");
    part /= frac_den;
    if (part > kMax - total) return fail(0, "duration is too large");
    return DurationParse{true, Duration{total + static_cast<std::int64_t>(part)}, 0, {}};
  }
  return fail(i, "unknown unit '" + std::string(unit_text) + "'; use ns, us, ms, s, m or h");
}

std::string format_duration(Duration d) {
  if (d.ns == 0) return "0s";
  std::string sign = d.ns < 0 ? "-" : "";
  std::int64_t v = d.ns < 0 ? -d.ns : d.ns;
  // Largest unit that divides exactly, so the text parses back to the same value.
  static constexpr std::array<Unit, 6> kPrint{{{"h", 3'600'000'000'000},
                                               {"m", 60'000'000'000},
                                               {"s", 1'000'000'000},
                                               {"ms", 1'000'000},
                                               {"us", 1'000},
                                               {"ns", 1}}};
  for (const Unit& u : kPrint) {
    if (v % u.ns == 0) return sign + std::to_string(v / u.ns) + std::string(u.name);
  }
  return sign + std::to_string(v) + "ns";
}

std::string format_time(Time t) {
  std::int64_t s = t.ns / 1'000'000'000;
  std::int64_t rest = t.ns % 1'000'000'000;
  std::string out = std::to_string(s);
  if (rest != 0) {
    std::string frac = std::to_string(rest);
    frac.insert(0, 9 - frac.size(), '0');
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    out += "." + frac;
  }
  return out + "s";
}

}  // namespace lic
