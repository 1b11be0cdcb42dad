#include "scenarios/file/validate.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "scenarios/checks/model.hpp"
#include "supervision/lifecycle.hpp"

namespace lic::scenarios {

namespace {

struct PathInfo {
  const TreeNode* node = nullptr;
  bool dynamic_child = false;  ///< a child of a simple_one_for_one supervisor ("<id>.<n>")
  std::string on{};            ///< the node it runs on
};

class Validator {
 public:
  Validator(const Scenario& s, const Registry& registry) : s_(s), registry_(registry) {}

  std::vector<Diagnostic> run() {
    std::set<std::string> nodes;
    for (const NodeDecl& n : s_.nodes) {
      if (n.name.empty()) continue;
      if (!nodes.insert(n.name).second) error(n.mark, "node '" + n.name + "' is declared twice");
    }
    known_nodes_ = nodes;
    if (known_nodes_.empty()) known_nodes_.insert(s_.default_node());
    for (const LinkDecl& l : s_.links) {
      node(l.from, l.mark);
      node(l.to, l.mark);
    }
    std::set<std::string> roots;
    for (const TreeNode& t : s_.trees) {
      if (!roots.insert(t.spec.id).second) error(t.mark, "a tree named '" + t.spec.id + "' is declared twice");
      if (t.kind == TreeNode::Kind::worker) error(t.mark, "a root is a supervisor or a lifecycle supervisor");
      tree(t, "/" + t.spec.id, t.spec.node.empty() ? s_.default_node() : std::string(t.spec.node.text()));
    }
    const Time end = Time{} + s_.duration + s_.quiet.value_or(Duration::zero());
    for (const Step& st : s_.script) {
      step(st);
      if (st.at > end)
        error(st.mark, "this step at " + format_time(st.at) + " comes after the run ends (at " + format_time(end) +
                           "): it would never be taken");
    }
    std::set<std::string> fault_names;
    for (std::size_t i = 0; i < s_.faults.size(); ++i) {
      const Mark m = i < s_.fault_marks.size() ? s_.fault_marks[i] : Mark{};
      fault(s_.faults[i], m);
      fault_time(s_.faults[i], m, end);
      // The injector's name for it (an unnamed fault is KIND#INDEX) names its random stream.
      const std::string name = !s_.faults[i].name.empty() ? s_.faults[i].name
                                                          : std::string(faults::to_string(s_.faults[i].kind)) + "#" + std::to_string(i);
      if (!fault_names.insert(name).second)
        error(m, "a fault named '" + name + "' is declared twice: a fault's name names its random stream, and two would draw the same numbers");
    }
    // After the steps: a child a step starts may run goroutines.
    for (const NodeDecl& n : s_.nodes) {
      if (n.preempt.num != 0 && !goroutine_nodes_.contains(n.name))
        error(n.preempt_mark, "node '" + n.name + "' runs no goroutines: preempt delays a goroutine woken from a channel wait, "
                              "and no behaviour on this node waits on channels (ingest.server does)");
    }
    for (const CheckDecl& c : s_.checks) check(c);
    dangling_names();
    buggify();
    for (const StreamPin& p : s_.streams) stream(p, fault_names);
    for (const std::string& name : s_.expect_fail) {
      const bool named = std::any_of(s_.checks.begin(), s_.checks.end(), [&](const CheckDecl& c) { return c.name == name; });
      if (!named) error(s_.expect_mark, "expect: fail names '" + name + "', which is not one of the file's checks");
    }
    return std::move(errors_);
  }

 private:
  void error(Mark m, std::string msg) { errors_.push_back({m, std::move(msg)}); }

  void node(const std::string& name, Mark m) {
    if (!known_nodes_.contains(name)) {
      std::string names;
      for (const std::string& n : known_nodes_) names += (names.empty() ? "" : ", ") + n;
      error(m, "unknown node '" + name + "' (the nodes are: " + names + ")");
    }
  }

  void behaviour(const BehaviourRef& b, const std::string& on) {
    if (b.name.empty()) return;  // reported where it was missing
    used_.insert(b.name);
    registry_.make_behaviour(b, errors_);
    const BehaviourInfo* info = registry_.behaviour(b.name);
    if (info != nullptr && info->goroutines) goroutine_nodes_.insert(on);
    if (info != nullptr) path_args(info->args, b.args);
    declared_names_ = declared_names_ && info != nullptr && Registry::builtin().behaviour(b.name) != nullptr;
    if (info != nullptr) names(*info, b);
  }

