// One test per exit-signal rule of DESIGN.md §2 (OTP's semantics, checked on OTP 25).

#include <catch2/catch.hpp>
#include <vector>

#include "sim/simulation.hpp"
#include "sim/test_support.hpp"

using namespace lic;
using namespace lic::literals;
using lic::testing::exit_reason;

namespace {
const Atom kGo("go");

/// A process that waits forever, optionally trapping exits, and records what it receives.
Pid waiter(Simulation& sim, bool trap, std::vector<Message*>* got = nullptr) {
  SpawnOptions opts;
  opts.trap_exit = trap;
  return sim.spawn(
      [got](Context& ctx) {
        for (;;) {
          MessagePtr m = ctx.receive();
          if (got != nullptr) got->push_back(m.release());
        }
      },
      opts);
}

/// Spawns a process linked to `other` that ends with `reason` when it gets `go`.
Pid linked_ender(Simulation& sim, Pid other, Reason reason) {
  return sim.spawn([other, reason](Context& ctx) {
    ctx.link(other);
    ctx.receive();
    ctx.exit(reason);
  });
}

struct Owned {
  std::vector<Message*> v;
  ~Owned() {
    for (Message* m : v) MessageDeleter{}(m);
  }
};
}  // namespace

TEST_CASE("exit signal: a normal exit is ignored by a non-trapping linked process", "[exit]") {
  Simulation sim;
  const Pid w = waiter(sim, false);
  const Pid e = linked_ender(sim, w, Reason::normal());
  sim.run();
  sim.send(e, kGo);
  sim.run();
  CHECK(exit_reason(sim.trace(), e) == Reason::normal());
  CHECK(sim.alive(w));
  auto sig = lic::testing::events_of(sim.trace(), EventKind::exit_signal);
  REQUIRE(sig.size() == 1);
  CHECK(sig[0]->tag == Atom("ignored"));
}

TEST_CASE("exit signal: a trapping linked process gets {'EXIT' - From - normal} as a message", "[exit]") {
  Simulation sim;
  Owned got;
  const Pid w = waiter(sim, true, &got.v);
  const Pid e = linked_ender(sim, w, Reason::normal());
  sim.run();
  sim.send(e, kGo);
  sim.run();
  CHECK(sim.alive(w));
  REQUIRE(got.v.size() == 1);
  CHECK(got.v[0]->kind == MsgKind::exit);
  CHECK(got.v[0]->tag == Atom("EXIT"));
  CHECK(got.v[0]->from == e);
  CHECK(got.v[0]->reason == Reason::normal());
}

TEST_CASE("exit signal: an abnormal exit kills a non-trapping linked process with the same reason", "[exit]") {
  Simulation sim;
  const Pid w = waiter(sim, false);
  const Pid e = linked_ender(sim, w, Reason::error(Atom("boom")));
  sim.run();
  sim.send(e, kGo);
  sim.run();
  CHECK(exit_reason(sim.trace(), w) == Reason::error(Atom("boom")));
}

TEST_CASE("exit signal: exit(Pid - kill) cannot be trapped - the target ends killed", "[exit]") {
  Simulation sim;
  const Pid w = waiter(sim, true);
  sim.run();
  sim.exit(w, Reason::kill());
  sim.run();
  CHECK(exit_reason(sim.trace(), w) == Reason::killed());
}

TEST_CASE("exit signal: the links of a killed process see killed - not kill", "[exit]") {
  Simulation sim;
  Owned got;
  const Pid watcher = waiter(sim, true, &got.v);
  const Pid victim = sim.spawn([watcher](Context& ctx) {
    ctx.link(watcher);
    ctx.receive();
  });
  sim.run();
  sim.exit(victim, Reason::kill());
  sim.run();
  REQUIRE(got.v.size() == 1);
  CHECK(got.v[0]->kind == MsgKind::exit);
  CHECK(got.v[0]->reason == Reason::killed());
}

TEST_CASE("exit signal: ending oneself with kill sends kill over links as an ordinary reason", "[exit]") {
  // A non-trapping linked process dies with `kill` (not `killed`); a trapping one gets
  // {'EXIT', From, kill} and lives on.
  Simulation sim;
  Owned got;
  const Pid plain = waiter(sim, false);
  const Pid trapping = waiter(sim, true, &got.v);
  const Pid e = sim.spawn([&](Context& ctx) {
    ctx.link(plain);
    ctx.link(trapping);
    ctx.receive();
    ctx.exit(Reason::kill());
  });
  sim.run();
  sim.send(e, kGo);
  sim.run();
  CHECK(exit_reason(sim.trace(), e) == Reason::kill());
  CHECK(exit_reason(sim.trace(), plain) == Reason::kill());
  CHECK(sim.alive(trapping));
  REQUIRE(got.v.size() == 1);
  CHECK(got.v[0]->reason == Reason::kill());
}

TEST_CASE("exit signal: exit(Pid - normal) to another non-trapping process is ignored", "[exit]") {
  Simulation sim;
  const Pid w = waiter(sim, false);
  sim.spawn([w](Context& ctx) { ctx.exit(w, Reason::normal()); });
  sim.run();
  CHECK(sim.alive(w));
}

TEST_CASE("exit signal: exit(self() - normal) ends the caller with normal", "[exit]") {
  Simulation sim;
  bool after = false;
  const Pid p = sim.spawn([&](Context& ctx) {
    ctx.exit(ctx.self(), Reason::normal());
    after = true;
  });
  sim.run();
  CHECK_FALSE(after);
  CHECK(exit_reason(sim.trace(), p) == Reason::normal());
}

