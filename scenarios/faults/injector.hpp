#pragma once
// The fault injector: schedules a fault set into a Simulation and runs the phases of a chaos
// run (docs/faults.md). It watches the trace (as a TraceSink) to know when a stochastic fault's
// target is up, so its Poisson clock runs only then.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "scenarios/faults/fault.hpp"
#include "sim/simulation.hpp"

namespace lic::faults {

/// The Simulation must outlive its Injector. Destroying the injector cancels everything it
/// scheduled. Throws std::invalid_argument for a fault set it cannot run (a zero mtbf or period;
/// see the constructor).
class Injector final : public TraceSink {
 public:
  Injector(Simulation& sim, std::vector<Fault> faults);
  ~Injector() override;
  Injector(const Injector&) = delete;
  Injector& operator=(const Injector&) = delete;

  /// Schedules every fault. Call it before the tree starts, so stochastic faults see their
  /// targets come up (a target already up is armed at once). Stochastic faults follow their
  /// targets through the trace: throws std::logic_error if there are some and tracing is off.
  void start();
  /// The quiet phase begins: nothing fires any more, every window ends, every path heals,
  /// every crashed node restarts (booting its tree) and slow starts not yet used are dropped.
  /// A pause in progress runs to its end. Traced as `quiet_phase`.
  void stop();

  std::size_t injected() const { return injected_; }
  /// Per fault, in file order: its name, how often it acted and how often it was skipped.
  struct Tally {
    std::string name;
    std::string kind;
    std::size_t injected = 0;
    std::size_t skipped = 0;
  };
  std::vector<Tally> tallies() const;
  std::size_t skipped() const { return skipped_; }
  const std::vector<Fault>& faults() const { return faults_; }

  void on_event(const TraceEvent& e) override;

 private:
  struct State {
    std::string name;
    Rng rng;
    std::uint64_t pending = 0;  // scheduled callback id, 0: none
    bool armed_up = false;      // the target is up (stochastic faults)
    Pid target;                 // the incarnation whose uptime is being counted
    std::vector<std::uint64_t> effects;  // link effects of an open window
    std::vector<std::pair<Atom, Atom>> blocked;  // paths a partition with a duration blocked
    Pid degraded;                // a degrade window open on this process
    Pid cut;                     // a cut_connection window open on this process
    std::size_t injected = 0, skipped = 0;
  };

  void arm(std::size_t i);
  void disarm(std::size_t i);
  void schedule_at(std::size_t i, Time t);
  void fire(std::size_t i);
  bool inject(std::size_t i);
  bool inject_process(std::size_t i);  ///< crash, kill, exit
  bool inject_node(std::size_t i);     ///< node_crash, node_restart, pause
  bool inject_window(std::size_t i);   ///< partition and the network windows
  bool inject_stop_task(std::size_t i);
  bool inject_degrade(std::size_t i);
  bool inject_suspend(std::size_t i);  ///< the target and what runs under its path on its node
  bool inject_cut(std::size_t i);      ///< cut_connection
  /// A window on a process target (suspend, cut_connection) ended: a stochastic fault re-arms
  /// while its target lives (else when it comes up again).
  void window_over(std::size_t i);
  void skip(std::size_t i, const std::string& why);
  void record(std::size_t i, std::vector<TraceField> extra);
  Pid resolve(const Target& t, std::string& why) const;
  /// The process fault i aims at now, or none: the fault is then skipped, saying why (nothing
  /// there, or `open`: its previous window, on that process, is still open).
  Pid aim(std::size_t i, Pid open);
  std::vector<std::pair<Atom, Atom>> paths(const Fault& f) const;
  bool process_target(const Fault& f) const;
  bool node_target(const Fault& f) const;
  /// The node a fault names: itself, or for node_of(NAME) where NAME runs now (empty, and why,
  /// when nothing is registered as NAME).
  Atom node(Atom written, std::string& why) const;
  /// Whether a node target is up (a node_of target always counts as up: it moves).
  bool target_up(const Fault& f) const;
  /// The process at `path` when `e` says it came up (an OTP child started, a lifecycle service
  /// running, a root spawned again); none otherwise.
  Pid came_up(const TraceEvent& e, const std::string& path) const;
  void end_window(std::size_t i);
  /// sim.schedule for the injector's own follow-ups (window ends, node restarts), remembered
  /// so that stop() and the destructor cancel them.
  void later(Time t, std::function<void()> fn);

  Simulation& sim_;
  std::vector<Fault> faults_;
  std::vector<State> states_;
  bool started_ = false;
  bool stopped_ = false;
  std::vector<std::uint64_t> follow_ups_;
  std::size_t injected_ = 0;
  std::size_t skipped_ = 0;
};

}  // namespace lic::faults
