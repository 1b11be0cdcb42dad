#include "scenarios/run/runner.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "scenarios/run/judge.hpp"
#include "scenarios/run/metrics.hpp"
#include "scenarios/run/stream.hpp"
#include "scenarios/run/world.hpp"

namespace lic::scenarios {

namespace {

bool path_label(Atom name) {
  const std::string_view t = name.text();
  return !t.empty() && t.front() == '/';
}

FinalState final_state(const Simulation& sim, const EventLog& events) {
  FinalState f;
  f.supervisors = supervision::snapshot(sim);
  f.lifecycles = supervision::lifecycle_snapshot(sim);
  // Every spawn at a path: a label's instance counts starts within one life of its supervisor,
  // and a restarted supervisor's children start again from 1.
  for (const TraceEvent& e : events.only({EventKind::spawn})) {
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

/// The simulation, streaming to the sinks from its first event (setting up the network traces).
std::unique_ptr<Simulation> make_simulation(const Scenario& s, const RunOptions& opts) {
  const Budgets budgets = opts.budgets.scaled_to(s);
  SimOptions so;
  so.seed = opts.seed.value_or(s.seed);
  so.tie_break = opts.tie_break.value_or(s.tie_break);
  so.trace = opts.stream != nullptr ? TraceMode::hash : opts.trace;
  so.default_node = Atom(s.default_node());
  so.max_events = budgets.max_events;
  so.max_trace_bytes = budgets.max_memory_bytes;
  so.max_events_at_instant = budgets.max_events_at_instant;
  for (const StreamPin& p : s.streams) so.pins.emplace(p.key, p.seed);
  so.record_streams = opts.record_streams;
  auto sim = std::make_unique<Simulation>(so);
  for (TraceSink* sink : opts.sinks) sim->trace().add_sink(sink);
  if (opts.stream != nullptr) sim->trace().add_sink(opts.stream);
  for (const NodeDecl& n : s.nodes) {
    if (n.drift_ppm != 0) sim->set_clock(Atom(n.name), n.clock_skew, n.drift_ppm);
    else sim->set_clock_skew(Atom(n.name), n.clock_skew);
    if (n.preempt.num != 0) sim->set_preemption(Atom(n.name), n.preempt, n.preempt_mean);
  }
  sim->buggify().enable({s.buggify.begin(), s.buggify.end()});
  sim->set_default_link(s.default_link);
  if (s.net_ticks.ticktime != Duration::zero()) sim->set_net_ticks(s.net_ticks);
  for (const LinkDecl& l : s.links) sim->set_link(Atom(l.from), Atom(l.to), l.params);
  return sim;
}

faults::PhaseDriver driver(const Scenario& s, World& world, const RunOptions& opts) {
  faults::PhaseDriver d;
  for (const TreeNode& t : s.trees) {
    d.roots.push_back({"/" + t.spec.id, Atom(t.spec.node.empty() ? s.default_node() : std::string(t.spec.node.text()))});
  }
  d.run_until = [&world](Time t) { world.run_until(t); };
  d.until = opts.until;
  if (opts.stream != nullptr) d.log = &opts.stream->kept();
  return d;
}

CheckInput check_input(const Scenario& s, const RunResult& out, const faults::PhaseDriver& d) {
  CheckInput in;
  in.events = &out.kept_events();
  if (out.stream != nullptr) in.conservation = out.stream->conservation();
  in.end = out.end;
  in.phases = out.phases;
  in.quiet_ran = out.phases.quiet_ran;
  for (const faults::RootRef& r : d.roots) in.roots.push_back(r.path);
  in.alive = out.final_state.alive;
  in.starts = out.final_state.starts;
  in.scenario = &s;
  return in;
}

}  // namespace

std::uint64_t declared_processes(const Scenario& s) {
  std::uint64_t n = 0;
  std::vector<const TreeNode*> todo;
  for (const TreeNode& t : s.trees) todo.push_back(&t);
  while (!todo.empty()) {
    const TreeNode* t = todo.back();
    todo.pop_back();
    n += 1 + t->services.size();
    for (const TreeNode& c : t->children) todo.push_back(&c);
  }
  return n;
}

Budgets Budgets::scaled_to(const Scenario& s) const {
  Budgets b = *this;
  if (b.max_events != kScaled && b.max_events_at_instant != kScaled) return b;
  const std::uint64_t processes = declared_processes(s);
  if (b.max_events == kScaled) b.max_events = kEventsBase + kEventsPerProcess * processes;
  if (b.max_events_at_instant == kScaled) b.max_events_at_instant = kInstantBase + kInstantPerProcess * processes;
  return b;
}

const EventLog& RunResult::kept_events() const { return stream != nullptr ? stream->kept() : sim->trace().events(); }

std::string hash_hex(std::uint64_t h) { return fmt::format("{:016x}", h); }

RunResult run(const Scenario& s, const RunOptions& opts) {
  const Registry& registry = opts.registry != nullptr ? *opts.registry : Registry::builtin();
  RunResult out;
  out.sim = make_simulation(s, opts);
  out.stream = opts.stream;
  Simulation& sim = *out.sim;
  out.seed = sim.options().seed;
  out.tie_break = sim.options().tie_break;
  World world(sim, s, registry);
  {
    faults::Injector injector(sim, s.faults);
    injector.start();  // before the trees boot: stochastic faults see their targets come up
    world.boot_all();
    const faults::PhaseDriver d = driver(s, world, opts);
    if (opts.on_loop) opts.on_loop(true);
    try {
      out.phases = faults::run_phases(sim, injector, faults::Phases{s.duration, s.quiet, s.expect_escalation}, d);
    } catch (const BudgetExceeded& e) {
      if (opts.on_loop) opts.on_loop(false);
      if (!opts.partial_on_budget) throw;
      out.stopped = e.what();
    } catch (...) {  // a behaviour's or a script's exception: the loop ended all the same
      if (opts.on_loop) opts.on_loop(false);
      throw;
    }
    if (opts.on_loop && out.stopped.empty()) opts.on_loop(false);
    out.end = sim.now();
    out.faults_injected = injector.injected();
    out.faults_skipped = injector.skipped();
    out.faults = injector.tallies();
    for (const auto& [name, count] : sim.buggify().counts()) out.buggify.emplace(name, count);
    for (TraceSink* sink : opts.sinks) sim.trace().remove_sink(sink);
    if (out.stream != nullptr) out.stream->finish();
    out.final_state = final_state(sim, out.kept_events());
    const CheckInput in = check_input(s, out, d);
    if (out.stopped.empty()) {  // a run cut short by a budget is not judged
      out.checks = run_checks(effective_checks(s), in, registry);
      out.metrics = measure(registry, in);
    }
  }
  if (opts.stream != nullptr) sim.trace().remove_sink(opts.stream);
  out.events = sim.trace().count();
  out.trace_hash = sim.trace().hash();
  out.passed = out.stopped.empty() && std::all_of(out.checks.begin(), out.checks.end(), [](const CheckResult& c) { return c.passed; });
  return out;
}

}  // namespace lic::scenarios
