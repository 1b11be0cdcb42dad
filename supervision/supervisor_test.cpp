// The OTP supervisor process: seed 000's three checks (restart scope, shutdown clean-up,
// escalation past intensity) on the mini pipeline's tree, with stub stages.

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/held_event.hpp"
#include "sim/simulation.hpp"
#include "supervision/supervisor.hpp"

using namespace lic;
using namespace lic::literals;
using namespace lic::supervision;

namespace {

/// A stub stage: registers under its id, optionally traps exits, records terminate calls, and
/// can be told to take `stop_delay` to stop (it sleeps in terminate).
struct Stub : Behaviour {
  std::string id;
  bool trap = false;
  Duration stop_delay{};
  std::vector<std::string>* log = nullptr;
  InitResult init(Context& ctx) override {
    ctx.register_name(Atom(id));
    if (trap) ctx.trap_exit(true);
    return InitResult::ok();
  }
  void terminate(Context& ctx, const Reason& r) override {
    if (log != nullptr) log->push_back(id + " terminate " + to_string(r));
    if (stop_delay > Duration::zero()) ctx.sleep(stop_delay);
  }
};

Child stub(const std::string& id, std::vector<std::string>* log = nullptr, bool trap = false,
           Shutdown shutdown = Shutdown::after(5_s), Duration stop_delay = {}) {
  Child c;
  c.spec.id = id;
  c.spec.shutdown = shutdown;
  c.start.behaviour = [=] {
    auto s = std::make_unique<Stub>();
    s->id = id;
    s->trap = trap;
    s->stop_delay = stop_delay;
    s->log = log;
    return s;
  };
  return c;
}

/// Seed 000's tree: Root(one_for_one, 3 in 5 s) -> [sink_sup(one_for_one) -> [db_sink,
/// dead_letter], input_sup(rest_for_one) -> [reader, parser, validator]].
SupervisorSpec mini_pipeline() {
  SupervisorSpec sink;
  sink.flags = SupFlags::elixir();
  sink.children = {stub("db_sink"), stub("dead_letter")};
  SupervisorSpec input;
  input.flags = SupFlags::elixir();
  input.flags.strategy = Strategy::rest_for_one;
  input.children = {stub("reader"), stub("parser"), stub("validator")};
  SupervisorSpec root;
  root.flags = SupFlags::elixir();
  root.children = {Supervisor::child("sink", sink), Supervisor::child("input", input)};
  return root;
}

Pid start_root(Simulation& sim, SupervisorSpec spec) {
  SpawnOptions o;
  o.label = Label{Atom("/root"), 1};
  const Pid root = sim.spawn(std::make_unique<Supervisor>(std::move(spec)), o);
  sim.run();
  return root;
}

std::map<std::string, Pid> pids(const Simulation& sim) {
  std::map<std::string, Pid> out;
  for (const char* id : {"db_sink", "dead_letter", "reader", "parser", "validator"}) {
    out[id] = sim.whereis(Atom(id));
  }
  return out;
}

std::vector<std::string> changed(const std::map<std::string, Pid>& a,
                                 const std::map<std::string, Pid>& b) {
  std::vector<std::string> out;
  for (const auto& [id, pid] : a) {
    if (b.at(id) != pid) out.push_back(id);
  }
  return out;
}

std::vector<HeldEvent> system_events(const Simulation& sim, const char* name) {
  std::vector<HeldEvent> out;
  for (const TraceEvent& e : sim.trace().events()) {
    if (e.kind == EventKind::system && e.name == Atom(name)) out.push_back({e});
  }
  return out;
}

}  // namespace

TEST_CASE("supervisor: the mini pipeline's tree starts every child in order with its tree path", "[supervision][supervisor]") {
  Simulation sim;
  start_root(sim, mini_pipeline());
  for (const auto& [id, pid] : pids(sim)) {
    INFO(id);
    CHECK(pid);
  }
  auto started = system_events(sim, "child_started");
  REQUIRE(started.size() == 7);  // 2 supervisors, 5 stages
  std::vector<std::string> order;
  for (const HeldEvent& e : started) order.emplace_back(std::get<Atom>(e->fields()[0].value).text());
  CHECK(order == std::vector<std::string>{"db_sink", "dead_letter", "sink", "reader", "parser",
                                          "validator", "input"});
  auto info = sim.info(sim.whereis(Atom("parser")));
  REQUIRE(info);
  CHECK(info->label.name == Atom("/root/input/parser"));
  CHECK(info->label.instance == 1);
}

