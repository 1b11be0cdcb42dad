#pragma once
// The checks a scenario file can ask for (`checks:`), each once: its name, its arguments, its
// help, and its judge, a pure function of the finished run: the trace, the phases and the final
// state (DESIGN.md §5). The CLI, the catalogue tests, the sweeps and a user's own tests all judge
// a run with these. The built-in checks are listed by builtin_checks and added to a Registry
// (scenarios/registry.hpp) through the same Registry::add a user's own code calls
// (docs/library.md); run/judge.hpp judges a run's checks.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "properties/conservation.hpp"
#include "reports/run_report.hpp"
#include "scenarios/args.hpp"
#include "scenarios/faults/phases.hpp"
#include "scenarios/scenario.hpp"
#include "sim/trace.hpp"

namespace lic::properties {
struct Model;  // properties/linearizability.hpp: a history's sequential specification
}  // namespace lic::properties

namespace lic::scenarios {

/// What a check reads: the finished run.
struct CheckInput {
  /// The whole trace; in a streamed run (run/stream.hpp) only the events the streamed-safe
  /// checks read: no send, deliver or line protocol event, except the first of an instant that
  /// holds a kept event and the run's last event, those two without their fields.
  const EventLog* events = nullptr;
  /// The line protocol read while the run went (a streamed run); null: read it off `events`.
  const properties::Conservation* conservation = nullptr;
  Time end{};                                ///< when the run stopped
  faults::PhaseOutcome phases{};
  bool quiet_ran = false;                    ///< the quiet phase ran to its end
  std::vector<std::string> roots;            ///< the root trees' paths ("/root")
  std::vector<std::string> alive;            ///< paths alive at the end, sorted
  std::map<std::string, std::uint32_t> starts;  ///< start attempts per path
  const Scenario* scenario = nullptr;        ///< what ran
};

using reports::Witness;

/// A judge's answer.
struct Verdict {
  bool passed = false;
  std::string detail;  ///< what was measured or what went wrong, one line
  /// The event that decided it, when the judge can name one; none: run_checks gives the run's
  /// end (the verdict was about the whole run).
  std::optional<Witness> witness{};
  /// A failure's kind: a word of the check's own small, stable vocabulary (conservation:
  /// duplicated, lost_over_bound, ...; docs/shrinking.md lists them). Empty: the check's name.
  /// Two failures are the same bug when the check, the kind and the roles match: the detail's
  /// words and numbers never count.
  std::string kind{};
  /// The roles of the witness's processes that make the failure this one: the path that crashed,
  /// the supervisor that gave up, the node that wrote. Empty: none.
  std::vector<std::string> roles{};
  /// The signed distance to failing, as a share of the check's bound: above 0 the check holds
  /// with that much room, at 0 it is at the edge, below 0 it failed by that much. None: the
  /// check measures no distance (a guided search is then steered by coverage alone).
  std::optional<double> margin{};
  /// False: the run gave the check nothing to judge (no task was sent SIGTERM for `drained`,
  /// nothing was emitted or accepted for `conservation`). Such a verdict holds (`passed`), says
  /// "not judged: ..." in its detail, and counts as not judged in a sweep's coverage: a scenario
  /// whose stop is random would otherwise fail a correct system for want of a stop (issue 34).
  bool judged = true;
};

/// A witness at trace event `e` (its time and index), about `processes`.
Witness witness_at(const TraceEvent& e, std::vector<std::string> processes, std::string why);
/// The first event at or after `t`: where something that happened at `t` shows in the trace.
std::optional<TraceEvent> first_at(const EventLog& log, Time t);

/// Judges one finished run.
using CheckJudge = std::function<Verdict(const CheckInput&)>;

/// A check a file can name.
struct CheckInfo {
  std::string name;
  std::string help;  ///< one line for `validate --list` and the docs
  /// Its arguments. A file may give the first one alone: `{alive: /root/db}` is
  /// `{alive: {of: /root/db}}`.
  std::vector<ArgInfo> args;
  /// Reads the arguments (every mistake goes to Args) and returns the judge. Called when a
  /// file is validated (the judge is dropped) and again when it runs.
  std::function<CheckJudge(Args&)> build;
  /// Behaviours the check judges the work of: a file naming the check must run each of them
  /// somewhere (a tree's child or service, or a start_child step), or `validate` says so at the
  /// check. Empty: any file.
  std::vector<std::string> needs{};
};

/// One judged check.
struct CheckResult {
  std::string name;    ///< as a report titles it: "converges", "availability(/root/input)"
  bool passed = false;
  std::string detail;
  std::optional<Witness> witness{};  ///< always set by run_checks
  std::string kind{};                ///< a failure's kind (Verdict::kind; the check's name when it gives none); empty when it holds
  std::vector<std::string> roles{};  ///< Verdict::roles
  std::optional<double> margin{};    ///< Verdict::margin
  bool judged = true;                ///< Verdict::judged: false when the run gave it nothing to judge (it holds)
};

/// What makes two failures the same bug: the check (its title, arguments' paths included), the
/// failure's kind and its roles. Numbers, times and words never count.
struct FailureId {
  std::string check;
  std::string kind;
  std::vector<std::string> roles;
  bool operator==(const FailureId&) const = default;
};

/// A failed check's identity.
FailureId failure_id(const CheckResult& r);
/// "no_escalation: escalated [/root]".
std::string to_string(const FailureId& id);

/// Per supervisor of the file's trees (by path): the most restarts its window held at once, over
/// its intensity (above 1: it gave up). The metric intensity_peak(PATH) (checks/tree_checks.cpp).
std::map<std::string, double> intensity_peaks(const CheckInput& in);

/// converges, no_escalation, escalates, availability, alive, conservation, restarts, model.
std::vector<CheckInfo> builtin_checks();

/// A measurement of a finished run, reported whatever the checks say (`metrics` in
/// `run --format json`, summary.json and each results line; `sweep` gives their distributions).
/// Every registered metric runs on every run and adds a value only when it applies.
struct MetricInfo {
  std::string name;  ///< what it adds (a family of names, for one keyed by path)
  std::string help;
  std::function<void(const CheckInput&, reports::Metrics&)> measure;
};

/// Leader election (seed 001): leader_safety, single_leader, failover, leader_at_end,
/// leader_availability (scenarios/checks/leader.cpp).
std::vector<CheckInfo> leader_checks();
/// failover_s and the leader-availability figures.
std::vector<MetricInfo> leader_metrics();

/// Operation histories: linearizable (checks/history.cpp).
std::vector<CheckInfo> history_checks();
/// The `linearizable` check's judge, for a model of one's own (a properties::Model: a name, an
/// initial state, a pure step function): the operations the behaviours recorded in the run
/// (with `keys`: those on these keys alone) against `model`, judged as the built-in check judges
/// them. The detail counts what was checked; a failure's kind is not_linearizable (its witness at
/// the operation that fits nowhere, the ones its detail names marked), undecided (past
/// `max_steps`: never a pass) or malformed_history; no operation at all is not judged.
Verdict judge_linearizable(const CheckInput& in, const properties::Model& model, std::uint64_t max_steps = 10'000'000,
                           const std::vector<std::string>& keys = {});

/// The trees' own: clean_shutdown, never_gives_up, intensity_headroom (checks/tree_checks.cpp).
std::vector<CheckInfo> tree_checks();
/// intensity_peak(PATH) per supervisor and attempts_peak(PATH) per lifecycle service.
std::vector<MetricInfo> tree_metrics();
/// `alive` for a lifecycle service: Running at the end; otherwise what it is waiting for.
Verdict service_alive(const CheckInput& in, const std::string& path);

/// drain_s and killed (a task stopped with SIGTERM), mailbox_drops (bounded mailboxes).
std::vector<MetricInfo> builtin_metrics();

/// The checks a scenario runs: its own, or when it names none, `no_escalation` (`escalates`
/// when it expects escalation) and, with a quiet phase, `converges`.
std::vector<CheckDecl> effective_checks(const Scenario& s);

}  // namespace lic::scenarios
