// The fault injector and the phases of a chaos run (issue 4, DESIGN.md §4): each fault kind,
// targets by path, name and node, skipped faults, stochastic faults counted while the target is
// up, and the two named phase runs (converges; escalates to the top).

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <cmath>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/held_event.hpp"
#include "properties/availability.hpp"
#include "properties/convergence.hpp"
#include "scenarios/faults/injector.hpp"
#include "scenarios/faults/phases.hpp"
#include "sim/simulation.hpp"
#include "supervision/stock_worker.hpp"
#include "supervision/supervisor.hpp"

using namespace lic;
using namespace lic::literals;
using namespace lic::faults;
using lic::supervision::find_by_path;

namespace {
Time at(Duration d) { return Time{} + d; }

/// A root one_for_one supervisor with workers (ids, init delay each), on `node`.
Pid start_tree(Simulation& sim, std::vector<std::string> ids, Duration init = {},
               std::uint32_t intensity = 100, Duration period = 1_s, Atom root_node = {},
               Atom worker_node = {}) {
  supervision::SupervisorSpec spec;
  spec.flags.intensity = intensity;
  spec.flags.period = period;
  for (const std::string& id : ids) {
    supervision::ChildSpec c;
    c.id = id;
    c.node = worker_node;
    supervision::WorkerConfig w;
    w.init_delay = init;
    spec.children.push_back(supervision::stock_child(c, w));
  }
  SpawnOptions o;
  o.label = Label{Atom("/root"), 1};
  o.node = root_node;
  return sim.spawn(std::make_unique<supervision::Supervisor>(spec), o);
}

std::vector<HeldEvent> system_events(const Simulation& sim, const char* name) {
  std::vector<HeldEvent> out;
  for (const TraceEvent& e : sim.trace().events()) {
    if (e.kind == EventKind::system && e.name == Atom(name)) out.push_back({e});
  }
  return out;
}

std::string field_text(const TraceEvent& e, const char* key) {
  for (const TraceField& f : e.fields()) {
    if (f.key != Atom(key)) continue;
    if (const auto* a = std::get_if<Atom>(&f.value)) return std::string(a->text());
    if (const auto* s = std::get_if<std::string>(&f.value)) return *s;
  }
  return {};
}

/// A Poisson fault: mean time between failures `mtbf`, counted while the target is up.
Fault mtbf_fault(Kind k, Target t, Duration mtbf) {
  Fault f;
  f.kind = k;
  f.target = std::move(t);
  f.mtbf = mtbf;
  return f;
}

Fault at_fault(Kind k, Target t, Duration when) {
  Fault f;
  f.kind = k;
  f.target = std::move(t);
  f.at = at(when);
  return f;
}
}  // namespace

TEST_CASE("faults: a scheduled crash by tree path is traced as fault_injected before the exit it causes - the supervisor restarts the child") {
  Simulation sim;
  Injector inj(sim, {at_fault(Kind::crash, Target::path("/root/w"), 3_s)});
  inj.start();
  start_tree(sim, {"w"});
  sim.run_until(at(1_s));
  const Pid before = find_by_path(sim, "/root/w");
  sim.run_until(at(5_s));
  const auto injected = system_events(sim, "fault_injected");
  REQUIRE(injected.size() == 1);
  CHECK(injected[0]->time == at(3_s));
  CHECK(field_text(*injected[0], "kind") == "crash");
  CHECK(field_text(*injected[0], "target") == "/root/w");
  CHECK(field_text(*injected[0], "reason") == "{error,injected_crash}");
  bool exit_after = false;
  for (const TraceEvent& e : sim.trace().events()) {
    if (e.kind == EventKind::exit && e.pid == before) {
      exit_after = e.seq > injected[0]->seq && e.reason == Reason::error(Atom("injected_crash"));
    }
  }
  CHECK(exit_after);
  const Pid after = find_by_path(sim, "/root/w");
  CHECK(after);
  CHECK(after != before);
  CHECK(inj.injected() == 1);
}