  /// The names a behaviour registers and those it sends to (its arguments marked so, as given
  /// or by default; "-" is none).
  void names(const BehaviourInfo& info, const BehaviourRef& b) {
    for (const ArgInfo& a : info.args) {
      if (!a.registers && !a.refers) continue;
      std::string value = a.fallback;
      Mark at = b.mark;
      bool given = false;
      for (const auto& [k, v] : b.args)
        if (k == a.name && !v.is_list) value = v.scalar, at = v.mark, given = true;
      if (value.empty() || value == "-") continue;
      if (a.registers) registered_.insert(value);
      else refs_.push_back({value, at, b.name + "'s `" + a.name + "`" + (given ? "" : " (its default)")});
    }
  }

  /// A name sent to that no behaviour of the file registers: nothing would ever answer. Judged only
  /// when every behaviour is a built-in one, whose registered names are all declared.
  void dangling_names() {
    if (!declared_names_) return;
    const std::vector<std::string> known(registered_.begin(), registered_.end());
    for (const Ref& r : refs_) {
      if (registered_.contains(r.name)) continue;
      const std::string near = closest_name(r.name, known);
      std::string all;
      for (const std::string& n : known) all += (all.empty() ? "" : ", ") + n;
      error(r.mark, r.owner + " names '" + r.name + "', which no process of the file registers" +
                        (near.empty() ? std::string() : " (did you mean '" + near + "'?)") +
                        (all.empty() ? std::string("; nothing in the file registers a name") : "; the names registered: " + all));
    }
  }

  /// `buggify:` names points of the behaviours the file runs.
  void buggify() {
    const std::vector<BuggifyPoint> points = registry_.buggify_points({used_.begin(), used_.end()});
    for (const std::string& b : s_.buggify) {
      if (std::any_of(points.begin(), points.end(), [&](const BuggifyPoint& p) { return p.name == b; })) continue;
      std::string names;
      for (const BuggifyPoint& p : points) names += (names.empty() ? "" : ", ") + p.name;
      error(s_.buggify_mark, "unknown buggify point '" + b + "' (" +
                                 (names.empty() ? std::string("the file's behaviours have none") : "the file's behaviours have: " + names) + ")");
    }
  }

  /// A pinned stream names something the file has: a tree path, declared nodes, a fault, a
  /// buggify point of its behaviours.
  void stream(const StreamPin& p, const std::set<std::string>& fault_names) {
    const std::string kind = p.key.substr(0, p.key.find(' '));
    const std::string rest = p.key.substr(std::min(p.key.size(), kind.size() + 1));
    if (kind == "process") {
      const std::string root = rest.substr(0, rest.find('/', 1));
      const bool known = paths_.contains(rest) || paths_.contains(root) ||
                         std::any_of(s_.trees.begin(), s_.trees.end(), [&](const TreeNode& t) { return "/" + t.spec.id == root; });
      if (!known) error(p.mark, "streams: '" + p.key + "': no tree of the file holds " + rest);
    } else if (kind == "link") {
      node(rest.substr(0, rest.find(' ')), p.mark);
      node(rest.substr(rest.find(' ') + 1), p.mark);
    } else if (kind == "ticks") {
      node(rest, p.mark);
    } else if (kind == "fault" && !fault_names.contains(rest)) {
      error(p.mark, "streams: '" + p.key + "': the file has no fault named " + rest + " (an unnamed fault is KIND#INDEX, e.g. crash#0)");
    } else if (kind == "buggify") {
      const std::vector<BuggifyPoint> points = registry_.buggify_points({used_.begin(), used_.end()});
      if (std::none_of(points.begin(), points.end(), [&](const BuggifyPoint& b) { return b.name == rest; }))
        error(p.mark, "streams: '" + p.key + "': the file's behaviours have no buggify point " + rest);
    }
  }

  void check(const CheckDecl& c) {
    if (c.name.empty()) return;  // reported where it was missing
    registry_.make_check(c, errors_);
    const CheckInfo* info = registry_.check(c.name);
    if (info == nullptr) return;
    path_args(info->args, c.args);
    for (const std::string& b : info->needs) {
      if (!used_.contains(b))
        error(c.mark, "check '" + c.name + "' judges what " + b + " does, and nothing in the file runs a " + b);
    }
  }

