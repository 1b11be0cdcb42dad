#pragma once
// A reference model of an OTP supervision tree: pure, no simulation, no processes. Given a tree
// (supervisors with flags, workers with child specs and a stop style) and a sequence of timed
// injections (a worker crashes with a reason, or is killed), it predicts what the trace must
// show: every start attempt, every exit with its reason and virtual time, every time a
// supervisor reaches its maximum restart intensity, every shutdown error and auto_shutdown —
// in order. The property tests run the same tree in the simulator (model_harness.hpp) and
// require the two to agree event for event.
//
// It is written from OTP's rules (DESIGN.md §3, supervisor.erl), not from supervisor.cpp: a
// recursive interpreter with an explicit clock instead of processes and messages. What it
// assumes, and the generators respect:
// - an injection happens when the tree is quiet (the previous one's consequences are over), so
//   one thing happens at a time and the order is total;
// - child supervisors have shutdown infinity (OTP's default), so a supervisor is never killed
//   with its children still running (orphans would run concurrently);
// - a stalling worker is never given shutdown infinity (the tree would hang, as in OTP).
//
// Nodes (docs/network.md). Every supervisor runs on one node (the root's); a worker whose
// ChildSpec::node is set runs on that other node, and everything between it and its supervisor
// crosses the default path, which takes exactly kPathLatency: init's acknowledgement, the
// shutdown or kill its supervisor sends, its EXIT and the DOWN back. A node-crash injection
// ends every worker on that node (`killed`, in start order) and its supervisor receives one
// EXIT `noconnection` for each, in the same order, all waiting in its mailbox: the supervisor
// handles them one at a time, and a restart that fails (spawning onto a down node fails at
// once with noconnection) is retried after what is already in the mailbox, as OTP's
// try_again_restart. A child whose EXIT still waits is stopped by reading that EXIT
// (`noconnection`: a shutdown error). What it further assumes, and the generators respect:
// - the workers on a node that crashes all have one supervisor (the reaction is then one
//   supervisor's, one thing at a time; two reacting supervisors would run concurrently);
// - the supervisors' node never crashes.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/exit_reason.hpp"
#include "sim/time.hpp"
#include "supervision/child_spec.hpp"
#include "supervision/stock_worker.hpp"  // StopStyle

namespace lic::supervision::model {

/// What a worker's init returns on a start attempt.
enum class InitOutcome : std::uint8_t { ok, ignore, error };

struct Node {
  ChildSpec spec;  ///< spec.type says worker or supervisor
  // A worker:
  StopStyle stop = StopStyle::prompt;
  Duration stop_delay{};
  /// init's result for start attempt k (1-based) of this child under one supervisor instance:
  /// inits[k-1], the last entry repeating; empty: always ok.
  std::vector<InitOutcome> inits;
  // A supervisor:
  SupFlags flags;
  std::vector<Node> children;
};

/// The root supervisor: a Node of type supervisor, path "/" + spec.id.
Node root(std::string id, SupFlags flags, std::vector<Node> children);

/// What an injection does.
enum class Fault : std::uint8_t {
  process,       ///< the worker at `path` ends with `reason` (or is killed: reason `kill`)
  crash_node,    ///< the node `node` crashes (Simulation::crash_node)
  restart_node,  ///< the node `node` comes back, with no boot function (restart_node)
};

/// One fault: `after` the tree has gone quiet (or the previous injection), the process at
/// `path` ends with `reason` (it raises), or is killed when reason is `kill`; or a node fault.
struct Injection {
  Duration after{};
  std::string path;
  Reason reason;
  Fault fault = Fault::process;
  Atom node{};  ///< node faults: which node
  /// Instead of `after`: the absolute instant (a scenario file's script step). It must not
  /// come before the tree is quiet; predict() says so when it does.
  std::optional<Time> at{};
};

/// The latency of the default path between two nodes (LinkParams' default): what a message or
/// signal between a supervisor and a worker on another node takes.
inline constexpr Duration kPathLatency = kMillisecond;

enum class Happened : std::uint8_t { spawn, exit, max_intensity, shutdown_error, auto_shutdown, skipped };

/// One observable event. `path` is the process's tree path (for max_intensity and
/// auto_shutdown: the supervisor's; for shutdown_error: the child's); `instance` its start attempt
/// under its supervisor instance (0 where none applies); `reason` an exit reason as text.
struct Event {
  Time at;
  Happened kind = Happened::spawn;
  std::string path;
  std::uint32_t instance = 0;
  std::string reason;
  bool operator==(const Event&) const = default;
};

std::string to_string(const Event& e);

/// The reason a worker's init gives when it fails: error(init_failed).
Reason init_failure();

/// The worker paths of a tree (start order, depth first): the targets injections may name.
std::vector<std::string> worker_paths(const Node& root);

/// Predicts the events of starting `root` at time 0 and applying `injections`, each at the
/// instant the previous one's consequences end plus its `after` (the consequences end when the
/// last supervisor involved is done: after the last event, or after the latency of the last
/// acknowledgement or DOWN from another node). An injection whose target is not running at
/// that moment is a `skipped` event (the harness records the same); a node fault has no event
/// of its own, only its consequences.
/// When an injection's `at` comes before the tree is quiet (the model predicts one fault at a
/// time), the prediction stops there and `not_quiet`, if given, says which and when the tree
/// went quiet (and `not_quiet_at` is that injection's instant); without it such an injection
/// waits for the quiet instant.
std::vector<Event> predict(const Node& root, const std::vector<Injection>& injections,
                           std::string* not_quiet = nullptr, Time* not_quiet_at = nullptr);

}  // namespace lic::supervision::model
