#pragma once
// The world's side of a run: it boots the scenario's trees on their nodes (and again when a
// node restarts) and takes the script's steps at their instants.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "scenarios/run/tree_build.hpp"
#include "sim/simulation.hpp"

namespace lic::scenarios {

/// OTP's terms for call results, as the trace's `value`, `rows` and `counts` fields write them
/// (docs/output-formats.md): atoms bare, a pid as its tree path and start (`/root/a#2`),
/// `undefined` for none. The conformance suite compares them with real OTP's (docs/conformance.md).
std::string pid_term(const Simulation& sim, Pid p);
/// which_children as [{Id,Child,Type}] (a simple_one_for_one supervisor's ids are undefined).
std::string rows_term(const Simulation& sim, const std::vector<supervision::ChildInfo>& children, bool dynamic);
/// count_children as [{specs,N},{active,N},{supervisors,N},{workers,N}].
std::string counts_term(const supervision::ChildCounts& c);
/// A management call's reply: ok, {ok,Child}, {error,Reason}, {error,{already_started,Child}}.
std::string reply_term(const Simulation& sim, Step::Op op, const supervision::ManagementReply& r);

class World {
 public:
  /// `sim` and `s` must outlive the World.
  World(Simulation& sim, const Scenario& s, const Registry& registry);

  /// Spawns every tree on its node and sets each node's boot function (a node restart boots
  /// its trees again).
  void boot_all();
  /// Runs the simulation to `t`, taking each script step due by then once everything else due
  /// at its instant has happened (an operator acts on a settled instant, as the reference
  /// model's harness injects; steps at one instant in file order). Then the events it started
  /// at that instant run too.
  void run_until(Time t);

 private:
  void boot_node(const std::string& node);
  void perform(const Step& st);
  /// SIGTERM to the step's node now, SIGKILL after its grace if the node still runs.
  void stop_task(const Step& st);
  /// A management call, made by a short-lived operator process (they are gen_server calls).
  void manage(Context& ctx, const Step& st, Pid sup);
  supervision::ManagementReply terminate(Context& ctx, const Step& st, Pid sup);

  Simulation& sim_;
  const Scenario& s_;
  TreeBuilder build_;
  std::map<std::string, std::uint32_t> boots_;
  std::vector<std::size_t> order_;  ///< the script's steps by time (file order within one)
  std::size_t next_step_ = 0;
};

}  // namespace lic::scenarios