TEST_CASE("exit signal: {shutdown - Term} and error(What) reach links and monitors intact", "[exit]") {
  for (const Reason& r : {Reason::shutdown(Atom("maintenance")), Reason::error(Atom("bad_arg"))}) {
    Simulation sim;
    Owned got;
    const Pid w = waiter(sim, true, &got.v);
    const Pid e = linked_ender(sim, w, r);
    Reason down_reason;
    sim.spawn([&](Context& ctx) {
      const Ref ref = ctx.monitor(e);
      MessagePtr m = ctx.receive();
      CHECK(m->kind == MsgKind::down);
      CHECK(m->ref == ref);
      down_reason = m->reason;
    });
    sim.run();
    sim.send(e, kGo);
    sim.run();
    REQUIRE(got.v.size() == 1);
    CHECK(got.v[0]->reason == r);
    CHECK(down_reason == r);
  }
}

TEST_CASE("monitor: DOWN carries the ref - the pid and the exit reason", "[exit][monitor]") {
  Simulation sim;
  const Pid target = sim.spawn([](Context& ctx) {
    ctx.receive();
    ctx.exit(Reason::other(Atom("timeout")));
  });
  Pid down_pid;
  Reason why;
  Ref mine;
  Ref seen;
  sim.spawn([&](Context& ctx) {
    mine = ctx.monitor(target);
    MessagePtr m = ctx.receive();
    down_pid = m->from;
    why = m->reason;
    seen = m->ref;
  });
  sim.run();
  sim.send(target, kGo);
  sim.run();
  CHECK(down_pid == target);
  CHECK(why == Reason::other(Atom("timeout")));
  CHECK(seen == mine);
}

TEST_CASE("monitor: monitoring a dead pid gives DOWN noproc at once", "[exit][monitor]") {
  Simulation sim;
  const Pid gone = sim.spawn([](Context&) {});
  sim.run();
  Reason why;
  sim.spawn([&](Context& ctx) {
    ctx.monitor(gone);
    MessagePtr m = ctx.receive(Duration::zero());  // already there, no waiting
    REQUIRE(m);
    why = m->reason;
  });
  sim.run();
  CHECK(why == Reason::noproc());
}

TEST_CASE("monitor: demonitor with flush removes a DOWN already delivered", "[exit][monitor]") {
  Simulation sim;
  const Pid target = sim.spawn([](Context&) {});
  std::size_t left = 99;
  sim.spawn([&](Context& ctx) {
    const Ref r = ctx.monitor(target);
    ctx.sleep(1_ms);  // target ends; DOWN arrives
    CHECK(ctx.mailbox_size() == 1);
    ctx.demonitor(r, true);
    left = ctx.mailbox_size();
  });
  sim.run();
  CHECK(left == 0);
}

TEST_CASE("link: linking to a dead process gives the caller noproc", "[exit]") {
  Simulation sim;
  const Pid gone = sim.spawn([](Context&) {});
  sim.run();
  const Pid p = sim.spawn([gone](Context& ctx) { ctx.link(gone); });
  Owned got;
  SpawnOptions trap;
  trap.trap_exit = true;
  sim.spawn([&](Context& ctx) {
    ctx.link(gone);
    MessagePtr m = ctx.receive();
    got.v.push_back(m.release());
  }, trap);
  sim.run();
  CHECK(exit_reason(sim.trace(), p) == Reason::noproc());
  REQUIRE(got.v.size() == 1);
  CHECK(got.v[0]->reason == Reason::noproc());
}

TEST_CASE("link: unlink stops the exit signal", "[exit]") {
  Simulation sim;
  const Pid w = waiter(sim, false);
  const Pid e = sim.spawn([w](Context& ctx) {
    ctx.link(w);
    ctx.unlink(w);
    ctx.exit(Reason::error(Atom("boom")));
  });
  sim.run();
  CHECK(exit_reason(sim.trace(), e) == Reason::error(Atom("boom")));
  CHECK(sim.alive(w));
}

TEST_CASE("spawn_link: a crashing child takes its non-trapping parent down", "[exit]") {
  Simulation sim;
  bool after = false;
  const Pid parent = sim.spawn([&](Context& ctx) {
    ctx.spawn_link([](Context&) { throw std::runtime_error("child_failed"); });
    ctx.sleep(1_s);
    after = true;
  });
  sim.run();
  CHECK_FALSE(after);
  CHECK(exit_reason(sim.trace(), parent) == Reason::error(Atom("child_failed")));
}

TEST_CASE("exit signal: a chain of 20000 linked processes dies without recursion", "[exit]") {
  // Each member links to the one before it; killing the first takes the whole chain down
  // through exit signals, processed from the kernel's death queue rather than the stack.
  Simulation sim(SimOptions{.trace = TraceMode::hash});
  Pid prev;
  Pid first;
  for (int i = 0; i < 20'000; ++i) {
    const Pid p = sim.spawn([prev](Context& ctx) {
      if (prev) ctx.link(prev);
      ctx.receive();
    });
    if (!first) first = p;
    prev = p;
  }
  sim.run();
  CHECK(sim.process_count() == 20'000);
  sim.exit(first, Reason::error(Atom("cascade")));
  sim.run();
  CHECK(sim.process_count() == 0);
}
