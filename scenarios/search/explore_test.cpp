// Guided search (issue 31, docs/explore.md): a run's faults become an explicit schedule that runs
// and reads back as a file; mutants are valid files; the explorer makes the same runs on 1 and 2
// threads; it finds a bug and hands on a failure the shrinker keeps by identity.

#include <catch2/catch.hpp>
#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "scenarios/file/validate.hpp"
#include "scenarios/file/write.hpp"
#include "scenarios/run/judge.hpp"
#include "scenarios/search/shrink.hpp"
#include "scenarios/search/explore.hpp"
#include "scenarios/search/reach.hpp"
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

TEST_CASE("mutate - the same stream makes the same mutant - every mutant validates and reads back as itself, a stream re-seeded alone keeps the others", "[explore]") {
  const Scenario s = load("scenarios/bugs/rare_upload_timeout_two_stalls.yaml");
  RunOptions ro;
  ro.seed = 5;
  const Scenario base = concretize(s, 5, run(s, ro).kept_events());
  MutationPalette p = palette_of(s);
  p.streams = streams_drawn(s);
  std::erase_if(p.streams, [](const std::string& k) { return k.rfind("fault ", 0) == 0; });  // as explore does
  REQUIRE(!p.streams.empty());
  bool changed = false;
  int restreamed = 0;
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
    // One stream re-seeded: its pin holds the new seed, and the run's own seed is the parent's.
    if (n1.size() == 1 && n1.front().rfind("reseed stream ", 0) == 0) {
      const std::string rest = n1.front().substr(14);
      const std::string key = rest.substr(0, rest.rfind(' '));
      const std::uint64_t seed = std::stoull(rest.substr(rest.rfind(' ') + 1));
      CHECK(std::find(p.streams.begin(), p.streams.end(), key) != p.streams.end());
      CHECK(std::count_if(m1.streams.begin(), m1.streams.end(), [&](const StreamPin& q) { return q.key == key && q.seed == seed; }) == 1);
      CHECK(m1.seed == base.seed);
      ++restreamed;
    }
  }
  CHECK(changed);
  CHECK(restreamed > 0);
}

TEST_CASE("marks_of - landmarks are a run's rare events, reactions from the first injection on, flights cross nodes near an injection", "[explore]") {
  // The file's own seed stalls two uploads: each gives up (upload_failed) 20 s after its put was lost.
  const Scenario s = load("scenarios/bugs/rare_upload_timeout_two_stalls.yaml");
  const RunResult r = run(s);
  const EventLog& log = r.kept_events();
  const RunMarks m = marks_of(log);
  std::vector<Time> gave_up, injections;
  std::size_t accepted = 0;
  for (const TraceEvent& e : log) {
    if (e.kind == EventKind::system && e.name == Atom("upload_failed")) gave_up.push_back(e.time);
    if (e.kind == EventKind::system && e.name == fault_events::kFaultInjected) injections.push_back(e.time);
    accepted += e.kind == EventKind::system && e.name == Atom("event_accepted") ? 1 : 0;
  }
  REQUIRE(!gave_up.empty());
  REQUIRE(!injections.empty());
  REQUIRE(accepted > static_cast<std::size_t>(kLandmarkRepeats));
  for (const Time t : gave_up)
    CHECK(std::any_of(m.landmarks.begin(), m.landmarks.end(), [&](const Landmark& l) { return l.time == t && l.what == Atom("upload_failed"); }));
  for (const Landmark& l : m.landmarks) {
    CHECK(l.what != fault_events::kFaultInjected);
    CHECK(l.what != Atom("event_accepted"));  // seen in every burst: no landmark
    CHECK(l.what != Atom("send"));
  }
  CHECK(std::is_sorted(m.landmarks.begin(), m.landmarks.end(), [](const Landmark& a, const Landmark& b) { return a.time < b.time; }));
  REQUIRE(m.first_reaction < m.landmarks.size());
  for (std::size_t k = 0; k < m.landmarks.size(); ++k) CHECK((m.landmarks[k].time >= injections.front()) == (k >= m.first_reaction));
  // Every flight is a message sent on one node and delivered on another, near an injection.
  REQUIRE(!m.flights.empty());
  std::map<std::uint64_t, TraceEvent> sends;
  std::set<std::pair<Time, Time>> crossing;
  for (const TraceEvent& e : log) {
    if (e.kind == EventKind::send) sends[e.msg] = e;
    if (e.kind == EventKind::deliver && sends.count(e.msg) != 0 && sends[e.msg].node != e.node) crossing.emplace(sends[e.msg].time, e.time);
  }
  for (const auto& f : m.flights) {
    CHECK(crossing.count(f) == 1);
    CHECK(std::any_of(injections.begin(), injections.end(), [&](Time t) { return f.first + kFlightRadius >= t && f.first <= t + kFlightRadius; }));
  }
}

