// Hostile input and the harness's own limits (issue 18, docs/robustness.md): each test is named
// after the rule it pins. Bad input is a diagnostic at its place, a runaway run ends with a
// budget error, never an abort or a hang.

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "reports/run_report.hpp"
#include "scenarios/file/read.hpp"
#include "scenarios/file/write.hpp"
#include "scenarios/run/replay.hpp"
#include "scenarios/run/report.hpp"
#include "scenarios/run/runner.hpp"
#include "scenarios/run/stream.hpp"
#include "scenarios/registry.hpp"
#include "sim/simulation.hpp"
#include "sim/trace_keys.hpp"

using namespace lic;
using namespace lic::scenarios;

namespace {

std::string errors_of(const std::string& text) {
  std::string all;
  for (const Diagnostic& d : parse_scenario(text, "t.yaml").errors) all += format_diagnostic("t.yaml", d) + "\n";
  return all;
}

const std::string kTree = "tree:\n  root: {strategy: one_for_one}\n  children: [{id: a, behaviour: idle}]\n";

Scenario parse_ok(const std::string& text) {
  const ParseResult p = parse_scenario(text, "t.yaml");
  for (const Diagnostic& d : p.errors) UNSCOPED_INFO(format_diagnostic("t.yaml", d));
  REQUIRE(p.ok());
  return p.scenario;
}

SpawnOptions labelled_as(const char* path) {
  SpawnOptions o;
  o.label = Label{Atom(path), 1};
  return o;
}

}  // namespace

TEST_CASE("rule: a byte that is not UTF-8 is an error at its line and column, never a crash in a writer", "[robustness]") {
  CHECK(errors_of("scenario: caf\xff\n" + kTree) == "t.yaml:1:14: the file is not UTF-8: byte 0xFF (scenario files are UTF-8 text)\n");
  CHECK(errors_of("scenario: x\n" + kTree + "description: \xc3\x28\n").find("t.yaml:5:14: the file is not UTF-8: byte 0xC3") !=
        std::string::npos);
  // Well-formed UTF-8 is read as it is.
  CHECK(parse_ok("scenario: café_ünïcode\n" + kTree).name == "café_ünïcode");
}

TEST_CASE("rule: a control character (a NUL, an escape) is an error at its place, so no diagnostic echoes one to a terminal", "[robustness]") {
  CHECK(errors_of(std::string("scenario: a\0b\n", 14) + kTree) ==
        "t.yaml:1:12: a control character (0x00) is not allowed in a scenario file\n");
  CHECK(errors_of("scenario: x\x1b[31mred\n" + kTree).find("t.yaml:1:12: a control character (0x1B)") != std::string::npos);
}

TEST_CASE("rule: a second YAML document is an error where it starts, not silently ignored", "[robustness]") {
  CHECK(errors_of("scenario: x\n" + kTree + "---\nscenario: y\n" + kTree).find("t.yaml:5:1: a scenario file holds one YAML document") !=
        std::string::npos);
}

TEST_CASE("rule: a lifecycle backoff that can reach a delay of 0 is refused (it would retry at one instant for ever)", "[robustness]") {
  const auto with = [](const std::string& restart) {
    return errors_of("scenario: x\ntrees:\n  - id: root\n    lifecycle:\n      services:\n        - name: db\n          behaviour: idle\n"
                     "          restart: " + restart + "\n");
  };
  CHECK(with("{factor: 1/2}").find("factor must be 1 or more: 1/2 shrinks each delay") != std::string::npos);
  CHECK(with("{initial_delay: 0s}").find("initial_delay must be more than 0") != std::string::npos);
  CHECK(with("{max_delay: 0s}").find("max_delay must be more than 0") != std::string::npos);
  CHECK(with("{factor: 1, initial_delay: 1ms}").empty());
}

