#pragma once
// Between scenario files and the reference model of OTP supervision (supervision/
// reference_model.hpp). A file whose tree and script lie inside what the model covers can be
// judged by the `model` check: the run's trace must equal the model's prediction event for
// event. And a case the property tests generate (a model tree and its timed faults) becomes an
// ordinary scenario file, so a shrunk counterexample is something `letitcrash run` replays.
//
// What the model covers (and a file using the `model` check must keep to): one tree, on one
// node; OTP supervisors (one_for_one, one_for_all, rest_for_one; any intensity, period, window,
// auto_shutdown) whose child supervisors have shutdown infinity; workers `idle`, `trap_exit`
// (shutdown_delay) or `stall` with `init` results ok / ignore / error; a script of `crash` (any
// reason but kill) and `kill` steps on worker paths, each at an instant when the tree is quiet,
// and `which_children`; no faults; no trap_exit whose shutdown_delay equals its shutdown timeout.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scenarios/scenario.hpp"
#include "sim/trace.hpp"
#include "supervision/reference_model.hpp"

namespace lic::scenarios {

struct ModelCase {
  supervision::model::Node root;
  std::vector<supervision::model::Injection> injections;  ///< each with its absolute `at`
};

/// The model's view of `s`, or nullopt with every reason it is outside the model in `why_not`
/// (at the marks of the parts that are).
std::optional<ModelCase> to_model_case(const Scenario& s, std::vector<Diagnostic>& why_not);

/// A scenario file for a generated case: `root` started at 0, the process injections made at
/// the instants `at` (the harness reports them: supervision::model::observe), run until `end`
/// (its whole seconds plus two), judged by `checks` (default: `model`).
Scenario from_model_case(const supervision::model::Node& root,
                         const std::vector<supervision::model::Injection>& injections,
                         const std::vector<Time>& at, Time end, std::uint64_t seed, TieBreak tie,
                         std::string name, std::vector<CheckDecl> checks = {});

struct ModelComparison {
  bool equal = false;
  std::size_t compared = 0;  ///< events predicted (up to the run's end)
  std::string detail;        ///< one line: what matched, or the first difference
};

/// The `model` check: the run's events (of `events`, up to `end`) against the prediction for `s`.
ModelComparison compare_with_model(const Scenario& s, const EventLog& events, Time end);

}  // namespace lic::scenarios
