// The pure cores of supervision, each test naming the OTP (or seed 003) rule it pins.

#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include "sim/rc_prop.hpp"
#include <algorithm>
#include <vector>

#include "supervision/backoff.hpp"
#include "supervision/dependency_order.hpp"
#include "supervision/restart_intensity.hpp"
#include "supervision/restart_strategy.hpp"

using namespace lic;
using namespace lic::literals;
using namespace lic::supervision;

namespace {
Time at(Duration d) { return Time{0} + d; }
using Positions = std::vector<std::size_t>;
}  // namespace

TEST_CASE("restart types x exit reasons: permanent always - transient unless normal/shutdown/{shutdown -_} - temporary never", "[supervision][cores]") {
  const Reason clean[] = {Reason::normal(), Reason::shutdown(), Reason::shutdown(Atom("x"))};
  const Reason abnormal[] = {Reason::killed(), Reason::error(Atom("boom")), Reason::kill(),
                             Reason::noproc(), Reason::noconnection(), Reason::other(Atom("timeout"))};
  for (const Reason& r : clean) {
    CHECK(restart_wanted(RestartType::permanent, r));
    CHECK_FALSE(restart_wanted(RestartType::transient, r));
    CHECK_FALSE(restart_wanted(RestartType::temporary, r));
  }
  for (const Reason& r : abnormal) {
    CHECK(restart_wanted(RestartType::permanent, r));
    CHECK(restart_wanted(RestartType::transient, r));
    CHECK_FALSE(restart_wanted(RestartType::temporary, r));
  }
}

TEST_CASE("restart scope: one_for_one restarts the failed child alone", "[supervision][cores]") {
  const std::vector<ChildState> c(4, ChildState{RestartType::permanent, true});
  const RestartPlan p = plan_restart(Strategy::one_for_one, c, 2);
  CHECK(p.terminate.empty());
  CHECK(p.restart == Positions{2});
}

TEST_CASE("restart scope: one_for_all stops the others in reverse start order and restarts all in order", "[supervision][cores]") {
  std::vector<ChildState> c(4, ChildState{RestartType::permanent, true});
  c[1].running = false;  // the failed one
  const RestartPlan p = plan_restart(Strategy::one_for_all, c, 1);
  CHECK(p.terminate == Positions{3, 2, 0});
  CHECK(p.restart == Positions{0, 1, 2, 3});
}

TEST_CASE("restart scope: rest_for_one stops those started after it and restarts it and them", "[supervision][cores]") {
  // The mini pipeline's Input.Supervisor: reader, parser, validator. A parser crash restarts
  // parser and validator; the reader keeps its pid.
  std::vector<ChildState> c(3, ChildState{RestartType::permanent, true});
  c[1].running = false;
  const RestartPlan p = plan_restart(Strategy::rest_for_one, c, 1);
  CHECK(p.terminate == Positions{2});
  CHECK(p.restart == Positions{1, 2});
  c[1].running = true;
  c[2].running = false;
  const RestartPlan tail = plan_restart(Strategy::rest_for_one, c, 2);
  CHECK(tail.terminate.empty());
  CHECK(tail.restart == Positions{2});  // a validator crash restarts only the tail
}

TEST_CASE("restart scope: a group restart removes temporary siblings and starts stopped ones again", "[supervision][cores]") {
  std::vector<ChildState> c = {{RestartType::permanent, true},
                               {RestartType::temporary, true},
                               {RestartType::transient, false},  // ended normally earlier
                               {RestartType::permanent, false}};  // the failed one
  const RestartPlan p = plan_restart(Strategy::one_for_all, c, 3);
  CHECK(p.terminate == Positions{1, 0});
  CHECK(p.remove == Positions{1});
  CHECK(p.restart == Positions{0, 2, 3});
}

TEST_CASE("intensity: 0 gives up on the first restart-worthy exit", "[supervision][cores]") {
  RestartIntensity w(0, 5_s);
  CHECK_FALSE(w.add(at(1_s)));
}

TEST_CASE("intensity: the exit that would be restart MaxR+1 within MaxT is not restarted", "[supervision][cores]") {
  RestartIntensity w(3, 5_s);
  CHECK(w.add(at(1_s)));
  CHECK(w.add(at(2_s)));
  CHECK(w.add(at(3_s)));
  CHECK_FALSE(w.add(at(4_s)));
  // Spread out, they never exceed it.
  RestartIntensity slow(3, 5_s);
  for (int i = 0; i < 20; ++i) CHECK(slow.add(at(2_s * i)));
}

