#pragma once
// Shrinking a failure (issue 15, docs/shrinking.md): a scenario and a seed on which a check fails
// in; out, a smaller scenario on which the same check still fails the same way (at that seed, or
// at the one a value pass moved it to: ShrinkResult::scenario says which), to be written
// as an ordinary file (file/write.hpp) that a person can read, run and keep. `letitcrash shrink`
// calls it; so can a user's own code, or a sweep for its failing seeds.
//
// Every candidate is validated (file/validate.hpp), must read back from its YAML as itself (so
// the written file is the scenario that was judged), and is judged by running it at its own seed
// (the one given, or seed 1 where the search moved: docs/shrinking.md, "Seeds") and the fixed
// tie-break. The library never reads a clock: a caller with a wall-time budget passes
// `stop`. The run budget (`max_runs`) bounds the whole search, so it always ends.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/checks/table.hpp"
#include "scenarios/registry.hpp"
#include "scenarios/run/runner.hpp"
#include "scenarios/scenario.hpp"

namespace lic::scenarios {

/// How big a scenario and its run are: what shrinking makes smaller.
struct ShrinkSize {
  std::size_t faults = 0;
  std::size_t steps = 0;      ///< script steps
  std::size_t processes = 0;  ///< what the trees declare: supervisors (roots too), workers, lifecycle services
  std::size_t nodes = 0;      ///< declared nodes
  std::size_t checks = 0;     ///< the checks the run judges (the defaults when the file names none)
  Duration virtual_time{};    ///< how long the run ran
  std::uint64_t events = 0;   ///< trace events
};

/// What the shrinker reports after each run.
struct ShrinkProgress {
  std::size_t runs = 0;      ///< candidate runs so far
  std::size_t max_runs = 0;
  std::string_view pass;     ///< what it is trying now: "faults and steps", "children", ...
  std::size_t kept = 0;      ///< candidates that still failed and were kept
  ShrinkSize current;        ///< the smallest failing scenario so far
};

struct ShrinkOptions {
  std::optional<std::uint64_t> seed{};   ///< default: the scenario's
  std::optional<TieBreak> tie_break{};   ///< default: the scenario's
  const Registry* registry = nullptr;    ///< null: Registry::builtin()
  Budgets budgets{};                     ///< each run's (run/runner.hpp)
  /// Candidate runs at most (the first run, which judges the scenario as given, is not one).
  std::size_t max_runs = 500;
  /// Asked before every candidate run; true ends the search with what it has (the CLI's
  /// --max-seconds). Empty: never.
  std::function<bool()> stop{};
  /// Called after every run.
  std::function<void(const ShrinkProgress&)> progress{};
  /// Keep a candidate whenever the check fails, whatever its failure's identity. Off by default:
  /// a check shrunk that way slips to the emptiest failure it has ("nothing to conserve" once
  /// every process is gone).
  bool any_failure = false;
  /// Let the search move to seed 1 where the failure holds there too (docs/shrinking.md,
  /// "Seeds"): shrinks of one bug from different seeds then meet on one file. False: every
  /// candidate runs at the seed given, and the shrunk file has it (`shrink --keep-seed`).
  bool move_seed = true;
  /// The check to keep (it must fail at the seed): what a guided search found failing. None: the
  /// first failing check, preferring one the file's `expect: {fail: [...]}` names.
  std::optional<CheckDecl> target{};
};

struct ShrinkResult {
  /// The scenario fails at the seed. False: it passes, nothing was shrunk, and the rest is empty.
  bool failed = false;
  /// The seed judged first. The shrunk scenario's own (`scenario.seed`) may differ: a candidate
  /// of a pass that moves a value, not failing at the current seed, is tried at seed 1 (or 2) too
  /// (docs/shrinking.md, "Seeds").
  std::uint64_t seed = 0;
  TieBreak tie_break = TieBreak::fifo;
  /// The shrunk scenario, self-contained: its `seed` and `tie_break` are those judged, its checks
  /// the kept one alone, and `expect: {fail: [...]}` names it.
  Scenario scenario;
  CheckDecl check;       ///< the check kept: the first that failed (one `expect: fail` names, if any)
  CheckResult original;  ///< its verdict in the first run
  CheckResult failure;   ///< its verdict on the shrunk scenario
  ShrinkSize before;
  ShrinkSize after;
  std::size_t runs = 0;     ///< candidate runs (at most max_runs); the first run is not counted
  std::size_t reused = 0;   ///< candidates tried before, answered without a run
  std::size_t invalid = 0;  ///< candidates that did not validate or read back: never run
  bool exhausted = false;   ///< max_runs ran out before nothing more could be removed
  bool stopped = false;     ///< `stop` ended it
  /// Candidates of the guarded passes (arguments, quiet phase) that failed the same way but that
  /// the file's declared fix did not make pass: another bug of the same kind, not kept.
  std::size_t unsaved = 0;
  std::vector<std::string> removed;  ///< what was taken out, one line each: "fault gc_c1 (pause c1, mtbf 10m)"
  std::vector<std::string> changed;  ///< what was moved: "chaos phase: 20m -> 1m"
};

/// Shrinks `s` (which must have passed validation) while the same check fails the same way.
///
/// "The same failure": the first check of the scenario that fails at the seed (preferring one its
/// `expect: {fail: [...]}` names, or `target`), by name and arguments, failing with the same
/// identity (checks/table.hpp's FailureId: the check, the failure's kind and its roles; the
/// detail's words and numbers never count; any_failure drops the kind and roles too).
/// A candidate is kept when that holds and its trace is no longer than the original's (or than
/// the original's run at seed 1, up to a quarter longer, when the search moved there before
/// anything was removed; at another seed than the current one, no longer than the current). Each
/// candidate runs under `budgets`, its event counts held to ten times the original run's: a
/// variant that loops is stopped early, and counts as not failing the same way.
///
/// In order: the other checks go; delta debugging (ddmin) over the faults and steps together;
/// then greedy passes until none removes or moves anything, or two rounds in a row kept only
/// small moves (nothing removed, the run under 1 % shorter): the scenario at seed 1 (where it
/// fails the same way there, the search goes on from there), each fault and step alone, children
/// and whole subtrees (and root trees), nodes and links, stochastic faults made scheduled at
/// when they acted, the chaos phase shortened (a binary search over round values), each fault's
/// cut narrowed, its times made earlier
/// and rounder, its windows shorter, its mtbf, ratio and clock skew rounder, each step earlier
/// and a stop_task's grace shorter, each number a behaviour is given smaller (counts, rates and
/// capacities toward 1, durations shorter and rounder, shares toward 0), and, when the file
/// declares its fix, the quiet phase gone or shorter. Those last two change what the system is,
/// and a repeating fault's shorter `every` crowds its crashes: a candidate of theirs is kept only
/// when its trace is no longer than the current one's and the declared fix still makes it pass
/// (each costs a second run). A candidate of a pass that moves a value that does not fail at the
/// current seed is tried once more at seed 1 (2 from seed 1), at most a fifth of `max_runs` and
/// until 16 such runs in a row kept nothing (`move_seed` false: never). What stays as written: a
/// behaviour's words (another `variant` of the coordinator is another system, with bugs of its
/// own), the supervisors' flags, the child specs.
ShrinkResult shrink(const Scenario& s, const ShrinkOptions& o = {});

/// Supervisors (roots too), workers and lifecycle services in the trees.
std::size_t count_processes(const Scenario& s);

}  // namespace lic::scenarios
