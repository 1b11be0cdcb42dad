#pragma once
// Pure cores of OTP's restart decisions: whether an exit is restarted, and which children a
// strategy terminates and restarts. The supervisor process only applies them.

#include <cstddef>
#include <span>
#include <vector>

#include "sim/exit_reason.hpp"
#include "supervision/child_spec.hpp"

namespace lic::supervision {

/// Whether a child of this restart type that ended with `reason` is restarted: permanent always;
/// transient unless normal, shutdown or {shutdown, _}; temporary never.
bool restart_wanted(RestartType type, const Reason& reason);

/// What a supervisor knows of each child, in start order.
struct ChildState {
  RestartType restart = RestartType::permanent;
  bool running = false;  ///< has a live pid (not `undefined`)
};

struct RestartPlan {
  std::vector<std::size_t> terminate;  ///< running siblings to stop, in reverse start order
  std::vector<std::size_t> remove;     ///< temporary siblings dropped by the group restart
  std::vector<std::size_t> restart;    ///< children to start, in start order (the failed one too)
};

/// The restart scope of `strategy` when the child at `failed` (a position in start order) exited
/// and is to be restarted. one_for_one and simple_one_for_one: the child alone. one_for_all: every
/// child; rest_for_one: the child and those started after it. In a group, running siblings are
/// terminated in reverse start order; temporary siblings are removed, not restarted; every other
/// child in the group is started again in start order, including one that was not running (OTP's
/// start_children starts the whole group).
RestartPlan plan_restart(Strategy strategy, std::span<const ChildState> children, std::size_t failed);

}  // namespace lic::supervision
