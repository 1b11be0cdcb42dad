#pragma once
// An OTP supervisor as a behaviour process (supervisor.erl, behaviour for behaviour): it starts
// its children in order, synchronously, restarts them by strategy and restart type, counts
// restarts in OTP's window and gives up (exits `shutdown`) when the intensity is exceeded, and
// stops children in reverse start order with their shutdown specs. A failed restart is retried
// through a message to itself, as OTP's try_again_restart cast. auto_shutdown ends it when
// significant children end. The decisions come from the pure cores (restart_strategy,
// restart_intensity); this file only applies them.
//
// simple_one_for_one is the dynamic flavour: no children at start; start_child adds one, either
// from the single template child spec with a string argument (OTP's simple_one_for_one) or from
// a full child spec (Elixir's DynamicSupervisor), up to `max_children`; the children stop in
// parallel. See docs/supervision.md.
//
// The management calls (start_child, terminate_child, restart_child, delete_child,
// which_children, count_children) are gen_server calls; the functions at the end make them.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/process.hpp"
#include "sim/simulation.hpp"
#include "supervision/child_spec.hpp"
#include "supervision/restart_intensity.hpp"

namespace lic::supervision {

/// How a supervisor starts a child: a behaviour (started synchronously: the supervisor waits
/// for its init, as proc_lib:start_link does) or a free-form process (started at once).
struct ChildStart {
  std::function<std::unique_ptr<Behaviour>()> behaviour;
  Body body;
  /// A simple_one_for_one template's start: the argument comes with each start_child.
  std::function<std::unique_ptr<Behaviour>(const std::string& arg)> behaviour_with_arg;
};

struct Child {
  ChildSpec spec;
  ChildStart start;
};

struct SupervisorSpec {
  SupFlags flags;
  std::vector<Child> children;
  /// The result of the supervisor's own init callback (its module's init/1, before any child
  /// starts) for start attempt k (the label's instance): inits[k-1], the last repeating; empty:
  /// always ok. `ignore` ends it `normal` (its parent keeps the spec with pid undefined, as
  /// for a worker); `stop` fails its start with that reason (OTP: init raised exit(Reason)).
  std::vector<InitResult> inits{};
  /// A root (started by no supervisor): trace its own start result as a `root_start` event,
  /// as supervisor:start_link would return it.
  bool report_start = false;
};

/// One row of which_children: newest child first, as OTP lists them (a dynamic supervisor's
/// children: oldest first, OTP's pid order).
struct ChildInfo {
  std::string id;
  Pid pid;  ///< Pid{}: undefined (not running), or restarting
  bool restarting = false;  ///< OTP's `restarting`: a failed restart waits for its retry
  ChildType type = ChildType::worker;
  RestartType restart = RestartType::permanent;
};

/// count_children.
struct ChildCounts {
  std::size_t specs = 0;
  std::size_t active = 0;
  std::size_t supervisors = 0;
  std::size_t workers = 0;
};

/// The reply to every management call: ok with a pid, or an error such as not_found, running,
/// already_present, or the start's failure reason.
struct ManagementReply {
  bool ok = false;
  Pid pid;
  Reason error;
  std::vector<ChildInfo> children;
  ChildCounts counts;
  /// A static start_child that failed: the child's id. OTP answers {error, {Reason, Child}}
  /// there (Child: its #child{} record), where every other failure is {error, Reason}.
  std::string failed_child;
};

class Supervisor final : public Behaviour {
 public:
  explicit Supervisor(SupervisorSpec spec);
  /// The same, sharing the spec: every start of this supervisor (a restart included) reads its
  /// children's specs and start functions from the one copy instead of copying each.
  explicit Supervisor(std::shared_ptr<const SupervisorSpec> spec);

  /// A child entry that starts a supervisor with `spec` (type supervisor, shutdown infinity).
  static Child child(std::string id, SupervisorSpec spec, RestartType restart = RestartType::permanent);

  /// which_children, as the call answers it (newest first), read directly.
  std::vector<ChildInfo> children() const;
  ChildCounts counts() const;
  const SupFlags& flags() const { return flags_; }
  bool dynamic() const { return flags_.strategy == Strategy::simple_one_for_one; }

  InitResult init(Context& ctx) override;
  CallReply handle_call(Context& ctx, const Message& m, From from) override;
  void handle_info(Context& ctx, const Message& m) override;
  void terminate(Context& ctx, const Reason& reason) override;

