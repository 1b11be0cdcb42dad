#include "scenarios/search/schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

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

enum class Op { shift_fine, shift_coarse, approach, land, in_flight, retarget, window, duplicate, drop, add, reseed, reseed_stream, splice };

/// One op drawn by weight: moving a fault is what finds a coincidence; the rest keep the search wide.
Op draw_op(Rng& rng) {
  static constexpr std::pair<Op, int> kOps[] = {
      {Op::shift_fine, 6}, {Op::shift_coarse, 3}, {Op::approach, 4}, {Op::land, 5}, {Op::in_flight, 3}, {Op::retarget, 2},
      {Op::window, 2},     {Op::duplicate, 4},    {Op::drop, 2},     {Op::add, 3},  {Op::reseed, 2},    {Op::reseed_stream, 2},
      {Op::splice, 1}};
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

/// Fault i, or a copy of it (half the time), placed 100 us to 1 s before or after one of its
/// run's landmarks: a crash while a restart is under way, a cut while a session is being lost, a
/// second stall just as the upload the first one stalled gives up.
std::optional<MutationNote> land(Scenario& s, std::size_t i, const RunMarks& m, Duration chaos, Rng& rng) {
  if (m.landmarks.empty()) return std::nullopt;
  // Three times in four a reaction to a fault, when the run had one: the start-up's landmarks are
  // many and seldom where a bug is.
  const std::size_t from = m.first_reaction < m.landmarks.size() && rng.uniform(4) != 0 ? m.first_reaction : 0;
  const Landmark& l = m.landmarks[from + rng.uniform(m.landmarks.size() - from)];
  const Duration d = log_uniform(rng, kMicrosecond * 100, kSecond);
  const bool before = rng.uniform(2) == 0;
  const Time t = clamp_time(before ? l.time - d : l.time + d, chaos);
  const std::string where = fmt::format("{} {} {} (at {})", format_duration(d), before ? "before" : "after", l.what.text(), format_time(l.time));
  if (rng.uniform(2) == 0) {
    Fault g = s.faults[i];
    g.at = t;
    g.name = fresh_name(s, root_name(g.name));
    MutationNote n = fmt::format("copy {} as {} {}", s.faults[i].name, g.name, where);
    s.faults.push_back(std::move(g));
    return n;
  }
  s.faults[i].at = t;
  return fmt::format("land {} {}", s.faults[i].name, where);
}

/// A network or node fault of `s` moved to begin inside the flight of a message that its run
/// sent between nodes near the fault's time: a cut that catches a packet on the wire (the
/// sender retransmits it, keepalive never starts, a reply is lost after the request was applied).
std::optional<MutationNote> in_flight(Scenario& s, const RunMarks& m, Rng& rng) {
  std::vector<std::size_t> cuts;
  for (std::size_t i = 0; i < s.faults.size(); ++i) {
    const faults::Aim aim = faults::info(s.faults[i].kind).aim;
    if (aim == faults::Aim::sides || aim == faults::Aim::node) cuts.push_back(i);
  }
  if (cuts.empty() || m.flights.empty()) return std::nullopt;
  Fault& f = s.faults[cuts[rng.uniform(cuts.size())]];
  std::vector<const std::pair<Time, Time>*> near;
  for (const auto& fl : m.flights)
    if (fl.first + kFlightRadius >= *f.at && fl.first <= *f.at + kFlightRadius) near.push_back(&fl);
  if (near.empty()) return std::nullopt;
  const auto& [sent, delivered] = *near[rng.uniform(near.size())];
  const Duration gap = delivered - sent;
  f.at = gap.ns > 2 ? sent + Duration{rng.uniform_range(1, gap.ns - 1)} : sent;
  return fmt::format("move {} to {}, while a message sent at {} is on the wire", f.name, format_time(*f.at), format_time(sent));
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

/// One random stream re-seeded, every other kept: a pin `streams: {KEY: SEED}` added or changed
/// (a process's own draws, one link's latencies and losses, the tie-break).
std::optional<MutationNote> reseed_stream(Scenario& s, const MutationPalette& p, Rng& rng) {
  const std::string& key = p.streams[rng.uniform(p.streams.size())];
  const std::uint64_t seed = rng.uniform(1'000'000'000) + 1;
  const auto it = std::find_if(s.streams.begin(), s.streams.end(), [&](const StreamPin& q) { return q.key == key; });
  if (it != s.streams.end()) it->seed = seed;
  else s.streams.push_back(StreamPin{key, seed, {}});
  std::sort(s.streams.begin(), s.streams.end(), [](const StreamPin& a, const StreamPin& b) { return a.key < b.key; });
  return fmt::format("reseed stream {} {}", key, seed);
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

namespace {

/// How often each (kind, name, role) occurs in a run, with the first kLandmarkRepeats events of
/// each: a flat table with linear probing (a run has a few hundred such keys over many thousand
/// events; this runs on every run explore makes). Only looked up, never walked in its own order.
class RareTable {
 public:
  void add(std::uint64_t key, std::uint32_t event) {
    if (2 * (used_ + 1) > slots_.size()) grow();
    Slot& s = find(key);
    if (s.count == 0) s.key = key, ++used_;
    if (s.count < kLandmarkRepeats) s.events[s.count] = event;
    ++s.count;
  }
  /// The events of every key seen at most kLandmarkRepeats times, in trace order.
  std::vector<std::uint32_t> rare() const {
    std::vector<std::uint32_t> out;
    for (const Slot& s : slots_)
      if (s.count > 0 && s.count <= kLandmarkRepeats) out.insert(out.end(), s.events, s.events + s.count);
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  struct Slot {
    std::uint64_t key = 0;
    std::uint32_t count = 0;
    std::uint32_t events[kLandmarkRepeats] = {};
  };
  Slot& find(std::uint64_t key) {
    std::size_t i = (key * 0x9e3779b97f4a7c15ULL) >> 40;
    for (;; ++i) {
      Slot& s = slots_[i & (slots_.size() - 1)];
      if (s.count == 0 || s.key == key) return s;
    }
  }
  void grow() {
    std::vector<Slot> old(slots_.empty() ? 64 : slots_.size() * 2);
    old.swap(slots_);
    for (const Slot& s : old)
      if (s.count > 0) find(s.key) = s;
  }
  std::vector<Slot> slots_;
  std::size_t used_ = 0;
};

/// An event kind's name as an atom, interned once.
Atom kind_atom(EventKind k) {
  static const std::vector<Atom> atoms = [] {
    std::vector<Atom> a;
    for (int i = 0; i <= static_cast<int>(kLastEventKind); ++i) a.emplace_back(to_string(static_cast<EventKind>(i)));
    return a;
  }();
  const auto i = static_cast<std::size_t>(k);
  return i < atoms.size() ? atoms[i] : Atom(to_string(k));
}

}  // namespace

RunMarks marks_of(const EventLog& log) {
  RunMarks m;
  RareTable table;
  std::vector<Time> injected;
  bool nodes = false;  // more than one node: messages can be in flight between them
  for (std::size_t k = 0; k < log.size(); ++k) {
    const TraceEvent& e = log[k];
    if (e.kind == EventKind::send || e.kind == EventKind::deliver) {
      nodes = nodes || e.node != log[0].node;
      continue;
    }
    if (e.kind == EventKind::system && e.name == fault_events::kFaultInjected) {
      injected.push_back(e.time);
      continue;
    }
    const Atom role = e.label.name.empty() ? e.node : e.label.name;
    table.add((static_cast<std::uint64_t>(e.kind) << 56) ^ (static_cast<std::uint64_t>(e.name.index()) << 28) ^ role.index(),
              static_cast<std::uint32_t>(k));
  }
  const std::vector<std::uint32_t> rare = table.rare();
  // At most kMaxLandmarks, evenly spread over the run.
  const std::size_t stride = rare.size() / kMaxLandmarks + 1;
  for (std::size_t k = 0; k < rare.size(); k += stride) {
    const TraceEvent& e = log[rare[k]];
    m.landmarks.push_back(Landmark{e.time, e.kind == EventKind::system ? e.name : kind_atom(e.kind)});
  }
  m.first_reaction = m.landmarks.size();
  if (!injected.empty())
    for (std::size_t k = 0; k < m.landmarks.size(); ++k)
      if (m.landmarks[k].time >= injected.front()) {
        m.first_reaction = k;
        break;
      }
  // Each injection's neighbourhood: the messages sent within kFlightRadius of it that reached
  // another node (the trace is in time order: a binary search finds where to start).
  std::unordered_map<std::uint64_t, std::pair<Time, Atom>> sent;  // msg -> its send
  for (std::size_t j = 0; nodes && j < injected.size() && m.flights.size() < kMaxFlights; ++j) {
    if (j > 0 && injected[j] - injected[j - 1] < kFlightRadius) continue;  // the window before covered it
    std::size_t lo = 0, hi = log.size();
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      if (log[mid].time + kFlightRadius < injected[j]) lo = mid + 1;
      else hi = mid;
    }
    sent.clear();
    for (std::size_t k = lo; k < log.size() && log[k].time <= injected[j] + kFlightRadius && m.flights.size() < kMaxFlights; ++k) {
      const TraceEvent& e = log[k];
      if (e.kind == EventKind::send) sent[e.msg] = {e.time, e.node};
      else if (e.kind == EventKind::deliver)
        if (const auto it = sent.find(e.msg); it != sent.end() && it->second.second != e.node)
          m.flights.emplace_back(it->second.first, e.time);
    }
  }
  std::sort(m.flights.begin(), m.flights.end());
  m.flights.erase(std::unique(m.flights.begin(), m.flights.end()), m.flights.end());
  return m;
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

std::vector<MutationNote> mutate(Scenario& s, const Scenario* other, const MutationPalette& p, Rng& rng, const RunMarks* marks) {
  std::vector<MutationNote> notes;
  const Duration chaos = p.chaos > Duration::zero() ? p.chaos : kSecond;
  // 1 + a geometric count, at most 4 (havoc, as AFL stacks mutations).
  int count = 1;
  while (count < 4 && rng.uniform(2) == 0) ++count;
  for (int m = 0; m < count; ++m) {
    Op op = draw_op(rng);
    while (op == Op::reseed_stream && p.streams.empty()) op = draw_op(rng);  // no stream of its own to re-seed
    const bool has = !s.faults.empty();
    if (!has && op != Op::add && op != Op::reseed && op != Op::reseed_stream) op = p.faults.empty() ? Op::reseed : Op::add;
    if (op == Op::splice && (other == nullptr || other->faults.empty())) op = Op::duplicate;
    if ((op == Op::land || op == Op::in_flight) && marks == nullptr) op = Op::approach;
    const std::size_t i = has ? rng.uniform(s.faults.size()) : 0;
    std::optional<MutationNote> note;
    switch (op) {
      case Op::shift_fine: note = shift(s.faults[i], true, chaos, rng); break;
      case Op::shift_coarse: note = shift(s.faults[i], false, chaos, rng); break;
      case Op::approach: note = approach(s, i, chaos, rng); break;
      case Op::land: note = land(s, i, *marks, chaos, rng); break;
      case Op::in_flight: note = in_flight(s, *marks, rng); break;
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
      case Op::reseed_stream: note = reseed_stream(s, p, rng); break;
      case Op::splice: note = splice(s, *other, chaos, rng); break;
    }
    if (!note && (op == Op::land || op == Op::in_flight)) note = approach(s, i, chaos, rng);  // nothing to aim at
    if (note) notes.push_back(std::move(*note));
  }
  std::stable_sort(s.faults.begin(), s.faults.end(), [](const Fault& a, const Fault& b) { return *a.at < *b.at; });
  return notes;
}

}  // namespace lic::scenarios
