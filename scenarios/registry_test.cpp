// The registry: what a user's own code adds is named by files, validated at its place, run and
// judged exactly as the built-in catalogue is (docs/library.md).

#include <catch2/catch.hpp>

#include <stdexcept>

#include "scenarios/file/read.hpp"
#include "scenarios/registry.hpp"
#include "scenarios/run/runner.hpp"

namespace {

using namespace lic;
using namespace lic::scenarios;

const Atom kBeat("beat");

/// A user's behaviour: traces `beat` every `every`.
class Beater final : public Behaviour {
 public:
  explicit Beater(Duration every) : every_(every) {}
  InitResult init(Context& ctx) override {
    ctx.send_after(every_, ctx.self(), kBeat);
    return InitResult::ok();
  }
  void handle_info(Context& ctx, const Message& m) override {
    if (m.tag != kBeat) return;
    ctx.emit(kBeat);
    ctx.send_after(every_, ctx.self(), kBeat);
  }

 private:
  Duration every_;
};

Registry user_registry() {
  Registry r = Registry::with_builtins();
  r.add(BehaviourInfo{"my.beater", "beats every `every`", {{"every", "duration", "1s", "the time between beats"}},
                      [](Args& a) -> BehaviourFactory {
                        const Duration every = a.positive("every");
                        return [every](const std::string&) { return std::make_unique<Beater>(every); };
                      }});
  r.add(CheckInfo{"my.beats", "at least `min` beats", {{"min", "int", "", "the fewest beats"}},
                  [](Args& a) -> CheckJudge {
                    const std::int64_t min = a.integer("min");
                    return [min](const CheckInput& in) {
                      std::int64_t n = 0;
                      for (const TraceEvent& e : *in.events) n += e.kind == EventKind::system && e.name == kBeat;
                      return Verdict{n >= min, std::to_string(n) + " beats"};
                    };
                  }});
  return r;
}

const char* const kFile = R"(scenario: beats
phases: {chaos: 10s}
tree:
  root: {strategy: one_for_one}
  children:
    - {id: b, behaviour: my.beater, args: {every: 1s}}
checks: [{my.beats: {min: 10}}, {my.beats: {min: 11}}]
)";

}  // namespace

TEST_CASE("registry: a user's behaviour and check are named by a file - run - and judged like the built-in ones", "[registry]") {
  const Registry reg = user_registry();
  const ParseResult p = parse_scenario(kFile, "beats.yaml", reg);
  for (const Diagnostic& d : p.errors) UNSCOPED_INFO(format_diagnostic("beats.yaml", d));
  REQUIRE(p.ok());
  RunOptions o;
  o.registry = &reg;
  const RunResult r = run(p.scenario, o);
  REQUIRE(r.checks.size() == 2);
  CHECK(r.checks[0].name == "my.beats");
  CHECK(r.checks[0].passed);  // beats at 1..10 s
  CHECK(r.checks[0].detail == "10 beats");
  CHECK_FALSE(r.checks[1].passed);
  CHECK_FALSE(r.passed);
}

TEST_CASE("registry: the built-in registry does not know a user's names - the file says so at their places", "[registry]") {
  const ParseResult p = parse_scenario(kFile, "beats.yaml");
  REQUIRE(p.errors.size() == 3);
  CHECK(format_diagnostic("beats.yaml", p.errors[0]).rfind("beats.yaml:6:26: unknown behaviour 'my.beater'", 0) == 0);
  CHECK(format_diagnostic("beats.yaml", p.errors[1]).rfind("beats.yaml:7:11: unknown check 'my.beats'", 0) == 0);
  CHECK(format_diagnostic("beats.yaml", p.errors[2]).rfind("beats.yaml:7:34: unknown check 'my.beats'", 0) == 0);
}

TEST_CASE("registry: a user's check arguments are validated like a behaviour's - missing - unknown - bad value", "[registry]") {
  const Registry reg = user_registry();
  const ParseResult p = parse_scenario(R"(scenario: x
tree:
  root: {strategy: one_for_one}
  children: [{id: b, behaviour: my.beater}]
checks: [my.beats, {my.beats: {mn: 3}}, {my.beats: {min: many}}]
)", "x.yaml", reg);
  std::vector<std::string> lines;
  for (const Diagnostic& d : p.errors) lines.push_back(format_diagnostic("x.yaml", d));
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "x.yaml:5:10: check 'my.beats' needs argument 'min' (int: the fewest beats)");
  CHECK(lines[1] == "x.yaml:5:21: check 'my.beats' needs argument 'min' (int: the fewest beats)");
  CHECK(lines[2] == "x.yaml:5:36: unknown argument 'mn' for check 'my.beats' (did you mean 'min'? it takes min)");
  CHECK(lines[3] == "x.yaml:5:58: argument 'min' of check 'my.beats': bad integer 'many'");
}