  /// Arguments of type `path` must name something in the tree; of type `supervisor path`, a
  /// supervisor, a lifecycle supervisor or a service.
  void path_args(const std::vector<ArgInfo>& schema, const std::vector<std::pair<std::string, ArgValue>>& given) {
    for (const ArgInfo& a : schema) {
      if (a.type != "path" && a.type != "supervisor path") continue;
      for (const auto& [k, v] : given) {
        if (k == a.name && !v.is_list)
          path(v.scalar, v.mark, a.type == "supervisor path", "a supervisor or a lifecycle service");
      }
    }
  }

  /// `on`: the node it runs on (its own, or its parent's).
  void tree(const TreeNode& t, const std::string& path, const std::string& parent_node) {
    paths_[path] = PathInfo{&t, false, t.spec.node.empty() ? parent_node : std::string(t.spec.node.text())};
    if (!t.spec.node.empty()) node(std::string(t.spec.node.text()), t.mark);
    const std::string on = t.spec.node.empty() ? parent_node : std::string(t.spec.node.text());
    switch (t.kind) {
      case TreeNode::Kind::worker:
        behaviour(t.behaviour, on);
        break;
      case TreeNode::Kind::supervisor: {
        const bool dynamic = t.flags.strategy == supervision::Strategy::simple_one_for_one;
        if (dynamic && t.children.size() > 1)
          error(t.mark, "a simple_one_for_one supervisor has one child, the template (OTP), or none "
                        "(a DynamicSupervisor: start_child gives the whole child); it has " +
                            std::to_string(t.children.size()));
        if (!dynamic && t.flags.max_children)
          error(t.mark, "max_children applies to simple_one_for_one supervisors only");
        std::set<std::string> ids;
        for (const TreeNode& c : t.children) {
          if (!c.spec.id.empty() && !ids.insert(c.spec.id).second)
            error(c.mark, "duplicate child id '" + c.spec.id + "' under " + path);
          tree(c, path + "/" + c.spec.id, on);
          if (dynamic) dynamic_parents_[path] = c.spec.id;
        }
        if (dynamic && t.children.empty()) dynamic_parents_[path] = "";
        break;
      }
      case TreeNode::Kind::lifecycle: {
        supervision::LifecycleSpec spec;
        std::set<std::string> names;
        for (const ServiceDecl& sv : t.services) {
          if (!sv.name.empty() && !names.insert(sv.name).second) error(sv.mark, "duplicate service '" + sv.name + "'");
          behaviour(sv.behaviour, on);
          supervision::ServiceSpec ss;
          ss.name = sv.name;
          ss.depends_on = sv.depends_on;
          ss.start.body = [](Context&) {};  // the plan only looks at names and dependencies
          spec.services.push_back(std::move(ss));
          paths_[path + "/" + sv.name] = PathInfo{&t, false, on};
        }
        for (const ServiceDecl& sv : t.services) {
          for (const std::string& d : sv.depends_on) {
            if (!names.contains(d)) error(sv.mark, "service '" + sv.name + "' depends on '" + d + "', which is not a service here");
          }
        }
        const supervision::LifecyclePlan plan = supervision::plan_lifecycle(spec);
        if (!plan.ok() && plan.message.rfind("dependency cycle", 0) == 0) {
          // Report it at the first service on the cycle.
          Mark at = t.mark;
          for (const ServiceDecl& sv : t.services) {
            if (plan.message.find(" " + sv.name + " ") != std::string::npos ||
                plan.message.find(": " + sv.name + " ") != std::string::npos) {
              at = sv.mark;
              break;
            }
          }
          error(at, plan.message);
        }
        break;
      }
    }
  }

  /// `p` lies under a declared worker's path (`/c1/coordinator/conn`): a process that worker
  /// spawns, labelled under it, which a fault may aim at; it is looked up when the fault fires.
  bool spawned_by_worker(const std::string& p) const {
    for (auto slash = p.rfind('/'); slash != std::string::npos && slash > 0; slash = p.rfind('/', slash - 1)) {
      const auto it = paths_.find(p.substr(0, slash));
      if (it != paths_.end()) return it->second.node->kind == TreeNode::Kind::worker;
    }
    return false;
  }

