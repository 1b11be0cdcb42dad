// Detection by net ticks (docs/network.md "Net ticks"): when each side of a cut notices it,
// what a short cut keeps, what a long one loses, one-way cuts, pauses, reconnecting on demand.

#include <catch2/catch.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "sim/held_event.hpp"
#include "sim/simulation.hpp"
#include "sim/net_ticks_test_support.hpp"
#include "sim/test_support.hpp"

using namespace lic;
using namespace lic::literals;

namespace Catch {
template <>
struct StringMaker<lic::Duration> {
  static std::string convert(lic::Duration d) { return std::to_string(d.ns / 1'000'000.0) + " ms"; }
};
template <>
struct StringMaker<lic::Time> {
  static std::string convert(lic::Time t) { return std::to_string(t.ns / 1'000'000.0) + " ms"; }
};
}  // namespace Catch
using lic::testing::as_int;
using lic::testing::events_of;

namespace {
using namespace lic::testing::ticks;

/// A process on node a that sends 1..n to `to`, one every `every` from t = 0; `raw`: it models
/// its own transport (Context::raw_network).
void numbered(Simulation& sim, Pid to, int n, Duration every = 100_ms, bool raw = false) {
  SpawnOptions o;
  o.node = kA;
  sim.spawn(
      [to, n, every, raw](Context& ctx) {
        ctx.raw_network(raw);
        for (int i = 1; i <= n; ++i) {
          ctx.send(to, kMsg, i);
          ctx.sleep(every);
        }
      },
      o);
}

/// Cuts a from b both ways at `at`.
void cut_both(Simulation& sim, Time at) {
  sim.schedule(at, [&sim] {
    sim.block(kA, kB);
    sim.block(kB, kA);
  });
}

/// When each side declared the other down (Time::max(): never).
struct Downs {
  Time a = Time::max();  // a's side
  Time b = Time::max();
};

Downs downs(const Trace& t) {
  Downs d;
  for (const HeldEvent& e : events_of(t, EventKind::disconnect)) {
    if (e->node == kA && d.a == Time::max()) d.a = e->time;
    if (e->node == kB && d.b == Time::max()) d.b = e->time;
  }
  return d;
}
}  // namespace

TEST_CASE("net ticks: a cut is noticed 0.75 to 1.25 net_ticktime later, by each side on its own tick", "[network][ticks]") {
  // Over many seeds (each node's ticker phase is drawn), every side's detection lies in
  // [0.75 T, 1.25 T] after the cut, the extremes are approached, and the two sides differ.
  Duration lo = Duration::max();
  Duration hi = Duration::zero();
  int differ = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    Simulation sim(seeded(seed));
    sim.set_net_ticks(ticks(4_s));
    std::vector<Got> ga, gb;
    const Pid pb = recorder(sim, kB, gb);
    recorder(sim, kA, ga, pb, Time{} + 1_ms);
    cut_both(sim, Time{} + 10_s);
    sim.run_until(Time{} + 30_s);
    const Downs d = downs(sim.trace());
    REQUIRE(d.a != Time::max());
    REQUIRE(d.b != Time::max());
    for (const Time t : {d.a, d.b}) {
      const Duration after = t - (Time{} + 10_s);
      INFO("seed " << seed << ": detected " << after.ns / 1e6 << " ms after the cut");
      CHECK(after >= 3_s);
      CHECK(after <= 5_s);
      lo = std::min(lo, after);
      hi = std::max(hi, after);
    }
    if (d.a != d.b) ++differ;
    // Each side's process hears noconnection when its own side goes, not before.
    REQUIRE(ga.size() == 1);
    REQUIRE(gb.size() == 1);
    CHECK(ga[0].reason == Reason::noconnection());
    CHECK(ga[0].at == d.a);
    CHECK(gb[0].at == d.b);
  }
  CHECK(lo < 3_s + 300_ms);
  CHECK(hi > 5_s - 300_ms);
  CHECK(differ > 40);
}

