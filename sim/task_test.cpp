// A node as a container: OS signals (SIGTERM asked for as Go's signal.Notify, or OTP's init:stop
// when nobody asked; SIGKILL), the main process whose end ends the task, and bounded mailboxes
// with backpressure (seed 002).

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "sim/held_event.hpp"
#include "sim/simulation.hpp"
#include "sim/test_support.hpp"

using namespace lic;
using namespace lic::literals;
using lic::testing::events_of;
using lic::testing::exit_reason;

namespace {

Time at(Duration d) { return Time{} + d; }
const Atom kNode("ingest");
const Atom kWork("work");

SpawnOptions on_node() {
  SpawnOptions o;
  o.node = kNode;
  return o;
}

}  // namespace

TEST_CASE("task: SIGTERM goes on the channel main asked for - when main returns the task ends and the rest is killed", "[task]") {
  Simulation sim;
  Time got_at;
  const Pid worker = sim.spawn([&](Context& ctx) { ctx.receive(); }, on_node());
  const Pid main = sim.spawn(
      [&](Context& ctx) {
        ctx.set_main();
        const Chan sig = ctx.make_chan(1, Atom("sigCh"));
        ctx.notify_signals(sig);
        const ChanRecv r = ctx.chan_recv(sig);
        got_at = ctx.now();
        CHECK(*r.value.get<Atom>() == Atom("sigterm"));
        ctx.sleep(2_s);  // a graceful shutdown that takes 2 s
      },
      on_node());
  sim.schedule(at(10_s), [&] { sim.signal_node(kNode, Atom("sigterm")); });
  sim.run();
  CHECK(got_at == at(10_s));
  const auto exits = events_of(sim.trace(), EventKind::task_exit);
  REQUIRE(exits.size() == 1);
  CHECK(exits[0]->pid == main);
  CHECK(exits[0]->time == at(12_s));
  CHECK(*exit_reason(sim.trace(), worker) == Reason::killed());  // the goroutine main left behind
  CHECK_FALSE(sim.node_up(kNode));
}

TEST_CASE("task: SIGTERM to a node where nobody asked for it stops its roots with shutdown - as OTP's init:stop", "[task]") {
  Simulation sim;
  Time stopped;
  const Pid root = sim.spawn(
      [&](Context& ctx) {
        ctx.trap_exit(true);
        MessagePtr m = ctx.receive();
        CHECK(m->kind == MsgKind::exit);
        CHECK(m->reason == Reason::shutdown());
        ctx.sleep(500_ms);  // its clean-up
        stopped = ctx.now();
      },
      on_node());
  sim.schedule(at(1_s), [&] { sim.signal_node(kNode, Atom("sigterm")); });
  sim.run();
  CHECK(stopped == at(1500_ms));
  CHECK(*exit_reason(sim.trace(), root) == Reason::normal());
  CHECK(sim.node_up(kNode));  // no main: the node itself stays up
}

TEST_CASE("task: SIGKILL ends everything on the node at once - killed - no clean-up", "[task]") {
  Simulation sim;
  bool cleaned = false;
  const Pid p = sim.spawn(
      [&](Context& ctx) {
        ctx.trap_exit(true);
        ctx.receive();
        cleaned = true;
      },
      on_node());
  sim.schedule(at(1_s), [&] { sim.signal_node(kNode, Atom("sigkill")); });
  sim.run();
  CHECK_FALSE(cleaned);
  CHECK(*exit_reason(sim.trace(), p) == Reason::killed());
  const auto signals = events_of(sim.trace(), EventKind::signal);
  REQUIRE(signals.size() == 1);
  CHECK(signals[0]->tag == Atom("sigkill"));
}

TEST_CASE("mailbox: a bounded mailbox that drops refuses the message past its bound - traced mailbox_full", "[task]") {
  Simulation sim;
  SpawnOptions o;
  o.mailbox_max = 2;
  const Pid slow = sim.spawn([&](Context& ctx) { ctx.sleep(1_h); }, o);
  sim.spawn([&](Context& ctx) {
    for (int i = 0; i < 5; ++i) ctx.cast(slow, kWork, i);
  });
  sim.run_until(at(1_s));
  int full = 0;
  for (const HeldEvent& e : events_of(sim.trace(), EventKind::drop)) full += e->reason == Reason::other(Atom("mailbox_full"));
  CHECK(full == 3);
  CHECK(sim.info(slow)->mailbox == 2);
}