TEST_CASE("intensity: OTP's whole-second window - 5.0 s and 10.9 s count together - 4.9 s and 10.0 s do not", "[supervision][cores]") {
  RestartIntensity together(1, 5_s);
  CHECK(together.add(at(5_s)));
  CHECK_FALSE(together.add(at(10_s + 900_ms)));  // 5.9 s apart, yet floor(10.9) - floor(5.0) = 5
  RestartIntensity apart(1, 5_s);
  CHECK(apart.add(at(4_s + 900_ms)));
  CHECK(apart.add(at(10_s)));  // 5.1 s apart: floor(10.0) - floor(4.9) = 6 > 5
}

TEST_CASE("intensity: the precise window counts a restart while it is at most MaxT old", "[supervision][cores]") {
  RestartIntensity a(1, 5_s, IntensityWindow::precise);
  CHECK(a.add(at(5_s)));
  CHECK(a.add(at(10_s + 900_ms)));  // 5.9 s apart: out of the window
  RestartIntensity b(1, 5_s, IntensityWindow::precise);
  CHECK(b.add(at(4_s + 900_ms)));
  CHECK_FALSE(b.add(at(9_s + 900_ms)));  // exactly 5 s old: still counted
}

TEST_CASE("intensity: under OTP's rule two restarts count together exactly when their whole seconds are at most MaxT apart", "[supervision][cores]") {
  lic::test::prop("floor(t2) - floor(t1) <= P  <=>  counted together", [] {
    const auto p = *rc::gen::inRange<std::int64_t>(1, 30);
    const auto t1 = *rc::gen::inRange<std::int64_t>(0, 100'000'000'000LL);
    const auto gap = *rc::gen::inRange<std::int64_t>(0, 40'000'000'000LL);
    RestartIntensity w(1, kSecond * p);
    RC_ASSERT(w.add(Time{t1}));
    const bool gave_up = !w.add(Time{t1 + gap});
    const std::int64_t whole = (t1 + gap) / 1'000'000'000 - t1 / 1'000'000'000;
    RC_ASSERT(gave_up == (whole <= p));
    // The consequences DESIGN.md states: under P apart always together, P + 1 s or more never.
    if (gap < p * 1'000'000'000) RC_ASSERT(gave_up);
    if (gap >= (p + 1) * 1'000'000'000) RC_ASSERT(!gave_up);
  });
}

TEST_CASE("backoff: the seed's table - 1 s doubling to the 90 s cap", "[supervision][cores]") {
  const BackoffPolicy p;  // seed 003's defaults
  CHECK(backoff_base(p, 1) == 1_s);
  CHECK(backoff_base(p, 2) == 2_s);
  CHECK(backoff_base(p, 3) == 4_s);
  CHECK(backoff_base(p, 4) == 8_s);
  CHECK(backoff_base(p, 7) == 64_s);
  CHECK(backoff_base(p, 8) == 90_s);
  CHECK(backoff_base(p, 1000) == 90_s);
  BackoffPolicy slow;
  slow.factor = Ratio{3, 2};
  CHECK(backoff_base(slow, 3) == 2250_ms);
}

TEST_CASE("backoff: with jitter every attempt stays within base +/- 10 %", "[supervision][cores]") {
  const BackoffPolicy p;
  Rng rng(4);
  for (std::uint32_t attempt = 1; attempt <= 12; ++attempt) {
    const Duration base = backoff_base(p, attempt);
    for (int i = 0; i < 200; ++i) {
      const Duration d = backoff_delay(p, attempt, rng);
      REQUIRE(d >= base - base / 10);
      REQUIRE(d <= base + base / 10);
    }
  }
  CHECK(backoff_delay(p, 20, rng) >= 81_s);  // the seed's last row: 81 s..99 s
}

TEST_CASE("backoff: max_attempts stops retrying - 0 retries for ever", "[supervision][cores]") {
  BackoffPolicy limited;
  limited.max_attempts = 3;
  Rng rng(1);
  Backoff b(limited, 5_s);
  for (int i = 0; i < 3; ++i) CHECK(b.failed(at(1_s * i), rng).has_value());
  CHECK_FALSE(b.failed(at(10_s), rng).has_value());
  Backoff forever(BackoffPolicy{}, 5_s);
  for (int i = 0; i < 100; ++i) CHECK(forever.failed(at(1_s * i), rng).has_value());
}

TEST_CASE("backoff: the attempt counter resets after a run longer than stable_threshold", "[supervision][cores]") {
  Rng rng(2);
  Backoff b(BackoffPolicy{}, 5_s);
  b.failed(at(0_s), rng);
  b.failed(at(2_s), rng);
  b.started(at(3_s));
  b.failed(at(6_s), rng);  // ran 3 s: not stable, the count goes on
  CHECK(b.attempts() == 3);
  b.started(at(10_s));
  const auto d = b.failed(at(20_s), rng);  // ran 10 s: stable, so this is attempt 1 again
  CHECK(b.attempts() == 1);
  REQUIRE(d);
  CHECK(*d >= 900_ms);
  CHECK(*d <= 1100_ms);
}

TEST_CASE("depends_on: a diamond starts the base first - the two middles together - the top last", "[supervision][cores]") {
  // 0 = database; 1 = cache -> 0; 2 = router -> 0; 3 = http -> 1, 2
  const DependencyOrder o = order_by_dependencies({{}, {0}, {0}, {1, 2}});
  REQUIRE(o.ok());
  CHECK(o.levels == std::vector<std::vector<std::size_t>>{{0}, {1, 2}, {3}});
}

TEST_CASE("depends_on: a cycle is an error naming the cycle - never a hang", "[supervision][cores]") {
  // 0 -> 1 -> 2 -> 0, and 3 depends on the cycle.
  const DependencyOrder o = order_by_dependencies({{1}, {2}, {0}, {0}});
  REQUIRE_FALSE(o.ok());
  CHECK(o.cycle == std::vector<std::size_t>{0, 1, 2, 0});
  const DependencyOrder self = order_by_dependencies({{0}});
  CHECK(self.cycle == std::vector<std::size_t>{0, 0});
}

TEST_CASE("depends_on: every service is one level above its highest dependency - each level in declaration order", "[supervision][cores]") {
  lic::test::prop("level(i) = 1 + max level of its dependencies, 0 without any", [] {
    // A DAG: service i may depend only on services declared before it, in any order.
    const std::size_t n = *rc::gen::inRange<std::size_t>(0, 40);
    std::vector<std::vector<std::size_t>> deps(n);
    for (std::size_t i = 1; i < n; ++i) {
      deps[i] = *rc::gen::container<std::vector<std::size_t>>(
          *rc::gen::inRange<std::size_t>(0, 4), rc::gen::inRange<std::size_t>(0, i));
    }
    const DependencyOrder o = order_by_dependencies(deps);
    RC_ASSERT(o.ok());
    std::vector<std::size_t> level(n, n);
    std::size_t count = 0;
    for (std::size_t l = 0; l < o.levels.size(); ++l) {
      RC_ASSERT(!o.levels[l].empty());
      RC_ASSERT(std::is_sorted(o.levels[l].begin(), o.levels[l].end()));
      for (std::size_t i : o.levels[l]) level[i] = l;
      count += o.levels[l].size();
    }
    RC_ASSERT(count == n);
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t want = 0;
      for (std::size_t d : deps[i]) want = std::max(want, level[d] + 1);
      RC_ASSERT(level[i] == want);
    }
  });
}

TEST_CASE("depends_on: a chain of 100,000 services - one level each, the last alone at the top", "[supervision][cores]") {
  // The level-by-level scan this replaced cost n passes over n services (10^10 steps here); the
  // time is the benchmark's to measure (bench --only tree: out_10k_lifecycle_chain_s), this pins the order.
  std::vector<std::vector<std::size_t>> deps(100000);
  for (std::size_t i = 1; i < deps.size(); ++i) deps[i] = {i - 1};
  const DependencyOrder o = order_by_dependencies(deps);
  REQUIRE(o.levels.size() == deps.size());
  CHECK(o.levels.back() == std::vector<std::size_t>{deps.size() - 1});
}

TEST_CASE("names of strategies - restart types and flags parse and print - OTP and Elixir defaults", "[supervision][cores]") {
  Strategy s{};
  CHECK(parse_strategy("rest_for_one", s));
  CHECK(to_string(s) == "rest_for_one");
  CHECK_FALSE(parse_strategy("one_for_some", s));
  RestartType r{};
  CHECK(parse_restart_type("transient", r));
  CHECK(to_string(r) == "transient");
  CHECK(SupFlags::otp().intensity == 1);
  CHECK(SupFlags::otp().period == 5_s);
  CHECK(SupFlags::elixir().intensity == 3);
  CHECK(default_shutdown(ChildType::supervisor) == Shutdown::infinity());
  CHECK(default_shutdown(ChildType::worker) == Shutdown::after(5_s));
}
