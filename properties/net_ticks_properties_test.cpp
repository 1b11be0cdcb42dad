// Net ticks under random cuts, heals and pauses (docs/network.md, "Net ticks"): what the model
// must never do, whatever the schedule. 2-3 nodes, one station a node sending numbered messages
// to every other station; one-way and two-way blocks, unblocks, heal_all and pauses at random
// instants; net_ticktime 0.4 s to 8 s; both tie-breaks. From what the stations received and the
// trace:
//  - per ordered pair of stations, what arrives arrives once and in send order (a connection
//    that goes down loses a stretch; nothing comes back doubled or out of order);
//  - nothing lands on a side that has declared its peer down since the message was sent, until
//    a new connection (traced connect) is up;
//  - a side never declares its peer down twice without a connect between;
//  - after the last fault, a final heal and the stations' end, the run drains: no check or
//    attempt is scheduled for ever;
//  - the same seed gives the same trace.
// And OTP's `global` (docs/network.md, "global") under the same schedules, with stations
// registering two names at random instants (a clash at a reconnect may kill a station): every
// registration answers, and once the network is whole and every pair of nodes has spoken again,
// every node's table names the same live station for each name (or none).
// LIC_GDEBUG=1 prints a failing global case's network and global events.

#include <rapidcheck.h>

#include "sim/rc_prop.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/simulation.hpp"

