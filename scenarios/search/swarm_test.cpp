// Swarm mode, buggify points, fault coverage and stopping at the first failure (issue 15,
// docs/swarm.md): ranges read, write back and take their low end; a seed's choice is its own,
// the same every time, inside the ranges, and runs as a plain scenario; buggify points fire only
// when on and only in the chaos phase; a sweep's coverage adds up; the first failing seed does not
// depend on the threads.

#include <catch2/catch.hpp>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "scenarios/file/read.hpp"
#include "scenarios/file/validate.hpp"
#include "scenarios/file/write.hpp"
#include "scenarios/search/coverage.hpp"
#include "scenarios/search/results_file.hpp"
#include "scenarios/search/swarm.hpp"
#include "scenarios/search/sweep.hpp"
#include "scenarios/testing/run_text.hpp"
#include "sim/trace_keys.hpp"

using namespace lic;
using namespace lic::scenarios;

namespace {

Scenario load(const std::string& path) {
  const ParseResult p = load_scenario(std::string(LIC_SOURCE_DIR) + "/" + path);
  for (const Diagnostic& d : p.errors) UNSCOPED_INFO(format_diagnostic(path, d));
  REQUIRE(p.ok());
  return p.scenario;
}

Scenario parse_ok(const std::string& text) {
  const ParseResult p = parse_scenario(text, "t.yaml");
  for (const Diagnostic& d : p.errors) UNSCOPED_INFO(format_diagnostic("t.yaml", d));
  REQUIRE(p.ok());
  return p.scenario;
}

std::string errors_of(const std::string& text) {
  std::string all;
  for (const Diagnostic& d : parse_scenario(text, "t.yaml").errors) all += format_diagnostic("t.yaml", d) + "\n";
  return all;
}

const char* const kRanged = R"(scenario: ranged
duration: 1m
nodes: [{name: node0}, {name: node1}]
tree:
  root: {strategy: one_for_one, intensity: 100, period: 1s}
  children:
    - {id: a, behaviour: idle}
    - {id: b, behaviour: idle}
faults:
  - {crash: /root/a, mtbf: 5s..2m}
  - {kill: /root/b, at: 1s..30s}
  - {name: lossy, loss: [node0], to: [node1], at: 2s, duration: 1s..10s, ratio: 0%..20%}
)";

}  // namespace

TEST_CASE("swarm: a range reads as its low end, writes back as itself, and bad ranges are refused at their place", "[swarm]") {
  const Scenario s = parse_ok(kRanged);
  REQUIRE(s.faults.size() == 3);
  CHECK(s.faults[0].mtbf == kSecond * 5);
  CHECK(s.faults[1].at == Time{} + kSecond);
  CHECK(s.faults[2].duration == kSecond);
  CHECK(s.faults[2].ratio == Ratio::never());
  REQUIRE(s.faults[0].range("mtbf") != nullptr);
  CHECK(s.faults[0].range("mtbf")->hi == "2m");
  const ParseResult back = parse_scenario(to_yaml(s), "back.yaml");
  REQUIRE(back.ok());
  CHECK(back.scenario == s);

  const std::string base = "scenario: x\ntree:\n  root: {strategy: one_for_one}\n  children: [{id: a, behaviour: idle}]\nfaults:\n";
  CHECK(errors_of(base + "  - {crash: /root/a, mtbf: 2m..5s}\n").find("t.yaml:6:28: the range's low end 2m is above its high end 5s") !=
        std::string::npos);
  CHECK(errors_of(base + "  - {crash: /root/a, mtbf: 0s..5s}\n").find("mtbf must be more than 0: its range's low end is 0s") !=
        std::string::npos);
  CHECK(errors_of(base + "  - {degrade: /root/a, at: 1s, mode: a..b}\n").find("`mode` takes no range") != std::string::npos);
  CHECK(errors_of(base + "  - {loss: [node0], at: 1s, ratio: 30%..10%}\n").find("low end 30% is above its high end 10%") !=
        std::string::npos);
  CHECK(errors_of(base + "  - {crash: /root/a, mtbf: 1s..soon}\n").find("bad range for mtbf") != std::string::npos);
}