TEST_CASE("registry: add refuses a name taken - a name with a space - an argument of an unknown type or declared twice", "[registry]") {
  Registry r = Registry::with_builtins();
  const auto build = [](Args&) -> BehaviourFactory { return [](const std::string&) { return std::make_unique<Beater>(kSecond); }; };
  CHECK_THROWS_AS(r.add(BehaviourInfo{"idle", "again", {}, build}), std::invalid_argument);
  CHECK_THROWS_AS(r.add(BehaviourInfo{"my beater", "a space", {}, build}), std::invalid_argument);
  CHECK_THROWS_AS(r.add(BehaviourInfo{"my.a", "", {{"x", "colour", "", ""}}, build}), std::invalid_argument);
  CHECK_THROWS_AS(r.add(BehaviourInfo{"my.b", "", {{"x", "int", "1", ""}, {"x", "int", "2", ""}}, build}), std::invalid_argument);
  CHECK_THROWS_AS(r.add(CheckInfo{"converges", "again", {}, [](Args&) -> CheckJudge { return {}; }}), std::invalid_argument);
  CHECK_NOTHROW(r.add(BehaviourInfo{"my.c", "fine", {{"x", "path", "", "a path"}}, build}));
  CHECK(r.behaviour("my.c") != nullptr);
  CHECK(Registry::builtin().behaviour("my.c") == nullptr);  // the shared built-in registry is untouched
}

TEST_CASE("registry: the built-in catalogue is registered through Registry::add - the same as with_builtins", "[registry]") {
  const Registry& b = Registry::builtin();
  const Registry w = Registry::with_builtins();
  REQUIRE(b.behaviours().size() == w.behaviours().size());
  REQUIRE(b.checks().size() == w.checks().size());
  for (std::size_t i = 0; i < b.behaviours().size(); ++i) CHECK(b.behaviours()[i].name == w.behaviours()[i].name);
  CHECK(b.behaviour("pipeline.reader") != nullptr);
  CHECK(b.check("restarts") != nullptr);
}

TEST_CASE("registry: a build function or a judge that throws - and a factory that makes nothing - are mistakes reported - never an abort", "[registry]") {
  Registry r = Registry::with_builtins();
  r.add(BehaviourInfo{"my.throws", "", {}, [](Args&) -> BehaviourFactory { throw std::runtime_error("no config"); }});
  r.add(BehaviourInfo{"my.empty", "", {}, [](Args&) -> BehaviourFactory { return {}; }});
  r.add(BehaviourInfo{"my.null", "", {}, [](Args&) -> BehaviourFactory {
                        return [](const std::string&) { return std::unique_ptr<Behaviour>(); };
                      }});
  r.add(CheckInfo{"my.judge_throws", "", {}, [](Args&) -> CheckJudge {
                    return [](const CheckInput&) -> Verdict { throw std::runtime_error("judge broke"); };
                  }});
  const ParseResult bad = parse_scenario(R"(scenario: x
tree:
  root: {strategy: one_for_one}
  children: [{id: a, behaviour: my.throws}, {id: b, behaviour: my.empty}]
)", "x.yaml", r);
  REQUIRE(bad.errors.size() == 2);
  CHECK(format_diagnostic("x.yaml", bad.errors[0]) ==
        "x.yaml:4:33: behaviour 'my.throws' could not be built from its arguments: no config");
  CHECK(format_diagnostic("x.yaml", bad.errors[1]) == "x.yaml:4:64: behaviour 'my.empty': its build function returned no factory");

  const ParseResult ok = parse_scenario(R"(scenario: y
phases: {chaos: 1s}
tree:
  root: {strategy: one_for_one}
  children: [{id: a, behaviour: my.null}]
checks: [no_escalation, my.judge_throws]
)", "y.yaml", r);
  REQUIRE(ok.ok());
  RunOptions o;
  o.registry = &r;
  const RunResult run_ = run(ok.scenario, o);  // the null factory fails the root's start
  REQUIRE(run_.checks.size() == 2);
  CHECK_FALSE(run_.checks[0].passed);
  CHECK(run_.checks[0].detail.find("made no process") != std::string::npos);
  CHECK_FALSE(run_.checks[1].passed);
  CHECK(run_.checks[1].detail == "the check's judge failed: judge broke");
}

