#include "scenarios/search/vary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace lic::scenarios {

namespace {

/// A value of the type as an integer: nanoseconds, the integer, or the ratio in millionths.
bool as_integer(const std::string& type, const std::string& text, std::int64_t& out) {
  if (type == "duration") {
    const DurationParse d = parse_duration(text);
    out = d.value.ns;
    return d.ok;
  }
  if (type == "int") {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size();
  }
  Ratio r;
  std::string why;
  if (!parse_ratio(text, r, why)) return false;
  out = static_cast<std::int64_t>(static_cast<double>(r.num) / static_cast<double>(r.den) * 1e6 + 0.5);
  return true;
}

/// Value i of `steps` evenly spaced over [lo, hi], in 128-bit integers (0..2^63-1 does not
/// overflow), rounded to `unit` but never outside [lo, hi].
std::int64_t point(std::int64_t lo, std::int64_t hi, std::size_t i, std::size_t steps, std::int64_t unit) {
  __extension__ using Wide = __int128;
  const Wide span = static_cast<Wide>(hi) - lo;
  const Wide n = static_cast<Wide>(steps) - 1;
  Wide v = static_cast<Wide>(lo) + (span * static_cast<Wide>(i) + n / 2) / n;
  if (unit > 1) v = (v + unit / 2) / unit * unit;
  return static_cast<std::int64_t>(std::clamp<Wide>(v, lo, hi));
}

std::string as_text(const std::string& type, std::int64_t v) {
  if (type == "duration") return format_duration(Duration{v});
  if (type == "int") return std::to_string(v);
  return fmt::format("{}", static_cast<double>(v) / 1e6);  // a decimal parse_ratio reads
}

void set_on(BehaviourRef& b, const Vary& v, const std::string& value, std::size_t& n) {
  if (b.name != v.behaviour) return;
  ++n;
  for (auto& [k, a] : b.args) {
    if (k == v.arg) {
      a = ArgValue{value, {}, false, a.mark};
      return;
    }
  }
  b.args.emplace_back(v.arg, ArgValue{value, {}, false, {}});
}

void set_in(TreeNode& t, const Vary& v, const std::string& value, std::size_t& n) {
  set_on(t.behaviour, v, value, n);
  for (ServiceDecl& s : t.services) set_on(s.behaviour, v, value, n);
  for (TreeNode& c : t.children) set_in(c, v, value, n);
}

}  // namespace

std::string parse_vary(std::string_view text, Vary& out) {
  const std::size_t colon = text.find(':');
  const std::size_t eq = text.find('=');
  const std::size_t dots = text.find("..", eq == std::string_view::npos ? 0 : eq);
  if (colon == std::string_view::npos || eq == std::string_view::npos || dots == std::string_view::npos || colon > eq ||
      colon == 0 || eq == colon + 1 || dots == eq + 1 || dots + 2 == text.size())
    return fmt::format("'{}' is not BEHAVIOUR:ARG=A..B (e.g. ingest.s3:latency=100ms..10s)", text);
  out = Vary{std::string(text.substr(0, colon)), std::string(text.substr(colon + 1, eq - colon - 1)),
             std::string(text.substr(eq + 1, dots - eq - 1)), std::string(text.substr(dots + 2))};
  return {};
}

std::string vary_values(const Vary& v, const Registry& registry, std::size_t steps, std::vector<std::string>& out) {
  const BehaviourInfo* b = registry.behaviour(v.behaviour);
  if (b == nullptr) return "--vary: unknown behaviour '" + v.behaviour + "'";
  const auto a = std::find_if(b->args.begin(), b->args.end(), [&](const ArgInfo& x) { return x.name == v.arg; });
  if (a == b->args.end()) return "--vary: '" + v.behaviour + "' has no argument '" + v.arg + "'";
  if (a->type != "duration" && a->type != "int" && a->type != "ratio")
    return "--vary: argument '" + v.arg + "' is a " + a->type + "; only a duration, an int or a ratio can be walked";
  std::int64_t lo = 0, hi = 0;
  if (!as_integer(a->type, v.from, lo)) return "--vary: '" + v.from + "' is not a " + a->type;
  if (!as_integer(a->type, v.to, hi)) return "--vary: '" + v.to + "' is not a " + a->type;
  if (lo > hi) return "--vary: " + v.from + ".." + v.to + " is an empty range: A is above B";
  if (steps < 1) return "--steps must be 1 or more";
  if (steps == 1 && lo != hi) return "--steps 1 would run " + v.from + " alone and never " + v.to + ": give 2 or more (A and B are both walked)";
  out.clear();
  // A and B as given; between them, a duration to the millisecond when the grid's step is a
  // millisecond or more (636ms, not 636363636ns).
  const bool ms = a->type == "duration" && steps > 1 && (static_cast<double>(hi) - static_cast<double>(lo)) / static_cast<double>(steps - 1) >= 1e6;
  for (std::size_t i = 0; i < steps; ++i) {
    std::string t = i == 0 ? v.from : i + 1 == steps ? v.to : as_text(a->type, point(lo, hi, i, steps, ms ? 1'000'000 : 1));
    if (out.empty() || out.back() != t) out.push_back(std::move(t));
  }
  return {};
}

std::size_t set_arg(Scenario& s, const Vary& v, const std::string& value) {
  std::size_t n = 0;
  for (TreeNode& t : s.trees) set_in(t, v, value, n);
  for (Step& st : s.script) {
    if (st.child) set_in(*st.child, v, value, n);
  }
  return n;
}

}  // namespace lic::scenarios