TEST_CASE("swarm: a seed's choice is the same every time, inside the ranges, and differs between seeds", "[swarm]") {
  const Scenario s = parse_ok(kRanged);
  std::set<std::string> choices;
  std::size_t off = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const Swarmed a = swarm(s, seed, Registry::builtin());
    const Swarmed b = swarm(s, seed, Registry::builtin());
    REQUIRE(a.choice == b.choice);
    REQUIRE(a.scenario == b.scenario);
    CHECK(a.choice.on.size() + a.choice.off.size() == 3);
    CHECK(a.scenario.faults.size() == a.choice.on.size());
    off += a.choice.off.size();
    for (const faults::Fault& f : a.scenario.faults) {
      CHECK(f.ranges.empty());
      CHECK_FALSE(f.name.empty());  // named, so each keeps its own random stream
      if (f.mtbf) CHECK((*f.mtbf >= kSecond * 5 && *f.mtbf <= kMinute * 2));
      if (f.kind == faults::Kind::kill) CHECK((*f.at >= Time{} + kSecond && *f.at <= Time{} + kSecond * 30));
      if (f.kind == faults::Kind::loss) CHECK((f.ratio.num * 5 <= f.ratio.den));  // at most 20 %
    }
    // What a seed runs is an ordinary file: it validates and reads back as itself.
    CHECK(validate(a.scenario).empty());
    const ParseResult back = parse_scenario(to_yaml(a.scenario), "swarmed.yaml");
    REQUIRE(back.ok());
    CHECK(back.scenario == a.scenario);
    choices.insert(describe(a.choice));
  }
  CHECK(choices.size() > 30);
  CHECK(off > 20);  // about half of 120
  CHECK(off < 100);
}

TEST_CASE("buggify: a point fires only when turned on, only in the chaos phase, and each fire is traced", "[swarm][buggify]") {
  Buggify b;
  const Rng root(7);
  for (int i = 0; i < 100; ++i) CHECK_FALSE(b.ask(root, "x.point"));
  CHECK(b.counts().at("x.point").evaluated == 100);
  b.enable({"x.point"});
  int fired = 0;
  for (int i = 0; i < 400; ++i) fired += b.ask(root, "x.point") ? 1 : 0;
  CHECK(fired > 60);  // 25 % of 400 = 100
  CHECK(fired < 140);
  CHECK(b.ask(root, "x.point", Ratio::always()));
  CHECK_FALSE(b.ask(root, "x.point", Ratio::never()));
  b.end_chaos();
  for (int i = 0; i < 100; ++i) CHECK_FALSE(b.ask(root, "x.point"));

  // In a run: the graceful shutdown with S3's slow reply pinned on.
  Scenario s = load("scenarios/catalog/graceful_shutdown.yaml");
  const RunResult plain = run(s);
  REQUIRE(plain.buggify.contains("ingest.s3_slow_reply"));
  CHECK(plain.buggify.at("ingest.s3_slow_reply").evaluated > 0);
  CHECK(plain.buggify.at("ingest.s3_slow_reply").fired == 0);
  s.buggify = {"ingest.s3_slow_reply"};
  const RunResult on = run(s);
  CHECK(on.buggify.at("ingest.s3_slow_reply").fired > 0);
  std::size_t traced = 0;
  for (const TraceEvent& e : on.sim->trace().events()) traced += e.name == fault_events::kBuggify ? 1 : 0;
  CHECK(traced == on.buggify.at("ingest.s3_slow_reply").fired);
  CHECK(on.trace_hash != plain.trace_hash);
}

