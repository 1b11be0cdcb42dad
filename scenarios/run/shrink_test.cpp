// Shrinking a failure (issue 15, docs/shrinking.md): the bug files of scenarios/bugs/ shrink to
// files that read back, validate and fail the same way, no bigger than they were; a passing seed
// shrinks nothing; the run budget and the stop callback end the search.

#include <catch2/catch.hpp>
#include <string>

#include "scenarios/file/validate.hpp"
#include "scenarios/file/write.hpp"
#include "scenarios/run/shrink.hpp"
#include "scenarios/testing/run_text.hpp"

using namespace lic;
using namespace lic::scenarios;
using lic::scenarios::testing::check_named;

namespace {

Scenario load(const std::string& path) { return lic::scenarios::testing::load_valid(std::string(LIC_SOURCE_DIR) + "/" + path); }

/// The shrunk scenario as a file: it reads back, validates, and run at its own seed fails the
/// kept check in the same words; and it is no bigger than the original.
void require_shrunk(const ShrinkResult& r) {
  REQUIRE(r.failed);
  const std::string text = to_yaml(r.scenario);
  INFO(text);
  const ParseResult back = parse_scenario(text, "shrunk.yaml");
  for (const Diagnostic& d : back.errors) UNSCOPED_INFO(format_diagnostic("shrunk.yaml", d));
  REQUIRE(back.ok());
  CHECK(validate(back.scenario).empty());
  CHECK(back.scenario.seed == r.seed);
  const RunResult again = run(back.scenario);
  const CheckResult& c = check_named(again, r.original.name);
  CHECK_FALSE(c.passed);
  CHECK(failure_words(c.detail) == failure_words(r.original.detail));
  CHECK(again.events == r.after.events);
  CHECK(r.after.faults <= r.before.faults);
  CHECK(r.after.steps <= r.before.steps);
  CHECK(r.after.processes <= r.before.processes);
  CHECK(r.after.events <= r.before.events);
  CHECK(r.after.checks == 1);
  CHECK(r.runs <= 500);
}

}  // namespace

TEST_CASE("shutdown_cancel_first at its seed shrinks to a file that fails conservation the same way with fewer events", "[shrink]") {
  const Scenario s = load("scenarios/bugs/shutdown_cancel_first.yaml");
  const ShrinkResult r = shrink(s);
  require_shrunk(r);
  CHECK(r.check.name == "conservation");
  CHECK(r.after.events * 10 < r.before.events);  // the noise: 30 s of traffic before the stop
  CHECK(r.after.virtual_time < r.before.virtual_time);
  CHECK(r.failure.detail.find("open batch, cancelled") != std::string::npos);
  CHECK_FALSE(r.removed.empty());
  CHECK_FALSE(r.exhausted);
}

TEST_CASE("leader_election_naive at its seed shrinks to a file that fails leader_safety with fewer faults and events", "[shrink]") {
  const Scenario s = load("scenarios/bugs/leader_election_naive.yaml");
  const ShrinkResult r = shrink(s);
  require_shrunk(r);
  CHECK(r.check.name == "leader_safety");
  CHECK(r.after.faults < r.before.faults);
  CHECK(r.after.events < r.before.events);
  CHECK(r.scenario.checks.size() == 1);
  CHECK(r.scenario.expect_fail == std::vector<std::string>{"leader_safety"});
}

TEST_CASE("a seed that passes shrinks nothing and runs nothing after the first run", "[shrink]") {
  const Scenario s = load("scenarios/catalog/one_for_one.yaml");
  int calls = 0;
  ShrinkOptions o;
  o.progress = [&](const ShrinkProgress&) { ++calls; };
  const ShrinkResult r = shrink(s, o);
  CHECK_FALSE(r.failed);
  CHECK(r.runs == 0);
  CHECK(calls == 0);
}

