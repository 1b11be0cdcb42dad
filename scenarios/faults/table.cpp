#include "scenarios/faults/table.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <string>

#include "scenarios/scenario.hpp"

namespace lic::faults {

namespace {

constexpr std::array<std::string_view, 11> kOptionNames{"reason", "to",    "one_way", "duration", "delay", "ratio",
                                                        "restart_after", "grace", "mode",    "skew",     "drift"};

std::vector<KindInfo> make_kinds() {
  using O = Option;
  const std::vector<O> window{O::to, O::duration, O::ratio};
  return {
      {Kind::crash, "crash", Aim::process, {O::reason}, {}, "the process raises: it ends with `reason` (default {error,injected_crash})"},
      {Kind::kill, "kill", Aim::process, {}, {}, "exit(Pid, kill): untrappable, the process ends killed"},
      {Kind::exit, "exit", Aim::process, {O::reason}, {}, "an exit signal with `reason` (trappable unless kill)"},
      {Kind::node_crash, "node_crash", Aim::node, {O::restart_after}, {},
       "every process on the node dies (killed); with restart_after the node comes back and boots its trees"},
      {Kind::node_restart, "node_restart", Aim::node, {}, {}, "a crashed node comes back and boots its trees"},
      {Kind::partition, "partition", Aim::sides, {O::to, O::one_way, O::duration}, {},
       "blocks the paths between the side and `to` (every other node when absent), both ways unless one_way, "
       "for `duration` (until healed when absent)"},
      {Kind::heal, "heal", Aim::all, {}, {}, "unblocks every path"},
      {Kind::clog, "clog", Aim::sides, {O::to, O::duration, O::delay}, {O::delay}, "adds `delay` to every message on those paths"},
      {Kind::loss, "loss", Aim::sides, window, {O::ratio}, "a window of message loss at `ratio`"},
      {Kind::duplicate, "duplicate", Aim::sides, window, {O::ratio}, "a window of duplication at `ratio`"},
      {Kind::reorder, "reorder", Aim::sides, window, {O::ratio}, "a window of reordering at `ratio`"},
      {Kind::pause, "pause", Aim::node, {O::duration}, {O::duration}, "the node runs nothing for `duration` (a GC pause)"},
      {Kind::slow_start, "slow_start", Aim::process, {O::delay}, {O::delay}, "the target's next start takes `delay` longer"},
      {Kind::stop_task, "stop_task", Aim::node, {O::grace}, {O::grace},
       "SIGTERM to the node's processes (a container's stop), then SIGKILL after `grace` if it still runs"},
      {Kind::degrade, "degrade", Aim::process, {O::mode, O::duration}, {O::mode},
       "the target degrades in `mode` (its own word: a slow or failing service, a full disk) for `duration` "
       "(until the quiet phase when absent)"},
      {Kind::clock, "clock", Aim::node, {O::skew, O::drift}, {},
       "the node's wall clock is off by `skew` (signed: -2s) and its clock drifts `drift` (signed parts per million: "
       "500ppm) from now on: what its processes read as now and how long their timers last"},
      {Kind::suspend, "suspend", Aim::process, {O::duration}, {O::duration},
       "SIGSTOP of the target's OS process for `duration`, then SIGCONT: the target and every process under its "
       "path on its node run nothing, while those that model the OS's sockets (pg::Conn) keep acknowledging and "
       "answering probes; the node runs on"},
      {Kind::cut_connection, "cut_connection", Aim::process, {O::duration}, {},
       "drops every segment of one connection both ways (the target models its own transport: a pg::Conn, "
       "`/c1/coordinator/conn`) for `duration` (until healed when absent), as a firewall rule on one socket; "
       "the nodes keep their contact"},
  };
}

}  // namespace

const Atom kDegrade("$degrade");

const std::vector<KindInfo>& kinds() {
  static const std::vector<KindInfo> all = make_kinds();
  return all;
}

const KindInfo& info(Kind k) { return kinds()[static_cast<std::size_t>(k)]; }

const KindInfo* find_kind(std::string_view name) {
  for (const KindInfo& k : kinds()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

std::string_view to_string(Kind k) { return info(k).name; }

bool parse_kind(std::string_view text, Kind& out) {
  const KindInfo* k = find_kind(text);
  if (k != nullptr) out = k->kind;
  return k != nullptr;
}

std::string_view to_string(Option o) { return kOptionNames[static_cast<std::size_t>(o)]; }

bool parse_option(std::string_view text, Option& out) {
  for (std::size_t i = 0; i < kOptionNames.size(); ++i) {
    if (kOptionNames[i] == text) {
      out = static_cast<Option>(i);
      return true;
    }
  }
  return false;
}

bool takes(Kind k, Option o) {
  const std::vector<Option>& t = info(k).takes;
  return std::find(t.begin(), t.end(), o) != t.end();
}

bool rangeable(std::string_view key) {
  static constexpr std::array<std::string_view, 8> kKeys{"at", "mtbf", "every", "duration", "delay", "ratio", "grace", "restart_after"};
  return std::find(kKeys.begin(), kKeys.end(), key) != kKeys.end();
}

void set_knob(Fault& f, std::string_view key, Duration d) {
  if (key == "at") f.at = Time{} + d;
  else if (key == "mtbf") f.mtbf = d;
  else if (key == "every") f.every = d;
  else if (key == "duration") f.duration = d;
  else if (key == "delay") f.delay = d;
  else if (key == "grace") f.grace = d;
  else if (key == "restart_after") f.restart_after = d;
}

void set_knob(Fault& f, Ratio r) { f.ratio = r; }

bool drawn_per_injection(std::string_view key) {
  return key == "duration" || key == "delay" || key == "grace" || key == "restart_after" || key == "ratio";
}

namespace {

/// A value in [0, span] on a round grid (about 1,000 to 10,000 steps), so a drawn knob reads
/// well in a file: 5s..2m gives multiples of 100ms.
std::int64_t draw_on_grid(Rng& rng, std::int64_t span) {
  std::int64_t step = 1;
  while (step <= span / 10000) step *= 10;
  return rng.uniform_range(0, span / step) * step;
}

/// A ratio drawn in parts per million, reduced (as the reader reduces what it reads).
Ratio draw_ratio(Rng& rng, const KnobRange& r) {
  Ratio lo;
  Ratio hi;
  std::string why;
  scenarios::parse_ratio(r.lo, lo, why);
  scenarios::parse_ratio(r.hi, hi, why);
  constexpr std::uint64_t kPpm = 1'000'000;
  __extension__ using Wide = unsigned __int128;
  const auto lo_ppm = static_cast<std::int64_t>((static_cast<Wide>(lo.num) * kPpm + lo.den - 1) / lo.den);
  const auto hi_ppm = static_cast<std::int64_t>(static_cast<Wide>(hi.num) * kPpm / hi.den);
  if (lo_ppm > hi_ppm) return lo;  // a range narrower than a millionth: its low end
  const auto ppm = static_cast<std::uint64_t>(lo_ppm + draw_on_grid(rng, hi_ppm - lo_ppm));
  const std::uint64_t g = std::gcd(ppm, kPpm);
  return ppm == 0 ? Ratio::never() : Ratio{ppm / g, kPpm / g};
}

}  // namespace

std::string draw_knob(Rng& rng, const KnobRange& r, Fault& f) {
  if (r.key == "ratio") {
    set_knob(f, draw_ratio(rng, r));
    return scenarios::format_ratio(f.ratio);
  }
  const Duration lo = parse_duration(r.lo).value;
  const Duration hi = parse_duration(r.hi).value;
  const Duration d = lo + Duration{draw_on_grid(rng, hi.ns - lo.ns)};
  set_knob(f, r.key, d);
  return format_duration(d);
}

bool split_range(std::string_view text, std::string& lo, std::string& hi) {
  const auto dots = text.find("..");
  if (dots == std::string_view::npos) return false;
  lo = std::string(text.substr(0, dots));
  hi = std::string(text.substr(dots + 2));
  return true;
}

}  // namespace lic::faults
