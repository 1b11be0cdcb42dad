// Measured availability under stochastic faults (issue 4, DESIGN.md §5): for generated MTBF and
// repair times, the availability measured from the trace matches the renewal formula
// MTBF / (MTBF + MTTR), for one supervised worker and for a one_for_all group (series).
//
// The statistics. Each run is a renewal process: up times are exponential (the injector's
// Poisson clock runs only while the target is up), each repair takes the init time. After n
// cycles, properties::measure gives a delta-method confidence interval for the long-run
// availability (availability.cpp): half-width z * sd / sqrt(n). It is asymptotically normal, but
// at a few hundred cycles of skewed (exponential) up times its studentized tail is much heavier
// than the normal's: a run whose up times happen to be short also has a small estimated sd. A
// Monte Carlo of exactly this estimator (tools/stats/studentized_tail.cpp) puts a correct
// implementation outside z = 5 in 3e-6..4e-5 of cases (a CI run failed on one: MTBF 10.4 s,
// repair 8.9 s, 237 cycles whose up times averaged 7.4 s) and outside z = 6 in at most 2.5e-6
// at 100 cycles and 5e-7 at 200. So z = 6, and CTest runs this binary with a fixed RapidCheck
// seed (scenarios/CMakeLists.txt): CI is deterministic, and other seeds are explored by hand
// (RC_PARAMS="max_success=5000"). A wrong implementation (a repair time counted twice, faults
// that fire while the target is down, a group that is not in series) shifts A by far more than
// the interval's width at n >= 100 cycles. Runs are long enough for about 200 cycles, and the
// check requires at least 100 observed failures, so the interval is never vacuous.

#include <algorithm>
#include <cmath>
#include <memory>
#include <rapidcheck.h>
#include <string>
#include <tuple>
#include <vector>

#include "properties/availability.hpp"
#include "scenarios/faults/injector.hpp"
#include "sim/rc_prop.hpp"
#include "sim/simulation.hpp"
#include "supervision/stock_worker.hpp"
#include "supervision/supervisor.hpp"

using namespace lic;
using namespace lic::literals;
using namespace lic::faults;
using namespace lic::properties;

namespace {
constexpr double kZ = 6.0;

struct Member {
  Duration mtbf;
  Duration repair;  // its init time
};

/// Starts /root (strategy, a high intensity so it never gives up) with one stock worker per
/// member, and a Poisson crash per member; runs to `horizon`.
void run(Simulation& sim, supervision::Strategy strategy, const std::vector<Member>& members,
         Time horizon) {
  std::vector<Fault> faults;
  supervision::SupervisorSpec spec;
  spec.flags.strategy = strategy;
  spec.flags.intensity = 100000;
  spec.flags.period = 1_s;
  for (std::size_t i = 0; i < members.size(); ++i) {
    supervision::ChildSpec c;
    c.id = "w" + std::to_string(i);
    supervision::WorkerConfig w;
    w.init_delay = members[i].repair;
    spec.children.push_back(supervision::stock_child(c, w));
    Fault f;
    f.kind = Kind::crash;
    f.target = Target::path("/root/" + c.id);
    f.mtbf = members[i].mtbf;
    faults.push_back(f);
  }
  Injector inj(sim, faults);
  inj.start();
  SpawnOptions o;
  o.label = Label{Atom("/root"), 1};
  sim.spawn(std::make_unique<supervision::Supervisor>(spec), o);
  sim.run_until(horizon);
}

Duration gen_duration(Duration lo, Duration hi) {
  return Duration{*rc::gen::inRange<std::int64_t>(lo.ns, hi.ns + 1)};
}
}  // namespace

