#include "scenarios/run/world.hpp"

#include <algorithm>

#include "scenarios/run/events.hpp"
#include "supervision/tree_path.hpp"

namespace lic::scenarios {

namespace {

std::string describe(const std::vector<supervision::ChildInfo>& children) {
  std::string s;
  for (const supervision::ChildInfo& c : children) {
    if (!s.empty()) s += ",";
    s += c.id + ":" + (c.restarting ? "restarting" : c.pid ? "running" : "undefined");
  }
  return s;
}

}  // namespace

std::string pid_term(const Simulation& sim, Pid p) {
  if (!p) return "undefined";
  const std::optional<ProcessInfo> info = sim.info(p);
  if (!info || info->label.name.text().empty()) return "pid";
  return std::string(info->label.name.text()) + "#" + std::to_string(info->label.instance);
}

std::string rows_term(const Simulation& sim, const std::vector<supervision::ChildInfo>& children, bool dynamic) {
  std::string s = "[";
  for (const supervision::ChildInfo& c : children) {
    if (s.size() > 1) s += ",";
    const std::string who = c.restarting ? "restarting" : pid_term(sim, c.pid);
    s += "{" + (dynamic ? std::string("undefined") : c.id) + "," + who + "," + std::string(to_string(c.type)) + "}";
  }
  return s + "]";
}

std::string counts_term(const supervision::ChildCounts& c) {
  return "[{specs," + std::to_string(c.specs) + "},{active," + std::to_string(c.active) + "},{supervisors," +
         std::to_string(c.supervisors) + "},{workers," + std::to_string(c.workers) + "}]";
}

std::string reply_term(const Simulation& sim, Step::Op op, const supervision::ManagementReply& r) {
  if (!r.ok) {
    if (r.error == Reason::other(Atom("already_started"))) return "{error,{already_started," + pid_term(sim, r.pid) + "}}";
    if (!r.failed_child.empty()) return "{error,{" + to_string(r.error) + ",{child," + r.failed_child + "}}}";
    return "{error," + to_string(r.error) + "}";
  }
  if (op == Step::Op::start_child || op == Step::Op::restart_child) return "{ok," + pid_term(sim, r.pid) + "}";
  return "ok";
}

namespace {

std::string node_of(const Scenario& s, const TreeNode& t) {
  return t.spec.node.empty() ? s.default_node() : std::string(t.spec.node.text());
}

}  // namespace

World::World(Simulation& sim, const Scenario& s, const Registry& registry) : sim_(sim), s_(s), build_(registry) {
  order_.resize(s_.script.size());
  for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = i;
  std::stable_sort(order_.begin(), order_.end(),
                   [this](std::size_t a, std::size_t b) { return s_.script[a].at < s_.script[b].at; });
}

void World::boot_node(const std::string& node) {
  for (const TreeNode& t : s_.trees) {
    if (node_of(s_, t) != node) continue;
    SpawnOptions o;
    o.node = Atom(node);
    o.label = Label{Atom("/" + t.spec.id), ++boots_[t.spec.id]};
    sim_.spawn(build_.root(t), o);
  }
}

void World::boot_all() {
  std::vector<std::string> nodes;
  for (const TreeNode& t : s_.trees) {
    const std::string n = node_of(s_, t);
    if (std::find(nodes.begin(), nodes.end(), n) == nodes.end()) nodes.push_back(n);
  }
  for (const std::string& n : nodes) {
    sim_.set_node_boot(Atom(n), [this, n] { boot_node(n); });
    boot_node(n);
  }
}

void World::run_until(Time t) {
  while (next_step_ < order_.size() && s_.script[order_[next_step_]].at <= t) {
    const Step& st = s_.script[order_[next_step_++]];
    sim_.run_until(st.at);
    perform(st);
  }
  sim_.run_until(t);
}

void World::stop_task(const Step& st) {
  namespace ev = run_events;
  const Atom node(st.target);
  sim_.emit(ev::kScriptStep, {{ev::kOp, Atom("stop_task")}, {ev::kTarget, std::string(st.target)}});
  sim_.signal_node(node, Atom("sigterm"));
  Simulation& sim = sim_;
  sim_.schedule(sim_.now() + st.grace, [&sim, node] {
    if (sim.node_up(node)) sim.signal_node(node, Atom("sigkill"));
  });
}

void World::perform(const Step& st) {
  namespace ev = run_events;
  if (st.op == Step::Op::stop_task) {
    stop_task(st);
    return;
  }
  const Pid pid = supervision::find_by_path(sim_, st.target);
  const Atom op(std::string(to_string(st.op)));
  if (!pid) {
    sim_.emit(ev::kScriptSkipped, {{ev::kOp, op}, {ev::kTarget, std::string(st.target)}, {ev::kWhy, Atom("no_process")}});
    return;
  }
  sim_.emit(ev::kScriptStep, {{ev::kOp, op}, {ev::kTarget, std::string(st.target)}, {ev::kPid, pid}});
  switch (st.op) {
    case Step::Op::crash: sim_.crash(pid, st.reason); return;
    case Step::Op::kill: sim_.exit(pid, Reason::kill()); return;
    case Step::Op::exit: sim_.exit(pid, st.reason); return;
    case Step::Op::stop: sim_.send(pid, supervision::kSystemStop, st.reason); return;
    default: break;
  }
  SpawnOptions o;
  o.label = Label{Atom("$script"), 0};
  sim_.spawn([this, &st, pid](Context& ctx) { manage(ctx, st, pid); }, o);
}

supervision::ManagementReply World::terminate(Context& ctx, const Step& st, Pid sup) {
  // A dynamic child is named by its path's last part (worker.3): terminate it by pid.
  const Pid child = supervision::find_by_path(sim_, st.target + "/" + st.id);
  const auto* sup_b = dynamic_cast<const supervision::Supervisor*>(sim_.behaviour_of(sup));
  return sup_b != nullptr && sup_b->dynamic() ? supervision::terminate_child(ctx, sup, child)
                                              : supervision::terminate_child(ctx, sup, st.id);
}

void World::manage(Context& ctx, const Step& st, Pid sup) {
  namespace ev = run_events;
  supervision::ManagementReply r;
  switch (st.op) {
    case Step::Op::start_child:
      r = st.child ? supervision::start_child(ctx, sup, build_.child(*st.child, false))
                   : supervision::start_child(ctx, sup, supervision::DynamicArg{st.arg});
      break;
    case Step::Op::terminate_child: r = terminate(ctx, st, sup); break;
    case Step::Op::restart_child: r = supervision::restart_child(ctx, sup, st.id); break;
    case Step::Op::delete_child: r = supervision::delete_child(ctx, sup, st.id); break;
    case Step::Op::which_children: {
      const auto children = supervision::which_children(ctx, sup);
      const auto* b = dynamic_cast<const supervision::Supervisor*>(sim_.behaviour_of(sup));
      ctx.emit(ev::kWhichChildren, {{ev::kTarget, std::string(st.target)},
                                    {ev::kChildren, describe(children)},
                                    {ev::kRows, rows_term(sim_, children, b != nullptr && b->dynamic())}});
      return;
    }
    case Step::Op::count_children:
      ctx.emit(ev::kCountChildren, {{ev::kTarget, std::string(st.target)},
                                    {ev::kCounts, counts_term(supervision::count_children(ctx, sup))}});
      return;
    default: return;
  }
  ctx.emit(ev::kScriptResult, {{ev::kOp, Atom(std::string(to_string(st.op)))},
                               {ev::kTarget, std::string(st.target)},
                               {ev::kResult, r.ok ? Atom("ok") : Atom(to_string(r.error))},
                               {ev::kValue, reply_term(sim_, st.op, r)}});
}

}  // namespace lic::scenarios
