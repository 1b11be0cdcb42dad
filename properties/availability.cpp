#include "properties/availability.hpp"
#include "sim/trace_keys.hpp"
#include "supervision/events.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

namespace lic::properties {

Intervals normalise(Intervals in) {
  std::erase_if(in, [](const Interval& i) { return !(i.from < i.to); });
  std::sort(in.begin(), in.end(), [](const Interval& a, const Interval& b) { return a.from < b.from; });
  Intervals out;
  for (const Interval& i : in) {
    if (!out.empty() && i.from <= out.back().to) {
      out.back().to = std::max(out.back().to, i.to);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

Intervals intersect(const Intervals& a, const Intervals& b) {
  Intervals out;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const Time from = std::max(a[i].from, b[j].from);
    const Time to = std::min(a[i].to, b[j].to);
    if (from < to) out.push_back({from, to});
    (a[i].to < b[j].to) ? ++i : ++j;
  }
  return normalise(std::move(out));
}

Intervals unite(const Intervals& a, const Intervals& b) {
  Intervals all = a;
  all.insert(all.end(), b.begin(), b.end());
  return normalise(std::move(all));
}

Intervals clip(const Intervals& in, Time from, Time to) {
  return intersect(normalise(in), Intervals{{from, to}});
}

Intervals complement(const Intervals& up, Time from, Time to) {
  Intervals out;
  Time at = from;
  for (const Interval& i : clip(up, from, to)) {
    if (at < i.from) out.push_back({at, i.from});
    at = i.to;
  }
  if (at < to) out.push_back({at, to});
  return out;
}

Duration total(const Intervals& in) {
  Duration d{};
  for (const Interval& i : in) d += i.length();
  return d;
}

Intervals up_intervals(const EventLog& events, const std::string& path, Time from, Time to) {
  using supervision::events::kChildStarted;
  const Atom wanted(path);
  Intervals up;
  std::map<Pid, Time> since;  // live processes at `path` that are past init
  for (const TraceEvent& e : events.only({EventKind::system, EventKind::exit})) {
    if (e.kind == EventKind::system && e.name == kChildStarted) {
      if (const Pid* p = e.field<Pid>(keys::kPid)) since.emplace(*p, e.time);
    } else if (e.kind == EventKind::exit && e.label.name == wanted) {
      auto it = since.find(e.pid);
      if (it != since.end()) {
        up.push_back({it->second, e.time});
        since.erase(it);
      }
    }
  }
  // Still running at the end: up to `to`. child_started names pids of any path; keep ours only.
  for (const TraceEvent& e : events.only({EventKind::spawn})) {
    if (e.kind != EventKind::spawn || e.label.name != wanted) continue;
    auto it = since.find(e.pid);
    if (it != since.end()) up.push_back({it->second, to});
  }
  return clip(up, from, to);
}

std::map<Atom, Intervals> up_intervals_by_path(const EventLog& events, Time from, Time to) {
  using supervision::events::kChildStarted;
  std::map<Atom, Intervals> by_path;
  std::vector<Atom> label;     // by pid number: pids are dense per simulation
  std::map<Pid, Time> since;   // live supervised processes past init
  for (const TraceEvent& e : events.only({EventKind::spawn, EventKind::system, EventKind::exit})) {
    if (e.kind == EventKind::spawn) {
      if (label.size() <= e.pid.id) label.resize(e.pid.id + 1);
      label[e.pid.id] = e.label.name;
    } else if (e.kind == EventKind::system && e.name == kChildStarted) {
      if (const Pid* p = e.field<Pid>(keys::kPid)) since.emplace(*p, e.time);
    } else if (e.kind == EventKind::exit && !e.label.name.empty()) {
      auto it = since.find(e.pid);
      if (it == since.end()) continue;
      by_path[e.label.name].push_back({it->second, e.time});
      since.erase(it);
    }
  }
  for (const auto& [pid, t] : since)
    if (pid.id < label.size() && !label[pid.id].empty()) by_path[label[pid.id]].push_back({t, to});
  for (auto& [path, up] : by_path) up = clip(up, from, to);
  return by_path;
}

namespace {

const Atom kRunning("running");

/// Whether `e` is a service_state event about the service at `path` (its supervisor's label,
/// "/", its id), compared in place: checks call this once per event.
bool is_state_of(const TraceEvent& e, std::string_view path) {
  if (e.kind != EventKind::system || e.name != supervision::events::kServiceState || e.label.name.empty()) return false;
  const Atom* id = e.field<Atom>(keys::kId);
  if (id == nullptr) return false;
  const std::string_view sup = e.label.name.text();
  const std::string_view name = id->text();
  return path.size() == sup.size() + 1 + name.size() && path.substr(0, sup.size()) == sup &&
         path[sup.size()] == '/' && path.substr(sup.size() + 1) == name;
}

}  // namespace

bool names_service(const EventLog& events, const std::string& path) {
  return std::any_of(events.begin(), events.end(), [&](const TraceEvent& e) { return is_state_of(e, path); });
}

std::map<Atom, Intervals> service_up_intervals_by_path(const EventLog& events, Time from, Time to) {
  std::map<Atom, Intervals> by_path;
  std::map<Atom, std::map<Atom, Time>> running;  // supervisor label -> service id -> running since
  auto path_of = [](Atom supervisor, Atom id) {
    return Atom(std::string(supervisor.text()) + "/" + std::string(id.text()));
  };
  for (const TraceEvent& e : events) {
    if (e.label.name.empty()) continue;
    if (e.kind == EventKind::exit) {
      // Its supervisor ended, and every service with it.
      const auto sup = running.find(e.label.name);
      if (sup == running.end()) continue;
      for (const auto& [id, since] : sup->second) by_path[path_of(e.label.name, id)].push_back({since, e.time});
      running.erase(sup);
      continue;
    }
    if (e.kind != EventKind::system || e.name != supervision::events::kServiceState) continue;
    const Atom* id = e.field<Atom>(keys::kId);
    const Atom* was = e.field<Atom>(keys::kFrom);
    const Atom* now = e.field<Atom>(keys::kTo);
    if (id == nullptr || was == nullptr || now == nullptr) continue;
    std::map<Atom, Time>& mine = running[e.label.name];
    auto it = mine.find(*id);
    if (*was == kRunning && it != mine.end()) {
      by_path[path_of(e.label.name, *id)].push_back({it->second, e.time});
      mine.erase(it);
      it = mine.end();
    }
    if (*now == kRunning && it == mine.end()) mine.emplace(*id, e.time);
  }
  for (const auto& [sup, ids] : running) {
    for (const auto& [id, since] : ids) by_path[path_of(sup, id)].push_back({since, to});
  }
  for (auto& [path, up] : by_path) up = clip(up, from, to);
  return by_path;
}

Intervals service_up_intervals(const EventLog& events, const std::string& path, Time from, Time to) {
  const std::map<Atom, Intervals> all = service_up_intervals_by_path(events, from, to);
  const auto it = all.find(Atom(path));
  return it == all.end() ? clip({}, from, to) : it->second;
}

namespace {

constexpr std::uint32_t kNotOurs = UINT32_MAX;  // a pid outside the subtree
constexpr std::uint32_t kRoot = UINT32_MAX - 1;  // a process at the subtree's own path

struct PathState {
  bool down = false;          // counted down since `down_since`, until its next child_started
  bool ever_started = false;  // a child_started has named a process at this path
  Time down_since{};
};

struct PidState {
  std::uint32_t path = kNotOurs;  // index into the paths, kRoot or kNotOurs
  bool started = false;           // named by a child_started
  bool exited = false;
  std::uint32_t init_of = 0;      // in init, spawned during the init of world-spawned root n (1, 2, ...)
  Time exit_time{};
};

Pid pid_field(const TraceEvent& e) {
  const Pid* p = e.field<Pid>(keys::kPid);
  return p == nullptr ? Pid{} : *p;
}

}  // namespace

Intervals subtree_up_intervals(const EventLog& events, const std::string& path, Time from, Time to) {
  if (names_service(events, path)) return service_up_intervals(events, path, from, to);
  using supervision::events::kChildStarted;
  using supervision::events::kChildTerminated;
  const std::string prefix = path + "/";
  std::vector<PathState> paths;
  std::map<Atom, std::uint32_t> path_index;  // label -> index into paths (ordered: deterministic)
  std::vector<PidState> pids;                // by pid number: pids are dense per simulation
  auto state_of = [&pids](Pid p) -> PidState* {
    return p.id < pids.size() && pids[p.id].path != kNotOurs ? &pids[p.id] : nullptr;
  };
  Intervals root_up_list;  // the process at `path`
  Intervals down;          // each descendant's down time, in any order; overlaps are fine
  Pid root_pid;
  bool root_up = false;  // up since root_since
  Time root_since{};
  // A root the world spawned has no child_started: its init ends at the first instant after its
  // spawn at which none of the descendants spawned since is still in init (a Supervisor's init
  // only starts its children, one after the other, with no gap in between).
  bool root_in_init = false;
  std::uint32_t root_generation = 0;  // which world-spawned root the count is of
  std::size_t in_init = 0;
  Time quiet_since{};
  auto leave_init = [&](PidState& ps, Time t) {
    const bool counted = ps.init_of != 0 && ps.init_of == root_generation;
    ps.init_of = 0;
    if (counted && --in_init == 0) quiet_since = t;
  };
  auto close_down = [&down](PathState& st, Time t) {
    if (st.down) down.push_back({st.down_since, t});
    st.down = false;
  };
  auto open_down = [](PathState& st, Time t) {
    if (st.down) return;
    st.down = true;
    st.down_since = t;
  };

  for (const TraceEvent& e : events) {
    if (root_in_init && in_init == 0 && quiet_since < e.time) {
      root_in_init = false;
      root_up = true;
      root_since = quiet_since;
    }
    if (e.kind == EventKind::spawn) {
      const std::string_view name = e.label.name.text();
      const bool is_root = name == path;
      if (!is_root && !name.starts_with(prefix)) continue;
      if (pids.size() <= e.pid.id) pids.resize(e.pid.id + 1);
      PidState& ps = pids[e.pid.id];
      if (is_root) {
        ps.path = kRoot;
        root_pid = e.pid;
        if (!e.other) {  // spawned by the world: no supervisor will report it started
          root_in_init = true;
          ++root_generation;
          in_init = 0;
          quiet_since = e.time;
        }
        continue;
      }
      auto [it, added] = path_index.try_emplace(e.label.name, static_cast<std::uint32_t>(paths.size()));
      if (added) paths.emplace_back();
      ps.path = it->second;
      if (root_in_init) {
        ps.init_of = root_generation;
        ++in_init;
      }
      // A process starting again at a path that has been up: a restart under way.
      PathState& st = paths[ps.path];
      if (st.ever_started) open_down(st, e.time);
    } else if (e.kind == EventKind::exit) {
      PidState* ps = state_of(e.pid);
      if (ps == nullptr) continue;
      if (ps->path == kRoot) {
        if (e.pid != root_pid) continue;
        if (root_up) root_up_list.push_back({root_since, e.time});
        root_up = false;
        root_in_init = false;
        continue;
      }
      ps->exited = true;
      ps->exit_time = e.time;
      leave_init(*ps, e.time);
      // A start attempt that ended in init: a clean end (init returned ignore) means the child is
      // not expected to run; an abnormal one leaves the path down (a retry, or none).
      if (!ps->started && e.reason.is_clean()) close_down(paths[ps->path], e.time);
    } else if (e.kind == EventKind::system && (e.name == kChildStarted || e.name == kChildTerminated)) {
      const Pid pid = pid_field(e);
      PidState* ps = state_of(pid);
      if (ps == nullptr) continue;
      if (ps->path == kRoot) {
        if (e.name == kChildStarted && pid == root_pid) {
          root_up = true;
          root_since = e.time;
          root_in_init = false;
        }
        continue;
      }
      PathState& st = paths[ps->path];
      if (e.name == kChildStarted) {
        ps->started = true;
        st.ever_started = true;
        leave_init(*ps, e.time);
        close_down(st, e.time);
      } else {
        // The supervisor reports the exit when it handles the EXIT, maybe later: down from the exit.
        open_down(st, ps->exited ? ps->exit_time : e.time);
      }
    }
  }
  if (root_in_init && in_init == 0) {
    root_up = true;
    root_since = quiet_since;
  }
  if (root_up) root_up_list.push_back({root_since, to});
  for (PathState& st : paths) close_down(st, to);  // never started again: down until `to`
  const Intervals not_down = complement(normalise(std::move(down)), from, to);
  return clip(intersect(normalise(std::move(root_up_list)), not_down), from, to);
}

std::vector<Time> unseen_failures(const EventLog& events, const std::string& path, const Intervals& up) {
  using supervision::events::kChildTerminated;
  const std::string prefix = path + "/";
  std::vector<Atom> path_of;  // by pid number: pids are dense per simulation
  std::vector<Time> out;
  for (const TraceEvent& e : events.only({EventKind::spawn, EventKind::system})) {
    if (e.kind == EventKind::spawn) {
      if (path_of.size() <= e.pid.id) path_of.resize(e.pid.id + 1);
      path_of[e.pid.id] = e.label.name;
      continue;
    }
    if (e.kind != EventKind::system || e.name != kChildTerminated) continue;
    const Pid pid = pid_field(e);
    if (pid.id >= path_of.size()) continue;
    const std::string_view p = path_of[pid.id].text();
    if (p != path && !p.starts_with(prefix)) continue;
    // Up at that instant: the failure left no gap (a gap would start exactly there).
    // The last interval starting at or before it (the intervals are sorted and disjoint).
    const auto after = std::upper_bound(up.begin(), up.end(), e.time, [](Time t, const Interval& i) { return t < i.from; });
    if (after != up.begin() && e.time < std::prev(after)->to) out.push_back(e.time);
  }
  return out;
}

Availability measure(const Intervals& up_in, Time from, Time to, double z) { return measure(up_in, from, to, {}, z); }

Availability measure(const Intervals& up_in, Time from, Time to, const std::vector<Time>& instants, double z) {
  Availability a;
  // The up intervals, each cut at the instant failures inside it: a cycle per piece.
  Intervals up;
  std::size_t next = 0;
  for (const Interval& i : clip(up_in, from, to)) {
    Time start = i.from;
    while (next < instants.size() && instants[next] < i.to) {
      if (instants[next] > start) {
        up.push_back({start, instants[next]});
        start = instants[next];
      }
      ++next;
    }
    up.push_back({start, i.to});
  }
  a.observed = to - from;
  a.up = total(up);
  a.availability = a.observed > Duration::zero()
                       ? static_cast<double>(a.up.ns) / static_cast<double>(a.observed.ns)
                       : 0.0;
  // Complete cycles: an up interval that ended (a failure) and the down time that followed it
  // until the next up interval began (a repair).
  std::vector<double> u, c;
  Duration up_sum{}, down_sum{};
  for (std::size_t i = 0; i < up.size(); ++i) {
    if (!(up[i].to < to)) break;
    ++a.failures;
    up_sum += up[i].length();
    if (i + 1 < up.size()) {
      ++a.repairs;
      const Duration down = up[i + 1].from - up[i].to;
      down_sum += down;
      u.push_back(static_cast<double>(up[i].length().ns));
      c.push_back(static_cast<double>((up[i].length() + down).ns));
    }
  }
  if (a.failures > 0) a.mtbf = Duration{up_sum.ns / static_cast<std::int64_t>(a.failures)};
  if (a.repairs > 0) a.mttr = Duration{down_sum.ns / static_cast<std::int64_t>(a.repairs)};
  // Ratio estimator R = mean(U) / mean(C) over n cycles; by the delta method its standard error
  // is sqrt(sum (U_i - R C_i)^2 / (n - 1) / n) / mean(C). It assumes cycles independent and
  // alike (a renewal process), which a supervised worker with Poisson failures is.
  const std::size_t n = u.size();
  if (n >= 2) {
    double su = 0, sc = 0;
    for (std::size_t i = 0; i < n; ++i) su += u[i], sc += c[i];
    const double r = su / sc;
    const double mean_c = sc / static_cast<double>(n);
    double ss = 0;
    for (std::size_t i = 0; i < n; ++i) ss += (u[i] - r * c[i]) * (u[i] - r * c[i]);
    const double se = std::sqrt(ss / static_cast<double>(n - 1) / static_cast<double>(n)) / mean_c;
    a.low = std::max(0.0, r - z * se);
    a.high = std::min(1.0, r + z * se);
  }
  return a;
}

}  // namespace lic::properties