TEST_CASE("net ticks: a cut shorter than detection loses nothing - what was sent lands after the heal, in order", "[network][ticks]") {
  Simulation sim(seeded(7));
  sim.set_net_ticks(ticks(4_s));
  std::vector<Got> got;
  numbered(sim, recorder(sim, kB, got), 40);
  cut_both(sim, Time{} + 1_s);
  sim.schedule(Time{} + 2500_ms, [&] { sim.heal_all(); });
  sim.run_until(Time{} + 20_s);
  CHECK(events_of(sim.trace(), EventKind::disconnect).empty());
  REQUIRE(got.size() == 40);
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i].value == static_cast<int>(i) + 1);
  // Those sent into the cut land together at the first retransmission after the heal.
  const Time heal = Time{} + 2500_ms;
  const auto first_late = std::find_if(got.begin(), got.end(), [](const Got& g) { return g.value == 11; });
  REQUIRE(first_late != got.end());
  CHECK(first_late->at >= heal);
  CHECK(first_late->at < heal + 3_s);
  CHECK(got[14].at == first_late->at);
}

TEST_CASE("net ticks: a cut longer than detection loses what was sent into it - what is sent after goes with a connection attempt that the heal lets through", "[network][ticks]") {
  Simulation sim(seeded(3));
  sim.set_net_ticks(ticks(4_s));
  std::vector<Got> got;
  numbered(sim, recorder(sim, kB, got), 150);
  cut_both(sim, Time{} + 1_s);
  sim.schedule(Time{} + 9_s, [&] { sim.heal_all(); });
  sim.run_until(Time{} + 20_s);
  const Downs d = downs(sim.trace());
  CHECK(d.a < Time{} + 9_s);
  CHECK(d.b < Time{} + 9_s);
  // Before the cut: 1..10 (sent at 0..0.9 s); after the heal, from the first send on.
  std::vector<int> values;
  for (const Got& g : got) values.push_back(g.value);
  REQUIRE(values.size() > 10);
  for (int i = 0; i < 10; ++i) CHECK(values[static_cast<std::size_t>(i)] == i + 1);
  // Those sent into the old connection (11 on) are lost with it. From the first send after a
  // declared b down, a connection attempt holds what is sent, and after the heal at 9 s it gets
  // through: all of them land then, in order (real Erlang: docs/conformance-dist.md).
  const int first_queued = static_cast<int>((d.a - Time{}).ns / (100_ms).ns) + 1 + ((d.a - Time{}).ns % (100_ms).ns != 0 ? 1 : 0);
  CHECK(values[10] == first_queued);
  for (std::size_t i = 10; i < values.size(); ++i) CHECK(values[i] == first_queued + static_cast<int>(i) - 10);
  // The attempt began with that send and gets through a whole number of seconds after it: the
  // first such instant after the heal (then a latency).
  const Duration start = (100_ms) * (first_queued - 1);
  const Duration through = start + 1_s * (((9_s - start).ns + (1_s).ns - 1) / (1_s).ns);
  CHECK(got[10].at == Time{} + through + 1_ms);
  CHECK(through >= 9_s);
  CHECK(through < 10_s);
  CHECK(values.back() == 150);
  CHECK(events_of(sim.trace(), EventKind::connect).size() == 1);
}

