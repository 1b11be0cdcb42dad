#include "scenarios/run/tree_build.hpp"

#include <stdexcept>

#include "scenarios/args.hpp"

namespace lic::scenarios {

namespace {

void collect_paths(const std::vector<TreeNode>& nodes, const std::string& prefix, std::vector<std::string>& out) {
  for (const TreeNode& n : nodes) {
    const std::string p = prefix + "/" + n.spec.id;
    out.push_back(p);
    for (const ServiceDecl& s : n.services) out.push_back(p + "/" + s.name);
    collect_paths(n.children, p, out);
  }
}

}  // namespace

std::vector<std::string> tree_paths(const std::vector<TreeNode>& trees) {
  std::vector<std::string> out;
  collect_paths(trees, "", out);
  return out;
}

BehaviourFactory TreeBuilder::factory(const BehaviourRef& ref) const {
  std::vector<Diagnostic> errors;
  BehaviourFactory f = registry_.make_behaviour(ref, errors);
  if (!f) {
    throw std::logic_error("behaviour '" + ref.name + "' is not runnable: " +
                           (errors.empty() ? std::string("no factory") : errors.front().message));
  }
  // A factory that makes nothing fails the start that called it (a crash of the supervisor's
  // start, in the trace), not the simulator.
  return [f, name = ref.name](const std::string& arg) {
    std::unique_ptr<Behaviour> b = f(arg);
    if (!b) throw std::runtime_error("behaviour '" + name + "' made no process (its factory returned null)");
    return b;
  };
}

supervision::LifecycleSpec TreeBuilder::lifecycle(const TreeNode& t) const {
  supervision::LifecycleSpec spec;
  for (const ServiceDecl& d : t.services) {
    supervision::ServiceSpec s;
    s.name = d.name;
    s.start.behaviour = [f = factory(d.behaviour)] { return f(""); };
    s.auto_start = d.auto_start;
    s.start_timeout = d.start_timeout;
    s.stop_timeout = d.stop_timeout;
    s.stable_threshold = d.stable_threshold;
    s.depends_on = d.depends_on;
    s.restart = d.restart;
    s.terminal.clean_exits = d.terminal_clean_exits;
    s.terminal.reasons = d.terminal_reasons;
    spec.services.push_back(std::move(s));
  }
  return spec;
}

supervision::Child TreeBuilder::child(const TreeNode& t, bool is_template) const {
  supervision::Child c;
  switch (t.kind) {
    case TreeNode::Kind::worker: {
      BehaviourFactory f = factory(t.behaviour);
      if (is_template) c.start.behaviour_with_arg = [f](const std::string& arg) { return f(arg); };
      c.start.behaviour = [f] { return f(""); };
      break;
    }
    case TreeNode::Kind::supervisor:
      c = supervision::Supervisor::child(t.spec.id, supervisor(t));
      break;
    case TreeNode::Kind::lifecycle:
      c.start.behaviour = [spec = lifecycle(t)] { return std::make_unique<supervision::LifecycleSupervisor>(spec); };
      break;
  }
  c.spec = t.spec;
  return c;
}

supervision::SupervisorSpec TreeBuilder::supervisor(const TreeNode& t) const {
  supervision::SupervisorSpec spec;
  spec.flags = t.flags;
  const bool dynamic = t.flags.strategy == supervision::Strategy::simple_one_for_one;
  for (const TreeNode& c : t.children) spec.children.push_back(child(c, dynamic));
  for (const std::string& text : t.init) {
    InitResult r;
    std::string why;
    if (!parse_init_result(text, r, why)) throw std::logic_error("supervisor init '" + text + "': " + why);  // the reader checked it
    spec.inits.push_back(r);
  }
  return spec;
}

std::unique_ptr<Behaviour> TreeBuilder::root(const TreeNode& t) const {
  if (t.kind == TreeNode::Kind::lifecycle) return std::make_unique<supervision::LifecycleSupervisor>(lifecycle(t));
  supervision::SupervisorSpec spec = supervisor(t);
  spec.report_start = true;  // root_start: the root's own start result
  return std::make_unique<supervision::Supervisor>(std::move(spec));
}

}  // namespace lic::scenarios
