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

// How a failing file looks in a test's log: the first failing seeds with the commands that
// reproduce them, then the first one's detail and witness. The tag says this test must fail.
TEST_CASE("require_holds on the known bug fails, and says why", "[!shouldfail]") {
  lic::testing::require_holds(SCENARIOS "/cache_short_timeout.yaml", options({1, 20}));
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
  // Its witness: the last unavailable answer, at the client that got it.
  REQUIRE(r.checks[1].witness);
  CHECK(r.checks[1].witness->processes == std::vector<std::string>{"/root/client"});
  CHECK(r.checks[1].witness->why.find("the last unavailable answer") == 0);
  // Our metric, measured on every run beside the built-in ones: few hits when every miss fails.
  REQUIRE(r.metrics.count("cache.hit_ratio") == 1);
  CHECK(r.metrics.at("cache.hit_ratio").values.at(0) < 0.5);
}

// A cache of the kind cache.consistent is there to catch: it answers key k with k + 1's value
// (an off-by-one in its lookup). Registered for this test alone, beside ours.
class OffByOneCache final : public lic::Behaviour {
 public:
  lic::InitResult init(lic::Context& ctx) override {
    ctx.register_name(lic::Atom("Cache"));
    return lic::InitResult::ok();
  }
  lic::CallReply handle_call(lic::Context&, const lic::Message& m, lic::From) override {
    const std::int64_t* key = m.payload.get<std::int64_t>();
    if (key == nullptr) return lic::CallReply::reply(lic::Atom("error"));
    return lic::CallReply::reply(lic::Atom("value"), (*key + 1) * (*key + 1));
  }
};

TEST_CASE("cache.consistent: the reads the client records are the backend's values; a cache that answers another key's value fails it") {
  // Ours: every read checked against our model of the backend (k -> k * k), and it holds.
  const lic::Scenario s = lic::testing::load_or_fail(SCENARIOS "/cache.yaml", cache::registry());
  lic::RunOptions o;
  o.registry = &cache::registry();
  const lic::RunResult ours = lic::run(s, o);
  const auto consistent = [](const lic::RunResult& r) {
    for (const lic::CheckResult& c : r.checks)
      if (c.name == "cache.consistent") return c;
    FAIL("no cache.consistent in the run");
    return lic::CheckResult{};
  };
  const lic::CheckResult good = consistent(ours);
  INFO(good.detail);
  CHECK(good.passed);
  CHECK(good.judged);
  CHECK(good.detail.find("linearizable as a cache.squares") == 0);
  // An off-by-one cache: the first read it answers is wrong, and the witness is the client's.
  lic::Registry with = cache::registry();
  with.add(lic::BehaviourInfo{"test.off_by_one_cache", "answers key k with k + 1's value", {},
                              [](lic::Args&) -> lic::BehaviourFactory {
                                return [](const std::string&) { return std::make_unique<OffByOneCache>(); };
                              }});
  const lic::ParseResult p = lic::parse_scenario(
      "scenario: off_by_one\nduration: 2s\ntree:\n  root: {strategy: one_for_one}\n  children:\n"
      "    - {id: cache, behaviour: test.off_by_one_cache}\n"
      "    - {id: client, behaviour: cache.client, args: {interval: 50ms, keys: 10}}\n"
      "checks: [cache.consistent]\n",
      "off_by_one.yaml", with);
  REQUIRE(p.ok());
  o.registry = &with;
  const lic::CheckResult bad = consistent(lic::run(p.scenario, o));
  INFO(bad.detail);
  CHECK_FALSE(bad.passed);
  CHECK(lic::failure_id(bad) == lic::FailureId{"cache.consistent", "not_linearizable", {}});
  REQUIRE(bad.witness);
  CHECK(bad.witness->processes == std::vector<std::string>{"/root/client"});
  CHECK(bad.witness->why.find("read(") == 0);
}

TEST_CASE("a word our behaviour does not know for a one-of argument: did you mean, at the value") {
  const lic::ParseResult p = lic::parse_scenario(
      "scenario: x\ntree:\n  root: {strategy: one_for_one}\n  children:\n"
      "    - {id: c, behaviour: cache.client, args: {retry: onse}}\n",
      "x.yaml", cache::registry());
  REQUIRE(p.errors.size() == 1);
  CHECK(lic::format_diagnostic("x.yaml", p.errors[0]) ==
        "x.yaml:5:54: argument 'retry' of 'cache.client': 'onse' is not one of none, once (did you mean 'once'?)");
}

TEST_CASE("retrying once answers what the first ask could not") {
  const auto unavailable = [](const char* retry) {
    lic::ParseResult p = lic::parse_scenario(
        std::string("scenario: x\nphases: {chaos: 20s}\ntree:\n  root: {strategy: one_for_one}\n  children:\n"
                    "    - {id: backend, behaviour: cache.backend, args: {fail: 20%}}\n"
                    "    - {id: cache, behaviour: cache.server}\n"
                    "    - {id: client, behaviour: cache.client, args: {retry: ") + retry + "}}\n",
        "x.yaml", cache::registry());
    REQUIRE(p.errors.empty());
    lic::RunOptions o;
    o.registry = &cache::registry();
    const lic::RunResult r = lic::run(p.scenario, o);
    std::int64_t n = 0;
    for (const lic::TraceEvent& e : r.sim->trace().events())
      n += e.kind == lic::EventKind::system && e.name == lic::Atom("answer") && e.text(lic::Atom("result")) == "unavailable";
    return n;
  };
  const std::int64_t once = unavailable("once");
  const std::int64_t none = unavailable("none");
  INFO("unavailable answers: retry none " << none << ", once " << once);
  CHECK(none > 0);
  CHECK(once < none);
}

TEST_CASE("a mistake in our behaviour's arguments is reported at its place in the file") {
  const lic::ParseResult p = lic::parse_scenario(
      "scenario: x\ntree:\n  root: {strategy: one_for_one}\n  children:\n"
      "    - {id: c, behaviour: cache.client, args: {keys: 0, intervall: 5ms}}\n",
      "x.yaml", cache::registry());
  REQUIRE(p.errors.size() == 2);
  CHECK(lic::format_diagnostic("x.yaml", p.errors[0]) ==
        "x.yaml:5:53: argument 'keys' of 'cache.client': must be 1 or more");
  CHECK(lic::format_diagnostic("x.yaml", p.errors[1]) ==
        "x.yaml:5:67: unknown argument 'intervall' for 'cache.client' (did you mean 'interval'? it takes cache, "
        "interval, keys, timeout, retry)");
}