namespace lic {
namespace {

struct Fault {
  std::int64_t at_ms = 0;
  int kind = 0;  // 0 block, 1 unblock, 2 heal_all, 3 pause
  int a = 0;
  int b = 0;
  std::int64_t pause_ms = 0;
};

struct TickCase {
  int nodes = 2;
  std::int64_t ticktime_ms = 1000;
  std::vector<std::int64_t> every_ms;  // a station's send period
  std::vector<Fault> faults;
  std::int64_t end_ms = 10'000;        // stations stop sending
  bool random_ties = false;
  std::uint64_t seed = 1;
  struct Reg {
    std::int64_t at_ms = 0;
    int station = 0;
    int name = 0;  // x0 or x1
  };
  std::vector<Reg> regs;  // the global property only
};

std::ostream& operator<<(std::ostream& os, const TickCase& c) {
  os << c.nodes << " nodes, net_ticktime " << c.ticktime_ms << " ms, seed " << c.seed << (c.random_ties ? ", random ties" : "")
     << ", stations stop at " << c.end_ms << " ms\n";
  for (const TickCase::Reg& g : c.regs) os << "  " << g.at_ms << " ms: n" << g.station << " registers x" << g.name << "\n";
  for (const Fault& f : c.faults)
    os << "  " << f.at_ms << " ms: " << (f.kind == 0 ? "block" : f.kind == 1 ? "unblock" : f.kind == 2 ? "heal_all" : "pause") << " n"
       << f.a << " n" << f.b << (f.kind == 3 ? " for " + std::to_string(f.pause_ms) + " ms" : "") << "\n";
  return os;
}

rc::Gen<TickCase> gen_case() {
  return rc::gen::exec([] {
    TickCase c;
    c.nodes = *rc::gen::inRange(2, 4);
    c.ticktime_ms = *rc::gen::element<std::int64_t>(400, 1000, 4000, 8000);
    for (int i = 0; i < c.nodes; ++i) c.every_ms.push_back(*rc::gen::inRange<std::int64_t>(30, 1500));
    c.end_ms = *rc::gen::inRange<std::int64_t>(2000, 30'000);
    const int n = *rc::gen::inRange(1, 9);
    for (int i = 0; i < n; ++i) {
      Fault f;
      f.at_ms = *rc::gen::inRange<std::int64_t>(0, c.end_ms);
      f.kind = *rc::gen::inRange(0, 4);
      f.a = *rc::gen::inRange(0, c.nodes);
      f.b = (f.a + *rc::gen::inRange(1, c.nodes)) % c.nodes;
      f.pause_ms = *rc::gen::inRange<std::int64_t>(1, 3 * c.ticktime_ms);
      c.faults.push_back(f);
    }
    c.random_ties = *rc::gen::arbitrary<bool>();
    c.seed = *rc::gen::inRange<std::uint64_t>(1, 1'000'000);
    return c;
  });
}

rc::Gen<TickCase> gen_global_case() {
  return rc::gen::exec([] {
    TickCase c = *gen_case();
    const int n = *rc::gen::inRange(1, 7);
    for (int i = 0; i < n; ++i)
      c.regs.push_back({*rc::gen::inRange<std::int64_t>(0, c.end_ms), *rc::gen::inRange(0, c.nodes), *rc::gen::inRange(0, 2)});
    return c;
  });
}

struct Got {
  int from = 0;
  int to = 0;
  int seq = 0;
  Time at;
};

Atom node_name(int i) { return Atom("n" + std::to_string(i)); }

struct TickRun {
  int asked = 0;
  int answered = 0;
  std::vector<std::string> disagreements;  // global: what the tables said at the end
  std::vector<Got> got;
  std::uint64_t hash = 0;
  std::vector<TraceEvent> events;
  bool drained = false;
};

TickRun run_case(const TickCase& c) {
  SimOptions o;
  o.seed = c.seed;
  o.tie_break = c.random_ties ? TieBreak::random : TieBreak::fifo;
  o.max_events = 5'000'000;
  Simulation sim(o);
  NetTicks nt;
  nt.ticktime = kMillisecond * c.ticktime_ms;
  nt.setuptime = kSecond * 2;
  sim.set_net_ticks(nt);
  TickRun r;
  std::vector<Pid> stations(static_cast<std::size_t>(c.nodes));
  const Atom kNum("num"), kTouch("touch"), kHello("hello");
  for (int i = 0; i < c.nodes; ++i) {
    SpawnOptions so;
    so.node = node_name(i);
    stations[static_cast<std::size_t>(i)] = sim.spawn(
        [&r, &stations, &c, i, kNum](Context& ctx) {
          // Receive everything; send to every other station every `every` until the end.
          int seq = 0;
          const Duration every = kMillisecond * c.every_ms[static_cast<std::size_t>(i)];
          Time next = ctx.now();
          const Time end = Time{} + kMillisecond * c.end_ms;
          for (;;) {
            const Duration wait = next < end ? (next > ctx.now() ? next - ctx.now() : Duration::zero()) : Duration::max();
            MessagePtr m = ctx.receive(wait);
            if (m != nullptr) {
              const auto* v = m->get<std::pair<int, int>>();
              if (v != nullptr) r.got.push_back({v->first, i, v->second, ctx.now()});
              continue;
            }
            ++seq;
            for (int j = 0; j < c.nodes; ++j)
              if (j != i) ctx.send(stations[static_cast<std::size_t>(j)], kNum, std::pair<int, int>{i, seq});
            next = next + every;
          }
        },
        so);
  }
  for (const Fault& f : c.faults) {
    sim.schedule(Time{} + kMillisecond * f.at_ms, [&sim, f] {
      const Atom a = node_name(f.a), b = node_name(f.b);
      if (f.kind == 0) sim.block(a, b);
      else if (f.kind == 1) sim.unblock(a, b);
      else if (f.kind == 2) sim.heal_all();
      else sim.pause_node(a, kMillisecond * f.pause_ms);
    });
  }
  for (const TickCase::Reg& g : c.regs) {
    ++r.asked;
    sim.schedule(Time{} + kMillisecond * g.at_ms, [&sim, &r, &stations, g] {
      SpawnOptions so;
      so.node = node_name(g.station);
      const Pid who = stations[static_cast<std::size_t>(g.station)];
      sim.spawn(
          [&r, who, g](Context& ctx) {
            ctx.register_global(Atom("x" + std::to_string(g.name)), who);
            ++r.answered;
          },
          so);
    });
  }
  sim.schedule(Time{} + kMillisecond * c.end_ms + kSecond, [&sim] { sim.heal_all(); });
  if (!c.regs.empty()) {
    // A listener a node that no name is ever given (a clash may kill a station): at the end each
    // speaks to every other, so every pair connects again and global's tables exchange.
    auto listeners = std::make_shared<std::vector<Pid>>();
    for (int i = 0; i < c.nodes; ++i) {
      SpawnOptions so;
      so.node = node_name(i);
      listeners->push_back(sim.spawn(
          [listeners, i, kTouch, kHello](Context& ctx) {
            for (;;) {
              MessagePtr m = ctx.receive();
              if (m->tag != kTouch) continue;
              for (std::size_t j = 0; j < listeners->size(); ++j)
                if (static_cast<int>(j) != i) ctx.send((*listeners)[j], kHello);
            }
          },
          so));
    }
    sim.schedule(Time{} + kMillisecond * c.end_ms + kSecond * 20, [&sim, listeners, kTouch] {
      for (const Pid p : *listeners) sim.send(p, kTouch);
    });
  }
  // Every check and attempt ends after the heal; what is left is the stations waiting for mail
  // (no event). So the run ends on its own, well before the budget.
  sim.run();
  r.drained = true;
  if (!c.regs.empty()) {
    for (int x = 0; x < 2; ++x) {
      const Atom name("x" + std::to_string(x));
      const Pid first = sim.whereis_global(node_name(0), name);
      for (int i = 0; i < c.nodes; ++i) {
        const Pid here = sim.whereis_global(node_name(i), name);
        if (here != first) r.disagreements.push_back("n" + std::to_string(i) + "'s table names " + std::to_string(here.id) + " as " + std::string(name.text()) + ", n0's " + std::to_string(first.id));
        if (here && !sim.alive(here)) r.disagreements.push_back("n" + std::to_string(i) + "'s table names the dead " + std::to_string(here.id) + " as " + std::string(name.text()));
      }
    }
  }
  r.hash = sim.trace().hash();
  for (const TraceEvent& e : sim.trace().events()) r.events.push_back(e);
  return r;
}

}  // namespace
}  // namespace lic

using namespace lic;

TEST_CASE("net ticks: under random cuts, heals and pauses what lands lands once and in order - never on a side that dropped the connection - and the run drains",
          "[property][network][ticks]") {
  lic::test::prop("2-3 stations - one-way and two-way blocks - unblocks - heals - pauses - net_ticktime 0.4 s to 8 s - both tie-breaks", [] {
    const TickCase c = *gen_case();
    RC_LOG() << c;
    const TickRun r = run_case(c);
    RC_ASSERT(r.drained);
    // Once, in order, per ordered pair.
    std::map<std::pair<int, int>, int> last;
    for (const Got& g : r.got) {
      int& l = last[{g.from, g.to}];
      if (g.seq <= l) RC_FAIL("n" + std::to_string(g.to) + " got " + std::to_string(g.seq) + " from n" + std::to_string(g.from) + " after " + std::to_string(l));
      l = g.seq;
    }
    // Per side: down (disconnect node=s tag=o) until connect; a side is not declared down twice
    // without a connect between; nothing from o lands on s (a deliver) while s has it down.
    std::map<Pid, std::string> node_of;
    std::map<std::pair<std::string, std::string>, bool> down;
    int disconnects = 0;
    for (const TraceEvent& e : r.events) {
      if (e.kind == EventKind::spawn) node_of[e.pid] = std::string(e.node.text());
      if (e.kind == EventKind::deliver && node_of.count(e.other) != 0) {
        const auto key = std::pair{node_of[e.pid], node_of[e.other]};
        if (down[key]) RC_FAIL(key.first + " got a message from " + key.second + " at " + std::to_string(e.time.ns) + " ns while it had it down");
      }
      if (e.kind == EventKind::disconnect) {
        ++disconnects;
        auto& d = down[{std::string(e.node.text()), std::string(e.tag.text())}];
        RC_ASSERT(!d);
        d = true;
      } else if (e.kind == EventKind::connect) {
        down[{std::string(e.node.text()), std::string(e.tag.text())}] = false;
        down[{std::string(e.tag.text()), std::string(e.node.text())}] = false;
      }
    }
    RC_CLASSIFY(disconnects > 0, "a side declared its peer down");
    RC_CLASSIFY(r.got.size() >= 100, "100 or more messages landed");
    // The same seed, the same trace.
    RC_ASSERT(run_case(c).hash == r.hash);
  });
}

TEST_CASE("global: under random cuts, heals and pauses every registration answers - and once whole again every table names the same live process",
          "[property][network][ticks][global]") {
  lic::test::prop("2-3 stations registering two names - the schedules of the net-tick property", [] {
    const TickCase c = *gen_global_case();
    RC_LOG() << c;
    const TickRun r = run_case(c);
    RC_ASSERT(r.drained);
    RC_ASSERT(r.answered == r.asked);
    if (!r.disagreements.empty() && std::getenv("LIC_GDEBUG") != nullptr)
      for (const TraceEvent& e : r.events)
        if (e.kind == EventKind::spawn || e.kind == EventKind::global_name || e.kind == EventKind::connect || e.kind == EventKind::disconnect || e.kind == EventKind::partition ||
            e.kind == EventKind::heal || e.kind == EventKind::node_pause || e.kind == EventKind::node_resume || (e.kind == EventKind::exit && e.pid.id <= 2))
          std::cerr << e.time.ns / 1e6 << " " << to_string(e.kind) << " " << e.node.text() << " " << e.tag.text() << " " << e.pid.id << " " << to_string(e.reason) << "\n";
    for (const std::string& d : r.disagreements) RC_FAIL(d);
    RC_CLASSIFY(c.nodes == 3, "three nodes");
    RC_CLASSIFY(r.asked >= 3, "three registrations or more");
    RC_CLASSIFY(std::any_of(r.events.begin(), r.events.end(), [](const TraceEvent& e) { return e.kind == EventKind::global_name && e.reason == Reason::other(Atom("conflict")); }), "a clash at a reconnect");
    RC_CLASSIFY(r.events.size() > 1000, "over 1000 events");
    RC_ASSERT(run_case(c).hash == r.hash);
  });
}