TEST_CASE("availability: a supervised worker's measured availability matches MTBF/(MTBF+MTTR) within the interval its cycles give") {
  lic::test::prop("generated MTBF and repair time", [] {
    const Duration mtbf = gen_duration(100_ms, 60_s);
    const Duration repair = gen_duration(1_ms, mtbf * 2);
    SimOptions opts;
    opts.seed = *rc::gen::inRange<std::uint64_t>(1, 1u << 30);
    opts.tie_break = *rc::gen::element(TieBreak::fifo, TieBreak::random);
    Simulation sim(opts);
    const Time horizon = Time{} + (mtbf + repair) * 200;
    run(sim, supervision::Strategy::one_for_one, {{mtbf, repair}}, horizon);

    const Intervals up = up_intervals(sim.trace().events(), "/root/w0", Time{}, horizon);
    const Availability a = measure(up, Time{}, horizon, kZ);
    const double expected = static_cast<double>(mtbf.ns) / static_cast<double>((mtbf + repair).ns);
    RC_CLASSIFY(expected < 0.5, "A < 0.5");
    RC_CLASSIFY(expected > 0.99, "A > 0.99");
    RC_ASSERT(a.failures >= 100u);
    // Every repair takes exactly the init time: the supervisor restarts at once.
    RC_ASSERT(a.mttr == repair);
    RC_ASSERT(a.low <= expected);
    RC_ASSERT(expected <= a.high);
  });
}

TEST_CASE("availability: a one_for_all group's measured availability matches the series formula from its members") {
  // One member's failure takes the whole group down; the group restarts its members one after
  // another, so the group fails at rate L = sum(1/MTBF_i) and is repaired in R = sum(repair_i):
  // A = (1/L) / (1/L + R). The formula leaves out a member failing while a later one is still
  // starting (it restarts the group again). Per cycle that adds at most R with probability at
  // most L*R, repeatedly: the extra downtime per cycle is below L*R^2 / (1 - L*R), and a cycle
  // is at least 1/L long, so A is lower than the formula by at most b = (L*R)^2 / (1 - L*R).
  // The generated groups keep L*R <= 0.1 (b <= 0.011); the check allows b below the interval.
  lic::test::prop("generated members - MTBF and repair each", [] {
    const int n = *rc::gen::inRange(2, 5);
    std::vector<Member> members;
    double rate = 0;  // L, per second
    for (int i = 0; i < n; ++i) {
      const Duration mtbf = gen_duration(1_s, 60_s);
      members.push_back({mtbf, {}});
      rate += 1e9 / static_cast<double>(mtbf.ns);
    }
    // Repairs sum to at most 0.1 / L.
    const auto budget = static_cast<std::int64_t>(0.1 / rate * 1e9 / n);
    Duration repair_sum{};
    for (Member& m : members) {
      m.repair = gen_duration(1_ms, Duration{std::max<std::int64_t>(budget, 1'000'000)});
      repair_sum += m.repair;
    }
    const double r = static_cast<double>(repair_sum.ns) / 1e9;
    const double lr = rate * r;
    RC_PRE(lr <= 0.1);
    SimOptions opts;
    opts.seed = *rc::gen::inRange<std::uint64_t>(1, 1u << 30);
    Simulation sim(opts);
    const Time horizon = Time{} + Duration{static_cast<std::int64_t>((1 / rate + r) * 200 * 1e9)};
    run(sim, supervision::Strategy::one_for_all, members, horizon);

    // Series composition from the member intervals.
    Intervals group{{Time{}, horizon}};
    for (int i = 0; i < n; ++i) {
      group = intersect(group, up_intervals(sim.trace().events(), "/root/w" + std::to_string(i), Time{}, horizon));
    }
    // The same as the supervisor's subtree read as a whole.
    RC_ASSERT(subtree_up_intervals(sim.trace().events(), "/root", Time{}, horizon) == group);
    const Availability a = measure(group, Time{}, horizon, kZ);
    const double expected = (1 / rate) / (1 / rate + r);
    const double bias = lr * lr / (1 - lr);
    RC_ASSERT(a.failures >= 100u);
    RC_ASSERT(a.mttr >= repair_sum);  // never faster than restarting every member in turn
    RC_ASSERT(a.low - bias <= expected);
    RC_ASSERT(expected <= a.high);
  });
}

