#include "reports/time_axis.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>
#include <vector>

namespace lic::reports {
namespace {

struct Step {
  Duration step;
  Duration unit;
  const char* unit_name;
};

/// Every step the axis may use, smallest first: 1/2/5 x 10^k below a minute, then minutes and
/// hours on their own nice multiples (100 s is not a nice number of minutes).
std::vector<Step> steps() {
  std::vector<Step> out;
  const std::array<std::pair<Duration, const char*>, 4> units{
      {{kNanosecond, "ns"}, {kMicrosecond, "\xc2\xb5s"}, {kMillisecond, "ms"}, {kSecond, "s"}}};
  for (const auto& [unit, name] : units) {
    for (const std::int64_t scale : {1, 10, 100}) {
      for (const std::int64_t m : {1, 2, 5}) out.push_back({unit * (m * scale), unit, name});
    }
  }
  // 1 s .. 500 s were made above; drop those of 100 s and more in favour of minutes.
  std::erase_if(out, [](const Step& s) { return s.step >= kSecond * 100; });
  out.push_back({kMinute, kMinute, "min"});  // 50 s -> 1 min
  for (const std::int64_t m : {2, 5, 10, 15, 30}) out.push_back({kMinute * m, kMinute, "min"});
  for (const std::int64_t h : {1, 2, 3, 6, 12, 24, 48, 120, 240, 480, 1200, 2400, 4800, 12000}) {
    out.push_back({kHour * h, kHour, "h"});
  }
  return out;
}

}  // namespace

Ticks choose_ticks(Duration span, std::size_t max_ticks) {
  static const std::vector<Step> all = steps();
  const std::int64_t limit = static_cast<std::int64_t>(max_ticks == 0 ? 1 : max_ticks);
  for (const Step& s : all) {
    if (span.ns / s.step.ns <= limit) return {s.step, s.unit, s.unit_name};
  }
  const Step& last = all.back();
  // Beyond the table (years of virtual time): multiples of its largest step.
  const std::int64_t k = span.ns / last.step.ns / limit + 1;
  return {last.step * k, last.unit, last.unit_name};
}

std::string tick_label(Time at, const Ticks& t) {
  if (at.ns == 0) return "0";
  return fmt::format("{}{}", at.ns / t.unit.ns, t.unit_name);
}

}  // namespace lic::reports
