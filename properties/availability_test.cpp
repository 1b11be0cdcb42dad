// Availability from intervals and from the trace (the measuring half of issue 4): interval
// algebra, the figures of a known timeline, a supervised worker's up intervals read from a real
// run, a whole subtree's up intervals read from real runs (group restarts, clean exits, nesting,
// escalation, dynamic children), and the confidence interval's coverage checked against its
// nominal 95 %.

#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <string>

#include "properties/availability.hpp"
#include "sim/rng.hpp"
#include "sim/simulation.hpp"
#include "supervision/stock_worker.hpp"
#include "supervision/supervisor.hpp"

using namespace lic;
using namespace lic::literals;
using namespace lic::properties;

namespace {
Time at(Duration d) { return Time{} + d; }
Interval iv(Duration a, Duration b) { return {at(a), at(b)}; }

/// A stock worker whose init takes `init` (its repair time).
supervision::Child worker(const std::string& id, Duration init,
                          supervision::RestartType restart = supervision::RestartType::permanent) {
  supervision::ChildSpec spec;
  spec.id = id;
  spec.restart = restart;
  supervision::WorkerConfig config;
  config.init_delay = init;
  return supervision::stock_child(spec, config);
}

supervision::SupervisorSpec sup_spec(supervision::Strategy strategy, std::uint32_t intensity,
                                     std::vector<supervision::Child> children) {
  supervision::SupervisorSpec spec;
  spec.flags.strategy = strategy;
  spec.flags.intensity = intensity;
  spec.children = std::move(children);
  return spec;
}

/// The root supervisor at /root, spawned by the world (no supervisor reports it started).
void spawn_root(Simulation& sim, supervision::SupervisorSpec spec) {
  SpawnOptions o;
  o.label = Label{Atom("/root"), 1};
  sim.spawn(std::make_unique<supervision::Supervisor>(std::move(spec)), o);
}

/// At `t` the process at `path` stops with `why` (a crash, or a clean exit).
void stop_at(Simulation& sim, Duration t, const std::string& path, Reason why) {
  sim.schedule(at(t), [&sim, path, why] {
    sim.send(supervision::find_by_path(sim, path), supervision::kCrash, why);
  });
}

/// At `t` a process of its own (management calls need a caller, unlabelled: outside every
/// subtree) runs `fn`.
void call_at(Simulation& sim, Duration t, std::function<void(Context&)> fn) {
  sim.schedule(at(t), [&sim, fn = std::move(fn)] { sim.spawn([fn](Context& ctx) { fn(ctx); }); });
}

Intervals subtree(const Simulation& sim, const std::string& path) {
  return subtree_up_intervals(sim.trace().events(), path, at(0_s), at(50_s));
}
Intervals own(const Simulation& sim, const std::string& path) {
  return up_intervals(sim.trace().events(), path, at(0_s), at(50_s));
}

const Reason kBoom = Reason::error(Atom("boom"));
}  // namespace

TEST_CASE("availability: intervals - normalise merges overlaps and neighbours - series is the intersection - parallel the union") {
  CHECK(normalise({iv(5_s, 7_s), iv(0_s, 2_s), iv(2_s, 3_s), iv(6_s, 9_s), iv(4_s, 4_s)}) ==
        Intervals{iv(0_s, 3_s), iv(5_s, 9_s)});
  const Intervals a{iv(0_s, 10_s), iv(20_s, 30_s)};
  const Intervals b{iv(5_s, 25_s)};
  CHECK(intersect(a, b) == Intervals{iv(5_s, 10_s), iv(20_s, 25_s)});
  CHECK(unite(a, b) == Intervals{iv(0_s, 30_s)});
  CHECK(complement(a, at(0_s), at(40_s)) == Intervals{iv(10_s, 20_s), iv(30_s, 40_s)});
  CHECK(clip(a, at(8_s), at(22_s)) == Intervals{iv(8_s, 10_s), iv(20_s, 22_s)});
  CHECK(total(a) == 20_s);
}

