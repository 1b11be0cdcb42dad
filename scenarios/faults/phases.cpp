#include "scenarios/faults/phases.hpp"

#include <algorithm>

#include "properties/convergence.hpp"
#include "supervision/events.hpp"
#include "supervision/supervisor.hpp"
#include "supervision/tree_path.hpp"

namespace lic::faults {

std::optional<Time> settled_after(const EventLog& log, Time chaos_end) {
  for (std::size_t k = log.size(); k-- > 0;) {
    const TraceEvent& e = log[k];
    if (e.time < chaos_end) break;
    if ((e.kind == EventKind::exit && !e.label.name.empty()) ||
        (e.kind == EventKind::system && e.name == supervision::events::kChildStarted)) {
      return e.time;
    }
  }
  return std::nullopt;
}

namespace {

/// A root gone on a node that is up is an escalation to the top (a node that is down is a fault,
/// and the quiet phase brings it back).
void judge(Simulation& sim, const Phases& phases, const PhaseDriver& d, PhaseOutcome& out) {
  for (const RootRef& r : d.roots) {
    if (sim.node_up(r.node) && !supervision::find_by_path(sim, r.path)) {
      out.escalated = true;
      out.not_running.push_back(r.path + " is gone (escalated to the top)");
    }
  }
  out.settled_at = settled_after(d.log != nullptr ? *d.log : sim.trace().events(), out.chaos_end);
  if (!out.escalated) out.not_running = properties::not_converged(supervision::snapshot(sim));
  out.converged = !out.escalated && out.not_running.empty();
  out.passed = phases.expect_escalation ? out.escalated : out.converged;
}

}  // namespace

PhaseOutcome run_phases(Simulation& sim, Injector& injector, const Phases& phases, const PhaseDriver& d) {
  const auto run_until = [&](Time t) {
    if (d.run_until) d.run_until(t);
    else sim.run_until(t);
  };
  PhaseOutcome out;
  injector.start();
  const Time limit = d.until.value_or(Time::max());
  out.chaos_end = sim.now() + phases.chaos;
  run_until(std::min(out.chaos_end, limit));
  out.quiet_ran = limit >= out.chaos_end;
  out.end = out.chaos_end;
  if (phases.quiet) {
    out.quiet_ran = false;
    if (limit > out.chaos_end) {
      injector.stop();
      out.end = out.chaos_end + *phases.quiet;
      run_until(std::min(out.end, limit));
      out.quiet_ran = limit >= out.end;
    }
  }
  judge(sim, phases, d, out);
  return out;
}

PhaseOutcome run_phases(Simulation& sim, Injector& injector, const Phases& phases, Pid root) {
  const auto info = sim.info(root);
  PhaseDriver d;
  if (info) d.roots.push_back(RootRef{std::string(info->label.name.text()), info->node});
  return run_phases(sim, injector, phases, d);
}

}  // namespace lic::faults