TEST_CASE("faults: a fault aimed at nothing is recorded as skipped with the reason - the run goes on") {
  Simulation sim;
  Injector inj(sim, {at_fault(Kind::kill, Target::path("/root/nobody"), 1_s),
                     at_fault(Kind::kill, Target::name("ghost"), 2_s),
                     at_fault(Kind::node_restart, Target::node("node0"), 3_s),
                     at_fault(Kind::pause, Target::path("/root/w"), 4_s)});
  inj.start();
  start_tree(sim, {"w"});
  sim.run_until(at(10_s));
  const auto skipped = system_events(sim, "fault_skipped");
  REQUIRE(skipped.size() == 4);
  CHECK(field_text(*skipped[0], "why") == "no process at /root/nobody");
  CHECK(field_text(*skipped[1], "why") == "no process registered as ghost");
  CHECK(field_text(*skipped[2], "why") == "node0 is up");
  CHECK(field_text(*skipped[3], "why") == "needs a node target");
  CHECK(inj.skipped() == 4);
  CHECK(inj.injected() == 0);
  CHECK(find_by_path(sim, "/root/w"));
}

TEST_CASE("faults: kill by registered name - exit with a reason - repeated every period until a time") {
  Simulation sim;
  Pid named;
  sim.schedule(at(0_s), [&] {
    named = sim.spawn([](Context& ctx) {
      ctx.register_name(Atom("db"));
      ctx.trap_exit(true);
      for (;;) ctx.receive();
    });
  });
  Fault ex = at_fault(Kind::exit, Target::name("db"), 1_s);
  ex.reason = Reason::shutdown(Atom("maintenance"));
  ex.every = 1_s;
  ex.until = at(3500_ms);
  Injector inj(sim, {ex, at_fault(Kind::kill, Target::name("db"), 5_s)});
  inj.start();
  sim.run_until(at(10_s));
  // Trapped three times (1 s, 2 s, 3 s), then killed at 5 s.
  std::size_t trapped = 0;
  for (const TraceEvent& e : sim.trace().events()) {
    if (e.kind == EventKind::exit_signal && e.pid == named && e.tag == Atom("trapped")) ++trapped;
  }
  CHECK(trapped == 3);
  CHECK_FALSE(sim.alive(named));
  CHECK(inj.injected() == 4);
}

TEST_CASE("faults: a stochastic crash fires only while its target is up - the count matches uptime over MTBF") {
  // MTBF 10 s counted while up, repair (init) 5 s, 2000 s: about 2000 / 15 = 133 failures.
  Simulation sim;
  Fault f = mtbf_fault(Kind::crash, Target::path("/root/w"), 10_s);
  Injector inj(sim, {f});
  inj.start();
  start_tree(sim, {"w"}, 5_s, 1000);
  sim.run_until(at(2000_s));
  const properties::Intervals up = properties::up_intervals(sim.trace().events(), "/root/w", at(0_s), at(2000_s));
  const auto injected = system_events(sim, "fault_injected");
  for (const HeldEvent& e : injected) {
    bool inside = false;
    for (const properties::Interval& i : up) inside = inside || (i.from <= e->time && e->time <= i.to);
    CHECK(inside);
  }
  // Poisson count over the uptime: mean uptime/10 s, sd its square root; 5 sd either way.
  const double expected = static_cast<double>(properties::total(up).ns) / 10e9;
  CHECK(static_cast<double>(injected.size()) > expected - 5 * std::sqrt(expected));
  CHECK(static_cast<double>(injected.size()) < expected + 5 * std::sqrt(expected));
  CHECK(injected.size() > 100);
}