TEST_CASE("availability: the figures of a known timeline - uptime - failures and repairs - MTBF and MTTR") {
  // Up 0-10, down 10-12, up 12-20, down 20-25, up 25-40 (still up at the end of the window).
  const Availability a = measure({iv(0_s, 10_s), iv(12_s, 20_s), iv(25_s, 40_s)}, at(0_s), at(40_s));
  CHECK(a.observed == 40_s);
  CHECK(a.up == 33_s);
  CHECK(a.availability == Approx(33.0 / 40.0));
  CHECK(a.failures == 2);  // the last up interval did not end inside the window
  CHECK(a.repairs == 2);
  CHECK(a.mtbf == 9_s);
  CHECK(a.mttr == 3500_ms);
  CHECK(a.low <= 18.0 / 25.0);  // the two complete cycles' ratio lies inside its interval
  CHECK(a.high >= 18.0 / 25.0);
  CHECK(a.low < a.high);
}

TEST_CASE("availability: a supervised worker's up intervals come from the trace - up after init - down from its exit") {
  Simulation sim;
  supervision::SupervisorSpec spec;
  spec.flags.intensity = 10;
  supervision::ChildSpec w;
  w.id = "w";
  supervision::WorkerConfig slow;
  slow.init_delay = 2_s;  // the repair time
  spec.children.push_back(supervision::stock_child(w, slow));
  SpawnOptions o;
  o.label = Label{Atom("/root"), 1};
  sim.spawn(std::make_unique<supervision::Supervisor>(spec), o);
  auto crash = [&] { sim.send(supervision::find_by_path(sim, "/root/w"), supervision::kCrash, Reason::error(Atom("boom"))); };
  sim.schedule(at(10_s), crash);
  sim.schedule(at(30_s), crash);
  sim.run_until(at(50_s));
  const Intervals up = up_intervals(sim.trace().events(), "/root/w", at(0_s), at(50_s));
  CHECK(up == Intervals{iv(2_s, 10_s), iv(12_s, 30_s), iv(32_s, 50_s)});
  const Availability a = measure(up, at(0_s), at(50_s));
  CHECK(a.failures == 2);
  CHECK(a.mttr == 2_s);  // the init time
  CHECK(a.availability == Approx(44.0 / 50.0));
}

TEST_CASE("availability: subtree - a one_for_all group is up when it and all its members are - one crash takes it down until the last member has started again") {
  using supervision::Strategy;
  Simulation sim;
  // /root (one_for_one) > /root/group (one_for_all) > a, b, c with inits of 1, 2 and 3 s: a is
  // up at 1, b at 3, c at 6, and the group (its init returns when c has started) at 6.
  spawn_root(sim, sup_spec(Strategy::one_for_one, 1,
                           {supervision::Supervisor::child(
                               "group", sup_spec(Strategy::one_for_all, 1,
                                                 {worker("a", 1_s), worker("b", 2_s), worker("c", 3_s)}))}));
  // b crashes at 10: c and a are stopped at once and the group starts again in order: a at 11,
  // b at 13, c at 16.
  stop_at(sim, 10_s, "/root/group/b", kBoom);
  sim.run_until(at(50_s));
  const Intervals expected{iv(6_s, 10_s), iv(16_s, 50_s)};
  CHECK(own(sim, "/root/group") == Intervals{iv(6_s, 50_s)});  // the supervisor itself never stopped
  CHECK(own(sim, "/root/group/a") == Intervals{iv(1_s, 10_s), iv(11_s, 50_s)});
  CHECK(own(sim, "/root/group/c") == Intervals{iv(6_s, 10_s), iv(16_s, 50_s)});
  CHECK(subtree(sim, "/root/group") == expected);
  // Series composition of the supervisor and its members gives the same.
  Intervals series = own(sim, "/root/group");
  for (const char* m : {"/root/group/a", "/root/group/b", "/root/group/c"}) series = intersect(series, own(sim, m));
  CHECK(series == expected);
  // The root was spawned by the world: up when its init returned, at 6, when its last child had
  // started.
  CHECK(subtree(sim, "/root") == expected);
  // A leaf's subtree is the leaf.
  CHECK(subtree(sim, "/root/group/b") == Intervals{iv(3_s, 10_s), iv(13_s, 50_s)});
  // The window clips.
  CHECK(subtree_up_intervals(sim.trace().events(), "/root/group", at(8_s), at(20_s)) ==
        Intervals{iv(8_s, 10_s), iv(16_s, 20_s)});
}