 private:
  struct Slot {
    std::shared_ptr<const Child> child;  // the spec's own entry (shared, never copied) or a start_child's
    Pid pid;                   // Pid{} is OTP's `undefined`
    Pid last;                  // the last pid it had: names a dynamic child while restarting
    std::uint32_t key = 0;     // stable identity: retries and dynamic children's labels use it
    std::uint32_t starts = 0;  // start attempts, the label's instance
    bool restarting = false;   // OTP's {restarting, Old}: a failed restart waits for its retry
    bool removed = false;      // ended for good (dropped at the end of the message's handling)
  };
  enum class Started { ok, ignore, error };

  InitResult init_tree(Context& ctx);
  Started start(Context& ctx, std::size_t i, Reason& error);
  void shut_down(Context& ctx, std::size_t i);
  void shut_down_dynamic(Context& ctx);
  void shut_down_all(Context& ctx);
  void child_exited(Context& ctx, std::size_t i, const Reason& reason);
  /// Counts a restart of child i and applies the strategy; false when the supervisor gives up.
  bool restart(Context& ctx, std::size_t i);
  void try_again(Context& ctx, std::uint32_t key);
  bool auto_shutdown_due(const Slot& ended) const;
  void give_up(Context& ctx);
  std::string path_of(const Context& ctx, std::size_t i) const;
  std::size_t find(const std::string& id) const;
  std::size_t find_pid(Pid pid) const;
  std::size_t add_slot(std::shared_ptr<const Child> child);
  /// Marks slot i ended for good; compact() drops it at the end of the message's handling.
  void remove(std::size_t i);
  void compact();
  ManagementReply manage(Context& ctx, const Message& m);
  ManagementReply manage_dynamic(Context& ctx, const Message& m);
  ManagementReply start_new(Context& ctx, std::shared_ptr<const Child> child);
  void report(Context& ctx, Atom what, std::size_t i, const Reason* reason);

  SupFlags flags_;
  std::vector<Slot> slots_;  // start order
  std::size_t removed_ = 0;  // slots marked removed, not yet compacted away
  std::shared_ptr<const Child> template_;  // simple_one_for_one's child spec
  std::string spec_error_;         // a bad start spec, reported by init
  std::vector<InitResult> inits_;  // its own init callback's result per start attempt
  bool report_start_ = false;      // a root: trace root_start
  std::uint32_t next_key_ = 1;
  RestartIntensity intensity_;
};

/// Tag of the message that stops a supervisor from outside, as gen_server:stop / proc_lib:stop
/// do (a system message in OTP): the payload is the Reason (normal when absent); terminate
/// runs (the children are shut down in order) and the supervisor ends with that reason. Both
/// the OTP and the lifecycle supervisor accept it.
extern const Atom kSystemStop;

/// The argument of a simple_one_for_one start_child (OTP's extra arguments).
struct DynamicArg {
  std::string arg;
};

/// One supervisor in a snapshot.
struct SupervisorSnapshot {
  Pid pid;
  std::string path;  ///< its label's name: the tree path
  Strategy strategy = Strategy::one_for_one;
  std::vector<ChildInfo> children;  ///< which_children order: newest first
  ChildCounts counts;
};

/// Every live supervisor's which_children and count_children, in pid order, read between runs
/// (no call, no trace event).
std::vector<SupervisorSnapshot> snapshot(const Simulation& sim);

// Management calls from another process (OTP's supervisor API). None counts as a restart.
ManagementReply start_child(Context& ctx, Pid sup, Child child);
/// simple_one_for_one: start a child from the template with this argument.
ManagementReply start_child(Context& ctx, Pid sup, DynamicArg arg);
ManagementReply terminate_child(Context& ctx, Pid sup, const std::string& id);
/// simple_one_for_one: terminate the child with this pid.
ManagementReply terminate_child(Context& ctx, Pid sup, Pid child);
ManagementReply restart_child(Context& ctx, Pid sup, const std::string& id);
ManagementReply delete_child(Context& ctx, Pid sup, const std::string& id);
std::vector<ChildInfo> which_children(Context& ctx, Pid sup);
ChildCounts count_children(Context& ctx, Pid sup);

}  // namespace lic::supervision