TEST_CASE("faults: each fault draws from its own stream - adding a fault does not move another's injections") {
  auto times = [](bool with_other) {
    Simulation sim;
    Fault f;
    f.kind = Kind::crash;
    f.name = "w-crash";
    f.target = Target::path("/root/w");
    f.mtbf = 7_s;
    std::vector<Fault> fs{f};
    if (with_other) {
      Fault g = f;
      g.name = "v-crash";
      g.target = Target::path("/root/v");
      fs.insert(fs.begin(), g);
    }
    Injector inj(sim, fs);
    inj.start();
    // Instant restarts: a slow restart of v would hold the supervisor and delay w's restarts.
    start_tree(sim, {"w", "v"}, {}, 1000);
    sim.run_until(at(300_s));
    std::vector<Time> out;
    for (const HeldEvent& e : system_events(sim, "fault_injected")) {
      if (field_text(*e, "fault") == "w-crash") out.push_back(e->time);
    }
    return out;
  };
  const auto alone = times(false);
  CHECK(alone.size() > 10);
  CHECK(alone == times(true));
}

TEST_CASE("faults: node_crash kills the node's processes - restart_after brings it back and boots its tree") {
  Simulation sim;
  const Atom kB("b");
  Fault crash = at_fault(Kind::node_crash, Target::node("b"), 5_s);
  crash.restart_after = 10_s;
  Injector inj(sim, {crash});
  int boots = 0;
  sim.set_node_boot(kB, [&] {
    ++boots;
    start_tree(sim, {"x"}, {}, 1, 5_s, kB);
  });
  inj.start();
  start_tree(sim, {"x"}, {}, 1, 5_s, kB);
  sim.run_until(at(6_s));
  CHECK_FALSE(sim.node_up(kB));
  CHECK_FALSE(find_by_path(sim, "/root/x"));
  sim.run_until(at(20_s));
  CHECK(sim.node_up(kB));
  CHECK(boots == 1);
  CHECK(find_by_path(sim, "/root/x"));
}

TEST_CASE("faults: a partition with a duration blocks both ways and heals itself - a one-way one only one way") {
  Simulation sim;
  Fault p;
  p.kind = Kind::partition;
  p.at = at(1_s);
  p.side_a = {Atom("a")};
  p.side_b = {Atom("b"), Atom("c")};
  p.duration = 2_s;
  Fault q = p;
  q.at = at(10_s);
  q.one_way = true;
  q.duration = {};
  Injector inj(sim, {p, q});
  sim.set_link(Atom("b"), Atom("c"), LinkParams{});  // makes the nodes known
  sim.set_link(Atom("a"), Atom("b"), LinkParams{});
  inj.start();
  sim.run_until(at(2_s));
  CHECK(sim.blocked(Atom("a"), Atom("b")));
  CHECK(sim.blocked(Atom("c"), Atom("a")));
  CHECK_FALSE(sim.blocked(Atom("b"), Atom("c")));
  sim.run_until(at(4_s));
  CHECK_FALSE(sim.blocked(Atom("a"), Atom("b")));
  sim.run_until(at(11_s));
  CHECK(sim.blocked(Atom("a"), Atom("c")));
  CHECK_FALSE(sim.blocked(Atom("c"), Atom("a")));
}

TEST_CASE("faults: loss and clog windows change the paths while open and restore them after") {
  Simulation sim;
  Fault loss;
  loss.kind = Kind::loss;
  loss.at = at(1_s);
  loss.side_a = {Atom("a")};
  loss.side_b = {Atom("b")};
  loss.ratio = Ratio::percent(25);
  loss.duration = 1_s;
  Fault clog = loss;
  clog.kind = Kind::clog;
  clog.delay = 40_ms;
  clog.one_way = true;
  Injector inj(sim, {loss, clog});
  inj.start();
  sim.run_until(at(1500_ms));
  CHECK(sim.link_params(Atom("a"), Atom("b")).loss == Ratio::percent(25));
  CHECK(sim.link_params(Atom("b"), Atom("a")).loss == Ratio::percent(25));
  CHECK(sim.link_params(Atom("a"), Atom("b")).clog == 40_ms);
  CHECK(sim.link_params(Atom("b"), Atom("a")).clog == Duration{});
  sim.run_until(at(3_s));
  CHECK(sim.link_params(Atom("a"), Atom("b")) == LinkParams{});
}