TEST_CASE("net ticks: a one-way cut ends with both sides timing out, the cut-off receiver first", "[network][ticks]") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    Simulation sim(seeded(seed));
    sim.set_net_ticks(ticks(4_s));
    std::vector<Got> ga, gb;
    recorder(sim, kA, ga);
    recorder(sim, kB, gb);
    sim.schedule(Time{} + 10_s, [&] { sim.block(kA, kB); });
    sim.run_until(Time{} + 30_s);
    const Downs d = downs(sim.trace());
    REQUIRE(d.a != Time::max());
    REQUIRE(d.b != Time::max());
    INFO("seed " << seed << ": a " << (d.a - (Time{} + 10_s)).ns / 1e6 << " ms, b " << (d.b - (Time{} + 10_s)).ns / 1e6 << " ms");
    CHECK(d.b - (Time{} + 10_s) >= 3_s);
    CHECK(d.b - (Time{} + 10_s) <= 5_s);
    // a still reads b until b's first segment after the cut goes unacknowledged: its tick at
    // most a quarter of T later, plus one RTO.
    CHECK(d.a - (Time{} + 10_s) >= 3_s);
    CHECK(d.a - (Time{} + 10_s) <= 6_s + 300_ms);
  }
}

TEST_CASE("net ticks: a pause longer than net_ticktime gets the paused node declared down", "[network][ticks]") {
  Simulation sim(seeded(5));
  sim.set_net_ticks(ticks(4_s));
  std::vector<Got> ga, gb;
  const Pid pb = recorder(sim, kB, gb);
  recorder(sim, kA, ga, pb, Time{} + 1_ms);
  sim.schedule(Time{} + 10_s, [&] { sim.pause_node(kB, 8_s); });
  sim.run_until(Time{} + 30_s);
  const Downs d = downs(sim.trace());
  CHECK(d.a - (Time{} + 10_s) >= 3_s);
  CHECK(d.a - (Time{} + 10_s) <= 5_s);
  // a closed the connection: b hears of it (the FIN) while paused, and fires as it resumes.
  REQUIRE(gb.size() == 1);
  CHECK(gb[0].reason == Reason::noconnection());
  CHECK(gb[0].at >= Time{} + 18_s);

  Simulation short_pause(seeded(5));
  short_pause.set_net_ticks(ticks(4_s));
  short_pause.schedule(Time{} + 10_s, [&] { short_pause.pause_node(kB, 2_s); });
  std::vector<Got> g2;
  recorder(short_pause, kA, g2);
  short_pause.run_until(Time{} + 30_s);
  CHECK(events_of(short_pause.trace(), EventKind::disconnect).empty());
}

TEST_CASE("net ticks: a link or monitor to a node that cannot be reached fails after net_setuptime", "[network][ticks]") {
  Simulation sim(seeded(2));
  NetTicks n = ticks(4_s);
  n.setuptime = 3_s;
  sim.set_net_ticks(n);
  std::vector<Got> ga, gb;
  const Pid pb = recorder(sim, kB, gb);
  // Both sides have declared the other down by 6.01 s; the cut stays.
  recorder(sim, kA, ga, pb, Time{} + 8_s);
  cut_both(sim, Time{} + 1_s);
  sim.run_until(Time{} + 20_s);
  REQUIRE(ga.size() == 1);
  CHECK(ga[0].reason == Reason::noconnection());
  CHECK(ga[0].at == Time{} + 11_s);
  CHECK(gb.empty());
}

TEST_CASE("net ticks: nothing is scheduled while the network is whole - a run without faults ends", "[network][ticks]") {
  Simulation sim(seeded(1));
  sim.set_net_ticks(ticks(60_s));
  std::vector<Got> got;
  const Pid rb = recorder(sim, kB, got);
  SpawnOptions o;
  o.node = kA;
  sim.spawn([rb](Context& ctx) { ctx.send(rb, kMsg, 1); }, o);
  sim.run();  // returns: no tick events keep it going
  REQUIRE(got.size() == 1);
  CHECK(sim.now() < Time{} + 1_s);
}

TEST_CASE("net ticks: set_net_ticks refuses a negative time and a net_ticktime below 4 ms", "[network][ticks]") {
  Simulation sim;
  CHECK_THROWS_AS(sim.set_net_ticks(ticks(Duration{-1})), std::invalid_argument);
  CHECK_THROWS_AS(sim.set_net_ticks(ticks(3_ms)), std::invalid_argument);
  NetTicks n = ticks(4_s);
  n.setuptime = Duration{-5};
  CHECK_THROWS_AS(sim.set_net_ticks(n), std::invalid_argument);
  CHECK_NOTHROW(sim.set_net_ticks(ticks(4_ms)));
}

