#pragma once
// A scenario: everything a run needs, as plain data (DESIGN.md §7, docs/scenario-format.md).
// The YAML reader (file/read.hpp) fills it in and the writer prints it back, so a generated
// or shrunk case is an ordinary file; the runner (runner.hpp) turns it into a Simulation.
//
// Every element remembers where it came from in its file (`Mark`), so that a mistake found
// after parsing (an unknown behaviour argument, a path that names nothing, a dependency cycle)
// is still reported as file:line:col. Marks are not part of a scenario's value: two scenarios
// that differ only in marks compare equal.

#include <cstdint>
#include <optional>
#include <string_view>
#include <string>
#include <utility>
#include <vector>

#include "scenarios/faults/fault.hpp"
#include "sim/event_queue.hpp"
#include "sim/network.hpp"
#include "supervision/backoff.hpp"
#include "supervision/child_spec.hpp"

namespace lic::scenarios {

/// A position in a scenario file, 1-based; line 0: not from a file (built in code).
struct Mark {
  int line = 0;
  int col = 0;
  /// Marks never make two values differ.
  bool operator==(const Mark&) const { return true; }
};

/// One problem in a scenario file.
struct Diagnostic {
  Mark mark;
  std::string message;
};

/// A behaviour argument: a scalar (its text, as written) or a list of scalars.
struct ArgValue {
  std::string scalar{};
  std::vector<std::string> list{};
  bool is_list = false;
  Mark mark{};
  bool operator==(const ArgValue&) const = default;
};

/// A behaviour from the catalogue (behaviours/table.hpp) by name, with its arguments in file order.
struct BehaviourRef {
  std::string name{};
  std::vector<std::pair<std::string, ArgValue>> args{};
  Mark mark{};
  bool operator==(const BehaviourRef&) const = default;
};

/// One service of a lifecycle supervisor: seed 003's lifecycle block (supervision::ServiceSpec
/// with a behaviour reference instead of a start function).
struct ServiceDecl {
  std::string name{};
  BehaviourRef behaviour{};
  bool auto_start = false;
  Duration start_timeout = kSecond * 10;
  Duration stop_timeout = kSecond * 10;
  Duration stable_threshold = kSecond * 5;
  std::vector<std::string> depends_on{};
  supervision::BackoffPolicy restart{};
  bool terminal_clean_exits = true;
  std::vector<Reason> terminal_reasons{};
  Mark mark{};
  bool operator==(const ServiceDecl& o) const;
};

/// A node of a supervision tree: a worker (a behaviour), an OTP supervisor (flags and
/// children; simple_one_for_one: exactly one child, the template), or a lifecycle supervisor
/// (services). `spec` is the child spec under its parent; a root uses its id (its path is
/// "/" + id) and its node.
struct TreeNode {
  enum class Kind : std::uint8_t { worker, supervisor, lifecycle };
  Kind kind = Kind::worker;
  supervision::ChildSpec spec{};
  BehaviourRef behaviour{};
  supervision::SupFlags flags{};
  /// A supervisor's own init result per start attempt, as written (`init` in its flags: ok,
  /// ignore, error, error:What, stop:Reason); empty: always ok.
  std::vector<std::string> init{};
  std::vector<TreeNode> children{};
  std::vector<ServiceDecl> services{};
  Mark mark{};
  bool operator==(const TreeNode& o) const;
};

/// A step of the timed script: an operator's action at a virtual time.
struct Step {
  enum class Op : std::uint8_t {
    crash,            ///< target ends with `reason` as if its code raised it
    kill,             ///< exit(target, kill)
    exit,             ///< an exit signal with `reason`
    stop,             ///< a supervisor (or any process) is stopped: exit signal `shutdown`
    start_child,      ///< supervisor target: start `child` (simple_one_for_one: with `arg`)
    terminate_child,  ///< supervisor target: terminate child `id`
    restart_child,
    delete_child,
    which_children,   ///< traced as a `which_children` event listing the children
    stop_task,        ///< the target is a node: SIGTERM now, SIGKILL after `grace` if it still runs
    count_children,   ///< traced as a `count_children` event with the supervisor's counts
  };
  Time at{};
  Op op = Op::crash;
  std::string target{};  ///< a tree path
  Reason reason = Reason::error(Atom("injected_crash"));
  std::string id{};                 ///< terminate/restart/delete_child
  std::optional<TreeNode> child{};  ///< start_child on a supervisor that is not dynamic
  std::string arg{};                ///< start_child on a simple_one_for_one supervisor
  Duration grace{};                 ///< stop_task
  Mark mark{};
  bool operator==(const Step&) const = default;
};

std::string_view to_string(Step::Op op);
/// The inverse of to_string; false for an unknown name.
bool parse_step_op(std::string_view text, Step::Op& out);

/// A check by name (checks/table.hpp), with its arguments in file order:
/// `{restarts: {of: /root/a, max: 3}}`.
struct CheckDecl {
  std::string name{};  ///< converges, no_escalation, escalates, availability, alive, ...
  std::vector<std::pair<std::string, ArgValue>> args{};
  Mark mark{};
  /// The same name and the same arguments, in any order.
  bool operator==(const CheckDecl& o) const;
  /// The argument `key` as given, or null.
  const ArgValue* arg(std::string_view key) const;
  /// Adds (or replaces) argument `key` with the scalar `text`; returns *this.
  CheckDecl& with(std::string key, std::string text);
};

struct NodeDecl {
  std::string name{};
  Duration clock_skew{};        ///< its wall clock's offset (may be negative)
  std::int64_t drift_ppm = 0;   ///< its clock's drift, parts per million (may be negative)
  /// Preemption (`preempt: {chance: 5%, mean: 2ms}`; Simulation::set_preemption): a goroutine
  /// woken from a channel wait stays runnable, with `preempt`, for an exponential time of mean
  /// `preempt_mean`. Never by default.
  Ratio preempt{};
  Duration preempt_mean{};
  Mark preempt_mark{};  ///< where `preempt` is written (a node that runs no goroutines is refused there)
  Mark mark{};
  bool operator==(const NodeDecl&) const = default;
};

struct LinkDecl {
  std::string from{};
  std::string to{};
  LinkParams params{};
  Mark mark{};
  bool operator==(const LinkDecl&) const = default;
};

/// A random stream pinned to a seed of its own (`streams: {process /task/server: 7}`): it draws
/// as it would at that seed, whatever seed the run has. The key names the stream (sim/simulation.hpp,
/// SimOptions::pins): `process PATH`, `link FROM TO`, `fault NAME`, `buggify NAME`, `ticks NODE`, `tie-break`.
/// A shrunk file pins the draws its failure needs, so it fails at every seed (docs/shrinking.md).
struct StreamPin {
  std::string key;
  std::uint64_t seed = 0;
  Mark mark{};
  bool operator==(const StreamPin&) const = default;
};

/// The reports written under --out (every one unless the file names some).
struct ReportSet {
  bool trace = true;      ///< trace.jsonl
  bool tree = true;       ///< tree.dot (+ tree.svg when Graphviz is there)
  bool timeline = true;   ///< timeline.svg
  bool perfetto = true;   ///< trace.perfetto.json
  bool junit = true;      ///< junit.xml
  bool summary = true;    ///< summary.json
  bool html = true;       ///< index.html
  bool operator==(const ReportSet&) const = default;
};

struct Scenario {
  std::string name{};
  std::string description{};
  std::uint64_t seed = 1;
  TieBreak tie_break = TieBreak::fifo;
  /// The chaos phase's length (how long faults are on); with no quiet phase, the whole run.
  Duration duration = kSecond * 10;
  std::vector<NodeDecl> nodes{};  ///< the first is the default node; empty: one node, node0
  LinkParams default_link{};
  std::vector<LinkDecl> links{};
  /// How nodes notice lost contact: by default distributed Erlang's net ticks with OTP's
  /// net_ticktime of 60 s (`network: {detection: ticks}`); a zero ticktime is the instant
  /// detection of `network: {detection: instant}` (docs/network.md).
  NetTicks net_ticks = default_net_ticks();
  static NetTicks default_net_ticks() {
    NetTicks n;
    n.ticktime = Duration{60'000'000'000};
    return n;
  }
  /// The root trees, each on its node (its spec.node; empty: the default node); each boots
  /// again when its node restarts.
  std::vector<TreeNode> trees{};
  std::vector<Step> script{};
  std::vector<faults::Fault> faults{};
  std::vector<Mark> fault_marks{};  ///< where each fault was written (same indices)
  std::optional<Duration> quiet{};  ///< the quiet phase after the chaos phase
  bool expect_escalation = false;
  /// A known bug (scenarios/bugs/): the checks that must catch it, `expect: {fail: [...]}`. It
  /// documents the file and what CTest asserts; it does not change the verdict.
  std::vector<std::string> expect_fail{};
  Mark expect_mark{};
  /// A known bug's fix (scenarios/bugs/): an overlay on the trees by path, kept as YAML in flow
  /// style (`fix: {tree: {/root: {intensity: 10}}}`); empty: none. It does not change the run;
  /// file/fix.hpp applies it, and the bug tests check that the fixed file passes
  /// (docs/scenario-format.md, "Known bugs and their fixes").
  std::string fix{};
  Mark fix_mark{};
  std::vector<CheckDecl> checks{};
  ReportSet reports{};
  /// The buggify points turned on in every run of the file (`buggify: [s3.slow_reply]`, as a
  /// shrunk swarm case pins them; sim/buggify.hpp). A swarm run picks its own.
  std::vector<std::string> buggify{};
  Mark buggify_mark{};
  /// Random streams pinned to seeds of their own, in key order (`streams:`).
  std::vector<StreamPin> streams{};
  /// The file it was read from ("" when built in code); not part of its value.
  std::string file{};

  bool operator==(const Scenario& o) const;
  /// The default node: the first declared, or node0.
  std::string default_node() const;
};

/// Parses a ratio: `2%`, `0.5%`, `0.02`, `1/3` (exact, reduced; between 0 and 1 inclusive).
/// On failure `error` says why.
bool parse_ratio(std::string_view text, Ratio& out, std::string& error);
/// The shortest text parse_ratio reads back as the same (reduced) ratio: `2%`, `0.5%`, `1/3`.
std::string format_ratio(Ratio r);
/// Parses a positive multiplier (a backoff factor): `2`, `1.5`, `3/2`, exactly; false otherwise.
bool parse_factor(const std::string& text, Ratio& out);
/// The text parse_factor reads back as the same factor: `2`, `3/2`.
std::string format_factor(Ratio r);
/// Levenshtein distance between two words.
std::size_t edit_distance(std::string_view a, std::string_view b);
/// The same when it is at most `limit`, else limit + 1, in O(min(|a|, |b|) * limit).
std::size_t edit_distance(std::string_view a, std::string_view b, std::size_t limit);
/// For "did you mean": the closest of `names` to `wrong` (a typo of at most a third of its
/// letters, at least 2), or a dotted name ending in it (`reader` -> `pipeline.reader`); "" if none.
std::string closest_name(std::string_view wrong, const std::vector<std::string>& names);
/// num/den reduced by their greatest common divisor.
Ratio reduce(Ratio r);

}  // namespace lic::scenarios