  /// `p` must name something in a tree: a declared child, a service, or a dynamic child.
  const PathInfo* path(const std::string& p, Mark m, bool want_supervisor, const char* wanted = "a supervisor") {
    if (const auto it = paths_.find(p); it != paths_.end()) {
      if (want_supervisor && it->second.node->kind == TreeNode::Kind::worker) {
        error(m, "'" + p + "' is a worker, not " + wanted);
        return nullptr;
      }
      return &it->second;
    }
    // A dynamic child: <dynamic supervisor>/<template id>.<n>
    const auto slash = p.rfind('/');
    if (slash != std::string::npos && slash > 0) {
      const auto d = dynamic_parents_.find(p.substr(0, slash));
      if (d != dynamic_parents_.end()) {
        const std::string leaf = p.substr(slash + 1);
        // <template id>.<n>, or (no template) <any id>.<n>
        const auto dot = leaf.rfind('.');
        const bool numbered = dot != std::string::npos && dot + 1 < leaf.size() &&
                              leaf.find_first_not_of("0123456789", dot + 1) == std::string::npos;
        if (numbered && (d->second.empty() || leaf.substr(0, dot) == d->second)) return nullptr;
      }
    }
    std::vector<std::string> known;
    for (const auto& entry : paths_) known.push_back(entry.first);
    const std::string near = closest_name(p, known);
    const std::string hint = near.empty() ? std::string() : " (did you mean '" + near + "'?)";
    error(m, "'" + p + "' names nothing in the tree" + hint);
    return nullptr;
  }

  void step(const Step& st) {
    if (st.op == Step::Op::stop_task) {
      if (!st.target.empty()) node(st.target, st.mark);
      return;
    }
    const bool management = st.op == Step::Op::start_child || st.op == Step::Op::terminate_child ||
                            st.op == Step::Op::restart_child || st.op == Step::Op::delete_child ||
                            st.op == Step::Op::which_children || st.op == Step::Op::count_children;
    if (st.target.empty()) return;  // reported by the reader
    const PathInfo* info = path(st.target, st.mark, management);
    if (info == nullptr || !management) return;
    const bool dynamic = info->node->kind == TreeNode::Kind::supervisor &&
                         info->node->flags.strategy == supervision::Strategy::simple_one_for_one;
    if (info->node->kind == TreeNode::Kind::lifecycle) {
      error(st.mark, "'" + st.target + "' is a lifecycle supervisor: it has services, not child specs");
      return;
    }
    if (st.op == Step::Op::start_child) {
      const bool templated = dynamic && !info->node->children.empty();
      if (templated && st.child)
        error(st.mark, "start_child on a simple_one_for_one supervisor with a template takes `arg`, not `child`");
      if (!templated && !st.child) error(st.mark, "start_child needs the `child` to start");
      if (!templated && !st.arg.empty()) error(st.mark, "`arg` is for simple_one_for_one supervisors with a template; give a `child`");
      if (st.child) {
        const std::string p = st.target + "/" + st.child->spec.id;
        Validator sub(s_, registry_);
        sub.known_nodes_ = known_nodes_;
        sub.tree(*st.child, p, info->on.empty() ? s_.default_node() : info->on);
        goroutine_nodes_.insert(sub.goroutine_nodes_.begin(), sub.goroutine_nodes_.end());
        for (Diagnostic& d : sub.errors_) errors_.push_back(std::move(d));
        used_.insert(sub.used_.begin(), sub.used_.end());
        registered_.insert(sub.registered_.begin(), sub.registered_.end());
        refs_.insert(refs_.end(), sub.refs_.begin(), sub.refs_.end());
        declared_names_ = declared_names_ && sub.declared_names_;
      }
    }
  }

  void fault(const faults::Fault& f, Mark m) {
    switch (f.target.by) {
      case faults::Target::By::path:
        if (!spawned_by_worker(f.target.text)) path(f.target.text, m, false);
        break;
      case faults::Target::By::node:
        fault_node(f.target.text, m);
        break;
      case faults::Target::By::name:
        slashed_name(f.target.text, m);
        break;
      default:
        break;
    }
    for (Atom a : f.side_a) fault_node(std::string(a.text()), m);
    for (Atom b : f.side_b) {
      fault_node(std::string(b.text()), m);
      if (std::find(f.side_a.begin(), f.side_a.end(), b) != f.side_a.end())
        error(m, "node '" + std::string(b.text()) + "' is on both sides of this " + std::string(faults::to_string(f.kind)) +
                     ": a node is never cut from itself, so that part of it would never act");
    }
  }

