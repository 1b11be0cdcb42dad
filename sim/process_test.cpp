#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/simulation.hpp"
#include "sim/test_support.hpp"

using namespace lic;
using namespace lic::literals;
using lic::testing::as_int;
using lic::testing::exit_reason;

namespace {
const Atom kPing("ping");
const Atom kPong("pong");
const Atom kA("a");
const Atom kB("b");
}  // namespace

TEST_CASE("spawn - send and receive: a ping gets its pong", "[process]") {
  Simulation sim;
  std::vector<int> got;
  const Pid echo = sim.spawn([](Context& ctx) {
    MessagePtr m = ctx.receive();
    ctx.send(m->from, kPong, as_int(*m) + 1);
  });
  sim.spawn([&](Context& ctx) {
    ctx.send(echo, kPing, 41);
    MessagePtr r = ctx.receive();
    got.push_back(as_int(*r));
  });
  sim.run();
  CHECK(got == std::vector<int>{42});
  CHECK(sim.process_count() == 0);
  CHECK(sim.now() == Time{0});  // nothing waited: virtual time did not move
}

TEST_CASE("selective receive takes the first matching message and leaves the rest in order", "[process]") {
  Simulation sim;
  std::vector<std::string> order;
  const Pid p = sim.spawn([&](Context& ctx) {
    ctx.sleep(1_ms);  // let all three arrive
    MessagePtr b = ctx.receive([](const Message& m) { return m.tag == kB; });
    order.emplace_back(b->tag.text());
    while (MessagePtr m = ctx.receive(Duration::zero())) order.emplace_back(m->tag.text());
  });
  sim.send(p, kA, 1);
  sim.send(p, kB, 2);
  sim.send(p, kA, 3);
  sim.run();
  CHECK(order == std::vector<std::string>{"b", "a", "a"});
}

TEST_CASE("receive timeouts and sleeps happen in virtual time", "[process]") {
  Simulation sim;
  Time woke{-1};
  bool timed_out = false;
  sim.spawn([&](Context& ctx) {
    timed_out = ctx.receive(250_ms) == nullptr;
    ctx.sleep(1_h);
    woke = ctx.now();
  });
  sim.run();
  CHECK(timed_out);
  CHECK(woke == Time{0} + 250_ms + 1_h);
}

TEST_CASE("a message arriving before the timeout wins and the stale timeout does nothing", "[process]") {
  Simulation sim;
  int got = 0;
  Time at{};
  const Pid p = sim.spawn([&](Context& ctx) {
    MessagePtr m = ctx.receive(1_s);
    got = m ? as_int(*m) : -1;
    at = ctx.now();
    MessagePtr none = ctx.receive(2_s);  // the old 1 s timeout must not end this one early
    CHECK(none == nullptr);
    CHECK(ctx.now() == at + 2_s);
  });
  sim.schedule(Time{0} + 300_ms, [&] { sim.send(p, kPing, 7); });
  sim.run();
  CHECK(got == 7);
  CHECK(at == Time{0} + 300_ms);
}

TEST_CASE("send_after delivers later and cancel_timer stops it", "[process]") {
  Simulation sim;
  std::vector<std::pair<int, Time>> got;
  sim.spawn([&](Context& ctx) {
    ctx.send_after(50_ms, ctx.self(), kA, 1);
    const Ref t = ctx.send_after(70_ms, ctx.self(), kA, 2);
    ctx.send_after(90_ms, ctx.self(), kA, 3);
    CHECK(ctx.cancel_timer(t));
    CHECK_FALSE(ctx.cancel_timer(t));
    for (int i = 0; i < 2; ++i) {
      MessagePtr m = ctx.receive();
      got.emplace_back(as_int(*m), ctx.now());
    }
    CHECK(ctx.receive(1_s) == nullptr);
  });
  sim.run();
  REQUIRE(got.size() == 2);
  CHECK(got[0] == std::make_pair(1, Time{0} + 50_ms));
  CHECK(got[1] == std::make_pair(3, Time{0} + 90_ms));
}

TEST_CASE("a message to a dead pid is dropped and recorded", "[process]") {
  Simulation sim;
  const Pid gone = sim.spawn([](Context&) {});
  sim.run();
  sim.send(gone, kPing, 1);
  auto drops = lic::testing::events_of(sim.trace(), EventKind::drop);
  REQUIRE(drops.size() == 1);
  CHECK(drops[0]->pid == gone);
  CHECK(drops[0]->reason == Reason::noproc());
}

TEST_CASE("registered names resolve while the process lives and vanish when it ends", "[process]") {
  Simulation sim;
  const Atom name("db");
  const Pid p = sim.spawn([&](Context& ctx) {
    ctx.register_name(name);
    ctx.receive();
  });
  sim.run_until(Time{0} + 1_ms);
  CHECK(sim.whereis(name) == p);
  int got = 0;
  sim.spawn([&](Context& ctx) {
    ctx.send(name, kPing, 5);
    got = 1;
  });
  sim.run();
  CHECK(got == 1);
  CHECK_FALSE(sim.alive(p));
  CHECK(sim.whereis(name) == Pid{});
}

