#pragma once
// From a scenario's tree (plain data) to what the supervisors run: child specs with start
// functions that make each behaviour through the registry.

#include <memory>
#include <string>
#include <vector>

#include "scenarios/registry.hpp"
#include "scenarios/scenario.hpp"
#include "supervision/lifecycle.hpp"
#include "supervision/supervisor.hpp"

namespace lic::scenarios {

/// Every path in the trees (roots, children, lifecycle services), parents before their children.
std::vector<std::string> tree_paths(const std::vector<TreeNode>& trees);

class TreeBuilder {
 public:
  explicit TreeBuilder(const Registry& registry) : registry_(registry) {}

  /// The child entry that starts tree node `t` under its supervisor (`is_template`: the child
  /// of a simple_one_for_one supervisor, started with an argument).
  supervision::Child child(const TreeNode& t, bool is_template) const;
  supervision::SupervisorSpec supervisor(const TreeNode& t) const;
  supervision::LifecycleSpec lifecycle(const TreeNode& t) const;
  /// The root process of a tree.
  std::unique_ptr<Behaviour> root(const TreeNode& t) const;

 private:
  /// The factory of a behaviour reference; the scenario was validated, so a failure here is a
  /// bug in the caller (std::logic_error), not bad input.
  BehaviourFactory factory(const BehaviourRef& ref) const;

  const Registry& registry_;
};

}  // namespace lic::scenarios