TEST_CASE("registry: add refuses a default that does not read as its type - and names the types when one is unknown", "[registry]") {
  Registry r;
  const auto build = [](Args&) -> BehaviourFactory { return [](const std::string&) { return std::make_unique<Beater>(kSecond); }; };
  try {
    r.add(BehaviourInfo{"my.a", "", {{"n", "int", "zero", "a count"}}, build});
    FAIL("accepted a default that is not an int");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()) == "behaviour 'my.a': the default of argument 'n' does not read: bad integer 'zero'");
  }
  try {
    r.add(BehaviourInfo{"my.b", "", {{"n", "integer", "1", "a count"}}, build});
    FAIL("accepted an unknown type");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("unknown type 'integer' (the types are duration, ratio, int, bool") != std::string::npos);
  }
}

TEST_CASE("no_escalation: a root whose own start failed is not a tree that held - the check names how it ended", "[registry]") {
  const ParseResult p = parse_scenario(R"(scenario: bootfail
phases: {chaos: 1s}
tree:
  root: {strategy: one_for_one}
  children: [{id: a, behaviour: idle, args: {init: error}}]
checks: [no_escalation]
)", "bootfail.yaml");
  REQUIRE(p.ok());
  const RunResult r = run(p.scenario);
  REQUIRE(r.checks.size() == 1);
  CHECK_FALSE(r.checks[0].passed);
  CHECK(r.checks[0].detail.find("/root is gone: it ended {shutdown,{failed_to_start_child,a,") == 0);
}

TEST_CASE("registry: a one-of argument (type \"a|b\") - read with Args::choice - another word refused at its value with did you mean", "[registry]") {
  Registry r = Registry::with_builtins();
  std::string seen;
  r.add(BehaviourInfo{"my.retrier", "retries or not", {{"retry", "immediate|backoff|never", "never", "how it retries"}},
                      [&seen](Args& a) -> BehaviourFactory {
                        seen = a.choice("retry");
                        return [](const std::string&) { return std::make_unique<Beater>(kSecond); };
                      }});
  const auto file = [](const std::string& args) {
    return "scenario: x\ntree:\n  root: {strategy: one_for_one}\n  children:\n    - {id: b, behaviour: my.retrier" + args + "}\n";
  };
  CHECK(parse_scenario(file(""), "f.yaml", r).errors.empty());
  CHECK(seen == "never");  // the default
  CHECK(parse_scenario(file(", args: {retry: backoff}"), "f.yaml", r).errors.empty());
  CHECK(seen == "backoff");
  const ParseResult bad = parse_scenario(file(", args: {retry: backof}"), "f.yaml", r);
  REQUIRE(bad.errors.size() == 1);
  CHECK(format_diagnostic("f.yaml", bad.errors[0]) ==
        "f.yaml:5:52: argument 'retry' of 'my.retrier': 'backof' is not one of immediate, backoff, never (did you mean 'backoff'?)");
  const ParseResult far = parse_scenario(file(", args: {retry: sometimes}"), "f.yaml", r);
  REQUIRE(far.errors.size() == 1);
  CHECK(far.errors[0].message == "argument 'retry' of 'my.retrier': 'sometimes' is not one of immediate, backoff, never");
  // The declaration itself: a default among the words, distinct words without spaces.
  const auto build = [](Args&) -> BehaviourFactory { return [](const std::string&) { return std::make_unique<Beater>(kSecond); }; };
  CHECK_THROWS_AS(r.add(BehaviourInfo{"my.c", "", {{"x", "a|b", "c", ""}}, build}), std::invalid_argument);
  CHECK_THROWS_AS(r.add(BehaviourInfo{"my.d", "", {{"x", "a|a", "a", ""}}, build}), std::invalid_argument);
  CHECK_THROWS_AS(r.add(BehaviourInfo{"my.e", "", {{"x", "a||b", "a", ""}}, build}), std::invalid_argument);
  CHECK_THROWS_AS(r.add(BehaviourInfo{"my.f", "", {{"x", "a b|c", "c", ""}}, build}), std::invalid_argument);
}