TEST_CASE("run_until stops at the deadline and resumes where it stopped", "[process]") {
  Simulation sim;
  std::vector<Time> ticks;
  sim.spawn([&](Context& ctx) {
    for (int i = 0; i < 5; ++i) {
      ctx.sleep(100_ms);
      ticks.push_back(ctx.now());
    }
  });
  sim.run_until(Time{0} + 250_ms);
  CHECK(ticks.size() == 2);
  CHECK(sim.now() == Time{0} + 250_ms);
  sim.run();
  CHECK(ticks.size() == 5);
  CHECK(ticks.back() == Time{0} + 500_ms);
}

TEST_CASE("a thrown exception ends a process with error(what)", "[process][exit]") {
  Simulation sim;
  const Pid p = sim.spawn([](Context&) { throw std::runtime_error("bad_input"); });
  sim.run();
  CHECK(exit_reason(sim.trace(), p) == Reason::error(Atom("bad_input")));
}

TEST_CASE("catch (...) in process code cannot swallow a kill", "[process][exit]") {
  Simulation sim;
  int after = 0;
  const Pid p = sim.spawn([&](Context& ctx) {
    try {
      ctx.receive();
    } catch (...) {
      ++after;  // swallowed the unwinding...
    }
    ctx.send(ctx.self(), kPing);  // ...but the next kernel call throws it again
    ++after;
  });
  sim.run_until(Time{0} + 1_ms);
  sim.exit(p, Reason::kill());
  sim.run();
  CHECK(after == 1);
  CHECK(exit_reason(sim.trace(), p) == Reason::killed());
}

TEST_CASE("destroying a simulation unwinds every blocked process's stack", "[process]") {
  int destroyed = 0;
  struct Guard {
    int* n;
    ~Guard() { ++*n; }
  };
  {
    Simulation sim;
    for (int i = 0; i < 10; ++i) {
      sim.spawn([&](Context& ctx) {
        Guard g{&destroyed};
        ctx.receive();
      });
    }
    sim.run();
    CHECK(sim.process_count() == 10);
  }
  CHECK(destroyed == 10);
}

TEST_CASE("every process has a node and the label its spawner gave it", "[process]") {
  Simulation sim;
  SpawnOptions opts;
  opts.label = Label{Atom("/root/input/parser"), 2};
  const Pid p = sim.spawn([](Context& ctx) { ctx.receive(); }, opts);
  sim.run();
  auto info = sim.info(p);
  REQUIRE(info);
  CHECK(info->node == Atom("node0"));
  CHECK(info->label == opts.label);
  CHECK(info->waiting);
  const TraceEvent& spawn = sim.trace().events().front();
  CHECK(spawn.kind == EventKind::spawn);
  CHECK(spawn.label.name == Atom("/root/input/parser"));
  CHECK(spawn.label.instance == 2);
}

TEST_CASE("an exception in a scheduled callback stops the run and is rethrown by run()", "[process]") {
  Simulation sim;
  int later = 0;
  sim.schedule(Time{0} + 1_s, [] { throw std::runtime_error("injector failed"); });
  sim.schedule(Time{0} + 2_s, [&] { ++later; });
  CHECK_THROWS_WITH(sim.run(), "injector failed");
  CHECK(sim.now() == Time{0} + 1_s);
  CHECK(later == 0);
  sim.run();  // the rest still runs afterwards
  CHECK(later == 1);
}

TEST_CASE("a cancelled callback does not move the clock - spawning after run() works (regression)", "[process]") {
  Simulation sim;
  const auto id = sim.schedule(Time{0} + 10_s, [] {});
  sim.cancel(id);
  sim.run();
  CHECK(sim.now() == Time{0});
  bool ran = false;
  sim.spawn([&](Context&) { ran = true; });
  sim.run();
  CHECK(ran);
}

TEST_CASE("find_labelled: the live process of a label - the lowest pid when several hold it - none once they are gone", "[process]") {
  Simulation sim;
  const auto labelled = [](const char* path) {
    SpawnOptions o;
    o.label = Label{Atom(path), 1};
    return o;
  };
  const auto wait_for_ping = [](Context& ctx) { ctx.receive(); };
  const Pid unlabelled = sim.spawn(wait_for_ping);
  const Pid a1 = sim.spawn(wait_for_ping, labelled("/root/a"));
  const Pid b = sim.spawn(wait_for_ping, labelled("/root/b"));
  const Pid a2 = sim.spawn(wait_for_ping, labelled("/root/a"));
  sim.run();
  CHECK(sim.find_labelled("/root/a") == a1);
  CHECK(sim.find_labelled("/root/b") == b);
  CHECK(!sim.find_labelled("/root/c"));
  CHECK(!sim.find_labelled(""));  // an unlabelled process is found by no path
  sim.send(a1, kPing);
  sim.run();
  CHECK(!sim.alive(a1));
  CHECK(sim.find_labelled("/root/a") == a2);
  const Pid a3 = sim.spawn(wait_for_ping, labelled("/root/a"));  // a restart: a higher pid
  sim.run();
  CHECK(sim.find_labelled("/root/a") == a2);
  sim.send(a2, kPing);
  sim.run();
  CHECK(sim.find_labelled("/root/a") == a3);
  sim.send(a3, kPing);
  sim.send(b, kPing);
  sim.send(unlabelled, kPing);
  sim.run();
  CHECK(!sim.find_labelled("/root/a"));
  CHECK(!sim.find_labelled("/root/b"));
}