TEST_CASE("availability: subtree - a child that leaves on purpose or is terminated does not take it down - a crashed temporary child does until the end") {
  using supervision::RestartType;
  using supervision::Strategy;
  Simulation sim;
  // /root (one_for_one) > /root/svc (one_for_one) > p (permanent, init 1 s), t (temporary), r
  // (transient), k (brutal_kill), d (stops 3 s after it is asked), g (init 1 s: ok, then
  // ignore), x (temporary). p is up at 1, g at 2, the rest at once: svc at 2.
  supervision::Child k = worker("k", 0_s);
  k.spec.shutdown = supervision::Shutdown::brutal_kill();
  supervision::ChildSpec d_spec;
  d_spec.id = "d";
  supervision::WorkerConfig d_config;
  d_config.stop = supervision::StopStyle::delay;
  d_config.stop_delay = 3_s;
  supervision::ChildSpec g_spec;
  g_spec.id = "g";
  supervision::WorkerConfig g_config;
  g_config.init_delay = 1_s;
  g_config.inits = {InitResult::ok(), InitResult::ignore()};
  std::vector<supervision::Child> children;
  children.push_back(worker("p", 1_s));
  children.push_back(worker("t", 0_s, RestartType::temporary));
  children.push_back(worker("r", 0_s, RestartType::transient));
  children.push_back(std::move(k));
  children.push_back(supervision::stock_child(d_spec, d_config));
  children.push_back(supervision::stock_child(g_spec, g_config));
  children.push_back(worker("x", 0_s, RestartType::temporary));
  spawn_root(sim, sup_spec(Strategy::one_for_one, 1,
                           {supervision::Supervisor::child("svc", sup_spec(Strategy::one_for_one, 5, std::move(children)))}));
  stop_at(sim, 10_s, "/root/svc/t", Reason::normal());                   // a temporary child's job is done
  stop_at(sim, 15_s, "/root/svc/r", Reason::shutdown(Atom("finished")));  // {shutdown, _}: clean
  Reason k_end;
  call_at(sim, 20_s, [&sim, &k_end](Context& ctx) {
    ctx.monitor(supervision::find_by_path(sim, "/root/svc/k"));
    supervision::terminate_child(ctx, supervision::find_by_path(sim, "/root/svc"), "k");
    k_end = ctx.receive([](const Message& m) { return m.kind == MsgKind::down; })->reason;
  });
  // svc is busy stopping d from 25 to 28; p crashes at 26 and svc hears of it at 28: p is down
  // from 26 (its exit, not the report) until its restart is up at 29.
  call_at(sim, 25_s, [&sim](Context& ctx) {
    supervision::terminate_child(ctx, supervision::find_by_path(sim, "/root/svc"), "d");
  });
  stop_at(sim, 26_s, "/root/svc/p", kBoom);
  // g crashes at 32; its restart's init returns ignore at 33: down [32, 33), then not expected.
  stop_at(sim, 32_s, "/root/svc/g", kBoom);
  stop_at(sim, 35_s, "/root/svc/x", kBoom);  // a temporary child crashes: nobody brings it back
  sim.run_until(at(50_s));
  CHECK(k_end == Reason::killed());  // terminate_child killed it: an abnormal reason, but on purpose
  CHECK(own(sim, "/root/svc") == Intervals{iv(2_s, 50_s)});
  CHECK(own(sim, "/root/svc/p") == Intervals{iv(1_s, 26_s), iv(29_s, 50_s)});
  CHECK(own(sim, "/root/svc/g") == Intervals{iv(2_s, 32_s)});
  const Intervals expected{iv(2_s, 26_s), iv(29_s, 32_s), iv(33_s, 35_s)};
  CHECK(subtree(sim, "/root/svc") == expected);
  CHECK(subtree(sim, "/root") == expected);
}

