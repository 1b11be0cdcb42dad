// Channels follow Go's rules (sim/channel.hpp); each test pins one rule. The Go runtime's own
// answers to the same cases are recorded in conformance/go/ (docs/conformance-go.md).

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
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

int value_of(const ChanRecv& r) {
  const int* v = r.value.get<int>();
  return v != nullptr ? *v : -1;
}

Time at(Duration d) { return Time{} + d; }

}  // namespace

TEST_CASE("channel: capacity 0 is a rendezvous - the sender waits until a receiver takes the value", "[channel]") {
  Simulation sim;
  const Chan c = sim.make_chan(0, Atom("c"));
  Time sent;
  int got = 0;
  sim.spawn([&](Context& ctx) {
    ctx.chan_send(c, 7);
    sent = ctx.now();
  });
  sim.spawn([&](Context& ctx) {
    ctx.sleep(1_s);
    got = value_of(ctx.chan_recv(c));
  });
  sim.run();
  CHECK(got == 7);
  CHECK(sent == at(1_s));  // it waited for the receiver
}

TEST_CASE("channel: capacity N takes N sends without waiting - the next one waits for a receive", "[channel]") {
  Simulation sim;
  const Chan c = sim.make_chan(2, Atom("c"));
  std::vector<Time> sent;
  std::vector<int> got;
  sim.spawn([&](Context& ctx) {
    for (int i = 1; i <= 3; ++i) {
      ctx.chan_send(c, i);
      sent.push_back(ctx.now());
    }
  });
  sim.spawn([&](Context& ctx) {
    ctx.sleep(5_s);
    for (int i = 0; i < 3; ++i) got.push_back(value_of(ctx.chan_recv(c)));
  });
  sim.run();
  CHECK(sent == std::vector<Time>{at(0_s), at(0_s), at(5_s)});
  CHECK(got == std::vector<int>{1, 2, 3});
}

TEST_CASE("channel: after close receivers drain what is buffered - then get ok false at once", "[channel]") {
  Simulation sim;
  const Chan c = sim.make_chan(3, Atom("c"));
  std::vector<std::pair<int, bool>> got;
  sim.spawn([&](Context& ctx) {
    ctx.chan_send(c, 1);
    ctx.chan_send(c, 2);
    ctx.chan_close(c);
  });
  sim.spawn([&](Context& ctx) {
    ctx.sleep(1_s);
    for (int i = 0; i < 4; ++i) {
      const ChanRecv r = ctx.chan_recv(c);
      got.emplace_back(value_of(r), r.ok);
    }
  });
  sim.run();
  CHECK(got == std::vector<std::pair<int, bool>>{{1, true}, {2, true}, {-1, false}, {-1, false}});
  CHECK(sim.now() == at(1_s));  // receiving from a closed channel never waits
}

TEST_CASE("channel: a send on a closed channel crashes the sender with 'send on closed channel'", "[channel]") {
  Simulation sim;
  const Chan c = sim.make_chan(1, Atom("c"));
  const Pid p = sim.spawn([&](Context& ctx) {
    ctx.chan_close(c);
    ctx.chan_send(c, 1);
  });
  sim.run();
  const auto r = exit_reason(sim.trace(), p);
  REQUIRE(r.has_value());
  CHECK(to_string(*r).find("send on closed channel") != std::string::npos);
}

TEST_CASE("channel: closing a closed channel crashes with 'close of closed channel'", "[channel]") {
  Simulation sim;
  const Chan c = sim.make_chan(0, Atom("c"));
  const Pid p = sim.spawn([&](Context& ctx) {
    ctx.chan_close(c);
    ctx.chan_close(c);
  });
  sim.run();
  CHECK(to_string(*exit_reason(sim.trace(), p)).find("close of closed channel") != std::string::npos);
}