TEST_CASE("mailbox: a bounded mailbox that blocks makes the sender wait until the receiver takes one - backpressure", "[task]") {
  Simulation sim;
  SpawnOptions o;
  o.mailbox_max = 1;
  o.mailbox_block = true;
  std::vector<Time> taken;
  std::vector<Time> sent;
  const Pid consumer = sim.spawn(
      [&](Context& ctx) {
        for (int i = 0; i < 3; ++i) {
          ctx.sleep(1_s);
          ctx.receive();
          taken.push_back(ctx.now());
        }
      },
      o);
  sim.spawn([&](Context& ctx) {
    for (int i = 0; i < 3; ++i) {
      ctx.send(consumer, kWork, i);
      sent.push_back(ctx.now());
    }
  });
  sim.run();
  CHECK(sent == std::vector<Time>{at(0_s), at(1_s), at(2_s)});  // each waits for room
  CHECK(taken == std::vector<Time>{at(1_s), at(2_s), at(3_s)});
  CHECK(events_of(sim.trace(), EventKind::mailbox_wait).size() == 2);
  CHECK(events_of(sim.trace(), EventKind::drop).empty());
}

TEST_CASE("bounded mailbox: 200 senders waiting for room go on first come first served", "[task]") {
  // More waiters than the queue keeps before it drops its served front (64): the order holds
  // across that.
  Simulation sim;
  SpawnOptions o;
  o.mailbox_max = 1;
  o.mailbox_block = true;
  constexpr int kSenders = 200;
  std::vector<std::int64_t> got;
  const Pid consumer = sim.spawn(
      [&](Context& ctx) {
        for (int i = 0; i <= kSenders; ++i) {
          ctx.sleep(1_s);
          got.push_back(*ctx.receive()->get<std::int64_t>());
        }
      },
      o);
  sim.spawn([&](Context& ctx) { ctx.send(consumer, kWork, std::int64_t{-1}); });  // fills it
  for (int i = 0; i < kSenders; ++i) {
    sim.spawn([&, i](Context& ctx) { ctx.send(consumer, kWork, std::int64_t{i}); });
  }
  sim.run();
  std::vector<std::int64_t> want{-1};
  for (int i = 0; i < kSenders; ++i) want.push_back(i);
  CHECK(got == want);
  CHECK(events_of(sim.trace(), EventKind::mailbox_wait).size() >= kSenders);
}

TEST_CASE("clock: a node's drift changes what its processes read as now and how long their timers last - skew moves its wall clock", "[task]") {
  Simulation sim;
  sim.set_clock(kNode, 2_s, 100'000);  // 10 % fast, wall clock 2 s ahead
  Time woke_true;
  Time local_after;
  Time wall_after;
  sim.spawn(
      [&](Context& ctx) {
        ctx.sleep(11_s);  // 11 s of its clock: 10 s of true time
        woke_true = ctx.simulation().now();
        local_after = ctx.now();
        wall_after = ctx.node_time();
      },
      on_node());
  sim.run();
  CHECK(woke_true == at(10_s));
  CHECK(local_after == at(11_s));
  CHECK(wall_after == at(13_s));
  const auto changes = events_of(sim.trace(), EventKind::clock_change);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0]->node == kNode);
}

TEST_CASE("clock: a drift changed during the run applies from then on - the clock read so far stays", "[task]") {
  Simulation sim;
  std::vector<Time> local;
  sim.spawn(
      [&](Context& ctx) {
        ctx.sleep(10_s);
        local.push_back(ctx.now());  // no drift yet: 10 s
        ctx.sleep(9_s);              // 9 s of its clock, now slow: 10 s of true time
        local.push_back(ctx.now());
      },
      on_node());
  sim.schedule(at(10_s), [&] { sim.set_clock(kNode, Duration::zero(), -100'000); });
  sim.run();
  REQUIRE(local.size() == 2);
  CHECK(local[0] == at(10_s));
  CHECK(local[1] == at(19_s));
  CHECK(sim.now() == at(20_s));
}