TEST_CASE("availability: subtree - a deep worker crash takes the inner and the outer subtree down for the worker's init time") {
  using supervision::Strategy;
  Simulation sim;
  // /root > /root/outer > /root/outer/inner > w (init 2 s) and v (init 1 s); outer also has o
  // (init 1 s) after inner, and the root has outer_b (init 1 s) after outer: a sibling whose
  // path starts with "/root/outer" but is not under it. Start: w up at 2, v and inner at 3, o
  // and outer at 4, outer_b and the root's init at 5.
  spawn_root(sim,
             sup_spec(Strategy::one_for_one, 1,
                      {supervision::Supervisor::child(
                           "outer", sup_spec(Strategy::one_for_one, 1,
                                             {supervision::Supervisor::child(
                                                  "inner", sup_spec(Strategy::one_for_one, 1,
                                                                    {worker("w", 2_s), worker("v", 1_s)})),
                                              worker("o", 1_s)})),
                       worker("outer_b", 1_s)}));
  stop_at(sim, 10_s, "/root/outer/inner/w", kBoom);  // restarted alone: up again at 12
  stop_at(sim, 20_s, "/root/outer_b", kBoom);        // restarted alone: up again at 21
  sim.run_until(at(50_s));
  CHECK(own(sim, "/root/outer/inner/w") == Intervals{iv(2_s, 10_s), iv(12_s, 50_s)});
  CHECK(own(sim, "/root/outer/inner") == Intervals{iv(3_s, 50_s)});
  CHECK(subtree(sim, "/root/outer/inner") == Intervals{iv(3_s, 10_s), iv(12_s, 50_s)});
  CHECK(subtree(sim, "/root/outer") == Intervals{iv(4_s, 10_s), iv(12_s, 50_s)});
  CHECK(subtree(sim, "/root") == Intervals{iv(5_s, 10_s), iv(12_s, 20_s), iv(21_s, 50_s)});
  const Availability a = measure(subtree(sim, "/root/outer"), at(4_s), at(50_s));
  CHECK(a.failures == 1);
  CHECK(a.mttr == 2_s);  // the worker's init time
}

TEST_CASE("availability: subtree - a supervisor that gives up and is restarted by its parent - down from the first crash until the whole subtree is back") {
  using supervision::RestartType;
  using supervision::Strategy;
  auto scenario = [](RestartType s_restart) {
    auto sim = std::make_unique<Simulation>();
    // /root (one_for_one, intensity 1) > /root/s (one_for_one, intensity 1 in 5 s) > w1 (init
    // 1 s), w2 (init 2 s): w1 up at 1, w2 and s at 3.
    spawn_root(*sim, sup_spec(Strategy::one_for_one, 1,
                              {supervision::Supervisor::child(
                                  "s", sup_spec(Strategy::one_for_one, 1, {worker("w1", 1_s), worker("w2", 2_s)}),
                                  s_restart)}));
    // w2 crashes at 10; s restarts it (up again at 12) and is busy until then, so w1's crash at
    // 11 is handled at 12: the second restart in 5 s exceeds the intensity, s stops w2 and exits
    // shutdown at 12.
    stop_at(*sim, 10_s, "/root/s/w2", kBoom);
    stop_at(*sim, 11_s, "/root/s/w1", kBoom);
    sim->run_until(at(50_s));
    return sim;
  };
  SECTION("permanent s - its parent starts it again - w1 at 13 - w2 and s at 15") {
    const auto sim = scenario(RestartType::permanent);
    CHECK(own(*sim, "/root/s") == Intervals{iv(3_s, 12_s), iv(15_s, 50_s)});
    CHECK(own(*sim, "/root/s/w1") == Intervals{iv(1_s, 11_s), iv(13_s, 50_s)});
    CHECK(subtree(*sim, "/root/s") == Intervals{iv(3_s, 10_s), iv(15_s, 50_s)});
    CHECK(subtree(*sim, "/root") == Intervals{iv(3_s, 10_s), iv(15_s, 50_s)});
  }
  SECTION("transient s - shutdown is a clean exit so nobody restarts it - down until the end") {
    // The crash that made s give up was never repaired: w1's last exit was abnormal.
    const auto sim = scenario(RestartType::transient);
    CHECK(own(*sim, "/root/s") == Intervals{iv(3_s, 12_s)});
    CHECK(subtree(*sim, "/root") == Intervals{iv(3_s, 10_s)});
  }
}