TEST_CASE("rule: events at one virtual instant without end are a livelock error naming who ran, not a hang", "[robustness]") {
  SimOptions so;
  so.max_events_at_instant = 100'000;
  Simulation sim(so);
  const Atom ping("ping");
  // Two processes that answer each other at once: every message is a kernel event at t=0.
  const Pid a = sim.spawn([&](Context& ctx) {
    for (;;) ctx.send(ctx.receive()->from, ping);
  }, labelled_as("/root/ponger"));
  sim.spawn([&, a](Context& ctx) {
    for (ctx.send(a, ping);; ctx.send(a, ping)) (void)ctx.receive();
  }, labelled_as("/root/pinger"));
  try {
    sim.run_until(Time{} + kSecond);
    FAIL("the run returned");
  } catch (const BudgetExceeded& e) {
    const std::string what = e.what();
    CHECK(what.find("livelock: 100000 events at t=0s without virtual time passing") != std::string::npos);
    CHECK(what.find("/root/ponger") != std::string::npos);
    CHECK(what.find("/root/pinger") != std::string::npos);
  }
  CHECK(sim.now() == Time{});
}

namespace {

/// A behaviour whose init records events for ever: it runs on the loop's own stack.
struct Spinner final : Behaviour {
  InitResult init(Context& ctx) override {
    for (;;) ctx.emit(Atom("spin"), {});
  }
};

std::size_t count_named(const Simulation& sim, const char* name) {
  std::size_t n = 0;
  for (const TraceEvent& e : sim.trace().events()) n += e.kind == EventKind::system && e.name == Atom(name) ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("rule: a retry loop of calls to a name nothing registers ends with a budget error - each noproc reply is a trace event", "[robustness]") {
  // gen_server:call to an unregistered name fails at once: no message, no event run. Before,
  // the reply left no trace event and the loop ran for ever; traced, it is seen between events.
  SimOptions so;
  so.max_events_at_instant = 10'000;
  Simulation sim(so);
  sim.spawn([](Context& ctx) {
    for (;;) (void)ctx.call(Atom("nobody"), Atom("ping"), 0, kSecond);
  }, labelled_as("/root/retry"));
  try {
    sim.run_until(Time{} + kSecond);
    FAIL("the run returned");
  } catch (const BudgetExceeded& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Catch::Contains("livelock: ") && Catch::Contains("trace events at t=0s with no event run between them") &&
                         Catch::Contains("recorded by /root/retry"));
  }
  // Four times the instant's budget: one kernel event may record several trace events.
  CHECK(count_named(sim, "call_noproc") > 40'000);
  CHECK(count_named(sim, "call_noproc") < 50'000);
  std::optional<TraceEvent> first;
  for (const TraceEvent& e : sim.trace().events())
    if (e.name == Atom("call_noproc") && !first) first = e;
  REQUIRE(first.has_value());
  CHECK(first->text(keys::kName) == "nobody");
  CHECK(first->text(keys::kTag) == "ping");
}

TEST_CASE("rule: events a process records without waiting count against --max-memory and the livelock budget, not std::bad_alloc", "[robustness]") {
  SECTION("a process's own loop, against the memory budget") {
    SimOptions so;
    so.max_trace_bytes = std::uint64_t{1} << 20;
    Simulation sim(so);
    sim.spawn([](Context& ctx) {
      for (;;) ctx.emit(Atom("retry"), {{keys::kN, std::int64_t{1}}});
    }, labelled_as("/root/spin"));
    CHECK_THROWS_WITH(sim.run_until(Time{} + kSecond), Catch::Contains("over 1 MiB (--max-memory)"));
    CHECK(sim.trace().events().bytes() < (std::size_t{2} << 20));
  }
  SECTION("a behaviour's callback, on the loop's own stack, against the livelock budget") {
    SimOptions so;
    so.max_events_at_instant = 10'000;
    Simulation sim(so);
    sim.spawn(std::make_unique<Spinner>(), labelled_as("/root/spinner"));
    CHECK_THROWS_WITH(sim.run_until(Time{} + kSecond), Catch::Contains("recorded by /root/spinner"));
    CHECK(count_named(sim, "spin") < 50'000);
  }
}

TEST_CASE("rule: the default budgets scale to the file, and stop a crash every nanosecond within them", "[robustness]") {
  const Scenario s = parse_ok("scenario: x\nduration: 1h\n"
                              "tree:\n  root: {strategy: one_for_one, intensity: 1000000, period: 1s}\n"
                              "  children: [{id: a, behaviour: idle}, {id: b, supervisor: {strategy: one_for_one}, children: [{id: c, behaviour: idle}]}]\n"
                              "faults:\n  - {at: 1s, every: 1ns, crash: /root/a}\n");
  CHECK(declared_processes(s) == 4);
  const Budgets b = Budgets{}.scaled_to(s);
  CHECK(b.max_events == Budgets::kEventsBase + 4 * Budgets::kEventsPerProcess);
  CHECK(b.max_events_at_instant == Budgets::kInstantBase + 4 * Budgets::kInstantPerProcess);
  CHECK(b.max_memory_bytes == Budgets{}.max_memory_bytes);
  Budgets given;
  given.max_events = 7;
  CHECK(given.scaled_to(s).max_events == 7);  // a count given stays as given
  CHECK_THROWS_WITH(run(s), Catch::StartsWith(fmt::format("budget exceeded: {} events (--max-events) at t=1.", b.max_events)));
}

TEST_CASE("rule: timers cancelled before they fire count against --max-events (one fault aliased hundreds of times)", "[robustness]") {
  // Each restart of the target cancels and sets every fault's timer: work no event shows.
  std::string text = "scenario: x\nduration: 1h\n"
                     "tree:\n  root: {strategy: one_for_one, intensity: 1000000, period: 1s}\n  children: [{id: a, behaviour: idle}]\n"
                     "faults:\n  - &f {mtbf: 1s, crash: /root/a}\n";
  for (int i = 0; i < 499; ++i) text += "  - *f\n";
  const Scenario s = parse_ok(text);
  REQUIRE(s.faults.size() == 500);
  RunOptions o;
  o.budgets.max_events = 200'000;
  CHECK_THROWS_WITH(run(s, o), Catch::StartsWith("budget exceeded: 200000 events (--max-events) at t=") &&
                                   Catch::Contains("timers cancelled before they fired)"));
}

TEST_CASE("rule: a run over --max-events or --max-memory ends with a budget error saying where", "[robustness]") {
  const Scenario s = parse_ok("scenario: x\nduration: 1h\n" + kTree + "faults:\n  - {crash: /root/a, at: 1ms, every: 1ms}\n");
  RunOptions o;
  o.budgets.max_events = 20'000;
  CHECK_THROWS_WITH(run(s, o), Catch::StartsWith("budget exceeded: 20000 events (--max-events) at t="));
  o.budgets = Budgets{};
  o.budgets.max_memory_bytes = 1 << 20;
  CHECK_THROWS_WITH(run(s, o), Catch::Contains("over 1 MiB (--max-memory)"));
  // A streamed run keeps no trace: what its sink gathers counts instead.
  REQUIRE(RunStream::can_stream(s, Registry::builtin()));
  RunStream stream(s, false);
  o.stream = &stream;
  CHECK_THROWS_WITH(run(s, o), Catch::Contains("what the run gathers from its events for its checks and reports holds") &&
                                   Catch::Contains("over 1 MiB (--max-memory)"));
  CHECK(stream.held_bytes() > std::size_t{1} << 20);
  o.stream = nullptr;
  // The defaults leave an ordinary run as it was: the same trace as with no budget at all.
  const Scenario small = parse_ok("scenario: x\nduration: 10s\n" + kTree + "faults:\n  - {crash: /root/a, at: 1s, every: 1s}\n");
  RunOptions none;
  none.budgets = Budgets{0, 0, 0};
  const RunResult a = run(small);
  const RunResult b = run(small, none);
  CHECK(a.events > 10);
  CHECK(a.trace_hash == b.trace_hash);
}

TEST_CASE("rule: replay reads a header of the wrong types as a bad trace (exit 2), not an abort", "[robustness]") {
  const std::string path = "robustness_test.trace.jsonl";
  for (const char* header : {R"({"kind":5})", R"({"kind":"letitcrash_run","yaml":7,"seed":1})", R"({"kind":"letitcrash_run","yaml":"x","seed":"one"})",
                             R"({"kind":"letitcrash_run","yaml":"x","seed":1,"tie_break":3})", R"([1,2])", "not json"}) {
    {
      std::ofstream f(path);
      f << header << "\n";
    }
    const ReplayOutcome r = replay(path);
    INFO(header);
    CHECK(r.status == ReplayOutcome::Status::bad_input);
    REQUIRE_FALSE(r.errors.empty());
    CHECK(r.errors.front().find(path + ":1:1:") == 0);
  }
  std::remove(path.c_str());
}

TEST_CASE("rule: an escape that makes a control character in a quoted scalar is refused", "[robustness]") {
  CHECK(errors_of("scenario: \"x\\e[31mred\"\n" + kTree) ==
        "t.yaml:1:11: scenario (its name) holds a control character (U+001B, from an escape): names and values are printable text\n");
  CHECK(errors_of("scenario: \"a\\0b\"\n" + kTree).find("(U+0000, from an escape)") != std::string::npos);
  CHECK(errors_of("scenario: \"a\\x9bb\"\n" + kTree).find("(U+009B, from an escape)") != std::string::npos);
  // A tab or a line break in a description is text.
  CHECK(errors_of("scenario: x\ndescription: \"two\\tcolumns\\nand lines\"\n" + kTree).empty());
}

TEST_CASE("rule: a file past the size limit is refused before YAML reads it", "[robustness]") {
  const std::string big = "scenario: x\n" + kTree + "description: \"" + std::string(kMaxScenarioBytes, 'a') + "\"\n";
  CHECK(errors_of(big).find("t.yaml:1:1: the file is larger than a scenario file may be") == 0);
  // load_scenario reads at most one byte past the limit: an endless input ends.
  const ParseResult endless = load_scenario("/dev/zero");
  REQUIRE(endless.errors.size() == 1);
  CHECK(endless.errors.front().message.find("the file is larger than a scenario file may be") == 0);
}

TEST_CASE("rule: YAML aliases that expand past the node limit are refused where the count ran out (an alias bomb)", "[robustness]") {
  std::string bomb = "scenario: bomb\n" + kTree + "script:\n  - &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 8; ++i) {
    bomb += "  - &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) bomb += (k != 0 ? ", *a" : "*a") + std::to_string(i - 1);
    bomb += "]\n";
  }
  CHECK(errors_of(bomb).find("the file expands to more than 1000000 YAML values") != std::string::npos);
  // A few aliases are welcome.
  CHECK(errors_of("scenario: x\ntree:\n  root: &f {strategy: one_for_one}\n  children:\n    - {id: s, supervisor: *f, children: []}\n").empty());
}

TEST_CASE("rule: nesting past yaml-cpp's depth says the limit, not 'bad file'", "[robustness]") {
  const auto nested = [](int levels) {
    return "scenario: x\ntree: " + std::string(static_cast<std::size_t>(levels), '[') + std::string(static_cast<std::size_t>(levels), ']') + "\n";
  };
  CHECK(errors_of(nested(kYamlNesting - 1)).find("nests maps and lists deeper") == std::string::npos);
  CHECK(errors_of(nested(kYamlNesting)).find("nests maps and lists deeper than the YAML reader allows (yaml-cpp stops at 2000 levels") !=
        std::string::npos);
  CHECK(errors_of(nested(100'000)).find("499 levels of maps and lists") != std::string::npos);
}

TEST_CASE("rule: a merge key says merge keys are not supported", "[robustness]") {
  CHECK(errors_of("scenario: x\ntree:\n  <<: {root: {strategy: one_for_one}}\n  children: []\n")
            .find("t.yaml:3:3: merge keys (`<<: *anchor`) are not supported") != std::string::npos);
}

TEST_CASE("rule: empty names are refused where they are written", "[robustness]") {
  CHECK(errors_of("scenario: \"\"\n" + kTree) == "t.yaml:1:11: scenario (its name) must not be empty\n");
  CHECK(errors_of("scenario: x\n" + kTree + "faults:\n  - {name: '', crash: /root/a, at: 1s}\n") ==
        "t.yaml:6:12: a fault's name must not be empty\n");
  CHECK(errors_of("scenario: x\nnodes: [{name: ' '}]\n" + kTree).find("t.yaml:2:16: a node's name must not be empty") != std::string::npos);
  CHECK(errors_of("scenario: x\n" + kTree + "checks:\n  - alive: {of: ''}\n").find("t.yaml:6:17: '' names nothing in the tree") !=
        std::string::npos);
}

TEST_CASE("rule: a fault that could never act is refused (until before at, after the run, a node cut from itself)", "[robustness]") {
  const std::string head = "scenario: x\nduration: 10s\nnodes: [{name: a}, {name: b}]\n" + kTree + "faults:\n";
  CHECK(errors_of(head + "  - {crash: /root/a, at: 3s, until: 2s}\n") ==
        "t.yaml:8:5: `until` (2s) is not after `at` (3s): nothing fires at or after `until`, so this fault would never act\n");
  CHECK(errors_of(head + "  - {crash: /root/a, at: 3s, every: 1s, until: 3s}\n").find("is not after `at`") != std::string::npos);
  CHECK(errors_of(head + "  - {crash: /root/a, at: 11s}\n") ==
        "t.yaml:8:5: this fault at 11s comes after the run ends (at 10s): it would never act\n");
  CHECK(errors_of(head + "  - {partition: [a], to: [b, a], at: 1s, duration: 1s}\n") ==
        "t.yaml:8:5: node 'a' is on both sides of this partition: a node is never cut from itself, so that part of it would never act\n");
  CHECK(errors_of(head + "  - {crash: /root/a, at: 3s, every: 1s, until: 5s}\n").empty());
}

TEST_CASE("rule: a stray token no document can start with is an error, not yaml-cpp's endless LoadAll loop", "[robustness]") {
  // yaml-cpp 0.7's LoadAll pushes empty documents for ever on a lone ',' (its issue 1040): found
  // by the scenario fuzzer (tools/fuzz/regressions/scenario/lone_comma.yaml).
  CHECK(errors_of(",") == "t.yaml:1:1: YAML: no value can start with ',' here\n");
  CHECK(errors_of("# a comment\n ,\n") == "t.yaml:2:2: YAML: no value can start with ',' here\n");
}

TEST_CASE("rule: a run stopped by a budget still writes its reports so far, marked stopped and unjudged", "[robustness]") {
  const Scenario s = parse_ok("scenario: x\nduration: 1h\n" + kTree + "faults:\n  - {crash: /root/a, at: 1ms, every: 1ms}\n");
  RunOptions o;
  o.budgets.max_events = 5'000;
  o.partial_on_budget = true;
  const RunResult r = run(s, o);
  CHECK(r.stopped.find("budget exceeded: 5000 events (--max-events) at t=") == 0);
  CHECK_FALSE(r.passed);
  CHECK(r.checks.empty());
  CHECK(r.events >= 5'000);
  const std::filesystem::path dir = "robustness_test.stopped";
  std::filesystem::remove_all(dir);
  REQUIRE(write_run_reports(s, r, "x.yaml", std::nullopt, "letitcrash run x.yaml", dir).empty());
  std::ifstream in(dir / "summary.json");
  const std::string summary((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(summary.find("\"stopped\": \"budget exceeded: 5000 events") != std::string::npos);
  CHECK(std::filesystem::file_size(dir / "trace.jsonl") > 100'000);
  std::filesystem::remove_all(dir);
}

TEST_CASE("rule: replay refuses a trace that is not the one its folder's manifest names (a folder mixing two runs)", "[robustness]") {
  const std::filesystem::path a = "robustness_test.run_a";
  const std::filesystem::path b = "robustness_test.run_b";
  for (const auto& [dir, seconds] : {std::pair{a, 1}, std::pair{b, 2}}) {
    std::filesystem::remove_all(dir);
    const Scenario s = parse_ok("scenario: x\nduration: " + std::to_string(seconds) + "s\n" + kTree +
                                "faults:\n  - {crash: /root/a, at: 500ms}\n");
    const RunResult r = run(s);
    REQUIRE(write_run_reports(s, r, "x.yaml", std::nullopt, "letitcrash run x.yaml", dir).empty());
  }
  CHECK(replay((a / "trace.jsonl").string()).status == ReplayOutcome::Status::identical);
  // Another run's trace.jsonl in a's folder (what a full disk could once leave): refused, exit 2.
  std::filesystem::copy_file(b / "trace.jsonl", a / "trace.jsonl", std::filesystem::copy_options::overwrite_existing);
  const ReplayOutcome mixed = replay((a / "trace.jsonl").string());
  CHECK(mixed.status == ReplayOutcome::Status::bad_input);
  REQUIRE(mixed.errors.size() == 1);
  CHECK(mixed.errors.front().find("manifest.json:1:1: trace.jsonl is not the file the folder's run wrote") != std::string::npos);
  CHECK(mixed.errors.front().find("the folder mixes two runs") != std::string::npos);
  CHECK(mixed.errors.front().find("xxh3_128 ") != std::string::npos);
  // A folder written before the manifest moved to XXH3-128 names FNV-1a 64 hashes: still checked.
  const auto old_manifest = [&b](const std::string& fnv) {
    const reports::Fingerprint f = reports::file_fingerprint(b / "trace.jsonl");
    std::ofstream(b / "manifest.json") << "{\"kind\": \"letitcrash_reports\", \"files\": {\"trace.jsonl\": {\"bytes\": "
                                       << f.bytes << ", \"fnv1a64\": \"" << fnv << "\"}}}\n";
  };
  old_manifest(reports::file_fnv1a64(b / "trace.jsonl"));
  CHECK(replay((b / "trace.jsonl").string()).status == ReplayOutcome::Status::identical);
  old_manifest("0123456789abcdef");
  const ReplayOutcome old_mixed = replay((b / "trace.jsonl").string());
  CHECK(old_mixed.status == ReplayOutcome::Status::bad_input);
  REQUIRE(old_mixed.errors.size() == 1);
  CHECK(old_mixed.errors.front().find("fnv1a64 0123456789abcdef") != std::string::npos);
  std::filesystem::remove_all(a);
  std::filesystem::remove_all(b);
}

TEST_CASE("rule: the random tie-break reorders a single node's events when two are pending at one instant", "[robustness]") {
  const std::string three = "scenario: x\nduration: 3s\ntree:\n  root: {strategy: one_for_one, intensity: 5, period: 5s}\n"
                            "  children: [{id: a, behaviour: idle}, {id: b, behaviour: idle}, {id: c, behaviour: idle}]\n"
                            "faults:\n  - {crash: /root/a, at: 1s}\n  - {crash: /root/b, at: 1s}\n  - {crash: /root/c, at: 1s}\n";
  const Scenario s = parse_ok(three);
  RunOptions fifo;
  fifo.tie_break = TieBreak::fifo;
  const std::uint64_t fifo_hash = run(s, fifo).trace_hash;
  std::set<std::uint64_t> random_hashes;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    RunOptions random;
    random.tie_break = TieBreak::random;
    random.seed = seed;
    random_hashes.insert(run(s, random).trace_hash);
  }
  CHECK(random_hashes.size() >= 3);  // the draws differ between seeds
  CHECK(random_hashes.size() > random_hashes.count(fifo_hash));  // and differ from fifo's order
  // With nothing pending together (one crash), random has no choice to make: fifo's trace.
  const Scenario one = parse_ok("scenario: x\nduration: 3s\n" + kTree + "faults:\n  - {crash: /root/a, at: 1s}\n");
  RunOptions random;
  random.tie_break = TieBreak::random;
  CHECK(run(one, random).trace_hash == run(one, fifo).trace_hash);
}

TEST_CASE("rule: a YAML tag on a value is refused, so a tagged empty value never passes for a name", "[robustness]") {
  // Found by the scenario fuzzer: `behaviour: !pipeline.validator` is an empty value tagged
  // !pipeline.validator; it validated, and the run then failed to build the tree.
  const std::string tree = "tree:\n  root: {strategy: one_for_one}\n  children: [{id: a, behaviour: !pipeline.validator}]\n";
  CHECK(errors_of("scenario: x\n" + tree) ==
        "t.yaml:4:33: behaviour has a YAML tag (!pipeline.validator), which scenario files do not use: write the value without it\n");
  CHECK(errors_of("scenario: !!str x\n" + kTree).find("scenario (its name) has a YAML tag (tag:yaml.org,2002:str)") != std::string::npos);
  CHECK(errors_of("scenario: x\ntree:\n  root: {strategy: one_for_one}\n  children: [{id: a, behaviour: ''}]\n")
            .find("behaviour must not be empty") != std::string::npos);
  CHECK(errors_of("scenario: 'quoted is fine'\n" + kTree).empty());
}

TEST_CASE("rule: a reason holding '..' is text, not a range, and writes back as it was read", "[robustness]") {
  // Found by the scenario fuzzer's third hour: {error: a..b} read, then its YAML did not read back.
  const Scenario s = parse_ok("scenario: x\nduration: 5s\n" + kTree + "faults:\n  - {crash: /root/a, at: 1s, reason: {error: a..b}}\n");
  const ParseResult back = parse_scenario(to_yaml(s), "back.yaml");
  for (const Diagnostic& d : back.errors) UNSCOPED_INFO(format_diagnostic("back.yaml", d));
  REQUIRE(back.ok());
  CHECK(back.scenario == s);
}

TEST_CASE("rule: a check with nothing to judge says not judged and does not fail the run (drained without SIGTERM, conservation with nothing accepted)", "[robustness]") {
  // Issue 34, item 8: a scenario whose stop is random could not use these checks; a correct
  // system failed 1 seed in 10,000 for want of a SIGTERM.
  const std::string ingest = "scenario: x\nduration: 2s\nnodes: [ingest]\ntrees:\n  - id: task\n    node: ingest\n"
                             "    supervisor: {strategy: one_for_one}\n    children:\n      - {id: disk, behaviour: ingest.disk}\n"
                             "      - {id: s3, behaviour: ingest.s3}\n      - {id: server, behaviour: ingest.server, args: {rate: 1}}\n";
  const RunResult r = run(parse_ok(ingest + "checks: [drained, conservation]\n"));
  REQUIRE(r.checks.size() == 2);
  CHECK(r.checks[0].passed);
  CHECK_FALSE(r.checks[0].judged);
  CHECK(r.checks[0].detail == "not judged: no task was sent SIGTERM (stop_task)");
  CHECK(r.passed);
  // Nothing emitted, nothing accepted: conservation is not judged either.
  const RunResult idle = run(parse_ok("scenario: x\nduration: 1s\n" + kTree + "checks: [conservation]\n"));
  REQUIRE(idle.checks.size() == 1);
  CHECK(idle.checks[0].passed);
  CHECK_FALSE(idle.checks[0].judged);
  CHECK(idle.checks[0].detail.rfind("not judged: nothing to conserve", 0) == 0);
  // With a SIGTERM, drained is judged again.
  const RunResult stopped = run(parse_ok(ingest + "script:\n  - {at: 1s, stop_task: ingest, grace: 30s}\nchecks: [drained]\n"));
  CHECK(stopped.checks[0].judged);
}

TEST_CASE("rule: a name a behaviour sends to that no process of the file registers is refused where it is written", "[robustness]") {
  const std::string server = R"(scenario: s
duration: 1s
tree:
  root: {strategy: one_for_one}
  children:
    - {id: disk, behaviour: ingest.disk}
    - {id: s3, behaviour: ingest.s3, args: {name: Store}}
    - {id: server, behaviour: ingest.server, args: {s3: Stor}}
)";
  const std::string errors = errors_of(server);
  CHECK(errors.find("8:57: ingest.server's `s3` names 'Stor', which no process of the file registers (did you mean 'Store'?)") !=
        std::string::npos);
  // Named right, it validates; a name `-` (none) is no name.
  CHECK(errors_of(std::string(server).replace(server.find("Stor}"), 5, "Store}")).empty());
  // A behaviour of one's own may register names it does not declare: with one in the file, the
  // rule is not applied (the name may well be registered at run time).
  Registry own = Registry::with_builtins();
  own.add(BehaviourInfo{"my.store", "registers whatever it likes", {}, [](Args&) -> BehaviourFactory {
                          return [](const std::string&) -> std::unique_ptr<Behaviour> { return nullptr; };
                        }});
  const std::string with_own = std::string(server).replace(server.find("ingest.s3, args: {name: Store}"), 30, "my.store");
  const ParseResult p = parse_scenario(with_own, "own.yaml", own);
  for (const Diagnostic& d : p.errors) UNSCOPED_INFO(format_diagnostic("own.yaml", d));
  CHECK(p.ok());
}
