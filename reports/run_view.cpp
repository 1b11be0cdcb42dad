#include "reports/run_view.hpp"

#include <fmt/format.h>

#include "properties/leader.hpp"
#include "properties/linearizability.hpp"

#include "sim/trace_keys.hpp"
#include "supervision/events.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

namespace lic::reports {
namespace {

using supervision::events::kChildStarted;
using supervision::events::kChildTerminated;
const Atom kEscalated = supervision::events::kReachedMax;
using fault_events::kFaultInjected;
using fault_events::kQuietPhase;
using supervision::events::kServiceRetry;
using supervision::events::kServiceState;
const Atom kServiceWaiting("service_waiting");  // lifecycle: {id, on}: a start waits on a dependency
const Atom kFailed("failed");
const Atom kStarting("starting");

template <class T>
std::optional<T> field_as(const TraceEvent& e, Atom key) {
  const T* v = e.field<T>(key);
  return v == nullptr ? std::nullopt : std::optional<T>(*v);
}

/// What one pass over the trace learns about one labelled path.
struct PathFacts {
  std::string node;                 // of its first process
  bool supervised = false;          // a child_started named one of its processes
  bool service = false;             // a service_state named it
  std::map<Pid, Time> world_since;  // processes no supervisor started (roots, goroutines), alive since
  properties::Intervals world_up;
  std::vector<Mark> marks;
  std::vector<std::pair<Time, std::string>> states;  // a lifecycle service's, as they change
};

/// Opens and closes bands by key; what is still open at the end closes there.
class BandBook {
 public:
  using Key = std::tuple<BandKind, std::string, std::string>;  // kind, node, to-node
  void open(const Key& k, Time at) { open_.try_emplace(k, at); }
  void close(const Key& k, Time at) {
    auto it = open_.find(k);
    if (it == open_.end()) return;
    add(k, it->second, at);
    open_.erase(it);
  }
  /// Closes everything still open at `end` (a pause at its announced end, if sooner).
  std::vector<Band> finish(Time end, const std::map<std::string, Time>& pause_until) {
    for (const auto& [k, from] : open_) {
      Time to = end;
      if (std::get<0>(k) == BandKind::pause) {
        auto u = pause_until.find(std::get<1>(k));
        if (u != pause_until.end()) to = std::min(to, u->second);
      }
      add(k, from, to);
    }
    open_.clear();
    std::stable_sort(bands_.begin(), bands_.end(), [](const Band& a, const Band& b) {
      return std::tie(a.from, a.to) < std::tie(b.from, b.to);
    });
    return std::move(bands_);
  }

 private:
  void add(const Key& k, Time from, Time to) {
    const auto& [kind, a, b] = k;
    if (kind == BandKind::partition) {
      // Both ways of a symmetric partition open and heal together: one band "a <-> b".
      auto twin = partitions_.find({from, to, b, a});
      if (twin != partitions_.end()) {
        bands_[twin->second].label = b + " <-> " + a;
        partitions_.erase(twin);
        return;
      }
      partitions_.emplace(std::make_tuple(from, to, a, b), bands_.size());
      bands_.push_back({from, to, kind, a + " -> " + b});
    } else {
      const char* what = kind == BandKind::pause ? " paused" : kind == BandKind::draining ? " draining (SIGTERM)" : " down";
      bands_.push_back({from, to, kind, a + what});
    }
  }