  /// A fault that could never fire: `until` at or before `at`, or `at` past the run's end.
  void fault_time(const faults::Fault& f, Mark m, Time end) {
    if (f.at && f.until && *f.until <= *f.at)
      error(m, "`until` (" + format_time(*f.until) + ") is not after `at` (" + format_time(*f.at) +
                   "): nothing fires at or after `until`, so this fault would never act");
    if (f.at && *f.at > end)
      error(m, "this fault at " + format_time(*f.at) + " comes after the run ends (at " + format_time(end) +
                   "): it would never act");
    if (f.after && *f.after >= end)
      error(m, "`after` " + format_time(*f.after) + " starts this fault's clock when the run has ended (at " + format_time(end) +
                   "): it would never act");
    if (f.after && f.until && *f.until <= *f.after)
      error(m, "`until` (" + format_time(*f.until) + ") is not after `after` (" + format_time(*f.after) +
                   "): this fault's clock would stop before it starts");
    if (f.until && f.mtbf && *f.until <= Time{})
      error(m, "`until` " + format_time(*f.until) + " ends this fault before the run starts: it would never act");
    // A swarm range of `at` reaching past the run's end: the seeds that draw past it never act
    // (issue 34: they were accepted in silence).
    for (const faults::KnobRange& r : f.ranges) {
      const DurationParse hi = parse_duration(r.hi);
      if (r.key == "at" && hi.ok && Time{} + hi.value > end)
        error(m, "`at: " + r.lo + ".." + r.hi + "` reaches past the run's end (at " + format_time(end) +
                     "): a seed that draws past it never acts; end the range by " + format_time(end));
    }
  }

  /// A registered name with a '/' in it is a path without its leading '/': nothing registers such
  /// a name, so the fault would never be armed.
  void slashed_name(const std::string& name, Mark m) {
    if (name.find('/') == std::string::npos) return;
    const std::string as_path = "/" + name;
    const std::string hint = paths_.count(as_path) != 0 ? " (did you mean '" + as_path + "'?)" : std::string();
    error(m, "'" + name + "' is not a path (a path starts with '/') and no process registers a name with '/' in it: "
             "this fault would never act" + hint);
  }

  /// A fault's node: a declared one, or node_of(NAME), wherever NAME runs when it fires.
  void fault_node(const std::string& name, Mark m) {
    if (!faults::node_of_name(name)) node(name, m);
  }

  const Scenario& s_;
  const Registry& registry_;
  /// A name one behaviour sends to: the name, where it is written (or the behaviour, by default), whose.
  struct Ref {
    std::string name;
    Mark mark;
    std::string owner;
  };
  std::set<std::string> registered_;
  std::vector<Ref> refs_;
  std::set<std::string> goroutine_nodes_;  // nodes a behaviour with goroutines runs on
  bool declared_names_ = true;  // every behaviour so far is a built-in one
  std::set<std::string> known_nodes_;
  std::map<std::string, PathInfo> paths_;
  std::map<std::string, std::string> dynamic_parents_;  // path -> template id
  std::set<std::string> used_;  // the behaviours the file runs
  std::vector<Diagnostic> errors_;
};

/// The `model` check judges only what the reference model covers: what lies outside, once the
/// file is otherwise right (a half-read step or tree would be reported twice over).
void model_scope(const Scenario& s, std::vector<Diagnostic>& errors) {
  if (!errors.empty() || std::none_of(s.checks.begin(), s.checks.end(), [](const CheckDecl& c) { return c.name == "model"; })) return;
  to_model_case(s, errors);
}

}  // namespace

void validate_into(const Scenario& s, const Registry& registry, std::vector<Diagnostic>& errors) {
  for (Diagnostic& d : Validator(s, registry).run()) errors.push_back(std::move(d));
  model_scope(s, errors);
}

std::vector<Diagnostic> validate(const Scenario& s, const Registry& registry) {
  std::vector<Diagnostic> errors;
  validate_into(s, registry, errors);
  return errors;
}

}  // namespace lic::scenarios
