#pragma once
// Linearizability of an operation history (issue 38; docs/history.md): did every client see a
// history the data type allows? Each operation is invoked, then completes ok, fails, or is left
// unknown (info: a timeout, a crash). The check finds an order of the operations that respects
// real time (an operation that completed before another was invoked comes first) and that the
// model's sequential specification accepts, or proves there is none.
//
// The search is Wing & Gong's, with Lowe's memoisation of (operations linearised, state) pairs,
// as Porcupine does it, per partition of the history (a key-value map is checked key by key:
// P-compositionality). It has a budget of search steps: past it the verdict is `unknown`, never a
// pass. An operation whose outcome is unknown may take effect at any point from its invocation to
// the end of the history, or not at all (Jepsen's :info), so it completes at the history's end.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace lic::properties {

/// How an operation ended.
enum class OpStatus : std::uint8_t {
  ok,    ///< completed; `value` is what it returned (a read's value)
  fail,  ///< completed, and says it did not take effect (a cas whose compare failed)
  info,  ///< unknown: it may or may not have taken effect, up to the end of the history
};

/// One operation: invoked by `client` at `call`, completed at `ret` (for `info`: ignored, the
/// history's end stands in). Times are any clock that orders the history (virtual nanoseconds, or
/// the index of the log line); at one instant, invocations come before completions.
struct Op {
  std::int64_t client = 0;
  std::int64_t call = 0;
  std::int64_t ret = 0;
  std::string f;      ///< what it does, in the model's words: read, write, cas, append, ...
  std::string key;    ///< the object it is on (a partitioned model checks each key alone)
  std::string arg;    ///< its argument: the value written, cas's expected value, ...
  std::string arg2;   ///< a second argument: cas's new value
  OpStatus status = OpStatus::ok;
  std::optional<std::string> value;  ///< what it returned; none: nothing, or nil (a read of no value)
};

/// A model's state, as text: two states are the same when their texts are (the memoisation).
using ModelState = std::string;

/// A sequential specification.
struct Model {
  std::string name;
  std::function<ModelState()> init;
  /// Whether `op`, completed as it was (status, value), is what the object does in `state`,
  /// and the state after it. Called with info operations too: such a step must accept any value.
  std::function<bool(const ModelState& state, const Op& op, ModelState& next)> step;
  /// Check the operations of each key apart (keys that never interact).
  bool by_key = false;
  /// Operations that neither change nor observe the state (a read that did not complete), left
  /// out of the search as they fit anywhere. Empty: every operation is searched (a model of
  /// one's own whose refused operations say something about the state keeps them all).
  std::function<bool(const Op&)> inert{};
  /// `write` sets the state to its argument without reading it (a register's, a key's). Then an
  /// unknown (info) write whose value no other operation of its partition mentions (as a result
  /// or an argument) is left out of the search: it can always take effect last, after every
  /// other operation, where nothing sees it. Without it, each such write doubles the orders to
  /// try (a store that timed out a hundred writes in a failover is out of any budget).
  bool blind_writes = false;
};

/// register (read, write), cas-register (read, write, cas), kv (a map of registers: read, write,
/// append, cas, by key), set (add, read: the sorted elements joined by spaces), queue (enqueue,
/// dequeue: FIFO), counter (add N, read). Null for another name.
const Model* find_model(const std::string& name);
/// The models' names, for messages.
const std::vector<std::string>& model_names();

enum class Linearizable : std::uint8_t { yes, no, unknown };

/// Where a history stopped being linearisable: the longest linearisable prefix found, and the
/// operation that could not follow it, with the ones concurrent with it (the window).
struct NonLinearizable {
  std::string key;                    ///< its partition
  std::vector<std::size_t> prefix;    ///< the longest linearisable order found (indexes into the history)
  std::size_t stuck = 0;              ///< the operation none of whose placements works after it
  std::vector<std::size_t> window;    ///< the operations concurrent with `stuck` not in the prefix, `stuck` included
};

struct LinearizabilityResult {
  Linearizable verdict = Linearizable::yes;
  std::size_t operations = 0;   ///< checked (a failed read or an info read constrains nothing and is left out)
  std::size_t unseen_writes = 0;  ///< unknown writes left out as nothing saw them (Model::blind_writes)
  std::size_t partitions = 0;
  std::size_t steps = 0;        ///< search steps taken, all partitions
  std::optional<NonLinearizable> witness;  ///< for `no`
  std::string unknown_why;                 ///< for `unknown`: which partition ran out of budget
};

struct LinearizabilityOptions {
  std::uint64_t max_steps = 50'000'000;  ///< over all partitions; past it: unknown
};

/// Checks `history` against `model`. Deterministic: the same history gives the same result.
LinearizabilityResult check_linearizable(const std::vector<Op>& history, const Model& model,
                                         const LinearizabilityOptions& o = {});

/// "read() -> 3", "cas(1, 2) -> fail", "write(4) -> ?" (info).
std::string describe(const Op& op);

}  // namespace lic::properties
