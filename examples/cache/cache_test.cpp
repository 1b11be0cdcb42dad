// The cache's tests, through letitcrash's test helper: a scenario file holds over a range of
// seeds, and a failure names the seed and prints the command that reproduces it.

#include <letitcrash/testing.hpp>

#include "cache/cache.hpp"

namespace {

lic::testing::HoldsOptions options(lic::SeedRange seeds) {
  lic::testing::HoldsOptions o;
  o.seeds = seeds;
  o.registry = &cache::registry();
  o.program = CACHETEST;  // our own letitcrash, which knows the cache's behaviours
  return o;
}

}  // namespace

TEST_CASE("the cache answers every request through backend crashes - 200 seeds") {
  lic::testing::require_holds(SCENARIOS "/cache.yaml", options({1, 200}));
}

TEST_CASE("the cache answers every request through backend crashes - seeds RapidCheck draws") {
  lic::testing::prop_holds("cache.yaml holds", SCENARIOS "/cache.yaml", options({}));
}

TEST_CASE("a backend timeout shorter than the backend's latency is caught by cache.answered") {
  const lic::Scenario s = lic::testing::load_or_fail(SCENARIOS "/cache_short_timeout.yaml", cache::registry());
  lic::RunOptions o;
  o.registry = &cache::registry();
  const lic::RunResult r = lic::run(s, o);
  CHECK_FALSE(r.passed);
  REQUIRE(r.checks.size() == 2);
  CHECK(r.checks[0].passed);  // no_escalation: nothing crashes, it is only slow
  CHECK(r.checks[1].name == "cache.answered");
  CHECK_FALSE(r.checks[1].passed);
  INFO(r.checks[1].detail);
  CHECK(r.checks[1].detail.find("unavailable") != std::string::npos);
  // Its identity and margin, as the check declares them: the shrinker and explore read these.
  CHECK(lic::failure_id(r.checks[1]) == lic::FailureId{"cache.answered", "too_unavailable", {}});
  REQUIRE(r.checks[1].margin);
  CHECK(*r.checks[1].margin < 0);
}

TEST_CASE("a mistake in our behaviour's arguments is reported at its place in the file") {
  const lic::ParseResult p = lic::scenarios::parse_scenario(
      "scenario: x\ntree:\n  root: {strategy: one_for_one}\n  children:\n"
      "    - {id: c, behaviour: cache.client, args: {keys: 0, intervall: 5ms}}\n",
      "x.yaml", cache::registry());
  REQUIRE(p.errors.size() == 2);
  CHECK(lic::scenarios::format_diagnostic("x.yaml", p.errors[0]) ==
        "x.yaml:5:53: argument 'keys' of 'cache.client': must be 1 or more");
  CHECK(lic::scenarios::format_diagnostic("x.yaml", p.errors[1]) ==
        "x.yaml:5:67: unknown argument 'intervall' for 'cache.client' (did you mean 'interval'? it takes cache, "
        "interval, keys, timeout)");
}