TEST_CASE("availability: a primary and a standby in parallel match 1 - (1 - A1)(1 - A2)") {
  // Two independent trees (/root and /standby, each one worker with its own Poisson crashes and
  // repair time): the pair is up while either is. For independent alternating renewal processes
  // the long-run availability of the pair is exactly 1 - (1 - A1)(1 - A2). The runs are long
  // enough for at least 100 joint outages, and the check uses the same z = 6 interval.
  lic::test::prop("generated MTBF and repair for each", [] {
    const Duration m1 = gen_duration(1_s, 20_s);
    const Duration m2 = gen_duration(1_s, 20_s);
    const Duration r1 = gen_duration(m1 / 5, m1);
    const Duration r2 = gen_duration(m2 / 5, m2);
    const double a1 = static_cast<double>(m1.ns) / static_cast<double>((m1 + r1).ns);
    const double a2 = static_cast<double>(m2.ns) / static_cast<double>((m2 + r2).ns);
    const double expected = 1 - (1 - a1) * (1 - a2);
    // Joint outages start at rate about (1-A2)/(MTBF1+R1) + (1-A1)/(MTBF2+R2) per second.
    const double joint = (1 - a2) / (static_cast<double>((m1 + r1).ns) / 1e9) +
                         (1 - a1) / (static_cast<double>((m2 + r2).ns) / 1e9);
    const Time horizon = Time{} + Duration{static_cast<std::int64_t>(300 / joint * 1e9)};
    SimOptions opts;
    opts.seed = *rc::gen::inRange<std::uint64_t>(1, 1u << 30);
    Simulation sim(opts);
    std::vector<Fault> faults;
    for (const auto& [root, mtbf, repair] :
         {std::tuple{"/root", m1, r1}, std::tuple{"/standby", m2, r2}}) {
      supervision::SupervisorSpec spec;
      spec.flags.intensity = 100000;
      supervision::ChildSpec c;
      c.id = "w";
      supervision::WorkerConfig w;
      w.init_delay = repair;
      spec.children.push_back(supervision::stock_child(c, w));
      SpawnOptions o;
      o.label = Label{Atom(root), 1};
      sim.spawn(std::make_unique<supervision::Supervisor>(spec), o);
      Fault f;
      f.kind = Kind::crash;
      f.target = Target::path(std::string(root) + "/w");
      f.mtbf = mtbf;
      faults.push_back(f);
    }
    Injector inj(sim, faults);
    inj.start();
    sim.run_until(horizon);
    const Intervals pair = unite(up_intervals(sim.trace().events(), "/root/w", Time{}, horizon),
                                 up_intervals(sim.trace().events(), "/standby/w", Time{}, horizon));
    const Availability a = measure(pair, Time{}, horizon, kZ);
    RC_ASSERT(a.failures >= 100u);
    RC_ASSERT(a.low <= expected);
    RC_ASSERT(expected <= a.high);
  });
}

TEST_CASE("availability: the check can fail - a repair time the formula does not know is caught") {
  // The same worker measured against a formula that forgets half the repair time: the interval
  // must exclude it (seeded, so this is a fixed run, not a sample).
  SimOptions opts;
  opts.seed = 3;
  Simulation sim(opts);
  const Duration mtbf = 2_s;
  const Duration repair = 1_s;
  const Time horizon = Time{} + (mtbf + repair) * 200;
  run(sim, supervision::Strategy::one_for_one, {{mtbf, repair}}, horizon);
  const Availability a = measure(up_intervals(sim.trace().events(), "/root/w0", Time{}, horizon),
                                 Time{}, horizon, kZ);
  const double right = 2.0 / 3.0;
  const double wrong = 2.0 / 2.5;
  CHECK(a.low <= right);
  CHECK(right <= a.high);
  CHECK(wrong > a.high);
}