TEST_CASE("supervisor: killing each stage in turn changes exactly the pids its strategy restarts", "[supervision][supervisor]") {
  // rest_for_one in input: validator alone; parser takes validator with it; reader all three.
  // one_for_one in sink: each alone.
  const std::map<std::string, std::vector<std::string>> expected{
      {"validator", {"validator"}},
      {"parser", {"parser", "validator"}},
      {"reader", {"parser", "reader", "validator"}},
      {"db_sink", {"db_sink"}},
      {"dead_letter", {"dead_letter"}}};
  for (const auto& [victim, restarted] : expected) {
    INFO("kill " << victim);
    Simulation sim;
    start_root(sim, mini_pipeline());
    const auto before = pids(sim);
    sim.exit(before.at(victim), Reason::kill());
    sim.run();
    const auto after = pids(sim);
    CHECK(changed(before, after) == restarted);
    for (const auto& [id, pid] : after) CHECK(pid);
    CHECK(sim.info(after.at(victim))->label.instance == 2);  // the second start
  }
}

TEST_CASE("supervisor: a validator crash restarts only the tail and is reported", "[supervision][supervisor]") {
  Simulation sim;
  start_root(sim, mini_pipeline());
  const auto before = pids(sim);
  sim.exit(before.at("validator"), Reason::error(Atom("negative_value")));
  sim.run();
  CHECK(changed(before, pids(sim)) == std::vector<std::string>{"validator"});
  auto terminated = system_events(sim, "child_terminated");
  REQUIRE(terminated.size() == 1);
  CHECK(std::get<Atom>(terminated[0]->fields()[2].value) == Atom("{error,negative_value}"));
}

TEST_CASE("supervisor: crashes faster than the intensity escalate to the parent - which restarts the whole input subtree", "[supervision][supervisor]") {
  Simulation sim;
  start_root(sim, mini_pipeline());
  const auto before = pids(sim);
  // input_sup allows 3 restarts in 5 s: the 4th crash within a second makes it give up.
  for (int i = 0; i < 4; ++i) {
    sim.exit(sim.whereis(Atom("validator")), Reason::kill());
    sim.run_until(sim.now() + 100_ms);
  }
  sim.run();
  CHECK(system_events(sim, "reached_max_restart_intensity").size() == 1);
  const auto after = pids(sim);
  // The root restarted input_sup with a fresh subtree; the sink side kept its pids.
  CHECK(changed(before, after) == std::vector<std::string>{"parser", "reader", "validator"});
  for (const auto& [id, pid] : after) CHECK(pid);
}

TEST_CASE("supervisor: intensity exceeded at the root too ends the whole tree with shutdown", "[supervision][supervisor]") {
  Simulation sim;
  SupervisorSpec root = mini_pipeline();
  root.flags.intensity = 0;  // the root gives up on the first restart-worthy exit
  const Pid r = start_root(sim, std::move(root));
  sim.exit(sim.whereis(Atom("db_sink")), Reason::kill());
  sim.run();
  // sink_sup (3 in 5 s) restarts db_sink: the root sees nothing. Now make sink_sup give up:
  for (int i = 0; i < 4; ++i) {
    sim.exit(sim.whereis(Atom("db_sink")), Reason::kill());
    sim.run();
  }
  CHECK_FALSE(sim.alive(r));
  CHECK(sim.process_count() == 0);
  Reason root_exit;
  for (const TraceEvent& e : sim.trace().events()) {
    if (e.kind == EventKind::exit && e.pid == r) root_exit = e.reason;
  }
  CHECK(root_exit == Reason::shutdown());
}