  std::map<Key, Time> open_;
  std::map<std::tuple<Time, Time, std::string, std::string>, std::size_t> partitions_;
  std::vector<Band> bands_;
};

struct Facts {
  std::map<Atom, PathFacts> paths;
  std::vector<Atom> seen;  // labelled paths in the order first spawned
  EventLog lifelines;      // spawn, exit, child_started, child_terminated, service_state: what up_intervals and service_up_intervals read
  std::vector<Mark> world_marks;
  std::vector<Band> bands;
  std::vector<std::string> nodes;
  /// Link faults' windows, each from its injection for the fault's window (the quiet phase and
  /// the run's end cut them short).
  std::vector<Band> windows;
  std::optional<Time> quiet_from;
  const std::vector<FaultCount>* faults = nullptr;  ///< the file's faults, for their windows
};

/// The band a link fault's kind draws, if it is one.
std::optional<BandKind> window_kind(std::string_view kind) {
  if (kind == "loss") return BandKind::loss;
  if (kind == "duplicate") return BandKind::duplicate;
  if (kind == "reorder") return BandKind::reorder;
  if (kind == "clog") return BandKind::clog;
  return std::nullopt;
}

/// A link fault that acted: its window, as long as the file gives it (0: open to the end).
void note_window(Facts& f, const TraceEvent& e, Atom name, Atom kind) {
  const std::optional<BandKind> k = window_kind(kind.text());
  if (!k || f.faults == nullptr) return;
  Duration window{};
  for (const FaultCount& c : *f.faults)
    if (c.name == name.text()) window = c.window;
  const Time to = window > Duration::zero() ? e.time + window : Time{std::numeric_limits<std::int64_t>::max()};
  f.windows.push_back({e.time, to, *k, std::string(name.text())});
}

void note_node(Facts& f, std::string_view node) {
  if (node.empty()) return;
  if (std::find(f.nodes.begin(), f.nodes.end(), node) == f.nodes.end()) f.nodes.emplace_back(node);
}

PathFacts& facts_of(Facts& f, Atom path) {
  auto [it, added] = f.paths.try_emplace(path);
  if (added) f.seen.push_back(path);
  return it->second;
}

void read_system(Facts& f, const TraceEvent& e, const std::vector<Atom>& path_of_pid) {
  auto path_of = [&path_of_pid](Pid p) { return p.id < path_of_pid.size() ? path_of_pid[p.id] : Atom{}; };
  if (e.name == kChildStarted || e.name == kChildTerminated) {
    f.lifelines.push_back(e);
    const auto pid = field_as<Pid>(e, keys::kPid);
    if (e.name == kChildTerminated || !pid || path_of(*pid).empty()) return;
    PathFacts& d = facts_of(f, path_of(*pid));
    d.supervised = true;
    const auto start = field_as<std::int64_t>(e, keys::kStart);
    if (start && *start > 1)
      d.marks.push_back({e.time, MarkKind::restart, "start " + std::to_string(*start)});
  } else if (e.name == kQuietPhase) {
    f.quiet_from = e.time;
  } else if (e.name == kEscalated && !e.label.name.empty()) {
    facts_of(f, e.label.name)
        .marks.push_back({e.time, MarkKind::escalation, "reached_max_restart_intensity"});
  } else if (e.name == kFaultInjected) {
    std::string detail;
    const auto name = field_as<Atom>(e, keys::kFault);
    const auto kind = field_as<Atom>(e, keys::kKind);
    if (name) detail = std::string(name->text());
    if (kind) detail += " (" + std::string(kind->text()) + ")";
    if (name && kind) note_window(f, e, *name, *kind);
    if (const auto why = field_as<Atom>(e, keys::kReason)) detail += " " + std::string(why->text());
    const auto pid = field_as<Pid>(e, keys::kPid);
    if (pid && !path_of(*pid).empty()) {
      facts_of(f, path_of(*pid)).marks.push_back({e.time, MarkKind::fault, detail});
    } else {
      f.world_marks.push_back({e.time, MarkKind::fault, detail});
    }
  } else if ((e.name == kServiceRetry || e.name == kServiceWaiting) && !e.label.name.empty()) {
    const auto id = field_as<Atom>(e, keys::kId);
    if (!id) return;
    PathFacts& d = facts_of(f, Atom(std::string(e.label.name.text()) + "/" + std::string(id->text())));
    if (e.name == kServiceWaiting) {
      const auto on = field_as<Atom>(e, keys::kOn);
      d.states.emplace_back(e.time, "waiting for " + std::string(on ? on->text() : "a dependency"));
    } else {
      const auto delay = field_as<Duration>(e, keys::kDelay);
      const auto attempt = field_as<std::int64_t>(e, keys::kAttempt);
      d.states.emplace_back(e.time, fmt::format("backoff {} (attempt {})", format_duration(delay.value_or(Duration{})), attempt.value_or(0)));
    }
  } else if (e.name == kServiceState && !e.label.name.empty()) {
    const auto id = field_as<Atom>(e, keys::kId);
    const auto from = field_as<Atom>(e, keys::kFrom);
    const auto to = field_as<Atom>(e, keys::kTo);
    if (!id || !from || !to) return;
    f.lifelines.push_back(e);
    PathFacts& d = facts_of(f, Atom(std::string(e.label.name.text()) + "/" + std::string(id->text())));
    d.service = true;
    // A failed service with a retry scheduled waits in backoff: the retry's state comes next.
    d.states.emplace_back(e.time, std::string(to->text()));
    if (*from == kFailed && *to == kStarting) {
      const auto start = field_as<std::int64_t>(e, keys::kStart);
      d.marks.push_back({e.time, MarkKind::restart, "start " + std::to_string(start.value_or(0))});
    }
  }
}

/// Fills `f` (not returned: an EventLog does not move).
void read_trace(const EventLog& events, Time end, Facts& f) {
  BandBook book;
  std::map<std::string, Time> pause_until;
  std::vector<Atom> path_of_pid;  // by pid number: pids are dense per simulation
  for (const TraceEvent& e : events) {
    const std::string_view node = e.node.text();
    switch (e.kind) {
      case EventKind::spawn: {
        f.lifelines.push_back(e);
        note_node(f, node);
        if (e.label.name.empty()) break;
        if (path_of_pid.size() <= e.pid.id) path_of_pid.resize(e.pid.id + 1);
        path_of_pid[e.pid.id] = e.label.name;
        PathFacts& d = facts_of(f, e.label.name);
        if (d.node.empty()) d.node = std::string(node);
        d.world_since.emplace(e.pid, e.time);  // used unless a supervisor reports its starts
        break;
      }
      case EventKind::exit: {
        f.lifelines.push_back(e);
        if (e.label.name.empty()) break;
        PathFacts& d = facts_of(f, e.label.name);
        if (auto it = d.world_since.find(e.pid); it != d.world_since.end()) {
          d.world_up.push_back({it->second, e.time});
          d.world_since.erase(it);
        }
        if (e.reason.is_clean()) break;
        const bool killed = e.reason.kind == ReasonKind::kill || e.reason.kind == ReasonKind::killed;
        d.marks.push_back({e.time, killed ? MarkKind::kill : MarkKind::crash,
                           to_string(e.reason) + " #" + std::to_string(e.label.instance)});
        break;
      }
      case EventKind::system:
        read_system(f, e, path_of_pid);
        break;
      case EventKind::partition:
        note_node(f, node);
        book.open({BandKind::partition, std::string(node), std::string(e.tag.text())}, e.time);
        break;
      case EventKind::heal:
        book.close({BandKind::partition, std::string(node), std::string(e.tag.text())}, e.time);
        break;
      case EventKind::node_pause:
        note_node(f, node);
        book.open({BandKind::pause, std::string(node), {}}, e.time);
        pause_until[std::string(node)] = Time{static_cast<std::int64_t>(e.msg)};
        break;
      case EventKind::node_resume:
        book.close({BandKind::pause, std::string(node), {}}, e.time);
        break;
      case EventKind::node_down:
        note_node(f, node);
        book.close({BandKind::draining, std::string(node), {}}, e.time);
        book.open({BandKind::node_down, std::string(node), {}}, e.time);
        break;
      case EventKind::signal:
        if (!e.pid && e.tag == Atom("sigterm")) book.open({BandKind::draining, std::string(node), {}}, e.time);
        break;
      case EventKind::node_up:
        book.close({BandKind::node_down, std::string(node), {}}, e.time);
        break;
      default:
        break;
    }
  }
  f.bands = book.finish(end, pause_until);
  // The quiet phase ends every window; the run's end ends what is left.
  for (Band& w : f.windows) {
    if (f.quiet_from) w.to = std::min(w.to, std::max(*f.quiet_from, w.from));
    w.to = std::min(w.to, std::max(end, w.from));
    f.bands.push_back(std::move(w));
  }
  std::stable_sort(f.bands.begin(), f.bands.end(), [](const Band& a, const Band& b) {
    return std::tie(a.from, a.to) < std::tie(b.from, b.to);
  });
}

/// Lanes in tree order: each declared node, its declared children, then the paths seen in the
/// trace whose parent it is (dynamic children), in the order they were first spawned.
class LaneOrder {
 public:
  LaneOrder(const std::vector<ShapeNode>& trees, const Facts& f) : facts_(f) {
    std::vector<std::string> declared;
    for (const ShapeNode& t : trees) collect(t, declared);
    std::sort(declared.begin(), declared.end());
    for (const Atom p : f.seen) {
      const std::string path(p.text());
      if (std::binary_search(declared.begin(), declared.end(), path) || !under_a_root(trees, path)) continue;
      extras_[path.substr(0, path.rfind('/'))].push_back(path);
    }
  }

