#pragma once
// The phases of a chaos run (DESIGN.md §4, docs/faults.md): a chaos phase with the faults on
// (safety is checked all along), then an optional quiet phase with the faults off and the
// network healed, after which the tree must have converged: every permanent child running and no
// restart pending, unless the run expects escalation to the top. This is the one implementation:
// the runner drives every scenario file through it, and the injector's tests drive it directly.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "scenarios/faults/fault.hpp"
#include "scenarios/faults/injector.hpp"
#include "sim/simulation.hpp"

namespace lic::faults {

/// What the phases of a run came to.
struct PhaseOutcome {
  Time chaos_end;
  Time end;
  bool quiet_ran = false;  ///< the run went on to the end of its phases (not cut short by `until`)
  bool escalated = false;  ///< a root is gone (on a node that is up)
  bool converged = false;  ///< at the end: every permanent child running, no restart pending
  /// The last instant the tree changed (a start, an exit under the root) after the chaos phase:
  /// how long convergence took. Empty when nothing changed.
  std::optional<Time> settled_at;
  std::vector<std::string> not_running;  ///< what kept it from converging
  /// converged, or escalated when the run expects escalation.
  bool passed = false;
};

/// A root tree by its path ("/root") and its node.
struct RootRef {
  std::string path;
  Atom node;
};

/// How run_phases drives the world.
struct PhaseDriver {
  std::vector<RootRef> roots;
  /// Runs the simulation up to `t` (a runner takes its script steps on the way); empty:
  /// Simulation::run_until.
  std::function<void(Time)> run_until{};
  /// Stops the run at this instant: the phases are cut short and `quiet_ran` is false.
  std::optional<Time> until{};
  /// The events settled_after reads; null: the simulation's kept trace (a streamed run keeps
  /// its own, scenarios/run/stream.hpp).
  const EventLog* log = nullptr;
};

/// When the tree last changed (a start, or an exit of a labelled process) at or after
/// `chaos_end`; nothing when it did not.
std::optional<Time> settled_after(const EventLog& log, Time chaos_end);

/// Starts the injector (when not yet started), runs the chaos phase from now, stops the
/// injector, runs the quiet phase, and judges convergence of the roots' trees.
PhaseOutcome run_phases(Simulation& sim, Injector& injector, const Phases& phases, const PhaseDriver& driver);

/// The same for one root process (its label is its path).
PhaseOutcome run_phases(Simulation& sim, Injector& injector, const Phases& phases, Pid root);

}  // namespace lic::faults