TEST_CASE("supervisor: shutdown clean-up - terminate runs on shutdown for a trapping child - not on brutal_kill - in reverse start order", "[supervision][supervisor]") {
  std::vector<std::string> log;
  Simulation sim;
  SupervisorSpec spec;
  spec.children = {stub("a", &log, true), stub("b", &log, true, Shutdown::brutal_kill()),
                   stub("c", &log, true)};
  Pid sup;
  sim.spawn([&](Context& ctx) {
    SpawnOptions o;
    o.link = true;
    o.label = Label{Atom("/root"), 1};
    ctx.trap_exit(true);
    sup = ctx.spawn(std::make_unique<Supervisor>(std::move(spec)), o);
    ctx.sleep(1_s);
    ctx.exit(sup, Reason::shutdown());  // as a parent supervisor stops a child supervisor
    ctx.receive([&](const Message& m) { return m.kind == MsgKind::exit && m.from == sup; });
  });
  sim.run();
  CHECK(log == std::vector<std::string>{"c terminate shutdown", "a terminate shutdown"});
  std::vector<std::string> exits;
  for (const TraceEvent& e : sim.trace().events()) {
    if (e.kind == EventKind::exit && !e.label.name.empty()) {
      exits.push_back(std::string(e.label.name.text()) + " " + to_string(e.reason));
    }
  }
  CHECK(exits == std::vector<std::string>{"/root/c shutdown", "/root/b killed", "/root/a shutdown",
                                          "/root shutdown"});
}

TEST_CASE("supervisor: a child that does not stop within its shutdown timeout is killed and reported", "[supervision][supervisor]") {
  std::vector<std::string> log;
  Simulation sim;
  SupervisorSpec spec;
  spec.children = {stub("stalls", &log, true, Shutdown::after(2_s), 1_h)};
  Time stopped{};
  sim.spawn([&](Context& ctx) {
    SpawnOptions o;
    o.link = true;
    o.label = Label{Atom("/root"), 1};
    ctx.trap_exit(true);
    const Pid sup = ctx.spawn(std::make_unique<Supervisor>(std::move(spec)), o);
    ctx.sleep(1_s);
    ctx.exit(sup, Reason::shutdown());
    ctx.receive([&](const Message& m) { return m.kind == MsgKind::exit && m.from == sup; });
    stopped = ctx.now();
  });
  sim.run();
  CHECK(stopped == Time{0} + 3_s);  // 1 s, then the 2 s shutdown timeout, then kill
  auto errors = system_events(sim, "shutdown_error");
  REQUIRE(errors.size() == 1);
  CHECK(std::get<Atom>(errors[0]->fields()[2].value) == Atom("killed"));
}

TEST_CASE("supervisor: a failing init stops the supervisor's start - earlier children are terminated - later ones never start", "[supervision][supervisor]") {
  struct Refuses : Behaviour {
    InitResult init(Context&) override { return InitResult::stop(Reason::error(Atom("no_db"))); }
  };
  Simulation sim;
  SupervisorSpec spec;
  Child bad;
  bad.spec.id = "db";
  bad.start.behaviour = [] { return std::make_unique<Refuses>(); };
  spec.children = {stub("first"), bad, stub("never")};
  const Pid sup = start_root(sim, std::move(spec));
  CHECK_FALSE(sim.alive(sup));
  CHECK(sim.whereis(Atom("never")) == Pid{});
  Reason why;
  for (const TraceEvent& e : sim.trace().events()) {
    if (e.kind == EventKind::exit && e.pid == sup) why = e.reason;
  }
  CHECK(why == Reason::shutdown(Atom("{failed_to_start_child,db,{error,no_db}}")));
  CHECK(system_events(sim, "start_error").size() == 1);
}