  std::vector<Lane> lanes(const std::vector<ShapeNode>& trees) {
    for (const ShapeNode& t : trees) visit(t, 0, t.node);
    // Seen paths whose parent is no lane (a tree given without its shape): at the end.
    for (const Atom p : facts_.seen) {
      const std::string path(p.text());
      auto it = extras_.find(path.substr(0, path.rfind('/')));
      if (it == extras_.end()) continue;
      for (const std::string& x : it->second) visit_extra(x, 0, "");
      extras_.erase(it);
    }
    return std::move(out_);
  }

 private:
  static void collect(const ShapeNode& n, std::vector<std::string>& into) {
    into.push_back(n.path);
    for (const ShapeNode& c : n.children) collect(c, into);
  }
  static bool under_a_root(const std::vector<ShapeNode>& trees, const std::string& path) {
    if (trees.empty()) return true;
    return std::any_of(trees.begin(), trees.end(),
                       [&path](const ShapeNode& t) { return path.starts_with(t.path + "/"); });
  }
  void add(const std::string& path, std::size_t depth, const ShapeNode* shape, const std::string& node) {
    Lane l;
    l.path = path;
    l.depth = depth;
    l.shape = shape;
    auto it = facts_.paths.find(Atom(path));
    l.node = it != facts_.paths.end() && !it->second.node.empty() ? it->second.node : node;
    out_.push_back(std::move(l));
  }
  void visit(const ShapeNode& n, std::size_t depth, const std::string& node) {
    const std::string& here = n.node.empty() ? node : n.node;
    add(n.path, depth, &n, here);
    for (const ShapeNode& c : n.children) visit(c, depth + 1, here);
    visit_extras_of(n.path, depth + 1, here);
  }
  void visit_extra(const std::string& path, std::size_t depth, const std::string& node) {
    add(path, depth, nullptr, node);
    visit_extras_of(path, depth + 1, out_.back().node);
  }
  void visit_extras_of(const std::string& parent, std::size_t depth, const std::string& node) {
    auto it = extras_.find(parent);
    if (it == extras_.end()) return;
    const std::vector<std::string> children = std::move(it->second);
    extras_.erase(it);
    for (const std::string& c : children) visit_extra(c, depth, node);
  }

