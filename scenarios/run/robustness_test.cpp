// Hostile input and the harness's own limits (issue 18, docs/robustness.md): each test is named
// after the rule it pins. Bad input is a diagnostic at its place, a runaway run ends with a
// budget error, never an abort or a hang.

#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "scenarios/file/read.hpp"
#include "scenarios/run/replay.hpp"
#include "scenarios/run/runner.hpp"
#include "sim/simulation.hpp"

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
  CHECK(errors_of("scenario: x\n" + kTree + "---\nscenario: y\n" + kTree).find("t.yaml:6:1: a scenario file holds one YAML document") !=
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
  const auto labelled = [](const char* path) {
    SpawnOptions o;
    o.label = Label{Atom(path), 1};
    return o;
  };
  // Two processes that answer each other at once: every message is a kernel event at t=0.
  const Pid a = sim.spawn([&](Context& ctx) {
    for (;;) ctx.send(ctx.receive()->from, ping);
  }, labelled("/root/ponger"));
  sim.spawn([&, a](Context& ctx) {
    for (ctx.send(a, ping);; ctx.send(a, ping)) (void)ctx.receive();
  }, labelled("/root/pinger"));
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

TEST_CASE("rule: a run over --max-events or --max-memory ends with a budget error saying where", "[robustness]") {
  const Scenario s = parse_ok("scenario: x\nduration: 1h\n" + kTree + "faults:\n  - {crash: /root/a, at: 1ms, every: 1ms}\n");
  RunOptions o;
  o.budgets.max_events = 20'000;
  CHECK_THROWS_WITH(run(s, o), Catch::StartsWith("budget exceeded: 20000 events (--max-events) at t="));
  o.budgets = Budgets{};
  o.budgets.max_memory_bytes = 1 << 20;
  CHECK_THROWS_WITH(run(s, o), Catch::Contains("over 1 MiB (--max-memory)"));
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