TEST_CASE("supervisor: transient children are not restarted after a normal exit - temporary never", "[supervision][supervisor]") {
  Simulation sim;
  SupervisorSpec spec;
  Child t = stub("transient_one");
  t.spec.restart = RestartType::transient;
  Child tmp = stub("temporary_one");
  tmp.spec.restart = RestartType::temporary;
  spec.children = {t, tmp};
  start_root(sim, std::move(spec));
  sim.exit(sim.whereis(Atom("transient_one")), Reason::shutdown(Atom("done")));
  sim.exit(sim.whereis(Atom("temporary_one")), Reason::error(Atom("boom")));
  sim.run();
  CHECK(sim.whereis(Atom("transient_one")) == Pid{});
  CHECK(sim.whereis(Atom("temporary_one")) == Pid{});
  // Reported: the temporary one's abnormal exit; not the transient one's clean exit.
  auto terminated = system_events(sim, "child_terminated");
  REQUIRE(terminated.size() == 1);
  CHECK(std::get<Atom>(terminated[0]->fields()[0].value) == Atom("temporary_one"));
}

TEST_CASE("supervisor: same seed - same trace hash for the whole tree's life", "[supervision][supervisor]") {
  auto run = [] {
    Simulation sim(SimOptions{.seed = 3, .tie_break = TieBreak::random});
    start_root(sim, mini_pipeline());
    for (int i = 0; i < 5; ++i) {
      sim.exit(sim.whereis(Atom(i % 2 == 0 ? "parser" : "db_sink")), Reason::kill());
      sim.run_until(sim.now() + 2_s);
    }
    return sim.trace().hash();
  };
  CHECK(run() == run());
}

TEST_CASE("supervisor: management calls - start_child appends and which_children lists newest first - terminate/restart/delete - none counts as a restart", "[supervision][supervisor]") {
  Simulation sim;
  SupervisorSpec spec;
  spec.flags.intensity = 0;  // any counted restart would end the supervisor
  spec.children = {stub("a"), stub("b")};
  const Pid sup = start_root(sim, std::move(spec));
  std::vector<std::string> order;
  ChildCounts counts;
  ManagementReply dup;
  ManagementReply del_running;
  ManagementReply term;
  ManagementReply restarted;
  ManagementReply deleted;
  ManagementReply missing;
  std::vector<ChildInfo> after_terminate;
  sim.spawn([&](Context& ctx) {
    REQUIRE(start_child(ctx, sup, stub("c")).ok);
    for (const ChildInfo& c : which_children(ctx, sup)) order.push_back(c.id);
    counts = count_children(ctx, sup);
    dup = start_child(ctx, sup, stub("c"));
    del_running = delete_child(ctx, sup, "b");
    term = terminate_child(ctx, sup, "b");
    after_terminate = which_children(ctx, sup);
    restarted = restart_child(ctx, sup, "b");
    terminate_child(ctx, sup, "a");
    deleted = delete_child(ctx, sup, "a");
    missing = restart_child(ctx, sup, "a");
  });
  sim.run();
  CHECK(order == std::vector<std::string>{"c", "b", "a"});
  CHECK(counts.specs == 3);
  CHECK(counts.active == 3);
  CHECK(counts.workers == 3);
  CHECK_FALSE(dup.ok);
  CHECK(dup.error == Reason::other(Atom("already_started")));
  CHECK(del_running.error == Reason::other(Atom("running")));
  CHECK(term.ok);
  REQUIRE(after_terminate.size() == 3);
  CHECK(after_terminate[1].id == "b");
  CHECK_FALSE(after_terminate[1].pid);  // spec kept, pid undefined, not restarted
  CHECK(restarted.ok);
  CHECK(restarted.pid == sim.whereis(Atom("b")));
  CHECK(deleted.ok);
  CHECK(missing.error == Reason::other(Atom("not_found")));
  CHECK(sim.alive(sup));  // intensity 0, yet nothing above counted as a restart
  CHECK(system_events(sim, "management").size() == 11);
}

