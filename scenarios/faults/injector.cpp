#include "scenarios/faults/injector.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <utility>

#include "scenarios/faults/table.hpp"
#include "scenarios/scenario.hpp"
#include "sim/trace_keys.hpp"
#include "supervision/tree_path.hpp"
#include "supervision/events.hpp"

namespace lic::faults {

namespace {
using fault_events::kFaultInjected;
using fault_events::kFaultSkipped;
using fault_events::kQuietPhase;
using keys::kFault;
using keys::kKind;
using keys::kNode;
using keys::kPid;
using keys::kReason;
using keys::kTarget;
using keys::kWhy;
using supervision::events::kChildStarted;
const Atom kInjected("injected");
const Atom kSkipped("skipped");
const Atom kPaths("paths");
const Atom kMode("mode");
const Atom kProcesses("processes");
const Atom kDuration("duration");
const Atom kSigterm("sigterm");
const Atom kSigkill("sigkill");
}  // namespace


std::string to_string(const Target& t) {
  switch (t.by) {
    case Target::By::none: return "";
    case Target::By::path: return t.text;
    case Target::By::name: return "name:" + t.text;
    case Target::By::node: return "node:" + t.text;
  }
  return "";
}

// ---- the injector --------------------------------------------------------------------------

Injector::Injector(Simulation& sim, std::vector<Fault> faults)
    : sim_(sim), faults_(std::move(faults)) {
  for (std::size_t i = 0; i < faults_.size(); ++i) {
    State s;
    s.name = !faults_[i].name.empty()
                 ? faults_[i].name
                 : std::string(to_string(faults_[i].kind)) + "#" + std::to_string(i);
    // Each fault draws from its own stream, named by the fault: adding a fault never shifts
    // another's draws.
    // A fault with an mtbf draws (its stream is then one a shrunk file can pin: "fault NAME").
    // So does one with a knob drawn at each injection.
    const bool draws = faults_[i].mtbf || !faults_[i].each.empty();
    const Rng root = draws && sim_.streams_watched() ? sim_.stream_root("fault " + s.name) : sim_.rng();
    s.rng = root.derive("faults").derive(s.name);
    states_.push_back(std::move(s));
    // Zero would fire again at the same instant for ever.
    const Fault& f = faults_[i];
    if ((f.mtbf && *f.mtbf <= Duration::zero()) || (f.every && *f.every <= Duration::zero())) {
      throw std::invalid_argument("fault " + states_.back().name + ": mtbf and every must be positive");
    }
  }
  sim_.trace().add_sink(this);
}

Injector::~Injector() {
  for (std::size_t i = 0; i < states_.size(); ++i) disarm(i);
  for (std::uint64_t id : follow_ups_) sim_.cancel(id);
  sim_.trace().remove_sink(this);
}

void Injector::later(Time t, std::function<void()> fn) {
  // Ids of follow-ups that already ran stay in the list; cancelling them is a no-op.
  follow_ups_.push_back(sim_.schedule(t, std::move(fn)));
}

bool Injector::process_target(const Fault& f) const {
  return f.target.by == Target::By::path || f.target.by == Target::By::name;
}

bool Injector::node_target(const Fault& f) const { return f.target.by == Target::By::node; }

std::optional<std::string> node_of_name(std::string_view node) {
  constexpr std::string_view open = "node_of(";
  if (node.size() <= open.size() + 1 || node.substr(0, open.size()) != open || node.back() != ')') return std::nullopt;
  return std::string(node.substr(open.size(), node.size() - open.size() - 1));
}

Atom Injector::node(Atom written, std::string& why) const {
  const auto name = node_of_name(written.text());
  if (!name) return written;
  const Pid p = sim_.whereis(Atom(*name));
  if (!p) {
    why = "no process registered as " + *name;
    return Atom();
  }
  return sim_.info(p)->node;
}

bool Injector::target_up(const Fault& f) const {
  return node_of_name(f.target.text) || sim_.node_up(Atom(f.target.text));  // a node_of target moves: always armed
}

void Injector::start() {
  if (started_) return;
  for (const Fault& f : faults_) {
    if (f.mtbf && !sim_.trace().enabled()) {
      throw std::logic_error("stochastic faults follow their targets through the trace: turn tracing on");
    }
  }
  started_ = true;
  for (std::size_t i = 0; i < faults_.size(); ++i) {
    const Fault& f = faults_[i];
    if (f.at) {
      schedule_at(i, *f.at);
    } else if (f.mtbf) {
      // Armed now if the target is up; otherwise when it comes up (on_event).
      if (process_target(f)) {
        std::string why;
        const Pid p = resolve(f.target, why);
        if (p) {
          states_[i].target = p;
          arm(i);
        }
      } else if (node_target(f)) {
        if (target_up(f)) arm(i);
      } else {
        arm(i);
      }
    }
  }
}

void Injector::stop() {
  if (stopped_) return;
  stopped_ = true;
  sim_.buggify().end_chaos();  // buggify points are chaos too: false from the quiet phase on
  for (std::size_t i = 0; i < states_.size(); ++i) {
    disarm(i);
    end_window(i);
    if (faults_[i].kind == Kind::slow_start && faults_[i].target.by == Target::By::path) {
      sim_.delay_next_start(Atom(faults_[i].target.text), Duration::zero());
    }
  }
  for (std::uint64_t id : follow_ups_) sim_.cancel(id);
  follow_ups_.clear();
  sim_.emit(kQuietPhase, {{kInjected, static_cast<std::int64_t>(injected_)},
                          {kSkipped, static_cast<std::int64_t>(skipped_)}});
  sim_.heal_all();
  for (Atom n : sim_.nodes()) {
    if (!sim_.node_up(n)) sim_.restart_node(n);
  }
}

void Injector::schedule_at(std::size_t i, Time t) {
  const Fault& f = faults_[i];
  if (stopped_ || (f.until && t >= *f.until)) return;
  states_[i].pending = sim_.schedule(t, [this, i] { fire(i); });
}

void Injector::arm(std::size_t i) {
  State& s = states_[i];
  if (stopped_ || s.pending != 0) return;
  s.armed_up = true;
  // Exponential waiting times are memoryless: drawing afresh whenever the target comes up is
  // the same as a Poisson clock that only runs while it is up. Its clock starts at `after`.
  const Time from = std::max(sim_.now(), faults_[i].after.value_or(Time{}));
  schedule_at(i, from + s.rng.exponential(*faults_[i].mtbf));
}

void Injector::disarm(std::size_t i) {
  State& s = states_[i];
  s.armed_up = false;
  if (s.pending != 0) {
    sim_.cancel(s.pending);
    s.pending = 0;
  }
}

void Injector::fire(std::size_t i) {
  State& s = states_[i];
  s.pending = 0;
  if (stopped_) return;
  // Knobs drawn per injection: this one's own values, from the fault's stream.
  for (const KnobRange& r : faults_[i].each) (void)draw_knob(s.rng, r, faults_[i]);
  const Fault& f = faults_[i];
  const bool done = inject(i);
  if (f.at && f.every) {
    schedule_at(i, sim_.now() + *f.every);
  } else if (f.mtbf) {
    // The next failure: at once if the target is still up (it did not go down), else when it
    // comes up. Window faults re-arm when their window ends.
    const bool process_window = f.kind == Kind::suspend || f.kind == Kind::cut_connection;
    const bool window = f.duration > Duration::zero() &&
                        (f.kind == Kind::partition || f.kind == Kind::clog || f.kind == Kind::loss ||
                         f.kind == Kind::duplicate || f.kind == Kind::reorder || f.kind == Kind::pause || process_window);
    if (process_target(f)) {
      if (!done || (sim_.alive(s.target) && !window)) arm(i);
    } else if (node_target(f)) {
      if (target_up(f) && !window) arm(i);
    } else if (!window) {
      arm(i);
    }
  }
}

Pid Injector::resolve(const Target& t, std::string& why) const {
  switch (t.by) {
    case Target::By::path: {
      const Pid p = supervision::find_by_path(sim_, t.text);
      if (!p) why = "no process at " + t.text;
      return p;
    }
    case Target::By::name: {
      const Pid p = sim_.whereis(Atom(t.text));
      if (!p) why = "no process registered as " + t.text;
      return p;
    }
    default:
      why = "not a process target";
      return {};
  }
}

std::vector<std::pair<Atom, Atom>> Injector::paths(const Fault& f) const {
  const auto resolve_side = [this](const std::vector<Atom>& side) {
    std::vector<Atom> out;
    for (Atom a : side) {
      std::string why;
      const Atom n = node(a, why);
      if (!n.empty() && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    }
    return out;
  };
  const std::vector<Atom> a = resolve_side(f.side_a);
  std::vector<Atom> b = resolve_side(f.side_b);
  if (f.side_b.empty()) {
    for (Atom n : sim_.nodes()) {
      if (std::find(a.begin(), a.end(), n) == a.end()) b.push_back(n);
    }
  }
  std::vector<std::pair<Atom, Atom>> out;
  for (Atom x : a) {
    for (Atom y : b) {
      if (x == y) continue;
      out.emplace_back(x, y);
      if (!f.one_way) out.emplace_back(y, x);
    }
  }
  return out;
}

namespace {

/// The value a per-injection knob drew, as a trace field: a duration, or a ratio's text.
TraceField drawn_field(const Fault& f, const std::string& key) {
  TraceField x{Atom(key), std::int64_t{0}};
  if (key == "ratio") x.value = scenarios::format_ratio(f.ratio);
  else if (key == "duration") x.value = f.duration;
  else if (key == "delay") x.value = f.delay;
  else if (key == "grace") x.value = f.grace;
  else x.value = f.restart_after.value_or(Duration{});
  return x;
}

}  // namespace

void Injector::record(std::size_t i, std::vector<TraceField> extra) {
  std::vector<TraceField> fields{{kFault, Atom(states_[i].name)},
                                 {kKind, Atom(to_string(faults_[i].kind))},
                                 {kTarget, Atom(to_string(faults_[i].target))}};
  for (TraceField& x : extra) fields.push_back(std::move(x));
  // What this injection drew for its per-injection knobs (a field already there is that value).
  for (const KnobRange& r : faults_[i].each) {
    const Atom key(r.key);
    if (std::any_of(fields.begin(), fields.end(), [&](const TraceField& x) { return x.key == key; })) continue;
    fields.push_back(drawn_field(faults_[i], r.key));
  }
  ++injected_;
  ++states_[i].injected;
  sim_.emit(kFaultInjected, std::move(fields));
}

void Injector::skip(std::size_t i, const std::string& why) {
  ++skipped_;
  ++states_[i].skipped;
  sim_.emit(kFaultSkipped, {{kFault, Atom(states_[i].name)},
                            {kKind, Atom(to_string(faults_[i].kind))},
                            {kTarget, Atom(to_string(faults_[i].target))},
                            {kWhy, why}});
}

Pid Injector::aim(std::size_t i, Pid open) {
  if (open) {
    skip(i, "its previous window is still open");
    return {};
  }
  std::string why;
  const Pid p = resolve(faults_[i].target, why);
  if (!p) skip(i, why);
  return p;
}

bool Injector::inject_process(std::size_t i) {
  const Fault& f = faults_[i];
  const Pid p = aim(i, Pid{});
  if (!p) return false;
  states_[i].target = p;
  const Reason r = f.kind == Kind::kill ? Reason::kill() : f.reason;
  // Recorded first: a check reading the trace sees the cause before the exit it causes.
  record(i, {{kPid, p}, {kReason, Atom(lic::to_string(r))}});
  if (f.kind == Kind::crash) sim_.crash(p, r);
  else sim_.exit(p, r);
  return true;
}

bool Injector::inject_node(std::size_t i) {
  const Fault& f = faults_[i];
  if (f.target.by != Target::By::node) {
    skip(i, "needs a node target");
    return false;
  }
  std::string why;
  const Atom n = node(Atom(f.target.text), why);
  if (n.empty()) {
    skip(i, why);
    return false;
  }
  const bool up = sim_.node_up(n);
  if (f.kind == Kind::node_restart ? up : !up) {
    skip(i, f.target.text + (up ? " is up" : " is down"));
    return false;
  }
  record(i, {{kNode, n}});
  if (f.kind == Kind::node_crash) {
    sim_.crash_node(n);
    if (f.restart_after) later(sim_.now() + *f.restart_after, [this, n] { sim_.restart_node(n); });
  } else if (f.kind == Kind::node_restart) {
    sim_.restart_node(n);
  } else {
    sim_.pause_node(n, f.duration);
    if (f.mtbf) {
      later(sim_.now() + f.duration, [this, i] {
        if (target_up(faults_[i])) arm(i);
      });
    }
  }
  return true;
}

bool Injector::inject_window(std::size_t i) {
  const Fault& f = faults_[i];
  State& s = states_[i];
  if (!s.effects.empty() || !s.blocked.empty()) {
    skip(i, "its previous window is still open");
    return false;
  }
  const auto ps = paths(f);
  if (ps.empty()) {
    skip(i, "no path between the groups");
    return false;
  }
  record(i, {{kPaths, static_cast<std::int64_t>(ps.size())}});
  for (const auto& [a, b] : ps) {
    if (f.kind == Kind::partition) {
      if (!sim_.blocked(a, b)) {
        sim_.block(a, b);
        s.blocked.emplace_back(a, b);
      }
      continue;
    }
    LinkEffect e;
    e.from = a;
    e.to = b;
    if (f.kind == Kind::clog) e.clog = f.delay;
    if (f.kind == Kind::loss) e.loss = f.ratio;
    if (f.kind == Kind::duplicate) e.duplicate = f.ratio;
    if (f.kind == Kind::reorder) e.reorder = f.ratio;
    s.effects.push_back(sim_.add_link_effect(e));
  }
  if (f.duration > Duration::zero()) {
    later(sim_.now() + f.duration, [this, i] {
      end_window(i);
      if (faults_[i].mtbf) arm(i);
    });
  } else {
    // Open until healed: a partition's paths are the heal's business, not this fault's.
    s.blocked.clear();
  }
  return true;
}

bool Injector::inject_stop_task(std::size_t i) {
  const Fault& f = faults_[i];
  std::string why;
  const Atom n = node(Atom(f.target.text), why);
  if (n.empty() || !sim_.node_up(n)) {
    skip(i, n.empty() ? why : f.target.text + " is down");
    return false;
  }
  record(i, {{kNode, n}, {keys::kDelay, f.grace}});
  sim_.signal_node(n, kSigterm);
  // The SIGKILL belongs to the stop (a container's stop timeout), not to the chaos phase: the
  // quiet phase does not cancel it.
  Simulation& sim = sim_;
  sim_.schedule(sim_.now() + f.grace, [&sim, n] {
    if (sim.node_up(n)) sim.signal_node(n, kSigkill);
  });
  return true;
}

bool Injector::inject_degrade(std::size_t i) {
  const Fault& f = faults_[i];
  State& s = states_[i];
  const Pid p = aim(i, s.degraded);
  if (!p) return false;
  record(i, {{kPid, p}, {kMode, Atom(f.mode)}});
  sim_.send(p, kDegrade, Degrade{Atom(f.mode), true});
  s.degraded = p;
  if (f.duration > Duration::zero()) {
    later(sim_.now() + f.duration, [this, i] {
      end_window(i);
      if (faults_[i].mtbf) arm(i);
    });
  }
  return true;
}

bool Injector::inject_suspend(std::size_t i) {
  const Fault& f = faults_[i];
  const Pid p = aim(i, Pid{});
  if (!p) return false;
  states_[i].target = p;
  // The OS process: the target and what runs under its path on its node, but not the processes
  // that model the OS's own part (a socket's TCP, Context::raw_network), which SIGSTOP leaves be.
  const ProcessInfo top = *sim_.info(p);
  const std::string under = std::string(top.label.name.text()) + "/";
  std::vector<Pid> stopped{p};
  for (const Pid q : sim_.processes()) {
    if (q == p) continue;
    const std::optional<ProcessInfo> qi = sim_.info(q);
    if (qi && qi->node == top.node && !qi->raw_network && qi->label.name.text().starts_with(under)) stopped.push_back(q);
  }
  record(i, {{kPid, p}, {kProcesses, static_cast<std::int64_t>(stopped.size())}, {kDuration, f.duration}});
  for (const Pid q : stopped) sim_.suspend_process(q, f.duration);
  if (f.mtbf) later(sim_.now() + f.duration, [this, i] { window_over(i); });
  return true;
}

bool Injector::inject_cut(std::size_t i) {
  const Fault& f = faults_[i];
  State& s = states_[i];
  const Pid p = aim(i, s.cut);
  if (!p) return false;
  s.target = p;
  if (!sim_.info(p)->raw_network) {
    // An Erlang process shares its node's one connection to each other node: cutting it alone
    // would lose messages inside a connection, which TCP never does.
    skip(i, to_string(f.target) + " does not model its own connection (Context::raw_network): cut its node with a partition");
    return false;
  }
  record(i, {{kPid, p}});
  sim_.cut_process(p);
  s.cut = p;
  if (f.duration > Duration::zero()) {
    later(sim_.now() + f.duration, [this, i] {
      end_window(i);
      window_over(i);
    });
  }
  return true;
}

void Injector::window_over(std::size_t i) {
  if (faults_[i].mtbf && sim_.alive(states_[i].target)) arm(i);
}

bool Injector::inject(std::size_t i) {
  const Fault& f = faults_[i];
  switch (f.kind) {
    case Kind::crash:
    case Kind::kill:
    case Kind::exit:
      return inject_process(i);
    case Kind::node_crash:
    case Kind::node_restart:
    case Kind::pause:
      return inject_node(i);
    case Kind::heal:
      record(i, {});
      sim_.heal_all();
      for (std::size_t j = 0; j < states_.size(); ++j) {
        if (states_[j].cut) end_window(j);  // a cut connection heals too
      }
      return true;
    case Kind::partition:
    case Kind::clog:
    case Kind::loss:
    case Kind::duplicate:
    case Kind::reorder:
      return inject_window(i);
    case Kind::stop_task:
      return inject_stop_task(i);
    case Kind::degrade:
      return inject_degrade(i);
    case Kind::suspend:
      return inject_suspend(i);
    case Kind::cut_connection:
      return inject_cut(i);
    case Kind::clock: {
      std::string why;
      const Atom n = node(Atom(f.target.text), why);
      if (n.empty()) {
        skip(i, why);
        return false;
      }
      const Duration skew = f.skew.value_or(sim_.clock_skew(n));
      const std::int64_t drift = f.drift_ppm.value_or(sim_.clock_drift_ppm(n));
      record(i, {{kNode, n}});
      sim_.set_clock(n, skew, drift);
      return true;
    }
    case Kind::slow_start:
      if (f.target.by != Target::By::path) {
        skip(i, "needs a tree path");
        return false;
      }
      record(i, {{keys::kDelay, f.delay}});
      sim_.delay_next_start(Atom(f.target.text), f.delay);
      return true;
  }
  return false;
}

void Injector::end_window(std::size_t i) {
  State& s = states_[i];
  if (s.degraded) {
    sim_.send(s.degraded, kDegrade, Degrade{Atom(faults_[i].mode), false});
    s.degraded = Pid{};
  }
  for (std::uint64_t id : s.effects) sim_.remove_link_effect(id);
  s.effects.clear();
  for (const auto& [a, b] : s.blocked) sim_.unblock(a, b);
  s.blocked.clear();
  if (s.cut) {
    sim_.heal_process(s.cut);
    s.cut = Pid{};
  }
}

std::vector<Injector::Tally> Injector::tallies() const {
  std::vector<Tally> out;
  for (std::size_t i = 0; i < states_.size(); ++i)
    out.push_back({states_[i].name, std::string(to_string(faults_[i].kind)), states_[i].injected, states_[i].skipped});
  return out;
}

Pid Injector::came_up(const TraceEvent& e, const std::string& path) const {
  // An OTP child is up once its supervisor reports it started (its init done).
  if (e.kind == EventKind::system && e.name == kChildStarted) {
    const Pid* p = e.field<Pid>(kPid);
    const auto info = p != nullptr ? sim_.info(*p) : std::nullopt;
    return info && info->label.name.text() == path ? *p : Pid{};
  }
  // A lifecycle service once its supervisor says it runs.
  if (e.kind == EventKind::system && e.name == supervision::events::kServiceState && e.text(keys::kTo) == "running" &&
      std::string(e.label.name.text()) + "/" + e.text(keys::kId) == path) {
    return supervision::find_by_path(sim_, path);
  }
  // A root (no supervisor reports it) when it is spawned again: its node came back.
  if (e.kind == EventKind::spawn && e.label.name.text() == path && path.find('/', 1) == std::string::npos) return e.pid;
  return Pid{};
}

void Injector::on_event(const TraceEvent& e) {
  if (!started_ || stopped_) return;
  for (std::size_t i = 0; i < faults_.size(); ++i) {
    const Fault& f = faults_[i];
    if (!f.mtbf) continue;
    State& s = states_[i];
    if (process_target(f)) {
      if (e.kind == EventKind::exit && s.armed_up && e.pid == s.target) {
        disarm(i);
      } else if (f.target.by == Target::By::path) {
        // A suspend or a cut follows any process labelled with the path from its spawn: a
        // worker's own processes (its connections) are reported by no supervisor.
        const bool spawned = (f.kind == Kind::suspend || f.kind == Kind::cut_connection) && e.kind == EventKind::spawn &&
                             e.label.name.text() == f.target.text;
        if (const Pid p = spawned ? e.pid : came_up(e, f.target.text)) {
          s.target = p;
          arm(i);
        }
      } else if (f.target.by == Target::By::name && e.kind == EventKind::register_name &&
                 e.tag.text() == f.target.text) {
        s.target = e.pid;
        arm(i);
      }
    } else if (node_target(f) && e.node.text() == f.target.text) {
      if (e.kind == EventKind::node_down) disarm(i);
      if (e.kind == EventKind::node_up) arm(i);
    }
  }
}

}  // namespace lic::faults