TEST_CASE("channel: a sender already waiting when the close comes crashes - receivers waiting get ok false", "[channel]") {
  Simulation sim;
  const Chan full = sim.make_chan(1, Atom("full"));
  const Chan empty = sim.make_chan(1, Atom("empty"));
  std::vector<bool> oks;
  const Pid sender = sim.spawn([&](Context& ctx) {
    ctx.chan_send(full, 1);
    ctx.chan_send(full, 2);  // waits: the buffer is full
  });
  for (int i = 0; i < 2; ++i) sim.spawn([&](Context& ctx) { oks.push_back(ctx.chan_recv(empty).ok); });
  sim.spawn([&](Context& ctx) {
    ctx.sleep(1_s);
    ctx.chan_close(full);
    ctx.chan_close(empty);
  });
  sim.run();
  CHECK(to_string(*exit_reason(sim.trace(), sender)).find("send on closed channel") != std::string::npos);
  CHECK(oks == std::vector<bool>{false, false});
}

TEST_CASE("channel: senders waiting on a full channel are served first come first served", "[channel]") {
  Simulation sim;
  const Chan c = sim.make_chan(0, Atom("c"));
  std::vector<int> got;
  for (int i = 1; i <= 3; ++i) {
    sim.spawn([&, i](Context& ctx) {
      ctx.sleep(Duration{i * kMillisecond.ns});  // they start waiting in this order
      ctx.chan_send(c, i * 10);
    });
  }
  sim.spawn([&](Context& ctx) {
    ctx.sleep(1_s);
    for (int i = 0; i < 3; ++i) got.push_back(value_of(ctx.chan_recv(c)));
  });
  sim.run();
  CHECK(got == std::vector<int>{10, 20, 30});
}

TEST_CASE("channel: select takes a ready case - among several ready ones the seed chooses - each seed the same way", "[channel]") {
  auto pick = [](std::uint64_t seed) {
    SimOptions o;
    o.seed = seed;
    Simulation sim(o);
    const Chan a = sim.make_chan(1, Atom("a"));
    const Chan b = sim.make_chan(1, Atom("b"));
    int chosen = -2;
    sim.spawn([&](Context& ctx) {
      ctx.chan_send(a, 1);
      ctx.chan_send(b, 2);
      SelectCase cases[] = {SelectCase::recv(a), SelectCase::recv(b)};
      chosen = ctx.select(cases);
    });
    sim.run();
    return chosen;
  };
  std::map<int, int> counts;
  for (std::uint64_t s = 1; s <= 200; ++s) {
    const int c = pick(s);
    CHECK(c == pick(s));
    ++counts[c];
  }
  CHECK(counts[0] > 60);  // both cases chosen, about half each (Go: uniformly at random)
  CHECK(counts[1] > 60);
  CHECK(counts[0] + counts[1] == 200);
}

TEST_CASE("channel: select waits for the first case to become ready - or its timeout - a zero timeout is Go's default", "[channel]") {
  Simulation sim;
  const Chan a = sim.make_chan(0, Atom("a"));
  const Chan b = sim.make_chan(0, Atom("b"));
  std::vector<std::pair<int, Time>> out;
  int received = 0;
  sim.spawn([&](Context& ctx) {
    SelectCase none[] = {SelectCase::recv(a)};
    int r = ctx.select(none, Duration::zero());  // default: nothing ready
    out.emplace_back(r, ctx.now());
    r = ctx.select(none, 2_s);  // times out
    out.emplace_back(r, ctx.now());
    SelectCase two[] = {SelectCase::recv(a), SelectCase::recv(b)};
    r = ctx.select(two);  // b becomes ready at 5 s
    out.emplace_back(r, ctx.now());
    received = two[1].received.value.get<int>() != nullptr ? *two[1].received.value.get<int>() : -1;
  });
  sim.spawn([&](Context& ctx) {
    ctx.sleep(5_s);
    ctx.chan_send(b, 9);
  });
  sim.run();
  CHECK(out == std::vector<std::pair<int, Time>>{{-1, at(0_s)}, {-1, at(2_s)}, {1, at(5_s)}});
  CHECK(received == 9);
  // The waiter left a's queue when b was chosen: a send on a would now wait for a receiver.
  CHECK(sim.process_count() == 0);
}