TEST_CASE("net ticks: a process that models its own transport sends packets - a cut drops them, nothing waits for the heal", "[network][ticks]") {
  // The simulated PostgreSQL's connections model TCP themselves (Context::raw_network): under
  // net ticks their segments still cross as under instant detection.
  Simulation sim(seeded(7));
  sim.set_net_ticks(ticks(4_s));
  std::vector<Got> got;
  numbered(sim, recorder(sim, kB, got), 40, 100_ms, true);
  cut_both(sim, Time{} + 1_s);
  sim.schedule(Time{} + 2500_ms, [&] { sim.heal_all(); });
  sim.run_until(Time{} + 20_s);
  CHECK(events_of(sim.trace(), EventKind::disconnect).empty());
  // 11..25 were sent at 1.0 s .. 2.4 s, into the cut: dropped at once, as packets are.
  std::size_t partitioned = 0;
  for (const HeldEvent& e : events_of(sim.trace(), EventKind::drop))
    if (e->reason == Reason::other(Atom("partitioned"))) ++partitioned;
  CHECK(partitioned == 15);
  REQUIRE(got.size() == 25);
  for (const Got& g : got) {
    const Time sent = Time{} + (100_ms) * (g.value - 1);
    CHECK(g.at == sent + 1_ms);  // the path's latency, never held
  }
}

TEST_CASE("net ticks: a node restarted and cut before its first tick is still detected, from its restart", "[network][ticks]") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    Simulation sim(seeded(seed));
    sim.set_net_ticks(ticks(4_s));
    std::vector<Got> ga;
    recorder(sim, kA, ga);
    sim.schedule(Time{} + 1_s, [&] { sim.crash_node(kB); });
    sim.schedule(Time{} + 2_s, [&] { sim.restart_node(kB); });
    // a talks to the new b at once (a new connection), then the cut, before b's first tick.
    sim.schedule(Time{} + 2_s + 1_ms, [&] {
      SpawnOptions ob;
      ob.node = kB;
      const Pid pb = sim.spawn([](Context& ctx) { ctx.receive(); }, ob);
      SpawnOptions oa;
      oa.node = kA;
      sim.spawn([pb](Context& ctx) { ctx.send(pb, kMsg, 1); }, oa);
    });
    cut_both(sim, Time{} + 2_s + 5_ms);
    sim.run_until(Time{} + 20_s);
    Time last = Time{};
    for (const HeldEvent& e : events_of(sim.trace(), EventKind::disconnect)) last = e->time;
    INFO("seed " << seed);
    CHECK(last > Time{} + 2_s);
    CHECK(last <= Time{} + 2_s + 5_s + 1_s);
  }
}

TEST_CASE("net ticks: a side that wrote data since its last tick does not tick - the data is the last read, and detection can come sooner", "[network][ticks]") {
  // a sends to b once a second (its tick interval for a 4 s net_ticktime), at .05: a writes no
  // tick at all (dist_util's need_to_tick), so the last thing b reads before a cut at 10 s is the
  // message of 9.05 s, and b declares a down 3.05 to 4.05 s after the cut, where a tick written
  // just before the cut would have put it up to 5 s.
  Duration latest = Duration::zero();
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    Simulation sim(seeded(seed));
    sim.set_net_ticks(ticks(4_s));
    std::vector<Got> got;
    const Pid rb = recorder(sim, kB, got);
    SpawnOptions o;
    o.node = kA;
    sim.spawn(
        [rb](Context& ctx) {
          ctx.sleep(50_ms);
          for (int i = 1;; ++i) {
            ctx.send(rb, kMsg, i);
            ctx.sleep(1_s);
          }
        },
        o);
    sim.schedule(Time{} + 10_s, [&] { sim.block(kA, kB); });
    sim.run_until(Time{} + 20_s);
    const Downs d = downs(sim.trace());
    REQUIRE(d.b != Time::max());
    const Duration after = d.b - (Time{} + 10_s);
    INFO("seed " << seed << ": b declared a down " << after.ns / 1e6 << " ms after the cut");
    CHECK(after >= 3_s);
    CHECK(after <= 4050_ms + 1_ms);
    latest = std::max(latest, after);
  }
  CHECK(latest > 3800_ms);  // the phases spread it over the interval
}

