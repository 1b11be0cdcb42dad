#pragma once
// Recording an operation history from a behaviour (issue 38; docs/library.md, "Histories"):
//
//   lic::history::Client client_;                    // a member of the behaviour: it numbers the ops
//   ...
//   const lic::history::OpId id = client_.invoke(ctx, "write", "x", "3");
//   const lic::CallResult r = ctx.call(kStore, kWrite, ...);
//   if (r.ok()) client_.ok(ctx, id);                 // a read: client_.ok(ctx, id, value)
//   else client_.info(ctx, id);                      // a timeout: it may or may not have happened
//
// Each call is a trace event of the calling process (op_invoke, op_ok, op_fail, op_info), so
// the history is in trace.jsonl, on the timeline, and in what a check reads; `linearizable`
// (scenarios/checks/history.cpp) reads it back with read_history. An operation still open when
// the run ends is unknown (info), as Jepsen has it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "properties/linearizability.hpp"
#include "sim/process.hpp"
#include "sim/trace.hpp"

namespace lic::history {

// Checking a history from code (a user's own model is a Model: a name, an initial state and a
// pure step function): check(ops, model) with check_linearizable's options and result.
using properties::check_linearizable;
using properties::describe;
using properties::find_model;
using properties::Linearizable;
using properties::LinearizabilityOptions;
using properties::LinearizabilityResult;
using properties::Model;
using properties::ModelState;
using properties::NonLinearizable;
using properties::Op;
using properties::OpStatus;

/// An operation's id: the process that invoked it numbers its operations 1, 2, 3, ...
using OpId = std::int64_t;

inline const Atom kOpInvoke{"op_invoke"};
inline const Atom kOpOk{"op_ok"};
inline const Atom kOpFail{"op_fail"};
inline const Atom kOpInfo{"op_info"};
inline const Atom kOp{"op"};        ///< the operation's id (within its process)
inline const Atom kF{"f"};          ///< what it does: read, write, cas, ...
inline const Atom kKey{"key"};      ///< the object it is on
inline const Atom kArg{"arg"};      ///< its argument
inline const Atom kArg2{"arg2"};    ///< a second argument (cas's new value)
inline const Atom kValue{"value"};  ///< what it returned

/// A client's recorder: keep one in the behaviour that makes the calls. Its ids count from 1 in
/// each process (a restarted process is another pid: its operations are another client's).
class Client {
 public:
  /// Records that this process invokes an operation; returns its id for the completion.
  OpId invoke(Context& ctx, const std::string& f, const std::string& key = {}, const std::string& arg = {},
              const std::string& arg2 = {});
  /// It completed and took effect; `value`: what it returned (none: nothing, or a read of nothing).
  void ok(Context& ctx, OpId id, const std::optional<std::string>& value = std::nullopt);
  /// It completed without taking effect (a cas whose compare failed, a write refused).
  void fail(Context& ctx, OpId id);
  /// Its outcome is unknown (a timeout, a lost reply): it may take effect up to the end.
  void info(Context& ctx, OpId id);

 private:
  OpId next_ = 0;
};

/// Message delivery, for `delivery` (exactly_once, at_least_once, at_most_once): the sender records
/// each message it sends by an id of its own choosing, the receiver each it takes in. Events
/// msg_sent and msg_received, field `id`.
inline const Atom kMsgSent{"msg_sent"};
inline const Atom kMsgReceived{"msg_received"};
inline const Atom kMsgId{"id"};
void sent(Context& ctx, const std::string& id);
void received(Context& ctx, const std::string& id);

/// A history read back from a trace: its operations (times are the events' indexes, so that
/// same-instant events keep their order), and its mistakes: a completion with no invocation
/// open (or from another process than the one that invoked), an operation completed twice.
struct Recorded {
  std::vector<Op> ops;
  std::vector<std::size_t> invoked_at;   ///< each op's op_invoke event index
  std::vector<std::size_t> completed_at; ///< each op's completion event index (its invoke's for info)
  std::string mistake;                   ///< the first, in words; empty: none
  std::size_t mistake_at = 0;            ///< its event index
};
Recorded read_history(const EventLog& events);

}  // namespace lic::history