TEST_CASE("channel: a context's cancel closes its done channel - waiters return at once - cancelling twice is harmless", "[channel]") {
  Simulation sim;
  CancelContext cc;
  Time done_at;
  bool ok = true;
  const Pid canceller = sim.spawn([&](Context& ctx) {
    cc = ctx.make_context(Atom("ctx"));
    ctx.sleep(3_s);
    ctx.cancel(cc);
    ctx.cancel(cc);
  });
  sim.spawn([&](Context& ctx) {
    ctx.sleep(1_s);
    ok = ctx.chan_recv(cc.done).ok;
    done_at = ctx.now();
  });
  sim.run();
  CHECK_FALSE(ok);
  CHECK(done_at == at(3_s));
  CHECK(*exit_reason(sim.trace(), canceller) == Reason::normal());
}

TEST_CASE("channel: a context with a timeout closes at its deadline - cancel first ends its timer goroutine at once", "[channel]") {
  for (const bool cancel_first : {false, true}) {
    Simulation sim;
    std::string err;
    Time done_at;
    sim.spawn([&](Context& ctx) {
      const CancelContext cc = ctx.make_context_with_timeout(Atom("ctx"), 10_s);
      if (cancel_first) {
        ctx.sleep(2_s);
        ctx.cancel(cc);
      }
      ctx.chan_recv(cc.done);
      done_at = ctx.now();
      err = std::string(ctx.context_err(cc));
    });
    sim.run();
    INFO("cancel first: " << cancel_first);
    CHECK(done_at == at(cancel_first ? 2_s : 10_s));
    CHECK(err == (cancel_first ? "context canceled" : "context deadline exceeded"));
    CHECK(sim.now() == done_at);  // nothing left waiting for the deadline
    // The timer is a goroutine of its own, named after the context.
    const auto spawned = events_of(sim.trace(), EventKind::spawn);
    CHECK(std::any_of(spawned.begin(), spawned.end(), [](const HeldEvent& e) { return e->label.name == Atom("ctx.timer"); }));
  }
}

TEST_CASE("channel: a WaitGroup's waiters wake when the count comes to zero, again after it rises - below zero crashes, another node's crashes", "[channel]") {
  Simulation sim;
  std::vector<Time> woke;
  Pid below, elsewhere;
  WaitGroup wg;
  sim.spawn([&](Context& ctx) {
    wg = ctx.make_waitgroup(Atom("wg"));
    for (const Duration d : {1_s, 3_s}) {
      ctx.wg_add(wg, 2);
      ctx.spawn([=](Context& g) {
        g.sleep(d);
        g.wg_done(wg);
        g.sleep(d);
        g.wg_done(wg);
      });
      ctx.wg_wait(wg);
      woke.push_back(ctx.now());
    }
    below = ctx.spawn([=](Context& g) { g.wg_done(wg); });
    SpawnOptions o;
    o.node = Atom("other");
    elsewhere = ctx.spawn([=](Context& g) { g.wg_add(wg, 1); }, o);
  });
  sim.run();
  CHECK(woke == std::vector<Time>{at(2_s), at(2_s + 6_s)});
  CHECK(to_string(*exit_reason(sim.trace(), below)).find("sync: negative WaitGroup counter") != std::string::npos);
  CHECK(to_string(*exit_reason(sim.trace(), elsewhere)).find("belongs to node") != std::string::npos);
}

TEST_CASE("channel: a process killed while it waits leaves the queue - the next receiver gets the value", "[channel]") {
  Simulation sim;
  const Chan c = sim.make_chan(0, Atom("c"));
  int got = 0;
  const Pid doomed = sim.spawn([&](Context& ctx) { ctx.chan_recv(c); });
  sim.spawn([&](Context& ctx) {
    ctx.sleep(1_s);
    got = value_of(ctx.chan_recv(c));
  });
  sim.spawn([&](Context& ctx) {
    ctx.sleep(2_s);
    ctx.chan_send(c, 5);
  });
  sim.schedule(at(500_ms), [&] { sim.exit(doomed, Reason::kill()); });
  sim.run();
  CHECK(got == 5);
  CHECK(sim.now() == at(2_s));
}

