#include "scenarios/run/runner.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "properties/convergence.hpp"
#include "scenarios/behaviours/table.hpp"
#include "supervision/stock_worker.hpp"

namespace lic::scenarios {

namespace {

using supervision::Child;
using supervision::ChildInfo;

const Atom kScriptStep("script_step");
const Atom kScriptSkipped("script_skipped");
const Atom kScriptResult("script_result");
const Atom kWhichChildren("which_children");
const Atom kOp("op");
const Atom kTarget("target");
const Atom kWhy("why");
const Atom kResult("result");
const Atom kChildren("children");

BehaviourFactory factory(const BehaviourRef& ref) {
  std::vector<Diagnostic> errors;
  BehaviourFactory f = make_behaviour(ref, errors);
  if (!f) {
    // The scenario was validated; reaching this is a bug in the caller, not bad input.
    throw std::logic_error("behaviour '" + ref.name + "' is not runnable: " +
                           (errors.empty() ? std::string("no factory") : errors.front().message));
  }
  return f;
}

supervision::LifecycleSpec lifecycle_spec(const TreeNode& t) {
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

supervision::SupervisorSpec supervisor_spec(const TreeNode& t);

/// The child entry that starts tree node `t` under its supervisor.
Child child_of(const TreeNode& t, bool is_template) {
  Child c;
  switch (t.kind) {
    case TreeNode::Kind::worker: {
      BehaviourFactory f = factory(t.behaviour);
      if (is_template) c.start.behaviour_with_arg = [f](const std::string& arg) { return f(arg); };
      c.start.behaviour = [f] { return f(""); };
      break;
    }
    case TreeNode::Kind::supervisor:
      c = supervision::Supervisor::child(t.spec.id, supervisor_spec(t));
      break;
    case TreeNode::Kind::lifecycle:
      c.start.behaviour = [spec = lifecycle_spec(t)] {
        return std::make_unique<supervision::LifecycleSupervisor>(spec);
      };
      break;
  }
  c.spec = t.spec;
  return c;
}

supervision::SupervisorSpec supervisor_spec(const TreeNode& t) {
  supervision::SupervisorSpec spec;
  spec.flags = t.flags;
  const bool dynamic = t.flags.strategy == supervision::Strategy::simple_one_for_one;
  for (const TreeNode& c : t.children) spec.children.push_back(child_of(c, dynamic));
  return spec;
}

std::unique_ptr<Behaviour> root_behaviour(const TreeNode& t) {
  if (t.kind == TreeNode::Kind::lifecycle) return std::make_unique<supervision::LifecycleSupervisor>(lifecycle_spec(t));
  return std::make_unique<supervision::Supervisor>(supervisor_spec(t));
}

std::string describe(const std::vector<ChildInfo>& children) {
  std::string s;
  for (const ChildInfo& c : children) {
    if (!s.empty()) s += ",";
    s += c.id + ":" + (c.restarting ? "restarting" : c.pid ? "running" : "undefined");
  }
  return s;
}

/// Runs the scenario's script and boots its trees: the world's side of a run.
class World {
 public:
  World(Simulation& sim, const Scenario& s) : sim_(sim), s_(s) {}

  void boot_node(const std::string& node) {
    for (const TreeNode& t : s_.trees) {
      const std::string n = t.spec.node.empty() ? s_.default_node() : std::string(t.spec.node.text());
      if (n != node) continue;
      SpawnOptions o;
      o.node = Atom(n);
      o.label = Label{Atom("/" + t.spec.id), ++boots_[t.spec.id]};
      sim_.spawn(root_behaviour(t), o);
    }
  }

  void boot_all() {
    std::vector<std::string> nodes;
    for (const TreeNode& t : s_.trees) {
      const std::string n = t.spec.node.empty() ? s_.default_node() : std::string(t.spec.node.text());
      if (std::find(nodes.begin(), nodes.end(), n) == nodes.end()) nodes.push_back(n);
    }
    for (const std::string& n : nodes) {
      sim_.set_node_boot(Atom(n), [this, n] { boot_node(n); });
      boot_node(n);
    }
  }

  /// Runs the simulation to `t`, taking each script step due by then once everything else due
  /// at its instant has happened (an operator acts on a settled instant, as the reference
  /// model's harness injects; steps at one instant in file order). Then the events it started
  /// at that instant run too.
  void run_until(Time t) {
    while (next_step_ < order_.size() && s_.script[order_[next_step_]].at <= t) {
      const Step& st = s_.script[order_[next_step_++]];
      sim_.run_until(st.at);
      perform(st);
    }
    sim_.run_until(t);
  }

  void order_script() {
    order_.resize(s_.script.size());
    for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = i;
    std::stable_sort(order_.begin(), order_.end(),
                     [this](std::size_t a, std::size_t b) { return s_.script[a].at < s_.script[b].at; });
  }

 private:
  void perform(const Step& st) {
    const Pid pid = supervision::find_by_path(sim_, st.target);
    if (!pid) {
      sim_.emit(kScriptSkipped, {{kOp, Atom(std::string(to_string(st.op)))},
                                 {kTarget, std::string(st.target)},
                                 {kWhy, Atom("no_process")}});
      return;
    }
    sim_.emit(kScriptStep, {{kOp, Atom(std::string(to_string(st.op)))}, {kTarget, std::string(st.target)}, {Atom("pid"), pid}});
    switch (st.op) {
      case Step::Op::crash:
        sim_.crash(pid, st.reason);
        return;
      case Step::Op::kill:
        sim_.exit(pid, Reason::kill());
        return;
      case Step::Op::exit:
        sim_.exit(pid, st.reason);
        return;
      case Step::Op::stop:
        sim_.send(pid, supervision::kSystemStop, st.reason);
        return;
      default:
        break;
    }
    // The management calls are gen_server calls: a short-lived operator process makes each.
    SpawnOptions o;
    o.label = Label{Atom("$script"), 0};
    sim_.spawn([this, &st, pid](Context& ctx) { manage(ctx, st, pid); }, o);
  }

  void manage(Context& ctx, const Step& st, Pid sup) {
    const Atom op(std::string(to_string(st.op)));
    supervision::ManagementReply r;
    switch (st.op) {
      case Step::Op::start_child:
        r = st.child ? supervision::start_child(ctx, sup, child_of(*st.child, false))
                     : supervision::start_child(ctx, sup, supervision::DynamicArg{st.arg});
        break;
      case Step::Op::terminate_child: {
        // A dynamic child is named by its path's last part (worker.3): terminate it by pid.
        const Pid child = supervision::find_by_path(sim_, st.target + "/" + st.id);
        const auto* sup_b = dynamic_cast<const supervision::Supervisor*>(sim_.behaviour_of(sup));
        r = sup_b != nullptr && sup_b->dynamic() ? supervision::terminate_child(ctx, sup, child)
                                                 : supervision::terminate_child(ctx, sup, st.id);
        break;
      }
      case Step::Op::restart_child:
        r = supervision::restart_child(ctx, sup, st.id);
        break;
      case Step::Op::delete_child:
        r = supervision::delete_child(ctx, sup, st.id);
        break;
      case Step::Op::which_children:
        ctx.emit(kWhichChildren, {{kTarget, std::string(st.target)},
                                  {kChildren, describe(supervision::which_children(ctx, sup))}});
        return;
      default:
        return;
    }
    ctx.emit(kScriptResult, {{kOp, op},
                             {kTarget, std::string(st.target)},
                             {kResult, r.ok ? Atom("ok") : Atom(to_string(r.error))}});
  }

  Simulation& sim_;
  const Scenario& s_;
  std::map<std::string, std::uint32_t> boots_;
  std::vector<std::size_t> order_;  ///< the script's steps by time (file order within one)
  std::size_t next_step_ = 0;
};

bool path_label(Atom name) {
  const std::string_view t = name.text();
  return !t.empty() && t.front() == '/';
}

FinalState final_state(const Simulation& sim) {
  FinalState f;
  f.supervisors = supervision::snapshot(sim);
  f.lifecycles = supervision::lifecycle_snapshot(sim);
  // Every spawn at a path: a label's instance counts starts within one life of its supervisor,
  // and a restarted supervisor's children start again from 1.
  for (const TraceEvent& e : sim.trace().events()) {
    if (e.kind == EventKind::spawn && path_label(e.label.name)) ++f.starts[std::string(e.label.name.text())];
  }
  for (Pid p : sim.processes()) {
    const auto info = sim.info(p);
    if (info && path_label(info->label.name)) f.alive.emplace_back(info->label.name.text());
  }
  std::sort(f.alive.begin(), f.alive.end());
  f.alive.erase(std::unique(f.alive.begin(), f.alive.end()), f.alive.end());
  return f;
}

}  // namespace

std::string hash_hex(std::uint64_t h) { return fmt::format("{:016x}", h); }

RunResult run(const Scenario& s, const RunOptions& opts) {
  RunResult out;
  SimOptions so;
  so.seed = opts.seed.value_or(s.seed);
  so.tie_break = opts.tie_break.value_or(s.tie_break);
  so.trace = opts.trace;
  so.default_node = Atom(s.default_node());
  out.seed = so.seed;
  out.tie_break = so.tie_break;
  out.sim = std::make_unique<Simulation>(so);
  Simulation& sim = *out.sim;
  for (TraceSink* sink : opts.sinks) sim.trace().add_sink(sink);

  for (const NodeDecl& n : s.nodes) sim.set_clock_skew(Atom(n.name), n.clock_skew);
  sim.set_default_link(s.default_link);
  for (const LinkDecl& l : s.links) sim.set_link(Atom(l.from), Atom(l.to), l.params);

  World world(sim, s);
  {
    faults::Injector injector(sim, s.faults);
    injector.start();
    world.boot_all();
    world.order_script();

    const Time limit = opts.until.value_or(Time::max());
    out.phases.chaos_end = Time{} + s.duration;
    world.run_until(std::min(out.phases.chaos_end, limit));
    bool quiet_ran = limit >= out.phases.chaos_end;
    out.phases.end = out.phases.chaos_end;
    if (s.quiet && limit > out.phases.chaos_end) {
      injector.stop();
      out.phases.end = out.phases.chaos_end + *s.quiet;
      world.run_until(std::min(out.phases.end, limit));
      quiet_ran = limit >= out.phases.end;
    } else if (s.quiet) {
      quiet_ran = false;
    }
    out.end = sim.now();
    out.faults_injected = injector.injected();
    out.faults_skipped = injector.skipped();
    for (TraceSink* sink : opts.sinks) sim.trace().remove_sink(sink);

    // How the phases came out: a root gone on a node that is up is an escalation to the top.
    std::vector<std::string> roots;
    for (const TreeNode& t : s.trees) {
      const std::string path = "/" + t.spec.id;
      roots.push_back(path);
      const std::string node = t.spec.node.empty() ? s.default_node() : std::string(t.spec.node.text());
      if (sim.node_up(Atom(node)) && !supervision::find_by_path(sim, path)) {
        out.phases.escalated = true;
        out.phases.not_running.push_back(path + " is gone (escalated to the top)");
      }
    }
    out.phases.settled_at = faults::settled_after(sim.trace().events(), out.phases.chaos_end);
    if (!out.phases.escalated) out.phases.not_running = properties::not_converged(supervision::snapshot(sim));
    out.phases.converged = !out.phases.escalated && out.phases.not_running.empty();
    out.phases.passed = s.expect_escalation ? out.phases.escalated : out.phases.converged;

    out.final_state = final_state(sim);
    CheckInput in;
    in.events = &sim.trace().events();
    in.end = out.end;
    in.phases = out.phases;
    in.quiet_ran = quiet_ran;
    in.roots = roots;
    in.alive = out.final_state.alive;
    in.starts = out.final_state.starts;
    in.scenario = &s;
    out.checks = run_checks(effective_checks(s), in);
  }
  out.events = sim.trace().count();
  out.trace_hash = sim.trace().hash();
  out.passed = std::all_of(out.checks.begin(), out.checks.end(), [](const CheckResult& c) { return c.passed; });
  return out;
}

}  // namespace lic::scenarios
