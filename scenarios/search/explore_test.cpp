// Guided search (issue 31, docs/explore.md): a run's faults become an explicit schedule that runs
// and reads back as a file; mutants are valid files; the explorer makes the same runs on 1 and 2
// threads; it finds a bug and hands on a failure the shrinker keeps by identity.

#include <catch2/catch.hpp>
#include <string>

#include "scenarios/file/validate.hpp"
#include "scenarios/file/write.hpp"
#include "scenarios/run/judge.hpp"
#include "scenarios/search/shrink.hpp"
#include "scenarios/search/explore.hpp"
#include "scenarios/search/schedule.hpp"
#include "scenarios/testing/run_text.hpp"
#include "sim/trace_keys.hpp"

using namespace lic;
using namespace lic::scenarios;

namespace {

Scenario load(const std::string& path) { return lic::scenarios::testing::load_valid(std::string(LIC_SOURCE_DIR) + "/" + path); }

std::size_t injected(const RunResult& r) {
  std::size_t n = 0;
  for (const TraceEvent& e : r.kept_events()) n += e.kind == EventKind::system && e.name == fault_events::kFaultInjected ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("concretize - every fault that acted becomes an explicit event at its time - the schedule runs and reads back", "[explore]") {
  const Scenario s = load("scenarios/bugs/restart_intensity_default.yaml");
  RunOptions ro;
  ro.seed = 11;
  const RunResult r = run(s, ro);
  const Scenario c = concretize(s, 11, r.kept_events());
  CHECK(c.seed == 11);
  CHECK(c.faults.size() == injected(r));
  REQUIRE_FALSE(c.faults.empty());
  for (const faults::Fault& f : c.faults) {
    CHECK(f.at);
    CHECK_FALSE(f.mtbf);
    CHECK_FALSE(f.every);
    CHECK(f.name.find('@') != std::string::npos);
  }
  // The faults act at the same times in the schedule's own run.
  const RunResult again = run(c);
  std::vector<Time> a, b;
  for (const TraceEvent& e : r.kept_events())
    if (e.kind == EventKind::system && e.name == fault_events::kFaultInjected) a.push_back(e.time);
  for (const TraceEvent& e : again.kept_events())
    if (e.kind == EventKind::system && e.name == fault_events::kFaultInjected) b.push_back(e.time);
  CHECK(a == b);
  const ParseResult back = parse_scenario(to_yaml(c), "schedule.yaml");
  REQUIRE(back.ok());
  CHECK(back.scenario == c);
}

TEST_CASE("mutate - the same stream makes the same mutant - every mutant validates and reads back as itself", "[explore]") {
  const Scenario s = load("scenarios/bugs/restart_intensity_default.yaml");
  RunOptions ro;
  ro.seed = 5;
  const Scenario base = concretize(s, 5, run(s, ro).kept_events());
  const MutationPalette p = palette_of(s);
  bool changed = false;
  for (std::uint64_t k = 0; k < 200; ++k) {
    Scenario m1 = base, m2 = base;
    Rng r1 = Rng(99).derive(k), r2 = Rng(99).derive(k);
    const auto n1 = mutate(m1, &base, p, r1);
    const auto n2 = mutate(m2, &base, p, r2);
    CHECK(n1 == n2);
    CHECK(m1 == m2);
    changed = changed || !(m1 == base);
    INFO(to_yaml(m1));
    CHECK(validate(m1).empty());
    const ParseResult back = parse_scenario(to_yaml(m1), "mutant.yaml");
    REQUIRE(back.ok());
    CHECK(back.scenario == m1);
    for (const faults::Fault& f : m1.faults) CHECK((*f.at >= Time{} && *f.at < Time{} + s.duration));
  }
  CHECK(changed);
}

TEST_CASE("explore - the same seed makes the same runs on 1 and 2 threads", "[explore]") {
  const Scenario s = load("scenarios/bugs/one_for_one_dependent_restart.yaml");
  ExploreOptions o;
  o.seed = 3;
  o.runs = 40;
  o.keep_going = true;
  o.jobs = 1;
  const ExploreResult one = explore(s, o);
  o.jobs = 2;
  const ExploreResult two = explore(s, o);
  REQUIRE(one.steps.size() == two.steps.size());
  for (std::size_t i = 0; i < one.steps.size(); ++i) {
    INFO("run " << i + 1);
    CHECK(one.steps[i].kept == two.steps[i].kept);
    CHECK(one.steps[i].failed == two.steps[i].failed);
    CHECK(one.steps[i].coverage == two.steps[i].coverage);
    CHECK(one.steps[i].best == two.steps[i].best);
  }
  REQUIRE(one.corpus.size() == two.corpus.size());
  for (std::size_t i = 0; i < one.corpus.size(); ++i) CHECK(one.corpus[i].schedule == two.corpus[i].schedule);
  CHECK(one.runs_to_first_failure == two.runs_to_first_failure);
  REQUIRE(one.failures.size() == two.failures.size());
  for (std::size_t i = 0; i < one.failures.size(); ++i) CHECK(one.failures[i].id == two.failures[i].id);
  // Another seed is another search.
  o.seed = 4;
  const ExploreResult other = explore(s, o);
  bool differs = other.corpus.size() != one.corpus.size();
  for (std::size_t i = 0; !differs && i < one.corpus.size(); ++i) differs = !(other.corpus[i].schedule == one.corpus[i].schedule);
  CHECK(differs);
}

TEST_CASE("explore - finds the bug - the failing schedule shrinks to a file that fails with the same identity", "[explore]") {
  const Scenario s = load("scenarios/bugs/restart_intensity_default.yaml");
  ExploreOptions o;
  o.seed = 1;
  o.runs = 200;
  const ExploreResult r = explore(s, o);
  REQUIRE(r.runs_to_first_failure);
  REQUIRE(r.failures.size() == 1);
  const ExploreFailure& x = r.failures.front();
  CHECK(x.run == *r.runs_to_first_failure);
  CHECK(r.runs == x.run);  // it stopped there
  CHECK_FALSE(x.result.passed);
  ShrinkOptions so;
  so.seed = x.seed;
  so.target = x.check;
  const ShrinkResult sh = shrink(x.schedule, so);
  REQUIRE(sh.failed);
  const ParseResult back = parse_scenario(to_yaml(sh.scenario), "reproducer.yaml");
  REQUIRE(back.ok());
  const RunResult again = run(back.scenario);
  bool same = false;
  for (const CheckResult& c : again.checks) same = same || (!c.passed && failure_id(c) == x.id);
  CHECK(same);
  for (const faults::Fault& f : sh.scenario.faults) CHECK_FALSE(f.mtbf);  // explicit events only
}

TEST_CASE("explore - a file with no fault and nothing random has nothing to mutate and stops", "[explore]") {
  Scenario s = load("scenarios/bugs/restart_intensity_default.yaml");
  s.faults.clear();
  s.fault_marks.clear();
  ExploreOptions o;
  o.runs = 50;
  const ExploreResult r = explore(s, o);
  CHECK(r.nothing_to_mutate);
  CHECK(r.runs <= kExploreGeneration);
  CHECK(r.failures.empty());
}

TEST_CASE("explore - a file with no fault whose seed matters runs plain seeds until one fails", "[explore]") {
  // shutdown_cancel_first has no fault, only a SIGTERM step; whether a batch is open then depends
  // on the seed's arrivals.
  const Scenario s = load("scenarios/bugs/shutdown_cancel_first.yaml");
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    ExploreOptions o;
    o.seed = seed;
    o.runs = 50;
    const ExploreResult r = explore(s, o);
    INFO("explorer seed " << seed);
    CHECK_FALSE(r.nothing_to_mutate);
    REQUIRE(r.runs_to_first_failure);
    CHECK(r.failures.front().plain);
  }
}

TEST_CASE("explore - margins steer: a check with a margin reports its best, one without is coverage only", "[explore]") {
  const Scenario s = load("scenarios/bugs/restart_intensity_default.yaml");
  ExploreOptions o;
  o.runs = 16;
  o.keep_going = true;
  const ExploreResult r = explore(s, o);
  REQUIRE(r.checks.size() == 2);
  CHECK(r.has_margin[0]);  // no_escalation
  CHECK(r.has_margin[1]);  // never_gives_up(/root)
  REQUIRE(r.best[0]);
  CHECK(*r.best[0] <= 1.0);
  CHECK(r.coverage > 0);
  CHECK_FALSE(r.corpus.empty());
}
