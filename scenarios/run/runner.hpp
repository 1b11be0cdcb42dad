#pragma once
// Runs a scenario: builds the Simulation (nodes, network, root trees, script, faults), runs the
// chaos and quiet phases, then the checks. The CLI's run, sweep, diagram and replay, and the
// catalogue tests, all come through here.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scenarios/checks/table.hpp"
#include "scenarios/faults/injector.hpp"
#include "scenarios/faults/phases.hpp"
#include "scenarios/registry.hpp"
#include "scenarios/scenario.hpp"
#include "sim/simulation.hpp"
#include "supervision/lifecycle.hpp"
#include "supervision/supervisor.hpp"

namespace lic::scenarios {

class RunStream;  // run/stream.hpp

/// What a run may use before it is stopped with sim's BudgetExceeded (docs/robustness.md). 0: no
/// limit. A count left at kScaled takes its default from the file (scaled_to()): 2,000,000
/// kernel events plus 100 for each process the file declares, and 1,000,000 at one virtual
/// instant plus 20 a process. The catalogue's largest file takes 50,000 events and a 10,000-child
/// tree boots in 40,000 at t=0, so the defaults change no ordinary run; a hostile file (a fault
/// `every: 1ns`, a fault aliased 5,000 times, a ten-year run) stops within seconds. A longer run
/// passes its own --max-events (the 24-hour pipeline benchmark takes 15.5 M events).
struct Budgets {
  static constexpr std::uint64_t kScaled = ~std::uint64_t{0};
  static constexpr std::uint64_t kEventsBase = 2'000'000;
  static constexpr std::uint64_t kEventsPerProcess = 100;
  static constexpr std::uint64_t kInstantBase = 1'000'000;
  static constexpr std::uint64_t kInstantPerProcess = 20;

  std::uint64_t max_events = kScaled;                      ///< kernel events
  std::uint64_t max_memory_bytes = std::uint64_t{4} << 30;  ///< what the kept trace may take
  /// Kernel events at one virtual instant in a row: more is a livelock.
  std::uint64_t max_events_at_instant = kScaled;

  /// These budgets for a run of `s`: each kScaled count replaced by its default for the file.
  Budgets scaled_to(const Scenario& s) const;
};

/// The supervisors, workers and lifecycle services the file's trees declare (a dynamic child's
/// template once, a service once): what the scaled budgets grow with.
std::uint64_t declared_processes(const Scenario& s);

struct RunOptions {
  std::optional<std::uint64_t> seed{};      ///< overrides the file's seed
  std::optional<TieBreak> tie_break{};      ///< overrides the file's tie-break
  /// Stops the run at this virtual time (the chaos phase is cut short; the quiet phase and the
  /// convergence check are skipped when it is reached before them).
  std::optional<Time> until{};
  TraceMode trace = TraceMode::keep;
  std::vector<TraceSink*> sinks{};  ///< streamed every event (e.g. a JSON-lines writer)
  /// Not null: the run keeps no trace (TraceMode::hash, `trace` is not read); the checks and the
  /// reports read what this gathered as it went (run/stream.hpp; RunStream::can_stream first).
  RunStream* stream = nullptr;
  /// Where the file's behaviour and check names are looked up; null: Registry::builtin().
  const Registry* registry = nullptr;
  Budgets budgets{};
  /// A budget that stops the run ends it as a result (RunResult::stopped, no checks judged)
  /// instead of a BudgetExceeded thrown: `run --out` writes the reports so far.
  bool partial_on_budget = false;
  /// Note the random streams the run draws from (RunResult::sim->streams_used(); the shrinker
  /// asks which a failure needs).
  bool record_streams = false;
  /// Called as the event loop begins (true) and as it ends (false), even when a budget stops
  /// it: a caller's own clock can split a run's time into the loop and the rest around it
  /// (building the world, judging the checks). The run itself reads no clock. Empty: none.
  std::function<void(bool)> on_loop{};
};

/// One supervisor's final state, for `final` in the JSON summary.
struct FinalState {
  std::vector<supervision::SupervisorSnapshot> supervisors;
  std::vector<supervision::LifecycleSnapshot> lifecycles;
  /// Start attempts per tree path over the whole run (spawns at that path), in path order.
  std::map<std::string, std::uint32_t> starts;
  /// Paths with a live process at the end, sorted.
  std::vector<std::string> alive;
};

struct RunResult {
  std::unique_ptr<Simulation> sim;  ///< the finished simulation (its trace, its processes)
  RunStream* stream = nullptr;      ///< RunOptions::stream: what the run gathered instead of a kept trace
  /// The events the checks and reports read: the kept trace, or the stream's small log.
  const EventLog& kept_events() const;
  std::uint64_t seed = 0;
  TieBreak tie_break = TieBreak::fifo;
  Time end{};
  std::uint64_t events = 0;      ///< trace events
  std::uint64_t trace_hash = 0;
  faults::PhaseOutcome phases{};
  std::size_t faults_injected = 0;
  std::size_t faults_skipped = 0;
  std::vector<faults::Injector::Tally> faults;  ///< per fault of the file, in file order
  /// Each buggify point the run asked, with how often it was asked and fired (sim/buggify.hpp).
  std::map<std::string, Buggify::Count> buggify;
  std::vector<CheckResult> checks;
  reports::Metrics metrics;      ///< what the registry's metrics measured
  FinalState final_state;
  bool passed = false;           ///< every check holds
  /// Not empty: a budget stopped the run (the message says which, when and where); the checks
  /// were not judged and `passed` is false. Only with RunOptions::partial_on_budget.
  std::string stopped;
};

/// Runs `s`. The scenario must have passed validation (file/read.hpp's parse does it).
RunResult run(const Scenario& s, const RunOptions& opts = {});

/// The hex form of a trace hash, as the CLI prints it (16 digits).
std::string hash_hex(std::uint64_t h);

}  // namespace lic::scenarios
