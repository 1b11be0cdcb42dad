#pragma once
// An OTP supervisor (one_for_one, one_for_all, rest_for_one) as a behaviour process: it starts
// its children in order, synchronously, restarts them by strategy and restart type, counts
// restarts in OTP's window and gives up (exits `shutdown`) when the intensity is exceeded, and
// stops children in reverse start order with their shutdown specs. The decisions come from the
// pure cores (restart_strategy, restart_intensity); this file only applies them.
//
// Not yet here (issue 3 goes on): simple_one_for_one / DynamicSupervisor, the management calls
// (start_child, terminate_child, restart_child, delete_child, which_children, count_children),
// auto_shutdown, the snapshot, the lifecycle supervisor.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/process.hpp"
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

class Supervisor final : public Behaviour {
 public:
  explicit Supervisor(SupervisorSpec spec);

  /// A child entry that starts a supervisor with `spec` (type supervisor, shutdown infinity).
  static Child child(std::string id, SupervisorSpec spec, RestartType restart = RestartType::permanent);

  InitResult init(Context& ctx) override;
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
  void report(Context& ctx, const char* what, std::size_t i, const Reason* reason);

  SupFlags flags_;
  std::vector<Slot> slots_;  // start order
  RestartIntensity intensity_;
};

}  // namespace lic::supervision