TEST_CASE("max_runs 5 allows 5 candidate runs after the first and reports each - the result still fails", "[shrink][budget]") {
  const Scenario s = load("scenarios/bugs/leader_election_naive.yaml");
  std::size_t calls = 0;
  std::size_t last = 0;
  ShrinkOptions o;
  o.max_runs = 5;
  o.progress = [&](const ShrinkProgress& p) {
    ++calls;
    CHECK(p.runs <= 5);
    CHECK(p.max_runs == 5);
    last = p.runs;
  };
  const ShrinkResult r = shrink(s, o);
  CHECK(r.runs == 5);
  CHECK(r.exhausted);
  CHECK(calls == r.runs + 1);  // the first run, then each candidate run
  CHECK(last == 5);
  require_shrunk(r);
}

TEST_CASE("stop ends the search before the next run - what it has still fails", "[shrink][budget]") {
  const Scenario s = load("scenarios/bugs/shutdown_cancel_first.yaml");
  int asked = 0;
  ShrinkOptions o;
  o.stop = [&] { return ++asked > 3; };
  const ShrinkResult r = shrink(s, o);
  CHECK(r.stopped);
  CHECK_FALSE(r.exhausted);
  CHECK(r.runs <= 3);
  require_shrunk(r);
}

TEST_CASE("of seven faults the one crash that fails the check is kept - the rest go - and so do the children nothing names", "[shrink]") {
  const ParseResult p = parse_scenario(
      "scenario: t\nduration: 60s\ntree:\n  root: {strategy: one_for_one, intensity: 10, period: 5s}\n  children:\n"
      "    - {id: a, behaviour: idle}\n    - {id: b, behaviour: idle}\n    - {id: c, behaviour: trap_exit}\n"
      "faults:\n  - {at: 7s, kill: /root/b}\n  - {at: 12s, crash: /root/c}\n  - {crash: /root/b, mtbf: 9s}\n"
      "  - {at: 33.3712s, crash: /root/a, reason: {error: boom}}\n  - {at: 40s, kill: /root/c}\n"
      "  - {crash: /root/c, mtbf: 20s}\n  - {at: 50s, exit: /root/b}\n"
      "checks:\n  - no_escalation\n  - {restarts: {of: /root/a, max: 0}}\n",
      "t.yaml");
  REQUIRE(p.ok());
  const ShrinkResult r = shrink(p.scenario);
  require_shrunk(r);
  CHECK(r.check.name == "restarts");
  REQUIRE(r.scenario.faults.size() == 1);
  CHECK(r.scenario.faults[0].target.text == "/root/a");
  CHECK(r.scenario.faults[0].name == "crash#3");  // named as the injector named it
  REQUIRE(r.scenario.trees.size() == 1);
  CHECK(r.scenario.trees[0].children.size() == 1);  // only /root/a, which the check names
  CHECK(*r.scenario.faults[0].at < Time{} + kSecond * 33);  // earlier and rounder
  CHECK(r.scenario.duration < kSecond * 60);
  CHECK(r.removed.size() == 9);  // no_escalation, six faults, /root/b, /root/c
}

TEST_CASE("failure_words - the same failure with other numbers and names matches - another failure does not", "[shrink]") {
  CHECK(failure_words("519 of 1047 leader writes came from a node that did not lead: c2 wrote while c3 held it; the first: x") ==
        failure_words("1 of 80 leader writes came from a node that did not lead: c1 wrote while c2 held it"));
  CHECK(failure_words("1 event lost beyond the bound (at most 0): batch 32 (events 831..831, 1 event): open batch, cancelled at t=30.05s") ==
        failure_words("27 events lost beyond the bound (at most 0): batch 6 (events 189..215, 27 events): open batch, cancelled at t=5.014s"));
  CHECK(failure_words("1 event lost beyond the bound (at most 0): batch 1 (events 1..1, 1 event): open batch, cancelled at t=3ms") !=
        failure_words("1 event lost beyond the bound (at most 0): batch 1 (events 1..1, 1 event): open batch, sigkill at t=3ms"));
  CHECK(failure_words("nothing to conserve: no pipeline line was emitted") != failure_words("1 event lost beyond the bound (at most 0)"));
}