TEST_CASE("faults: slow_start makes the target's next start take longer - its supervisor waits") {
  Simulation sim;
  Fault slow;
  slow.kind = Kind::slow_start;
  slow.target = Target::path("/root/w");
  slow.at = at(1_s);
  slow.delay = 4_s;
  Injector inj(sim, {slow, at_fault(Kind::crash, Target::path("/root/w"), 2_s)});
  inj.start();
  start_tree(sim, {"w"});
  sim.run_until(at(20_s));
  const properties::Intervals up = properties::up_intervals(sim.trace().events(), "/root/w", at(0_s), at(20_s));
  REQUIRE(up.size() == 2);
  CHECK(up[0].to == at(2_s));
  CHECK(up[1].from == at(6_s));
}

TEST_CASE("phases: a run with faults and a quiet phase converges - every permanent child running - no restart pending") {
  Simulation sim;
  Fault crash = mtbf_fault(Kind::crash, Target::path("/root/a"), 20_s);
  Fault kill = crash;
  kill.kind = Kind::kill;
  kill.target = Target::path("/root/b");
  Fault slow;
  slow.kind = Kind::slow_start;
  slow.target = Target::path("/root/a");
  slow.delay = 3_s;
  slow.at = at(199_s);  // the last restart before the quiet phase is slow: convergence waits
  Fault crash_late = at_fault(Kind::crash, Target::path("/root/a"), 199500_ms);
  Injector inj(sim, {crash, kill, slow, crash_late});
  const Pid root = start_tree(sim, {"a", "b"}, 2_s, 10, 1_s);
  sim.run_until(at(1_s));
  Phases ph;
  ph.chaos = 200_s;
  ph.quiet = 30_s;
  const PhaseOutcome out = run_phases(sim, inj, ph, root);
  CHECK(inj.injected() > 5);
  CHECK_FALSE(out.escalated);
  CHECK(out.converged);
  CHECK(out.passed);
  CHECK(out.not_running.empty());
  REQUIRE(out.settled_at.has_value());
  CHECK(*out.settled_at > out.chaos_end);  // the slow restart finished in the quiet phase
  CHECK(*out.settled_at <= out.end);
  // Nothing is injected in the quiet phase.
  for (const HeldEvent& e : system_events(sim, "fault_injected")) CHECK(e->time < out.chaos_end);
}

TEST_CASE("phases: a fault rate above the restart intensity escalates to the top - expected - and fails the convergence check when not expected") {
  auto run = [](bool expect) {
    Simulation sim;
    Fault crash;
    crash.kind = Kind::crash;
    crash.target = Target::path("/root/a");
    crash.mtbf = 200_ms;  // far more than 3 restarts in 5 s
    Injector inj(sim, {crash});
    const Pid root = start_tree(sim, {"a"}, 10_ms, 3, 5_s);
    Phases ph;
    ph.chaos = 60_s;
    ph.quiet = 10_s;
    ph.expect_escalation = expect;
    return run_phases(sim, inj, ph, root);
  };
  const PhaseOutcome expected = run(true);
  CHECK(expected.escalated);
  CHECK(expected.passed);
  const PhaseOutcome unexpected = run(false);
  CHECK(unexpected.escalated);
  CHECK_FALSE(unexpected.converged);
  CHECK_FALSE(unexpected.passed);
  REQUIRE(unexpected.not_running.size() == 1);
  CHECK(unexpected.not_running[0] == "/root is gone (escalated to the top)");
}

TEST_CASE("phases: the convergence check names each permanent child not running and each pending restart") {
  supervision::SupervisorSnapshot s;
  s.path = "/root/input";
  s.children.push_back({"parser", Pid{}, false, supervision::ChildType::worker, supervision::RestartType::permanent});
  s.children.push_back({"validator", Pid{}, true, supervision::ChildType::worker, supervision::RestartType::transient});
  s.children.push_back({"probe", Pid{}, false, supervision::ChildType::worker, supervision::RestartType::temporary});
  s.children.push_back({"reader", Pid{7}, false, supervision::ChildType::worker, supervision::RestartType::permanent});
  const auto why = properties::not_converged({s});
  REQUIRE(why.size() == 2);
  CHECK(why[0] == "/root/input/parser: a permanent child is not running");
  CHECK(why[1] == "/root/input/validator: a restart is pending");
  s.children.erase(s.children.begin(), s.children.begin() + 2);
  CHECK(properties::not_converged({s}).empty());
}