TEST_CASE("availability: subtree - dynamic children count once started - a crash is down until the restart - a clean exit or terminate_child is not") {
  using supervision::RestartType;
  using supervision::Strategy;
  Simulation sim;
  // /root > /root/sessions (DynamicSupervisor: no template, children started with their own
  // specs): up at 0 with no children. At 5 three sessions start, one after the other (inits of
  // 1 s): session.1 (permanent) up at 6, session.2 (temporary) at 7, session.3 (transient) at 8.
  // A session being started for the first time is not a failure of the subtree.
  spawn_root(sim, sup_spec(Strategy::one_for_one, 1,
                           {supervision::Supervisor::child("sessions",
                                                           sup_spec(Strategy::simple_one_for_one, 5, {}))}));
  call_at(sim, 5_s, [&sim](Context& ctx) {
    const Pid sessions = supervision::find_by_path(sim, "/root/sessions");
    supervision::start_child(ctx, sessions, worker("session", 1_s));
    supervision::start_child(ctx, sessions, worker("session", 1_s, RestartType::temporary));
    supervision::start_child(ctx, sessions, worker("session", 1_s, RestartType::transient));
  });
  stop_at(sim, 10_s, "/root/sessions/session.1", kBoom);          // restarted: up at 11
  stop_at(sim, 20_s, "/root/sessions/session.2", Reason::normal());  // done: dropped
  stop_at(sim, 30_s, "/root/sessions/session.3", kBoom);          // restarted: up at 31
  call_at(sim, 40_s, [&sim](Context& ctx) {
    supervision::terminate_child(ctx, supervision::find_by_path(sim, "/root/sessions"),
                                 supervision::find_by_path(sim, "/root/sessions/session.3"));
  });
  sim.run_until(at(50_s));
  CHECK(own(sim, "/root/sessions/session.3") == Intervals{iv(8_s, 30_s), iv(31_s, 40_s)});
  CHECK(subtree(sim, "/root/sessions") == Intervals{iv(0_s, 10_s), iv(11_s, 30_s), iv(31_s, 50_s)});
  CHECK(subtree(sim, "/root") == Intervals{iv(0_s, 10_s), iv(11_s, 30_s), iv(31_s, 50_s)});
}

TEST_CASE("availability: the 95 percent interval covers the true MTBF/(MTBF+MTTR) in about 95 percent of runs") {
  // 400 seeded runs of 60 exponential(MTBF = 20 s) up times, each followed by a 5 s repair:
  // A = 0.8. The number of runs whose interval misses it is Binomial(400, 0.05) if the interval
  // is right: mean 20, sd 4.4; outside 5..38 would be a 3.4-sigma event, so the check fails only
  // when the interval is miscalibrated (too narrow or far too wide). Seeds are fixed.
  Rng root(2026);
  int misses = 0;
  for (std::uint64_t run = 0; run < 400; ++run) {
    Rng rng = root.derive(run);
    Intervals up;
    Time t{};
    for (int cycle = 0; cycle < 60; ++cycle) {
      const Duration u = rng.exponential(20_s);
      up.push_back({t, t + u});
      t = t + u + 5_s;
    }
    const Availability a = measure(up, Time{}, t);
    if (!(a.low <= 0.8 && 0.8 <= a.high)) ++misses;
  }
  CHECK(misses >= 5);
  CHECK(misses <= 38);
}

TEST_CASE("availability: a failure restarted at the same instant shows no down time but counts as a failure and a repair") {
  Simulation sim;
  spawn_root(sim, sup_spec(supervision::Strategy::one_for_one, 10, {worker("w", 0_s), worker("slow", 1_s)}));
  stop_at(sim, 10_s, "/root/w", kBoom);     // init takes no time: back at 10 s
  stop_at(sim, 20_s, "/root/w", kBoom);
  stop_at(sim, 30_s, "/root/slow", kBoom);  // down for its 1 s init
  sim.run_until(at(50_s));
  const Intervals w = subtree(sim, "/root/w");
  CHECK(w == Intervals{iv(0_s, 50_s)});  // no gap to see
  const std::vector<Time> instants = unseen_failures(sim.trace().events(), "/root/w", w);
  CHECK(instants == std::vector<Time>{at(10_s), at(20_s)});
  const Availability a = measure(w, at(0_s), at(50_s), instants);
  CHECK(a.failures == 2);
  CHECK(a.repairs == 2);
  CHECK(a.mttr == 0_s);
  CHECK(a.mtbf == 10_s);  // the 0-10 s and 10-20 s cycles
  CHECK(a.availability == 1.0);
  CHECK(measure(w, at(0_s), at(50_s)).failures == 0);  // what it said before
  // A failure with down time is seen in the intervals, not again among the unseen ones.
  const Intervals slow = subtree(sim, "/root/slow");
  CHECK(unseen_failures(sim.trace().events(), "/root/slow", slow).empty());
  CHECK(measure(slow, at(0_s), at(50_s), unseen_failures(sim.trace().events(), "/root/slow", slow)).failures == 1);
  // The whole tree: the two instant ones and the slow one.
  const Intervals root = subtree(sim, "/root");
  const Availability all = measure(root, at(0_s), at(50_s), unseen_failures(sim.trace().events(), "/root", root));
  CHECK(all.failures == 3);
  CHECK(all.repairs == 3);
}