TEST_CASE("mutate - with its run's marks: land puts a fault within a second of a landmark, in_flight starts a cut inside a message's flight", "[explore]") {
  const Scenario s = load("scenarios/bugs/rare_failover_retransmit_no_user_timeout.yaml");
  const RunResult r = run(s);
  const Scenario base = concretize(s, s.seed, r.kept_events());
  REQUIRE_FALSE(base.faults.empty());
  const RunMarks m = marks_of(r.kept_events());
  const MutationPalette p = palette_of(s);
  const auto fault_at = [](const Scenario& x, const std::string& name) {
    for (const faults::Fault& f : x.faults)
      if (f.name == name) return *f.at;
    FAIL("no fault " << name);
    return Time{};
  };
  int landed = 0, caught = 0;
  for (std::uint64_t k = 0; k < 400; ++k) {
    Scenario x = base;
    Rng rng = Rng(7).derive(k);
    const auto notes = mutate(x, &base, p, rng, &m);
    CHECK(validate(x).empty());
    if (notes.size() != 1) continue;  // one mutation alone: nothing moved the fault after it
    const std::string& n = notes.front();
    INFO(n);
    std::string name;
    if (n.rfind("land ", 0) == 0) name = n.substr(5, n.find(' ', 5) - 5);
    if (n.rfind("copy ", 0) == 0) name = n.substr(n.find(" as ") + 4, n.find(' ', n.find(" as ") + 4) - n.find(" as ") - 4);
    if (!name.empty()) {
      const Time t = fault_at(x, name);
      CHECK(std::any_of(m.landmarks.begin(), m.landmarks.end(), [&](const Landmark& l) { return t >= l.time - kSecond && t <= l.time + kSecond; }));
      ++landed;
    }
    if (n.find(" is on the wire") != std::string::npos) {
      const Time t = fault_at(x, n.substr(5, n.find(' ', 5) - 5));
      CHECK(std::any_of(m.flights.begin(), m.flights.end(), [&](const auto& f) { return t > f.first && t < f.second; }));
      ++caught;
    }
  }
  CHECK(landed > 0);
  CHECK(caught > 0);
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

TEST_CASE("explore - plain_seed: the plain runs take the given seeds in order - slots are the coverage reached", "[explore]") {
  const Scenario s = load("scenarios/bugs/one_for_one_dependent_restart.yaml");
  ExploreOptions o;
  o.seed = 5;
  o.runs = 60;
  o.keep_going = true;
  o.jobs = 2;
  o.plain_seed = [](std::size_t k) { return 1000 + 7 * static_cast<std::uint64_t>(k); };  // shard 1/7 of 1000..
  const ExploreResult r = explore(s, o);
  std::vector<std::uint64_t> plain;
  for (const CorpusEntry& e : r.corpus)
    if (e.how.rfind("seed ", 0) == 0) plain.push_back(std::stoull(e.how.substr(5)));
  REQUIRE_FALSE(plain.empty());
  CHECK(plain.front() == 1000);  // the first run is the first seed, and it is always kept (every slot is new)
  for (const std::uint64_t seed : plain) {
    INFO("seed " << seed);
    CHECK(seed >= 1000);
    CHECK((seed - 1000) % 7 == 0);
    CHECK(seed < 1000 + 7 * r.plain_runs);  // never beyond the plain runs made
  }
  CHECK(std::is_sorted(plain.begin(), plain.end()));
  CHECK(r.plain_runs >= 2);
  CHECK(r.plain_runs < r.runs);  // the rest were mutated schedules
  CHECK(r.slots.size() == r.coverage);
  CHECK(std::is_sorted(r.slots.begin(), r.slots.end()));
  std::set<std::uint32_t> kept;
  for (const CorpusEntry& e : r.corpus) kept.insert(e.signature.slots.begin(), e.signature.slots.end());
  for (const std::uint32_t slot : kept) CHECK(std::binary_search(r.slots.begin(), r.slots.end(), slot));
}