TEST_CASE("buggify: a point with two meanings is refused, and a file names only its behaviours' points", "[swarm][buggify]") {
  Registry r = Registry::with_builtins();
  BehaviourInfo b = *r.behaviour("idle");
  b.name = "mine.idle";
  b.buggify = {{"ingest.s3_slow_reply", "something else entirely"}};
  CHECK_THROWS_WITH(r.add(b), Catch::Contains("already behaviour 'ingest.s3''s with another meaning"));
  b.buggify = {{"mine.point", "mine"}};
  r.add(b);
  CHECK(r.buggify_points().size() == Registry::builtin().buggify_points().size() + 1);

  const std::string text = "scenario: x\ntree:\n  root: {strategy: one_for_one}\n  children: [{id: a, behaviour: idle}]\nbuggify: [ingest.s3_slow_reply]\n";
  CHECK(errors_of(text).find("t.yaml:5:10: unknown buggify point 'ingest.s3_slow_reply' (the file's behaviours have none)") !=
        std::string::npos);
}

TEST_CASE("coverage: a swarm sweep counts each fault on and acting, each check, and the outcomes reached", "[swarm][coverage]") {
  const Scenario s = load("scenarios/bugs/leader_election_naive.yaml");
  SweepOptions o;
  o.swarm = true;
  const std::vector<SeedResult> results = run_seeds(s, SeedRange{1, 12}, o);
  Coverage c(s, Registry::builtin());
  for (const SeedResult& r : results) {
    REQUIRE(r.swarm);
    REQUIRE(r.faults.size() == s.faults.size());
    for (std::size_t i = 0; i < r.faults.size(); ++i) {
      const bool on = std::count(r.swarm->on.begin(), r.swarm->on.end(), r.faults[i].name) != 0;
      CHECK(r.faults[i].on == on);
      if (!on) CHECK(r.faults[i].injected == 0);
    }
    c.add(r);
  }
  CHECK(c.seeds() == 12);
  std::uint64_t on = 0;
  for (const Coverage::FaultRow& f : c.faults()) {
    CHECK(f.acted <= f.on);
    CHECK(f.on <= 12);
    on += f.on;
  }
  CHECK(on > 0);
  CHECK(on < 12 * s.faults.size());  // the swarm turned some off
  for (const Coverage::CheckRow& k : c.checks()) CHECK(k.passed + k.failed == 12);
  const nlohmann::json j = nlohmann::json::parse(c.json());
  CHECK(j["seeds"] == 12);
  CHECK(j["faults"].size() == s.faults.size());
  CHECK(c.html("x").find("<h2>Supervision outcomes</h2>") != std::string::npos);

  // The results line keeps it all, and reads back as the same result.
  const std::string path = "swarm_test.results.jsonl";
  std::remove(path.c_str());
  ResultsWriter w;
  std::vector<std::string> notes;
  const SweepHeader h = make_sweep_header(s, "f.yaml", SeedRange{1, 12}, Shard{}, TieBreak::fifo, std::nullopt, false, true);
  REQUIRE(w.open(path, h, SeedRange{1, 12}, Shard{}, true, notes).empty());
  for (const SeedResult& r : results) REQUIRE(w.append(r).empty());
  REQUIRE(w.close().empty());
  ResultsReader rd(path);
  CHECK(rd.header().swarm);
  for (const SeedResult& r : results) {
    const std::optional<SeedResult> back = rd.next();
    REQUIRE(back);
    CHECK(*back == r);
  }
  std::remove(path.c_str());
}

TEST_CASE("stop at the first failure: the same first failing seed and the same results on one thread and on four", "[swarm][sweep]") {
  const Scenario s = load("scenarios/bugs/leader_election_naive.yaml");
  const auto sweep = [&](unsigned jobs) {
    SweepOptions o;
    o.jobs = jobs;
    o.stop_at_first_failure = true;
    std::vector<std::uint64_t> seen;
    run_seeds(s, SeedRange{1, 60}, Shard{}, o, {}, [&](const SeedResult& r) {
      seen.push_back(r.seed);
      return true;
    });
    return seen;
  };
  const std::vector<std::uint64_t> one = sweep(1);
  REQUIRE_FALSE(one.empty());
  CHECK(sweep(4) == one);
  for (std::size_t i = 0; i < one.size(); ++i) CHECK(one[i] == i + 1);  // in seed order, none skipped
  // The last delivered is the first that fails: run alone, it fails, and every earlier one passes.
  CHECK_FALSE(run_seed(s, one.back(), {}).passed);
  CHECK(one.size() < 60);
}