TEST_CASE("net ticks: a link asked for during a connection attempt is made when the heal lets the attempt through", "[network][ticks]") {
  Simulation sim(seeded(4));
  sim.set_net_ticks(ticks(4_s));
  std::vector<Got> ga, gb;
  const Pid pb = recorder(sim, kB, gb);
  recorder(sim, kA, ga, pb, Time{} + 7_s);  // both sides dropped the connection by 6.01 s
  cut_both(sim, Time{} + 1_s);
  sim.schedule(Time{} + 9_s, [&] { sim.heal_all(); });
  sim.schedule(Time{} + 10_s, [&] { sim.crash(pb, Reason::other(Atom("boom"))); });
  sim.run_until(Time{} + 20_s);
  // The attempt began at 7 s and gets through at 9 s (a whole number of seconds after it): the
  // link is made then, so b's end reaches a as b's own reason, not noconnection.
  REQUIRE(events_of(sim.trace(), EventKind::connect).size() == 1);
  CHECK(events_of(sim.trace(), EventKind::connect)[0]->time == Time{} + 9_s);
  REQUIRE(ga.size() == 1);
  CHECK(ga[0].reason == Reason::other(Atom("boom")));
  CHECK(ga[0].at == Time{} + 10_s + 1_ms);
}

TEST_CASE("net ticks: link loss, duplication and reordering do not reach distributed Erlang's messages - TCP resends, drops copies and keeps order", "[network][ticks]") {
  // 200 numbered messages a to b over a path that loses 30 %, doubles 30 % and reorders 30 %:
  // under instant detection some are lost, doubled or out of order; under net ticks (TCP) every
  // one lands once and in order, a lost one a retransmission timeout late with the rest behind it.
  for (const bool ticked : {false, true}) {
    Simulation sim(seeded(4));
    if (ticked) sim.set_net_ticks(ticks(60_s));
    LinkParams p;
    p.latency_min = 1_ms;
    p.latency_mean = 2_ms;
    p.loss = Ratio{3, 10};
    p.duplicate = Ratio{3, 10};
    p.reorder = Ratio{3, 10};
    sim.set_link(kA, kB, p);
    std::vector<Got> got;
    numbered(sim, recorder(sim, kB, got), 200, 10_ms);
    sim.run_until(Time{} + 10_s);
    std::vector<int> values;
    Duration latest{};
    for (const Got& g : got) values.push_back(g.value);
    bool in_order = std::is_sorted(values.begin(), values.end()) && std::adjacent_find(values.begin(), values.end()) == values.end();
    INFO((ticked ? "net ticks" : "instant") << ": " << values.size() << " landed");
    if (!ticked) {
      CHECK(!in_order);  // the path's faults show
      continue;
    }
    REQUIRE(values.size() == 200);
    CHECK(in_order);
    for (std::size_t i = 0; i < got.size(); ++i) latest = std::max(latest, got[i].at - (Time{} + 10_ms * static_cast<std::int64_t>(i)));
    CHECK(latest >= 200_ms);  // a lost one waited for its retransmission
    CHECK(latest < 1_s);
    std::size_t drops = 0;
    for (const HeldEvent& e : events_of(sim.trace(), EventKind::drop)) drops += e->reason == Reason::other(Atom("lost")) ? 1 : 0;
    CHECK(drops == 0);
  }
}
