#include "supervision/model_harness.hpp"

#include "sim/trace_keys.hpp"
#include "supervision/events.hpp"

#include <algorithm>
#include <memory>

namespace lic::supervision::model {
namespace {

Child child_of(const Node& n) {
  if (n.spec.type == ChildType::supervisor) {
    Child c = Supervisor::child(n.spec.id, build(n), n.spec.restart);
    c.spec = n.spec;
    return c;
  }
  WorkerConfig w;
  for (InitOutcome o : n.inits) {
    w.inits.push_back(o == InitOutcome::ok       ? InitResult::ok()
                      : o == InitOutcome::ignore ? InitResult::ignore()
                                                 : InitResult::stop(init_failure()));
  }
  w.stop = n.stop;
  w.stop_delay = n.stop_delay;
  return stock_child(n.spec, std::move(w));
}


}  // namespace

SupervisorSpec build(const Node& supervisor) {
  SupervisorSpec spec;
  spec.flags = supervisor.flags;
  for (const Node& c : supervisor.children) spec.children.push_back(child_of(c));
  return spec;
}

std::vector<Event> events_of(const EventLog& log, std::size_t from) {
  using events::kShutdownError;
  const Atom kMax = events::kReachedMax;
  const Atom kAuto = events::kAutoShutdown;
  std::vector<Event> out;
  for (std::size_t i = from; i < log.size(); ++i) {
    const TraceEvent& e = log[i];
    if (e.label.name.empty()) continue;
    const std::string path(e.label.name.text());
    if (e.kind == lic::EventKind::spawn) {
      out.push_back({e.time, Happened::spawn, path, e.label.instance, {}});
    } else if (e.kind == lic::EventKind::exit) {
      out.push_back({e.time, Happened::exit, path, e.label.instance, to_string(e.reason)});
    } else if (e.kind == lic::EventKind::system && e.name == kMax) {
      out.push_back({e.time, Happened::max_intensity, path, e.label.instance, {}});
    } else if (e.kind == lic::EventKind::system && e.name == kAuto) {
      out.push_back({e.time, Happened::auto_shutdown, path, e.label.instance, {}});
    } else if (e.kind == lic::EventKind::system && e.name == kShutdownError) {
      out.push_back({e.time, Happened::shutdown_error, path + "/" + e.text(keys::kId), 0,
                     e.text(keys::kReason)});
    }
  }
  return out;
}

std::vector<Event> observe(Simulation& sim, const Node& root, const std::vector<Injection>& injections,
                           std::vector<Time>* at) {
  std::vector<Event> out;
  std::size_t seen = 0;
  auto drain = [&] {
    sim.run();
    std::vector<Event> more = events_of(sim.trace(), seen);
    seen = sim.trace().events().size();
    out.insert(out.end(), more.begin(), more.end());
  };
  SpawnOptions o;
  o.label = Label{Atom("/" + root.spec.id), 1};
  sim.spawn(std::make_unique<Supervisor>(build(root)), o);
  drain();
  for (const Injection& inj : injections) {
    // The tree went quiet when the run stopped: at its last event, or when the last
    // acknowledgement or DOWN from another node arrived.
    sim.run_until(inj.at ? std::max(*inj.at, sim.now()) : sim.now() + inj.after);
    if (at != nullptr) at->push_back(sim.now());
    if (inj.fault != Fault::process) {
      if (inj.fault == Fault::crash_node) {
        sim.crash_node(inj.node);
      } else {
        sim.restart_node(inj.node);
      }
      drain();
      continue;
    }
    const Pid target = find_by_path(sim, inj.path);
    if (!target) {
      out.push_back({sim.now(), Happened::skipped, inj.path, 0, {}});
      continue;
    }
    if (inj.reason.kind == ReasonKind::kill) {
      sim.exit(target, Reason::kill());
    } else {
      sim.crash(target, inj.reason);  // as a scenario's crash step does
    }
    drain();
  }
  return out;
}

std::string first_difference(const std::vector<Event>& expected, const std::vector<Event>& got) {
  const std::size_t n = std::min(expected.size(), got.size());
  std::size_t i = 0;
  while (i < n && expected[i] == got[i]) ++i;
  if (i == n && expected.size() == got.size()) return {};
  std::string s = "first difference at event " + std::to_string(i) + "\n";
  const std::size_t from = i >= 3 ? i - 3 : 0;
  for (std::size_t k = from; k < i; ++k) s += "  same:     " + to_string(expected[k]) + "\n";
  s += "  model:    " + (i < expected.size() ? to_string(expected[i]) : std::string("(nothing)")) + "\n";
  s += "  simulator: " + (i < got.size() ? to_string(got[i]) : std::string("(nothing)")) + "\n";
  return s;
}

}  // namespace lic::supervision::model