TEST_CASE("faults: the same seed and fault set give the same trace - under the random tie-break too") {
  auto hash = [](std::uint64_t seed) {
    SimOptions opts;
    opts.seed = seed;
    opts.tie_break = TieBreak::random;
    Simulation sim(opts);
    Fault crash = mtbf_fault(Kind::crash, Target::path("/root/a"), 3_s);
    Fault pause = mtbf_fault(Kind::pause, Target::node("b"), 10_s);
    pause.duration = 500_ms;
    Fault loss;
    loss.kind = Kind::loss;
    loss.side_a = {Atom("node0")};
    loss.ratio = Ratio::percent(20);
    loss.mtbf = 20_s;
    loss.duration = 2_s;
    Injector inj(sim, {crash, pause, loss});
    const Pid root = start_tree(sim, {"a", "b"}, 100_ms, 1000, 1_s, {}, Atom("b"));
    Phases ph;
    ph.chaos = 120_s;
    ph.quiet = 10_s;
    const PhaseOutcome out = run_phases(sim, inj, ph, root);
    for (const auto& w : out.not_running) UNSCOPED_INFO(w);
    CHECK(out.converged);
    CHECK(inj.injected() > 10);
    return sim.trace().hash();
  };
  CHECK(hash(9) == hash(9));
  CHECK(hash(9) != hash(10));
}

TEST_CASE("faults: stop() cancels the injector's follow-ups - the simulation runs on after the injector is gone") {
  Simulation sim;
  SpawnOptions oa;
  oa.node = Atom("a");
  sim.spawn([](Context& ctx) { ctx.receive(); }, oa);
  SpawnOptions ob;
  ob.node = Atom("b");
  sim.spawn([](Context& ctx) { ctx.receive(); }, ob);
  {
    Fault p;
    p.kind = Kind::partition;
    p.at = Time{} + 1_s;
    p.side_a = {Atom("a")};
    p.side_b = {Atom("b")};
    p.duration = 10_s;
    Injector inj(sim, {p});
    inj.start();
    sim.run_until(Time{} + 2_s);
    inj.stop();  // docs/faults.md: "cancels everything pending"
  }
  sim.run_until(Time{} + 20_s);  // the window's end callback runs on the destroyed injector
  CHECK(sim.connected(Atom("a"), Atom("b")));
}

TEST_CASE("faults: a fault set the injector cannot run is refused - zero mtbf or period - stochastic faults with tracing off") {
  Simulation sim;
  Fault f;
  f.kind = Kind::heal;
  f.at = Time{} + 1_s;
  f.every = Duration{};
  CHECK_THROWS_AS(Injector(sim, {f}), std::invalid_argument);
  Fault g;
  g.kind = Kind::crash;
  g.target = Target::path("/root/w");
  g.mtbf = Duration{};
  CHECK_THROWS_AS(Injector(sim, {g}), std::invalid_argument);
  SimOptions off;
  off.trace = TraceMode::off;
  Simulation quiet(off);
  g.mtbf = 1_s;
  Injector inj(quiet, {g});
  CHECK_THROWS_AS(inj.start(), std::logic_error);
}