TEST_CASE("supervisor: an EXIT from something that is not a child is ignored - and the world stops a root supervisor gracefully (regression)", "[supervision][supervisor]") {
  struct Ignores : Behaviour {
    InitResult init(Context&) override { return InitResult::ignore(); }
  };
  std::vector<std::string> log;
  Simulation sim;
  SupervisorSpec spec;  // OTP defaults: intensity 1
  Child a;
  a.spec.id = "ignored";  // pid undefined after start: must not match an EXIT from Pid{}
  a.start.behaviour = [] { return std::make_unique<Ignores>(); };
  spec.children = {a, stub("b", &log, true)};
  const Pid sup = start_root(sim, std::move(spec));
  // World exit signals with a reason other than shutdown: trapped, not from a child: ignored?
  // No: from the world, which is the root's parent - so a shutdown from it stops the tree.
  sim.exit(sup, Reason::shutdown());
  sim.run();
  CHECK_FALSE(sim.alive(sup));
  CHECK(system_events(sim, "child_terminated").empty());
  CHECK(system_events(sim, "reached_max_restart_intensity").empty());
  CHECK(log == std::vector<std::string>{"b terminate shutdown"});
}

TEST_CASE("supervisor: after terminate_child times out and kills - a later child crash is still handled (regression)", "[supervision][supervisor]") {
  Simulation sim;
  SupervisorSpec spec;
  spec.flags = SupFlags::elixir();
  spec.children = {stub("slow", nullptr, true, Shutdown::after(1_s), 1_h), stub("w")};
  const Pid sup = start_root(sim, std::move(spec));
  sim.spawn([&](Context& ctx) { terminate_child(ctx, sup, "slow"); });
  sim.run();
  const Pid w = sim.whereis(Atom("w"));
  sim.schedule(sim.now() + 1_s, [&] { sim.exit(w, Reason::kill()); });
  sim.run();
  CHECK(sim.whereis(Atom("w")));
  CHECK(sim.whereis(Atom("w")) != w);
  CHECK(sim.info(sup)->mailbox == 0);
}

TEST_CASE("supervisor: the snapshot gives every supervisor's which_children and count_children without a call", "[supervision][supervisor]") {
  Simulation sim;
  start_root(sim, mini_pipeline());
  sim.exit(sim.whereis(Atom("parser")), Reason::kill());
  sim.run();
  const std::uint64_t events = sim.trace().count();
  const std::vector<SupervisorSnapshot> snap = snapshot(sim);
  CHECK(sim.trace().count() == events);  // reading it changed nothing
  REQUIRE(snap.size() == 3);
  std::map<std::string, const SupervisorSnapshot*> by_path;
  for (const SupervisorSnapshot& s : snap) by_path[s.path] = &s;
  REQUIRE(by_path.count("/root/input") == 1);
  const SupervisorSnapshot& input = *by_path["/root/input"];
  CHECK(input.strategy == Strategy::rest_for_one);
  REQUIRE(input.children.size() == 3);
  CHECK(input.children[0].id == "validator");  // newest first
  CHECK(input.children[1].pid == sim.whereis(Atom("parser")));
  CHECK(input.counts.active == 3);
  CHECK(by_path["/root"]->counts.supervisors == 2);
  CHECK(by_path["/root/sink"]->counts.workers == 2);
}

// ---- a supervisor's own init result (issue 16; conformance cases sup_init_*) ----------------

namespace {

/// The reason `pid` exited with in the trace ("" when it did not).
std::string exit_reason(const Simulation& sim, Pid pid) {
  for (const TraceEvent& e : sim.trace().events()) {
    if (e.kind == EventKind::exit && e.pid == pid) return to_string(e.reason);
  }
  return "";
}

SupervisorSpec with_inner(std::vector<InitResult> inner_inits, RestartType restart = RestartType::permanent) {
  SupervisorSpec inner;
  inner.children = {stub("w")};
  inner.inits = std::move(inner_inits);
  SupervisorSpec root;
  root.flags.intensity = 3;
  root.children = {stub("a"), Supervisor::child("s", inner, restart), stub("b")};
  return root;
}

}  // namespace

