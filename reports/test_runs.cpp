#include "reports/test_runs.hpp"

#include <algorithm>
#include <functional>

#include "supervision/lifecycle.hpp"
#include "supervision/stock_worker.hpp"
#include "supervision/supervisor.hpp"

namespace lic::reports::testing {
namespace {

using namespace supervision;

Child worker(const std::string& id, Duration init_delay = {}) {
  ChildSpec spec;
  spec.id = id;
  WorkerConfig w;
  w.init_delay = init_delay;
  return stock_child(spec, w);
}

ShapeNode worker_shape(const std::string& parent, const std::string& id) {
  ShapeNode n;
  n.path = parent + "/" + id;
  n.id = id;
  n.kind = "worker";
  n.behaviour = "stock";
  n.restart = "permanent";
  n.shutdown = "5s";
  return n;
}

ShapeNode sup_shape(const std::string& path, const SupFlags& f, std::vector<ShapeNode> children) {
  ShapeNode n;
  n.path = path;
  n.id = path.substr(path.rfind('/') + 1);
  n.kind = "supervisor";
  n.strategy = std::string(to_string(f.strategy));
  n.intensity = f.intensity;
  n.period = f.period;
  n.children = std::move(children);
  if (path.find('/', 1) != std::string::npos) {
    n.restart = "permanent";
    n.shutdown = "infinity";
  }
  return n;
}

Pid spawn_root(Simulation& sim, SupervisorSpec spec, const char* path, Atom node = {}) {
  SpawnOptions o;
  o.label = Label{Atom(path), 1};
  o.node = node;
  return sim.spawn(std::make_unique<Supervisor>(std::move(spec)), o);
}

void crash_at(Simulation& sim, Time at, std::string path, Reason why) {
  sim.schedule(at, [&sim, path = std::move(path), why] {
    if (const Pid p = find_by_path(sim, path)) sim.send(p, kCrash, why);
  });
}

/// Fills what tools/ takes from a RunResult, once the run is over.
TestRun finish(std::unique_ptr<Simulation> sim, std::string scenario, std::vector<ShapeNode> trees,
               Duration end) {
  sim->run_until(Time{0} + end);
  TestRun t;
  RunReport& r = t.report;
  r.scenario = std::move(scenario);
  r.file = "scenarios/" + r.scenario + ".yaml";
  r.seed = sim->options().seed;
  r.tie_break = "fifo";
  r.end = sim->now();
  r.events = sim->trace().count();
  r.trace_hash = sim->trace().hash();
  r.reproduce = "letitcrash run " + r.file + " --seed " + std::to_string(r.seed) + " --tie-break fifo";
  r.checks = {{"converges", true, "every supervised path is up again by the end"},
              {"availability(/root)", false, "A = 0.91 < 0.99 over 12s: 3 failures, MTTR 1ms"}};
  r.passed = false;
  r.trees = std::move(trees);
  r.trace = &sim->trace().events();
  r.final_supervisors = snapshot(*sim);
  r.final_lifecycles = lifecycle_snapshot(*sim);
  for (const TraceEvent& e : *r.trace) {
    if (e.kind != EventKind::spawn || e.label.name.empty()) continue;
    std::uint32_t& n = r.starts[std::string(e.label.name.text())];
    n = std::max(n, e.label.instance);
  }
  for (const Pid p : sim->processes()) {
    const auto info = sim->info(p);
    if (info && !info->label.name.empty()) r.alive.emplace_back(info->label.name.text());
  }
  std::sort(r.alive.begin(), r.alive.end());
  t.sim = std::move(sim);
  return t;
}

}  // namespace

TestRun pipeline_run(const std::vector<Duration>& crashes, Duration end) {
  auto sim = std::make_unique<Simulation>(SimOptions{.seed = 7});
  SupervisorSpec input;
  input.flags = SupFlags::elixir();
  input.flags.strategy = Strategy::rest_for_one;
  input.children = {worker("reader"), worker("parser", kMillisecond * 50)};
  SupervisorSpec root;
  root.flags = SupFlags::elixir();
  root.children = {Supervisor::child("input", input), worker("db_sink")};
  const SupFlags input_flags = input.flags, root_flags = root.flags;
  spawn_root(*sim, std::move(root), "/root");
  for (const Duration d : crashes)
    crash_at(*sim, Time{0} + d, "/root/input/parser", Reason::error(Atom("boom")));
  std::vector<ShapeNode> trees{
      sup_shape("/root", root_flags,
                {sup_shape("/root/input", input_flags,
                           {worker_shape("/root/input", "reader"), worker_shape("/root/input", "parser")}),
                 worker_shape("/root", "db_sink")})};
  return finish(std::move(sim), "pipeline", std::move(trees), end);
}

TestRun wide_run(std::size_t workers, std::size_t crashes_each, Duration end) {
  auto sim = std::make_unique<Simulation>(SimOptions{.seed = 11});
  SupervisorSpec root;
  root.flags.intensity = 1'000'000'000;
  root.flags.period = kSecond;
  std::vector<ShapeNode> shapes;
  for (std::size_t i = 0; i < workers; ++i) {
    root.children.push_back(worker("w" + std::to_string(i)));
    shapes.push_back(worker_shape("/root", "w" + std::to_string(i)));
  }
  const SupFlags flags = root.flags;
  spawn_root(*sim, std::move(root), "/root");
  const std::int64_t spacing = end.ns / static_cast<std::int64_t>(crashes_each + 1);
  for (std::size_t i = 0; i < workers; ++i) {
    for (std::size_t k = 0; k < crashes_each; ++k) {
      // Spread over the run, each worker offset a little so the crashes do not coincide.
      const Time at{spacing * static_cast<std::int64_t>(k + 1) + static_cast<std::int64_t>(i) * 1'000'003};
      const Reason why = k % 3 == 2 ? Reason::kill() : Reason::error(Atom("boom"));
      crash_at(*sim, at, "/root/w" + std::to_string(i), why);
    }
  }
  return finish(std::move(sim), "wide", {sup_shape("/root", flags, std::move(shapes))}, end);
}

TestRun dynamic_run() {
  auto sim = std::make_unique<Simulation>(SimOptions{.seed = 3});
  SupervisorSpec pool;
  pool.flags.strategy = Strategy::simple_one_for_one;
  pool.flags.intensity = 5;
  Child tmpl = worker("worker");
  tmpl.start.behaviour = nullptr;
  tmpl.start.behaviour_with_arg = [](const std::string&) {
    return std::make_unique<StockWorker>(WorkerConfig{});
  };
  pool.children.push_back(std::move(tmpl));
  SupervisorSpec root;
  root.children = {Supervisor::child("pool", pool)};
  const SupFlags pool_flags = pool.flags, root_flags = root.flags;
  spawn_root(*sim, std::move(root), "/root");
  sim->run();
  const Pid pool_pid = find_by_path(*sim, "/root/pool");
  sim->spawn([pool_pid](Context& ctx) {
    for (const char* arg : {"a", "b", "c"}) start_child(ctx, pool_pid, DynamicArg{arg});
  });
  crash_at(*sim, Time{0} + kSecond, "/root/pool/worker.2", Reason::error(Atom("boom")));
  ShapeNode tmpl_shape = worker_shape("/root/pool", "worker");
  tmpl_shape.restart = "permanent";
  std::vector<ShapeNode> trees{
      sup_shape("/root", root_flags, {sup_shape("/root/pool", pool_flags, {tmpl_shape})})};
  return finish(std::move(sim), "dynamic", std::move(trees), kSecond * 2);
}

TestRun network_run() {
  auto sim = std::make_unique<Simulation>(SimOptions{.seed = 5});
  Simulation& s = *sim;
  const Atom n0("node0"), n1("node1");
  SupervisorSpec root;
  root.children = {worker("w")};
  const SupFlags flags = root.flags;
  spawn_root(s, root, "/root", n0);
  auto boot_edge = [&s, root, n1] { spawn_root(s, root, "/edge", n1); };
  boot_edge();
  s.set_node_boot(n1, boot_edge);

  LifecycleSpec app;
  for (const char* name : {"db", "cache"}) {
    ServiceSpec svc;
    svc.name = name;
    svc.auto_start = true;
    svc.start.behaviour = [] { return std::make_unique<StockWorker>(WorkerConfig{}); };
    if (std::string(name) == "cache") svc.depends_on = {"db"};
    app.services.push_back(std::move(svc));
  }
  SpawnOptions o;
  o.label = Label{Atom("/app"), 1};
  o.node = n0;
  s.spawn(std::make_unique<LifecycleSupervisor>(std::move(app)), o);

  s.schedule(Time{0} + kSecond * 2, [&s, n0, n1] {
    s.block(n0, n1);
    s.block(n1, n0);
  });
  s.schedule(Time{0} + kSecond * 4, [&s, n0, n1] {
    s.unblock(n0, n1);
    s.unblock(n1, n0);
  });
  s.schedule(Time{0} + kSecond * 5, [&s, n1] { s.pause_node(n1, kSecond); });
  s.schedule(Time{0} + kSecond * 7, [&s, n1] { s.crash_node(n1); });
  s.schedule(Time{0} + kSecond * 8, [&s, n1] { s.restart_node(n1); });
  // What the fault injector records: the world's event, naming the process when there is one.
  s.schedule(Time{0} + kSecond * 2, [&s] {
    s.emit(Atom("fault_injected"), {{Atom("fault"), Atom("split")},
                                    {Atom("kind"), Atom("partition")},
                                    {Atom("target"), Atom("node0|node1")},
                                    {Atom("paths"), std::int64_t{2}}});
  });
  s.schedule(Time{0} + kSecond * 9, [&s] {
    const Pid db = find_by_path(s, "/app/db");
    s.emit(Atom("fault_injected"), {{Atom("fault"), Atom("db_crash")},
                                    {Atom("kind"), Atom("crash")},
                                    {Atom("target"), Atom("/app/db")},
                                    {Atom("pid"), db},
                                    {Atom("reason"), Atom("{error,boom}")}});
  });
  crash_at(s, Time{0} + kSecond * 9, "/app/db", Reason::error(Atom("boom")));

  ShapeNode edge = sup_shape("/edge", flags, {worker_shape("/edge", "w")});
  edge.node = "node1";
  ShapeNode lifecycle;
  lifecycle.path = "/app";
  lifecycle.id = "app";
  lifecycle.kind = "lifecycle";
  for (const char* name : {"db", "cache"}) {
    ShapeNode svc;
    svc.path = std::string("/app/") + name;
    svc.id = name;
    svc.kind = "service";
    svc.behaviour = "stock";
    if (std::string(name) == "cache") svc.depends_on = {"db"};
    lifecycle.children.push_back(std::move(svc));
  }
  std::vector<ShapeNode> trees{sup_shape("/root", flags, {worker_shape("/root", "w")}), std::move(edge),
                               std::move(lifecycle)};
  return finish(std::move(sim), "network", std::move(trees), kSecond * 12);
}

std::size_t count_exits(const RunReport& r, bool killed, const std::string& path_prefix) {
  std::size_t n = 0;
  for (const TraceEvent& e : *r.trace) {
    if (e.kind != EventKind::exit || e.reason.is_clean() || !e.label.name.text().starts_with(path_prefix))
      continue;
    const bool is_kill = e.reason.kind == ReasonKind::kill || e.reason.kind == ReasonKind::killed;
    n += is_kill == killed ? 1 : 0;
  }
  return n;
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size()))
    ++n;
  return n;
}

