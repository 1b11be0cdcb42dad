#pragma once
// An OTP supervisor (one_for_one, one_for_all, rest_for_one) as a behaviour process: it starts
// its children in order, synchronously, restarts them by strategy and restart type, counts
// restarts in OTP's window and gives up (exits `shutdown`) when the intensity is exceeded, and
// stops children in reverse start order with their shutdown specs. The decisions come from the
// pure cores (restart_strategy, restart_intensity); this file only applies them.
//
// The management calls (start_child, terminate_child, restart_child, delete_child,
// which_children, count_children) are gen_server calls; the functions at the end make them.
//
// Not yet here (issue 3 goes on): simple_one_for_one / DynamicSupervisor, auto_shutdown, the
// snapshot, the lifecycle supervisor.

#include <functional>
#include <memory>
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
};

struct Child {
  ChildSpec spec;
  ChildStart start;
};

struct SupervisorSpec {
  SupFlags flags;
  std::vector<Child> children;
};

/// One row of which_children: newest child first, as OTP lists them.
struct ChildInfo {
  std::string id;
  Pid pid;  ///< Pid{}: undefined (not running)
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
};

class Supervisor final : public Behaviour {
 public:
  explicit Supervisor(SupervisorSpec spec);

  /// A child entry that starts a supervisor with `spec` (type supervisor, shutdown infinity).
  static Child child(std::string id, SupervisorSpec spec, RestartType restart = RestartType::permanent);

  /// which_children, as the call answers it (newest first), read directly.
  std::vector<ChildInfo> children() const;
  ChildCounts counts() const;
  const SupFlags& flags() const { return flags_; }

  InitResult init(Context& ctx) override;
  CallReply handle_call(Context& ctx, const Message& m, From from) override;
  void handle_info(Context& ctx, const Message& m) override;
  void terminate(Context& ctx, const Reason& reason) override;

 private:
  struct Slot {
    Child child;
    Pid pid;                   // Pid{} is OTP's `undefined`
    std::uint32_t starts = 0;  // start attempts, the label's instance
    bool removed = false;      // a temporary child that ended, or was dropped by a group restart
  };
  enum class Started { ok, ignore, error };

  Started start(Context& ctx, std::size_t i, Reason& error);
  void shut_down(Context& ctx, std::size_t i);
  void shut_down_all(Context& ctx);
  /// Restarts after child i exited; false when the supervisor gave up.
  bool restart(Context& ctx, std::size_t i);
  std::string path_of(const Context& ctx, std::size_t i) const;
  std::size_t find(const std::string& id) const;
  ManagementReply manage(Context& ctx, const Message& m);
  void report(Context& ctx, const char* what, std::size_t i, const Reason* reason);

  SupFlags flags_;
  std::vector<Slot> slots_;  // start order
  RestartIntensity intensity_;
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
ManagementReply terminate_child(Context& ctx, Pid sup, const std::string& id);
ManagementReply restart_child(Context& ctx, Pid sup, const std::string& id);
ManagementReply delete_child(Context& ctx, Pid sup, const std::string& id);
std::vector<ChildInfo> which_children(Context& ctx, Pid sup);
ChildCounts count_children(Context& ctx, Pid sup);

}  // namespace lic::supervision