TEST_CASE("supervisor init: a child supervisor whose own init returns ignore is kept with pid undefined - a temporary one is dropped", "[supervision][supervisor]") {
  Simulation sim;
  const Pid root = start_root(sim, with_inner({InitResult::ignore()}));
  REQUIRE(sim.alive(root));
  CHECK(sim.whereis(Atom("w")) == Pid{});  // its children never start
  CHECK(sim.whereis(Atom("b")) != Pid{});  // the siblings after it do
  const std::vector<SupervisorSnapshot> snap = snapshot(sim);
  REQUIRE(snap.size() == 1);
  REQUIRE(snap[0].children.size() == 3);
  CHECK(snap[0].children[1].id == "s");
  CHECK(snap[0].children[1].pid == Pid{});
  CHECK(snap[0].children[1].type == ChildType::supervisor);
  CHECK(snap[0].counts.active == 2);
  CHECK(system_events(sim, "start_error").empty());

  Simulation sim2;
  start_root(sim2, with_inner({InitResult::ignore()}, RestartType::temporary));
  const std::vector<SupervisorSnapshot> snap2 = snapshot(sim2);
  REQUIRE(snap2.size() == 1);
  CHECK(snap2[0].children.size() == 2);  // a and b: s is forgotten
}

TEST_CASE("supervisor init: a child supervisor whose own init fails fails its parent's start with failed_to_start_child", "[supervision][supervisor]") {
  Simulation sim;
  const Pid root = start_root(sim, with_inner({InitResult::stop(Reason::shutdown(Atom("no_config")))}));
  CHECK_FALSE(sim.alive(root));
  CHECK(exit_reason(sim, root) == "{shutdown,{failed_to_start_child,s,{shutdown,no_config}}}");
  CHECK(sim.whereis(Atom("b")) == Pid{});
  CHECK(system_events(sim, "start_error").size() == 1);
}

TEST_CASE("supervisor init: the k-th start takes the k-th result - a restart that fails is retried", "[supervision][supervisor]") {
  Simulation sim;
  start_root(sim, with_inner({InitResult::ok(), InitResult::stop(Reason::error(Atom("busy"))), InitResult::ok()}));
  const Pid w1 = sim.whereis(Atom("w"));
  REQUIRE(w1 != Pid{});
  std::vector<SupervisorSnapshot> snap = snapshot(sim);
  Pid s1;
  for (const SupervisorSnapshot& x : snap) {
    if (x.path == "/root/s") s1 = x.pid;
  }
  REQUIRE(s1 != Pid{});
  sim.exit(s1, Reason::kill());
  sim.run();
  const auto errors = system_events(sim, "start_error");
  REQUIRE(errors.size() == 1);  // start 2 failed, start 3 (the retry) ran
  CHECK(errors[0]->text(Atom("reason")) == "{error,busy}");
  CHECK(sim.whereis(Atom("w")) != Pid{});
  CHECK(sim.whereis(Atom("w")) != w1);
}

TEST_CASE("supervisor init: a root traces its own start result as root_start - ok ignore or error - only when asked", "[supervision][supervisor]") {
  auto root_value = [](std::vector<InitResult> inits, bool report) {
    Simulation sim;
    SupervisorSpec spec;
    spec.children = {stub("a")};
    spec.inits = std::move(inits);
    spec.report_start = report;
    start_root(sim, std::move(spec));
    const auto ev = system_events(sim, "root_start");
    std::string out;
    for (const HeldEvent& e : ev) out += e->text(Atom("result")) + " " + e->text(Atom("value")) + ";";
    return out;
  };
  CHECK(root_value({}, true) == "ok {ok,/root#1};");
  CHECK(root_value({InitResult::ignore()}, true) == "ignore ignore;");
  CHECK(root_value({InitResult::stop(Reason::error(Atom("bad_config")))}, true) == "error {error,{error,bad_config}};");
  CHECK(root_value({}, false).empty());
}

TEST_CASE("supervisor: a repeated child id fails its start with the first child in start order whose id came before", "[supervision][supervisor]") {
  // x y z y x: the y at index 3 is the first child with an earlier id (the x at index 4 comes
  // later), though x sorts before y.
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"x", "y", "z", "y", "x"}, "y"},
      {{"b", "a", "a", "b"}, "a"},
      {{"a", "b", "c"}, ""},
  };
  for (const auto& [ids, dup] : cases) {
    Simulation sim;
    SupervisorSpec spec;
    for (const std::string& id : ids) spec.children.push_back(stub(id));
    const Pid sup = start_root(sim, std::move(spec));
    if (dup.empty()) {
      CHECK(sim.alive(sup));
      CHECK(sim.process_count() == ids.size() + 1);
    } else {
      CHECK_FALSE(sim.alive(sup));
      CHECK(exit_reason(sim, sup) == "{start_spec,{duplicate_child_name," + dup + "}}");
      CHECK(sim.process_count() == 0);
    }
  }
}

