#include "scenarios/search/schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "scenarios/faults/table.hpp"
#include "scenarios/run/tree_build.hpp"
#include "sim/trace_keys.hpp"

namespace lic::scenarios {

namespace {

using faults::Fault;

std::string base_name(const Fault& f, std::size_t index) {
  return !f.name.empty() ? f.name : fmt::format("{}#{}", faults::to_string(f.kind), index);
}

/// The name before its '@k' (a fault made explicit), else the whole name.
std::string root_name(const std::string& name) { return name.substr(0, name.rfind('@')); }

/// A name `root@k` no fault of `s` has yet.
std::string fresh_name(const Scenario& s, const std::string& root) {
  std::set<std::string> taken;
  for (const Fault& f : s.faults) taken.insert(f.name);
  for (std::size_t k = 1;; ++k) {
    std::string n = fmt::format("{}@{}", root, k);
    if (taken.count(n) == 0) return n;
  }
}

bool explicit_fault(const Fault& f) { return f.at && !f.every && !f.mtbf; }

/// A fault made explicit: at `t`, once.
Fault at_time(Fault f, Time t, std::string name) {
  f.at = t;
  f.mtbf.reset();
  f.after.reset();
  f.every.reset();
  f.until.reset();
  f.ranges.clear();
  f.name = std::move(name);
  return f;
}


std::string parent_of(const std::string& path) { return path.substr(0, path.rfind('/')); }

/// Log-uniform in [lo, hi] (lo > 0): small moves as likely as large ones, scale by scale.
Duration log_uniform(Rng& rng, Duration lo, Duration hi) {
  if (hi <= lo) return lo;
  // Scales of 2 from lo up to hi, then uniform within the scale drawn.
  int scales = 0;
  for (std::int64_t v = lo.ns; v < hi.ns && scales < 62; v *= 2) ++scales;
  const auto k = static_cast<int>(rng.uniform(static_cast<std::uint64_t>(scales)));
  const std::int64_t a = lo.ns << k;
  const std::int64_t b = std::min(hi.ns, a * 2);
  return Duration{rng.uniform_range(a, b)};
}

Time clamp_time(Time t, Duration chaos) {
  const Time last = Time{} + chaos - kNanosecond;
  if (t < Time{}) return Time{};
  return t > last ? last : t;
}

std::string signed_duration(Duration d) {
  return d < Duration::zero() ? "-" + format_duration(Duration::zero() - d) : "+" + format_duration(d);
}

/// The duration knob a window fault has: its window, a clog's or slow start's delay, a stop's
/// grace; null when it has none.
Duration* window_of(Fault& f) {
  if (f.duration > Duration::zero()) return &f.duration;
  if (f.delay > Duration::zero()) return &f.delay;
  if (f.grace > Duration::zero()) return &f.grace;
  return nullptr;
}

enum class Op { shift_fine, shift_coarse, approach, retarget, window, duplicate, drop, add, reseed, splice };

/// One op drawn by weight: moving a fault is what finds a coincidence; the rest keep the search wide.
Op draw_op(Rng& rng) {
  static constexpr std::pair<Op, int> kOps[] = {{Op::shift_fine, 6}, {Op::shift_coarse, 3}, {Op::approach, 4}, {Op::retarget, 2},
                                                {Op::window, 2},     {Op::duplicate, 4},    {Op::drop, 2},     {Op::add, 3},
                                                {Op::reseed, 2},     {Op::splice, 1}};
  int total = 0;
  for (const auto& [op, w] : kOps) total += w;
  auto pick = static_cast<int>(rng.uniform(static_cast<std::uint64_t>(total)));
  for (const auto& [op, w] : kOps) {
    if (pick < w) return op;
    pick -= w;
  }
  return Op::reseed;
}

std::optional<MutationNote> shift(Fault& f, bool fine, Duration chaos, Rng& rng) {
  const Duration d = fine ? log_uniform(rng, kMicrosecond * 100, kMillisecond * 100)
                          : log_uniform(rng, kMillisecond * 100, std::max(chaos / 2, kMillisecond * 200));
  const Duration by = rng.uniform(2) == 0 ? d : Duration::zero() - d;
  const Time was = *f.at;
  f.at = clamp_time(*f.at + by, chaos);
  return fmt::format("shift {} by {}", f.name, signed_duration(*f.at - was));
}

/// Fault i moved next to another fault or a script step (1 ms to 10 s from it, before or
/// after): most rare failures are a fault that coincides with another, or with an operator's
/// action (a SIGTERM's drain).
std::optional<MutationNote> approach(Scenario& s, std::size_t i, Duration chaos, Rng& rng) {
  std::vector<std::pair<Time, std::string>> anchors;
  for (std::size_t j = 0; j < s.faults.size(); ++j)
    if (j != i) anchors.emplace_back(*s.faults[j].at, s.faults[j].name);
  for (std::size_t k = 0; k < s.script.size(); ++k)
    anchors.emplace_back(s.script[k].at, fmt::format("step {} ({})", k + 1, to_string(s.script[k].op)));
  if (anchors.empty()) return std::nullopt;
  const auto& [at, what] = anchors[rng.uniform(anchors.size())];
  const Duration d = log_uniform(rng, kMillisecond, std::max(std::min(chaos / 4, kSecond * 10), kMillisecond * 2));
  s.faults[i].at = clamp_time(at + (rng.uniform(2) == 0 ? d : Duration::zero() - d), chaos);
  return fmt::format("move {} next to {} (at {})", s.faults[i].name, what, format_time(*s.faults[i].at));
}

std::optional<MutationNote> retarget(Fault& f, const MutationPalette& p, Rng& rng) {
  const faults::Aim aim = faults::info(f.kind).aim;
  if (aim == faults::Aim::process && f.target.by == faults::Target::By::path && p.paths.size() > 1) {
    std::vector<std::string> near;
    for (const std::string& q : p.paths)
      if (q != f.target.text && parent_of(q) == parent_of(f.target.text)) near.push_back(q);
    const std::vector<std::string>& from = !near.empty() && rng.uniform(4) != 0 ? near : p.paths;
    const std::string& to = from[rng.uniform(from.size())];
    if (to == f.target.text) return std::nullopt;
    MutationNote n = fmt::format("retarget {} {} -> {}", f.name, f.target.text, to);
    f.target.text = to;
    return n;
  }
  if (aim == faults::Aim::node && f.target.by == faults::Target::By::node && p.nodes.size() > 1) {
    const Atom to = p.nodes[rng.uniform(p.nodes.size())];
    if (to.text() == f.target.text) return std::nullopt;
    MutationNote n = fmt::format("retarget {} {} -> {}", f.name, f.target.text, to.text());
    f.target.text = std::string(to.text());
    return n;
  }
  if (aim == faults::Aim::sides && p.nodes.size() > 1) {
    const Atom to = p.nodes[rng.uniform(p.nodes.size())];
    f.side_a = {to};
    std::erase(f.side_b, to);
    return fmt::format("retarget {} side [{}]", f.name, to.text());
  }
  return std::nullopt;
}

std::optional<MutationNote> resize_window(Fault& f, Rng& rng) {
  Duration* w = window_of(f);
  if (w == nullptr) return std::nullopt;
  const Duration was = *w;
  *w = rng.uniform(2) == 0 ? *w * 2 : std::max(*w / 2, kMillisecond);
  if (rng.uniform(2) == 0) *w = *w + Duration{rng.uniform_range(-was.ns / 4, was.ns / 4)};
  if (*w <= Duration::zero()) *w = kMillisecond;
  return fmt::format("window of {} {} -> {}", f.name, format_duration(was), format_duration(*w));
}

std::optional<MutationNote> duplicate(Scenario& s, std::size_t i, Duration chaos, Rng& rng) {
  Fault g = s.faults[i];
  const Duration d = log_uniform(rng, kMillisecond, std::max(std::min(chaos / 4, kSecond * 10), kMillisecond * 2));
  g.at = clamp_time(*g.at + (rng.uniform(2) == 0 ? d : Duration::zero() - d), chaos);
  g.name = fresh_name(s, root_name(g.name));
  MutationNote n = fmt::format("duplicate {} as {} at {}", s.faults[i].name, g.name, format_time(*g.at));
  s.faults.push_back(std::move(g));
  return n;
}

std::optional<MutationNote> add(Scenario& s, const MutationPalette& p, Duration chaos, Rng& rng) {
  if (p.faults.empty()) return std::nullopt;
  const Fault& f = p.faults[rng.uniform(p.faults.size())];
  Fault g = at_time(f, Time{} + Duration{rng.uniform_range(0, chaos.ns - 1)}, fresh_name(s, root_name(f.name)));
  MutationNote n = fmt::format("add {} at {}", g.name, format_time(*g.at));
  s.faults.push_back(std::move(g));
  return n;
}

std::optional<MutationNote> splice(Scenario& s, const Scenario& other, Duration chaos, Rng& rng) {
  const Time t = Time{} + Duration{rng.uniform_range(0, chaos.ns - 1)};
  std::vector<Fault> joined;
  for (const Fault& f : s.faults)
    if (*f.at < t) joined.push_back(f);
  for (const Fault& f : other.faults)
    if (*f.at >= t) joined.push_back(f);
  s.faults.clear();
  for (Fault& f : joined) {  // names unique again
    const std::string root = root_name(f.name);
    f.name = fresh_name(s, root);
    s.faults.push_back(std::move(f));
  }
  return fmt::format("splice at {}", format_time(t));
}

}  // namespace

Scenario concretize(const Scenario& s, std::uint64_t seed, const EventLog& log) {
  std::map<std::string, std::vector<Time>> acted;
  for (const TraceEvent& e : log)
    if (e.kind == EventKind::system && e.name == fault_events::kFaultInjected) acted[e.text(keys::kFault)].push_back(e.time);
  Scenario out = s;
  out.seed = seed;
  out.faults.clear();
  out.fault_marks.clear();
  for (std::size_t i = 0; i < s.faults.size(); ++i) {
    const Fault& f = s.faults[i];
    if (explicit_fault(f) && f.ranges.empty()) {
      out.faults.push_back(f);
      if (out.faults.back().name.empty()) out.faults.back().name = base_name(f, i);
      continue;
    }
    const std::string name = base_name(f, i);
    const auto it = acted.find(name);
    if (it == acted.end()) continue;
    for (std::size_t k = 0; k < it->second.size(); ++k)
      out.faults.push_back(at_time(f, it->second[k], fmt::format("{}@{}", name, k + 1)));
  }
  std::stable_sort(out.faults.begin(), out.faults.end(), [](const Fault& a, const Fault& b) { return *a.at < *b.at; });
  return out;
}

MutationPalette palette_of(const Scenario& s) {
  MutationPalette p;
  p.faults = s.faults;
  for (std::size_t i = 0; i < p.faults.size(); ++i) p.faults[i].name = base_name(p.faults[i], i);
  p.paths = tree_paths(s.trees);
  for (const NodeDecl& n : s.nodes) p.nodes.emplace_back(n.name);
  if (p.nodes.empty()) p.nodes.emplace_back(s.default_node());
  p.chaos = s.duration;
  return p;
}

bool mutable_schedule(const MutationPalette& p) { return !p.faults.empty(); }

std::vector<MutationNote> mutate(Scenario& s, const Scenario* other, const MutationPalette& p, Rng& rng) {
  std::vector<MutationNote> notes;
  const Duration chaos = p.chaos > Duration::zero() ? p.chaos : kSecond;
  // 1 + a geometric count, at most 4 (havoc, as AFL stacks mutations).
  int count = 1;
  while (count < 4 && rng.uniform(2) == 0) ++count;
  for (int m = 0; m < count; ++m) {
    Op op = draw_op(rng);
    const bool has = !s.faults.empty();
    if (!has && op != Op::add && op != Op::reseed) op = p.faults.empty() ? Op::reseed : Op::add;
    if (op == Op::splice && (other == nullptr || other->faults.empty())) op = Op::duplicate;
    const std::size_t i = has ? rng.uniform(s.faults.size()) : 0;
    std::optional<MutationNote> note;
    switch (op) {
      case Op::shift_fine: note = shift(s.faults[i], true, chaos, rng); break;
      case Op::shift_coarse: note = shift(s.faults[i], false, chaos, rng); break;
      case Op::approach: note = approach(s, i, chaos, rng); break;
      case Op::retarget: note = retarget(s.faults[i], p, rng); break;
      case Op::window: note = resize_window(s.faults[i], rng); break;
      case Op::duplicate: note = duplicate(s, i, chaos, rng); break;
      case Op::drop:
        note = "drop " + s.faults[i].name;
        s.faults.erase(s.faults.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      case Op::add: note = add(s, p, chaos, rng); break;
      case Op::reseed:
        s.seed = rng.uniform(1'000'000'000) + 1;
        note = fmt::format("reseed {}", s.seed);
        break;
      case Op::splice: note = splice(s, *other, chaos, rng); break;
    }
    if (note) notes.push_back(std::move(*note));
  }
  std::stable_sort(s.faults.begin(), s.faults.end(), [](const Fault& a, const Fault& b) { return *a.at < *b.at; });
  return notes;
}

}  // namespace lic::scenarios