TEST_CASE("faults: node_of(NAME) aims at the node where NAME is registered when the fault fires - skipped when nothing is") {
  Simulation sim;
  const Atom kLeader("leader");
  // The name moves from b to c at 5 s.
  const auto holder = [kLeader](Duration from, Duration until) {
    return [kLeader, from, until](Context& ctx) {
      ctx.sleep(from);
      ctx.register_name(kLeader);
      ctx.sleep(until - from);
    };
  };
  SpawnOptions on_b, on_c;
  on_b.node = Atom("b");
  on_c.node = Atom("c");
  sim.spawn(holder(1_s, 5_s), on_b);
  sim.spawn(holder(6_s, 30_s), on_c);
  Fault early = at_fault(Kind::pause, Target::node("node_of(leader)"), 500_ms);
  early.duration = 1_s;
  Fault first = at_fault(Kind::pause, Target::node("node_of(leader)"), 2_s);
  first.duration = 1_s;
  Fault second = at_fault(Kind::partition, Target{}, 7_s);
  second.side_a = {Atom("node_of(leader)")};
  second.side_b = {Atom("a")};
  second.duration = 1_s;
  Injector inj(sim, {early, first, second});
  inj.start();
  sim.run_until(at(10_s));
  std::vector<std::string> paused, cut;
  for (const TraceEvent& e : sim.trace().events()) {
    if (e.kind == EventKind::node_pause) paused.emplace_back(e.node.text());
    if (e.kind == EventKind::partition) cut.push_back(fmt::format("{}->{}", e.node.text(), e.tag.text()));
  }
  CHECK(paused == std::vector<std::string>{"b"});
  CHECK(cut == std::vector<std::string>{"c->a", "a->c"});
  CHECK(inj.skipped() == 1);
  const auto skips = system_events(sim, "fault_skipped");
  REQUIRE(skips.size() == 1);
  CHECK(skips.front()->text(Atom("why")) == "no process registered as leader");
}

TEST_CASE("faults: `after` starts a stochastic fault's clock - nothing fires before it, and it fires after") {
  Simulation sim;
  Fault f = mtbf_fault(Kind::crash, Target::path("/root/w"), 500_ms);
  f.after = at(20_s);
  Injector inj(sim, {f});
  inj.start();
  start_tree(sim, {"w"});
  sim.run_until(at(40_s));
  const auto injected = system_events(sim, "fault_injected");
  REQUIRE(injected.size() > 5);  // a mean of 500 ms over 20 s: dozens
  for (const HeldEvent& e : injected) CHECK(e->time > at(20_s));
  // Without `after` the same fault fires within the first seconds.
  Simulation plain;
  Injector inj2(plain, {mtbf_fault(Kind::crash, Target::path("/root/w"), 500_ms)});
  inj2.start();
  start_tree(plain, {"w"});
  plain.run_until(at(40_s));
  const auto early = system_events(plain, "fault_injected");
  REQUIRE_FALSE(early.empty());
  CHECK(early.front()->time < at(20_s));
}

TEST_CASE("faults: a knob drawn per injection - each pause its own length, within the range, traced, the same again on the same seed") {
  const auto pauses = [](std::uint64_t seed) {
    SimOptions o;
    o.seed = seed;
    Simulation sim(o);
    Fault f = at_fault(Kind::pause, Target::node("a"), 1_s);
    f.every = 10_s;
    f.duration = 500_ms;
    f.each.push_back({"duration", "500ms", "3s"});
    Injector inj(sim, {f});
    inj.start();
    start_tree(sim, {"w"}, {}, 100, 1_s, Atom("a"));
    sim.run_until(at(200_s));
    std::vector<Duration> lengths;
    for (const HeldEvent& e : system_events(sim, "fault_injected"))
      for (const TraceField& x : e->fields())
        if (x.key == Atom("duration")) lengths.push_back(std::get<Duration>(x.value));
    return lengths;
  };
  const std::vector<Duration> a = pauses(1);
  REQUIRE(a.size() == 20);  // at 1s, 11s, ..., 191s: each traced with the length it drew
  std::set<Duration> distinct(a.begin(), a.end());
  CHECK(distinct.size() > 10);
  for (Duration d : a) {
    CHECK(d >= 500_ms);
    CHECK(d <= 3_s);
  }
  CHECK(pauses(1) == a);
  CHECK(pauses(2) != a);
}