std::string unbalanced_tags(const std::string& text) {
  static const std::vector<std::string> kVoid{"meta", "img", "br", "hr", "link", "input"};
  std::vector<std::string> open;
  for (std::size_t at = text.find('<'); at != std::string::npos; at = text.find('<', at + 1)) {
    if (text.compare(at, 2, "<?") == 0 || text.compare(at, 2, "<!") == 0) continue;
    const std::size_t end = text.find('>', at);
    if (end == std::string::npos) return "a tag never ends at " + std::to_string(at);
    const bool closing = text[at + 1] == '/';
    const std::size_t name_at = at + (closing ? 2 : 1);
    const std::size_t name_end = text.find_first_of(" \t\n/>", name_at);
    const std::string name = text.substr(name_at, name_end - name_at);
    if (closing) {
      if (open.empty() || open.back() != name) {
        return "</" + name + "> at " + std::to_string(at) + " closes " +
               (open.empty() ? "nothing" : "<" + open.back() + ">");
      }
      open.pop_back();
    } else if (name == "script") {
      // A script's text is not markup: it runs to the first "</script" (HTML's raw text).
      const std::size_t close = text.find("</script>", end);
      if (close == std::string::npos) return "<script> at " + std::to_string(at) + " is never closed";
      at = close + 8;
    } else if (text[end - 1] != '/' && std::find(kVoid.begin(), kVoid.end(), name) == kVoid.end()) {
      open.push_back(name);
    }
  }
  return open.empty() ? std::string{} : "<" + open.back() + "> is never closed";
}

}  // namespace lic::reports::testing