TEST_CASE("channel: every operation is traced with the channel's name and its length after it", "[channel]") {
  Simulation sim;
  const Chan c = sim.make_chan(2, Atom("Up"));
  sim.spawn([&](Context& ctx) {
    ctx.chan_send(c, 1);
    ctx.chan_send(c, 2);
    ctx.chan_send(c, 3);  // waits
  });
  sim.spawn([&](Context& ctx) {
    ctx.sleep(1_s);
    ctx.chan_recv(c);
    ctx.chan_close(c);
  });
  sim.run();
  std::vector<std::string> seen;
  for (const TraceEvent& e : sim.trace().events()) {
    if (e.tag != Atom("Up")) continue;
    std::string s = std::string(to_string(e.kind)) + ":" + std::to_string(e.msg);
    if (!e.reason.detail.empty()) s += ":" + std::string(e.reason.detail.text());
    seen.push_back(s);
  }
  CHECK(seen == std::vector<std::string>{"chan_make:2", "chan_send:1", "chan_send:2", "chan_wait:2:send", "chan_recv:1",
                                         "chan_send:2", "chan_close:2", "chan_wake:2:done"});
}

TEST_CASE("channel: a channel of another node cannot be used - the process crashes saying whose it is", "[channel]") {
  Simulation sim;
  const Chan c = sim.make_chan(1, Atom("c"), Atom("a"));
  SpawnOptions o;
  o.node = Atom("b");
  const Pid p = sim.spawn([&](Context& ctx) { ctx.chan_send(c, 1); }, o);
  sim.run();
  CHECK(to_string(*exit_reason(sim.trace(), p)).find("belongs to node a") != std::string::npos);
}

TEST_CASE("channel: a nil channel waits for ever - a select skips its case - close crashes - a kill ends the wait", "[channel]") {
  Simulation sim;
  const Chan nil{};
  const Chan r = sim.make_chan(1, Atom("r"));
  int chosen = -2;
  bool returned = false;
  const Pid waiter = sim.spawn([&](Context& ctx) {
    ctx.chan_recv(nil);
    returned = true;
  });
  const Pid closer = sim.spawn([&](Context& ctx) {
    ctx.sleep(1_s);
    ctx.chan_close(nil);
  });
  sim.spawn([&](Context& ctx) {
    ctx.chan_send(r, 1);
    SelectCase cases[] = {SelectCase::send(nil, 2), SelectCase::recv(r)};
    chosen = ctx.select(cases, Duration::max());
    CHECK(ctx.chan_len(nil) == 0);
    CHECK(ctx.chan_cap(nil) == 0);
    CHECK_FALSE(ctx.chan_closed(nil));
  });
  sim.schedule(at(5_s), [&] { sim.exit(waiter, Reason::kill()); });
  sim.run();
  CHECK(chosen == 1);
  CHECK_FALSE(returned);
  const auto killed = exit_reason(sim.trace(), waiter);
  const auto crashed = exit_reason(sim.trace(), closer);
  REQUIRE(killed.has_value());
  REQUIRE(crashed.has_value());
  CHECK(*killed == Reason::killed());
  CHECK(to_string(*crashed).find("close of nil channel") != std::string::npos);
  const auto waits = events_of(sim.trace(), EventKind::chan_wait);
  REQUIRE(waits.size() == 1);
  CHECK(waits[0]->tag == Atom("nil"));
  CHECK(waits[0]->pid == waiter);
}