TEST_CASE("supervisor: one supervisor of 20000 children starts them all in order - and a restart finds the crashed one", "[supervision][supervisor]") {
  // Its start is n log n (ids sorted once, no search of its links per spawn); not timed here.
  constexpr std::size_t kWidth = 20'000;
  SimOptions o;
  o.trace = TraceMode::off;
  Simulation sim(o);
  SupervisorSpec spec;
  spec.children.reserve(kWidth);
  for (std::size_t i = 0; i < kWidth; ++i) spec.children.push_back(stub("w" + std::to_string(i)));
  const Pid sup = start_root(sim, std::move(spec));
  REQUIRE(sim.alive(sup));
  CHECK(sim.process_count() == kWidth + 1);
  const std::vector<ChildInfo> kids = snapshot(sim).front().children;
  REQUIRE(kids.size() == kWidth);
  CHECK(kids.front().id == "w19999");  // newest first
  CHECK(kids.back().id == "w0");
  CHECK(kids.front().pid.id > kids.back().pid.id);  // started in order
  const Pid before = sim.whereis(Atom("w12345"));
  sim.exit(before, Reason::kill());
  sim.run();
  const Pid after = sim.whereis(Atom("w12345"));
  CHECK(after);
  CHECK(after != before);
  CHECK(sim.process_count() == kWidth + 1);
}

TEST_CASE("supervisor: a wide supervisor shuts its children down in reverse start order - restarted ones included - and unlinks each", "[supervision][supervisor]") {
  // Restarted children (w0 and w1500) are linked last: the shutdown still follows start order,
  // not link order, and each unlink finds its child wherever the link list holds it.
  constexpr int kWidth = 3000;
  std::vector<std::string> log;
  Simulation sim;
  SupervisorSpec spec;
  spec.flags.intensity = 2;  // the two kills below are restarts, not an escalation
  for (int i = 0; i < kWidth; ++i) spec.children.push_back(stub("w" + std::to_string(i), &log, true));
  const Pid sup = start_root(sim, std::move(spec));
  for (const char* id : {"w1500", "w0"}) {
    sim.exit(sim.whereis(Atom(id)), Reason::kill());
    sim.run();
  }
  // Links are symmetric: the supervisor's list holds each child once, each child's holds it.
  const std::vector<Pid> links = sim.info(sup)->links;
  REQUIRE(links.size() == static_cast<std::size_t>(kWidth));
  CHECK(links[links.size() - 2] == sim.whereis(Atom("w1500")));
  CHECK(links.back() == sim.whereis(Atom("w0")));
  for (Pid child : links) CHECK(sim.info(child)->links == std::vector<Pid>{sup});
  sim.send(sup, kSystemStop, Reason::shutdown());
  sim.run();
  CHECK_FALSE(sim.alive(sup));
  std::vector<std::string> want;
  for (int i = kWidth; i-- > 0;) want.push_back("w" + std::to_string(i) + " terminate shutdown");
  CHECK(log == want);
  // One unlink per child, from the supervisor, in the same order.
  std::vector<Pid> unlinked;
  for (const TraceEvent& e : sim.trace().events()) {
    if (e.kind == EventKind::unlink && e.pid == sup) unlinked.push_back(e.other);
  }
  REQUIRE(unlinked.size() == static_cast<std::size_t>(kWidth));
  CHECK(unlinked.front() == links[links.size() - 3]);  // w2999: started last, not restarted
  CHECK(unlinked[kWidth - 1 - 1500] == links[links.size() - 2]);
  CHECK(unlinked.back() == links.back());
  CHECK(sim.process_count() == 0);
}