  const Facts& facts_;
  std::map<std::string, std::vector<std::string>> extras_;  // parent path -> seen children
  std::vector<Lane> out_;
};

properties::Intervals closed(properties::Intervals up, const std::map<Pid, Time>& open, Time end) {
  for (const auto& [pid, since] : open) up.push_back({since, end});
  return properties::clip(up, Time{0}, end);
}

}  // namespace

const char* to_string(MarkKind k) {
  switch (k) {
    case MarkKind::crash:
      return "crash";
    case MarkKind::kill:
      return "kill";
    case MarkKind::restart:
      return "restart";
    case MarkKind::escalation:
      return "escalation";
    case MarkKind::fault:
      return "fault";
    case MarkKind::operation:
      return "operation";
  }
  return "?";
}

const char* to_string(BandKind k) {
  switch (k) {
    case BandKind::partition:
      return "partition";
    case BandKind::pause:
      return "pause";
    case BandKind::node_down:
      return "node_down";
    case BandKind::draining:
      return "draining";
    case BandKind::loss:
      return "loss";
    case BandKind::duplicate:
      return "duplicate";
    case BandKind::reorder:
      return "reorder";
    case BandKind::clog:
      return "clog";
    case BandKind::history:
      return "history";
  }
  return "?";
}

std::vector<Backlog> backlogs_of(const EventLog& events) {
  std::vector<Backlog> out;
  std::map<std::pair<Atom, Atom>, std::size_t> index;  // (node, name) -> out[]
  for (const TraceEvent& e : events) {
    if (e.kind == EventKind::chan_make && e.msg >= 2) {
      const auto [it, added] = index.try_emplace({e.node, e.tag}, out.size());
      if (added) out.push_back(Backlog{std::string(e.tag.text()), std::string(e.node.text()), e.msg, 0, {}});
      out[it->second].steps.emplace_back(e.time, 0);
      continue;
    }
    const bool changes = e.kind == EventKind::chan_send || e.kind == EventKind::chan_recv || e.kind == EventKind::chan_close;
    if (!changes) continue;
    const auto it = index.find({e.node, e.tag});
    if (it == index.end()) continue;
    Backlog& b = out[it->second];
    if (!b.steps.empty() && b.steps.back().second == e.msg) continue;
    if (!b.steps.empty() && b.steps.back().first == e.time) b.steps.back().second = e.msg;
    else b.steps.emplace_back(e.time, e.msg);
    b.max = std::max(b.max, e.msg);
  }
  return out;
}

void leadership_of(const EventLog& events, Time end, RunView& v) {
  if (!properties::has_leader_election(events)) return;
  const auto lane = [&v](const std::string& node) -> LeaderLane& {
    for (LeaderLane& l : v.leaders)
      if (l.node == node) return l;
    v.leaders.push_back(LeaderLane{node, {}, {}, {}});
    return v.leaders.back();
  };
  // Every candidate gets a lane, in the order they started.
  for (const TraceEvent& e : events)
    if (e.kind == EventKind::system && e.name == properties::leader::kCoordinator) lane(std::string(e.node.text()));
  for (auto& [node, iv] : properties::leader_beliefs(events, end).by_node) lane(node).believed = std::move(iv);
  const properties::LeaderSafety s = properties::check_leader_safety(events);
  std::size_t next_unsafe = 0;
  for (const TraceEvent& e : events) {
    if (e.kind != EventKind::system || e.name != properties::leader::kWrite) continue;
    const std::string node = e.text(Atom("node"));
    const std::int64_t* seq = e.field<std::int64_t>(properties::leader::kSeq);
    const bool unsafe = next_unsafe < s.unsafe.size() && seq != nullptr && s.unsafe[next_unsafe].seq == *seq;
    next_unsafe += unsafe;
    (unsafe ? lane(node).unsafe : lane(node).writes).push_back(e.time);
  }
  for (const properties::Holding& h : properties::holdings(events, end)) v.holders.push_back({h.from, h.to, h.node});
}

namespace {

/// The index of the op_invoke of the operation `done` completes (by the same process), or
/// `done` itself when none is found before it.
std::size_t invocation_of(const EventLog& t, std::size_t done) {
  static const Atom kInvoke("op_invoke"), kOp("op");
  const std::int64_t* op = t[done].field<std::int64_t>(kOp);
  if (op == nullptr || t[done].name == kInvoke) return done;
  for (std::size_t i = done; i-- > 0;) {
    const TraceEvent& e = t[i];
    const std::int64_t* id = e.kind == EventKind::system && e.name == kInvoke && e.pid == t[done].pid ? e.field<std::int64_t>(kOp) : nullptr;
    if (id != nullptr && *id == *op) return i;
  }
  return done;
}

/// "read(k1) -> 9.8", from an operation's invocation and completion events.
std::string operation_text(const TraceEvent& invoke, const TraceEvent& done) {
  static const Atom kF("f"), kKey("key"), kArg("arg"), kArg2("arg2"), kValue("value"), kOk("op_ok"), kFail("op_fail");
  properties::Op o;
  o.f = invoke.text(kF);
  o.key = invoke.text(kKey);
  o.arg = invoke.text(kArg);
  o.arg2 = invoke.text(kArg2);
  o.status = done.name == kOk ? properties::OpStatus::ok : done.name == kFail ? properties::OpStatus::fail : properties::OpStatus::info;
  if (done.name == kOk && done.field<std::string>(kValue) != nullptr) o.value = *done.field<std::string>(kValue);
  return properties::describe(o);
}

/// A failing `linearizable`'s window: each operation its witness names besides the one that fits
/// nowhere is a mark on its client's lane, at its completion.
void history_marks(const RunReport& r, std::vector<Lane>& lanes) {
  std::set<std::size_t> touched;
  for (const CheckOutcome& c : r.checks) {
    if (c.passed || c.kind != "not_linearizable" || !c.witness) continue;
    for (const std::uint64_t i : c.witness->related) {
      if (i >= r.trace->size()) continue;
      const TraceEvent& done = (*r.trace)[i];
      const std::string path(done.label.name.text());
      const auto lane = std::find_if(lanes.begin(), lanes.end(), [&](const Lane& l) { return l.path == path; });
      if (lane == lanes.end()) continue;
      const std::string what = operation_text((*r.trace)[invocation_of(*r.trace, i)], done);
      lane->marks.push_back({done.time, MarkKind::operation, c.name + ": " + what + " (the longest linearizable prefix's end, or concurrent with the operation that fits nowhere)"});
      touched.insert(static_cast<std::size_t>(lane - lanes.begin()));
    }
  }
  for (const std::size_t i : touched)  // back in time order, once per lane
    std::stable_sort(lanes[i].marks.begin(), lanes[i].marks.end(), [](const Mark& a, const Mark& b) { return a.at < b.at; });
}

/// A failing `linearizable`'s operation that fits nowhere (its witness is the operation's
/// completion) as a band from its op_invoke to that completion: what the window is about.
void history_bands(const RunReport& r, std::vector<Band>& bands) {
  if (r.trace == nullptr) return;
  for (const CheckOutcome& c : r.checks) {
    if (c.passed || c.kind != "not_linearizable" || !c.witness || c.witness->event >= r.trace->size()) continue;
    const std::size_t invoke = invocation_of(*r.trace, c.witness->event);
    if (invoke == c.witness->event) continue;
    const TraceEvent& e = (*r.trace)[invoke];
    const TraceEvent& done = (*r.trace)[c.witness->event];
    bands.push_back(Band{e.time, std::max(done.time, e.time + Duration{1}), BandKind::history, c.name + ": " + c.witness->why});
  }
}

}  // namespace

RunView view_of(const RunReport& r) {
  RunView v;
  v.end = r.end;
  if (r.trace != nullptr && !r.trace->empty()) v.end = std::max(v.end, r.trace->back().time);
  static const EventLog kNoEvents;
  Facts f;
  f.faults = &r.faults;
  read_trace(r.trace != nullptr ? *r.trace : kNoEvents, v.end, f);
  v.lanes = LaneOrder(r.trees, f).lanes(r.trees);
  const std::map<Atom, properties::Intervals> up = properties::up_intervals_by_path(f.lifelines, Time{0}, v.end);
  const std::map<Atom, properties::Intervals> services = properties::service_up_intervals_by_path(f.lifelines, Time{0}, v.end);
  for (Lane& l : v.lanes) {
    auto it = f.paths.find(Atom(l.path));
    if (l.node.empty() && !f.nodes.empty()) l.node = f.nodes.front();
    note_node(f, l.node);
    if (it == f.paths.end()) continue;
    PathFacts& d = it->second;
    if (d.service || (l.shape != nullptr && l.shape->kind == "service")) {
      const auto found = services.find(Atom(l.path));
      if (found != services.end()) l.up = found->second;
    } else if (d.supervised) {
      const auto found = up.find(Atom(l.path));
      if (found != up.end()) l.up = found->second;
    } else {
      l.up = closed(std::move(d.world_up), d.world_since, v.end);
    }
    l.marks = std::move(d.marks);
    l.states = std::move(d.states);
  }
  v.backlogs = backlogs_of(r.trace != nullptr ? *r.trace : kNoEvents);
  v.world_marks = std::move(f.world_marks);
  v.bands = std::move(f.bands);
  history_bands(r, v.bands);
  if (r.trace != nullptr) history_marks(r, v.lanes);
  v.quiet_from = f.quiet_from;
  v.nodes = std::move(f.nodes);
  leadership_of(r.trace != nullptr ? *r.trace : kNoEvents, v.end, v);
  return v;
}

}  // namespace lic::reports