TEST_CASE("channel: a send's seq is its place among every value sent on the channel - the order a receiver takes them - whichever sender wakes first", "[channel]") {
  Simulation sim;
  Chan ch;
  std::vector<std::pair<int, std::uint64_t>> sent;  // (sender, seq)
  std::vector<int> taken;
  sim.spawn([&](Context& ctx) {
    ch = ctx.make_chan(1, Atom("c"));
    for (int i = 0; i < 4; ++i) {
      ctx.spawn([&, i](Context& c) {
        c.sleep(Duration{kMillisecond.ns * (i + 1)});
        SelectCase put[] = {SelectCase::send(ch, i)};
        REQUIRE(c.select(put) == 0);
        sent.emplace_back(i, put[0].seq);
      });
    }
    ctx.sleep(10_ms);  // every sender is queued on the full channel (or in its buffer) by now
    for (int i = 0; i < 4; ++i) taken.push_back(*ctx.chan_recv(ch).value.get<int>());
  });
  sim.run();
  REQUIRE(sent.size() == 4);
  REQUIRE(taken.size() == 4);
  for (const auto& [who, seq] : sent) {
    REQUIRE(seq >= 1);
    REQUIRE(seq <= 4);
    CHECK(taken[seq - 1] == who);  // the seq-th value taken is this sender's
  }
}

// ---- Preemption (Simulation::set_preemption; docs/kernel.md, "Preemption") --------------------

TEST_CASE("channel: preemption - a goroutine woken from a receive runs its next statement later - traced - others act meanwhile", "[channel][preempt]") {
  Simulation sim;
  sim.set_preemption(sim.options().default_node, Ratio::always(), 10_ms);
  const Chan c = sim.make_chan(0, Atom("c"));
  const Chan d = sim.make_chan(1, Atom("d"));
  Time resumed;
  bool saw_closed = false;
  sim.spawn([&](Context& ctx) {
    ctx.chan_recv(c);  // woken at 1 s by the send
    resumed = ctx.now();
    saw_closed = ctx.chan_closed(d);  // closed by the sender while this one waited for a CPU
  });
  sim.spawn([&](Context& ctx) {
    ctx.sleep(1_s);
    ctx.chan_send(c, 1);  // a rendezvous: the receiver is woken, not run
    ctx.chan_close(d);
  });
  sim.run();
  const std::vector<HeldEvent> pre = events_of(sim.trace(), EventKind::goroutine_preempt);
  REQUIRE(pre.size() == 1);
  CHECK(pre[0]->time == at(1_s));
  CHECK(pre[0]->tag == Atom("c"));
  CHECK(pre[0]->msg > 0);
  CHECK(resumed == at(1_s) + Duration{static_cast<std::int64_t>(pre[0]->msg)});
  CHECK(saw_closed);
}

TEST_CASE("channel: preemption - off by default and at chance 0 - draws nothing and changes no trace", "[channel][preempt]") {
  const auto trace_of = [](bool set_zero) {
    Simulation sim;
    if (set_zero) sim.set_preemption(sim.options().default_node, Ratio::never(), 10_ms);
    const Chan c = sim.make_chan(0, Atom("c"));
    sim.spawn([&](Context& ctx) {
      for (int i = 0; i < 5; ++i) ctx.chan_recv(c);
    });
    sim.spawn([&](Context& ctx) {
      for (int i = 0; i < 5; ++i) {
        ctx.sleep(ctx.rng().exponential(1_s));
        ctx.chan_send(c, i);
      }
    });
    sim.run();
    return sim.trace().hash();
  };
  CHECK(trace_of(false) == trace_of(true));
}

TEST_CASE("channel: preemption - a select that timed out takes no value while it waits for a CPU - the value stays in the buffer", "[channel][preempt]") {
  Simulation sim;
  sim.set_preemption(sim.options().default_node, Ratio::always(), 10_s);
  const Chan c = sim.make_chan(1, Atom("c"));
  std::size_t len_after = 0;
  int took = -1;
  sim.spawn([&](Context& ctx) {
    SelectCase one[] = {SelectCase::recv(c)};
    CHECK(ctx.select(one, 1_s) == -1);  // timed out at 1 s, then preempted (mean 10 s)
    len_after = ctx.chan_len(c);
    took = value_of(ctx.chan_recv(c));
  });
  sim.spawn([&](Context& ctx) {
    ctx.sleep(1_s + 1_ms);  // while the first waits for a CPU: not a waiter any more
    ctx.chan_send(c, 7);
  });
  sim.run();
  const std::vector<HeldEvent> pre = events_of(sim.trace(), EventKind::goroutine_preempt);
  REQUIRE(!pre.empty());
  CHECK(pre[0]->tag == Atom("timeout"));
  CHECK(len_after == 1);
  CHECK(took == 7);
}

TEST_CASE("channel: preemption - its draws are the goroutine's own - its select choices do not move - the same seed gives the same trace", "[channel][preempt]") {
  const auto run = [](bool preempt) {
    Simulation sim(SimOptions{.seed = 11});
    if (preempt) sim.set_preemption(sim.options().default_node, Ratio::percent(50), 5_ms);
    const Chan a = sim.make_chan(4, Atom("a"));
    const Chan b = sim.make_chan(4, Atom("b"));
    const Chan tick = sim.make_chan(0, Atom("tick"));
    std::vector<int> chosen;
    sim.spawn([&](Context& ctx) {
      for (int i = 0; i < 40; ++i) {
        ctx.chan_recv(tick);  // a wake: preempted or not
        ctx.chan_send(a, i);
        ctx.chan_send(b, i);
        SelectCase cs[] = {SelectCase::recv(a), SelectCase::recv(b)};
        chosen.push_back(ctx.select(cs));  // both ready: a draw from its own stream
        ctx.chan_recv(cs[0].received.ok ? b : a);
      }
    });
    sim.spawn([&](Context& ctx) {
      for (int i = 0; i < 40; ++i) {
        ctx.sleep(1_s);
        ctx.chan_send(tick, i);
      }
    });
    sim.run();
    return std::pair{chosen, sim.trace().hash()};
  };
  const auto [off, off_hash] = run(false);
  const auto [on, on_hash] = run(true);
  const auto [again, again_hash] = run(true);
  CHECK(off.size() == 40);
  CHECK(off == on);
  CHECK(on_hash != off_hash);  // preempted wakes are traced
  CHECK(again == on);
  CHECK(again_hash == on_hash);
}

TEST_CASE("channel: set_preemption refuses a chance outside [0, 1] and a mean of zero", "[channel][preempt]") {
  Simulation sim;
  const Atom n = sim.options().default_node;
  CHECK_THROWS_AS(sim.set_preemption(n, Ratio{3, 2}, 1_ms), std::invalid_argument);
  CHECK_THROWS_AS(sim.set_preemption(n, Ratio{1, 0}, 1_ms), std::invalid_argument);
  CHECK_THROWS_AS(sim.set_preemption(n, Ratio::percent(5), Duration::zero()), std::invalid_argument);
  CHECK_NOTHROW(sim.set_preemption(n, Ratio::never(), Duration::zero()));
}

TEST_CASE("channel: preemption - the delay is true time on a node whose clock drifts", "[channel][preempt]") {
  Simulation sim;
  const Atom node = sim.options().default_node;
  sim.set_clock(node, Duration::zero(), -500'000);  // the node's clock runs at half speed
  sim.set_preemption(node, Ratio::always(), 10_ms);
  const Chan c = sim.make_chan(0, Atom("c"));
  Time woken_true, resumed_true;
  sim.spawn([&](Context& ctx) {
    ctx.chan_recv(c);
    resumed_true = ctx.simulation().now();
  });
  sim.spawn([&](Context& ctx) {
    ctx.sleep(1_s);
    woken_true = ctx.simulation().now();
    ctx.chan_send(c, 1);
  });
  sim.run();
  const std::vector<HeldEvent> pre = events_of(sim.trace(), EventKind::goroutine_preempt);
  REQUIRE(pre.size() == 1);
  CHECK(resumed_true - woken_true == Duration{static_cast<std::int64_t>(pre[0]->msg)});
}
