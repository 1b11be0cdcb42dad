// The behaviour catalogue (issue 5): each stock behaviour under a real supervisor, with times
// read from the trace, and the mistakes a scenario file can make in a behaviour reference.

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "properties/availability.hpp"
#include "scenarios/registry.hpp"
#include "scenarios/run/runner.hpp"
#include "scenarios/file/read.hpp"
#include "scenarios/testing/support.hpp"
#include "sim/simulation.hpp"
#include "sim/test_support.hpp"
#include "supervision/stock_worker.hpp"
#include "supervision/supervisor.hpp"

using namespace lic;
using namespace lic::literals;
using namespace lic::scenarios;
using namespace lic::scenarios::testing;
using supervision::Shutdown;
using supervision::SupervisorSpec;

namespace {

Time at(Duration d) { return Time{} + d; }

/// A one_for_one root over `children` that never gives up in these tests.
SupervisorSpec root_of(std::vector<supervision::Child> children) {
  SupervisorSpec spec;
  spec.flags.intensity = 1'000'000;
  spec.flags.period = 1_s;
  spec.children = std::move(children);
  return spec;
}

/// Each incarnation of child `id`: when its supervisor reported it started, and its exit.
struct Life {
  Pid pid;
  Time started;
  Time ended = Time::max();
  Reason reason;
};

std::vector<Life> lives(const Simulation& sim, const char* id) {
  std::vector<Life> out;
  std::map<Pid, std::size_t> index;
  for (const TraceEvent& e : sim.trace().events()) {
    if (e.kind == EventKind::system && e.name == Atom("child_started") &&
        *field<Atom>(e, "id") == Atom(id)) {
      const Pid pid = *field<Pid>(e, "pid");
      index[pid] = out.size();
      out.push_back({pid, e.time, Time::max(), Reason{}});
    } else if (e.kind == EventKind::exit && index.count(e.pid) != 0) {
      out[index[e.pid]].ended = e.time;
      out[index[e.pid]].reason = e.reason;
    }
  }
  return out;
}

/// How a worker stopped when its supervisor asked.
struct Stopped {
  Time asked = Time::max();  ///< its supervisor's exit signal reached it
  Time ended = Time::max();
  std::optional<Reason> reason;
};

/// Starts `c` under a root supervisor, stops the root at 1 s and reads how the worker stopped.
Stopped stop_at_one_second(supervision::Child c) {
  Simulation sim;
  const std::string path = "/root/" + c.spec.id;
  const Pid root = spawn_root(sim, root_of({std::move(c)}));
  sim.run_until(at(1_s));
  const Pid worker = supervision::find_by_path(sim, path);
  REQUIRE(worker);
  sim.exit(root, Reason::shutdown());
  sim.run();
  Stopped out;
  for (const TraceEvent& e : sim.trace().events()) {
    if (e.kind == EventKind::exit_signal && e.pid == worker && out.asked == Time::max()) out.asked = e.time;
    if (e.kind == EventKind::exit && e.pid == worker) out.ended = e.time;
  }
  out.reason = lic::testing::exit_reason(sim.trace(), worker);
  return out;
}

std::vector<Diagnostic> errors_of(const BehaviourRef& r) {
  std::vector<Diagnostic> errors;
  const BehaviourFactory f = Registry::builtin().make_behaviour(r, errors);
  CHECK(static_cast<bool>(f) == errors.empty());
  return errors;
}

/// A value of each argument type that its reader accepts.
std::string sample(const std::string& type) {
  if (type == "duration") return "1s";
  if (type == "ratio") return "1%";
  if (type == "int") return "1";
  if (type == "reason") return "normal";
  if (type == "init results") return "ok";
  if (type == "bool") return "true";
  if (!choices_of(type).empty()) return choices_of(type).front();
  return "x";
}

}  // namespace

TEST_CASE("catalogue: sorted by name - every argument has a known type - fallbacks read back - required ones are accepted when given", "[catalogue]") {
  const std::vector<std::string> kTypes{"duration", "ratio", "int", "string", "reason", "init results", "bool", "list"};
  const std::vector<BehaviourInfo>& all = Registry::builtin().behaviours();
  REQUIRE(all.size() >= 12);
  for (std::size_t i = 1; i < all.size(); ++i) CHECK(all[i - 1].name < all[i].name);
  for (const BehaviourInfo& b : all) {
    INFO(b.name);
    CHECK(!b.help.empty());
    BehaviourRef with_required = ref(b.name);
    for (const ArgInfo& a : b.args) {
      INFO(a.name);
      CHECK((std::find(kTypes.begin(), kTypes.end(), a.type) != kTypes.end() || choices_of(a.type).size() >= 2));
      CHECK(!a.help.empty());
      if (a.fallback.empty()) with_required.args.push_back(arg(a.name, sample(a.type)));
    }
    CHECK(errors_of(with_required).empty());
  }
}

TEST_CASE("trap_exit: asked to stop it takes exactly shutdown_delay", "[catalogue]") {
  const Stopped s = stop_at_one_second(child("w", ref("trap_exit", {arg("shutdown_delay", "2s")})));
  CHECK(s.asked == at(1_s));
  CHECK(s.ended - s.asked == 2_s);
  CHECK(s.reason == Reason::shutdown());
}

TEST_CASE("stall: asked to stop it never does - its supervisor kills it after the shutdown timeout", "[catalogue]") {
  const Stopped s = stop_at_one_second(child("w", ref("stall"), Shutdown::after(3_s)));
  CHECK(s.asked == at(1_s));
  CHECK(s.ended - s.asked == 3_s);
  CHECK(s.reason == Reason::killed());
}

TEST_CASE("idle: asked to stop it stops at once", "[catalogue]") {
  const Stopped s = stop_at_one_second(child("w", ref("idle")));
  CHECK(s.asked == at(1_s));
  CHECK(s.ended == s.asked);
  CHECK(s.reason == Reason::shutdown());
}

TEST_CASE("init: start attempt k takes entry k of ok ok error ignore and the supervisor reports each outcome", "[catalogue]") {
  Simulation sim;
  spawn_root(sim, root_of({child("w", ref("crash_after", {arg("after", "1s"),
                                                          list_arg("init", {"ok", "ok", "error", "ignore"})}))}));
  sim.run_until(at(10_s));
  std::vector<std::string> outcomes;
  for (const TraceEvent& e : sim.trace().events()) {
    if (e.kind != EventKind::system) continue;
    const std::string name(e.name.text());
    if (name == "child_started" || name == "start_error" || name == "start_ignored") {
      outcomes.push_back(name + "@" + format_time(e.time));
    }
    if (name == "start_error") CHECK(*field<Atom>(e, "reason") == Atom("{error,init_failed}"));
    if (name == "start_ignored") CHECK(*field<std::int64_t>(e, "start") == 4);
  }
  // Start 3 fails and is retried at once (start 4), which is ignored: the child stays down.
  CHECK(outcomes == std::vector<std::string>{"child_started@0s", "child_started@1s", "start_error@2s",
                                             "start_ignored@2s"});
  CHECK(!supervision::find_by_path(sim, "/root/w"));
}

TEST_CASE("init: init_delay holds the supervisor's start - stop:Reason is the start error", "[catalogue]") {
  Simulation sim;
  spawn_root(sim, root_of({child("a", ref("idle", {arg("init_delay", "250ms")})),
                           child("b", ref("idle", {arg("init", "stop:{shutdown,maintenance}")}))}));
  sim.run();
  auto started = system_events(sim.trace(), "child_started");
  REQUIRE(!started.empty());
  CHECK(started[0]->time == at(250_ms));
  auto failed = system_events(sim.trace(), "start_error");
  REQUIRE(!failed.empty());
  CHECK(*field<Atom>(*failed[0], "reason") == Atom("{shutdown,maintenance}"));
}

TEST_CASE("crash_after: every incarnation crashes exactly `after` past its start with the reason", "[catalogue]") {
  Simulation sim;
  spawn_root(sim, root_of({child("w", ref("crash_after", {arg("after", "300ms"), arg("reason", "error:boom")}))}));
  sim.run_until(at(3_s));
  const std::vector<Life> l = lives(sim, "w");
  REQUIRE(l.size() == 11);  // starts at 0, 300ms, ..., 3s
  for (std::size_t i = 0; i + 1 < l.size(); ++i) {
    INFO(i);
    CHECK(l[i].started == at(300_ms * static_cast<std::int64_t>(i)));
    CHECK(l[i].ended - l[i].started == 300_ms);
    CHECK(l[i].reason == Reason::error(Atom("boom")));
  }
}

TEST_CASE("flaky: the mean time to crash over many incarnations is mtbf within 5 standard errors", "[catalogue]") {
  Simulation sim(SimOptions{.seed = 7});
  spawn_root(sim, root_of({child("w", ref("flaky", {arg("mtbf", "1s")}))}));
  sim.run_until(at(600_s));
  std::vector<Life> l = lives(sim, "w");
  l.pop_back();  // the last is still running
  const auto n = static_cast<double>(l.size());
  REQUIRE(n >= 400);
  double sum_s = 0;
  for (const Life& x : l) {
    CHECK(x.reason == Reason::error(Atom("crash")));
    sum_s += static_cast<double>((x.ended - x.started).ns) / 1e9;
  }
  // An exponential's standard deviation is its mean: the mean of n has standard error mtbf/sqrt(n).
  const double mean_s = sum_s / n;
  const double tolerance_s = 5.0 * 1.0 / std::sqrt(n);
  INFO("mean " << mean_s << " s over " << n << " incarnations, tolerance " << tolerance_s);
  CHECK(std::abs(mean_s - 1.0) <= tolerance_s);
  // The draws are the processes' own: two incarnations do not crash after the same time.
  CHECK(l[0].ended - l[0].started != l[1].ended - l[1].started);
}

TEST_CASE("flaky: the same seed gives the same crash times - another seed other ones", "[catalogue]") {
  auto crash_times = [](std::uint64_t seed) {
    Simulation sim(SimOptions{.seed = seed});
    spawn_root(sim, root_of({child("w", ref("flaky", {arg("mtbf", "200ms")}))}));
    sim.run_until(at(5_s));
    std::vector<Time> out;
    for (const Life& x : lives(sim, "w")) out.push_back(x.ended);
    return out;
  };
  CHECK(crash_times(3) == crash_times(3));
  CHECK(crash_times(3) != crash_times(4));
}

TEST_CASE("ticker: traces tick n every interval and ends normal after `ticks` - a transient child is not restarted", "[catalogue]") {
  Simulation sim;
  spawn_root(sim, root_of({child("t", ref("ticker", {arg("interval", "100ms"), arg("ticks", "3")}),
                                 Shutdown::after(5_s), supervision::RestartType::transient)}));
  sim.run_until(at(1_s));
  auto ticks = system_events(sim.trace(), "tick");
  REQUIRE(ticks.size() == 3);
  for (std::size_t i = 0; i < ticks.size(); ++i) {
    CHECK(ticks[i]->time == at(100_ms * static_cast<std::int64_t>(i + 1)));
    CHECK(*field<std::int64_t>(*ticks[i], "n") == static_cast<std::int64_t>(i + 1));
  }
  const std::vector<Life> l = lives(sim, "t");
  REQUIRE(l.size() == 1);
  CHECK(l[0].ended == at(300_ms));
  CHECK(l[0].reason == Reason::normal());
}

TEST_CASE("echo: answers a call with its own tag and payload - sends a message back to its sender", "[catalogue]") {
  Simulation sim;
  const Pid echo = sim.spawn(make(ref("echo"))(""));
  int replied = 0;
  int returned = 0;
  sim.spawn([&](Context& ctx) {
    const CallResult r = ctx.call(echo, Atom("ping"), 42);
    REQUIRE(r.ok());
    CHECK(r.reply->tag == Atom("ping"));
    replied = lic::testing::as_int(*r.reply);
    ctx.send(echo, Atom("hello"), 7);
    MessagePtr m = ctx.receive(1_s);
    REQUIRE(m);
    CHECK(m->tag == Atom("hello"));
    returned = lic::testing::as_int(*m);
  });
  sim.run();
  CHECK(replied == 42);
  CHECK(returned == 7);
}

// ---- mistakes -------------------------------------------------------------------------------

TEST_CASE("unknown behaviour: at the reference with the closest name or the list", "[catalogue][errors]") {
  auto one = [](const std::string& name) {
    std::vector<Diagnostic> e = errors_of(ref(name, {}, Mark{3, 7}));
    REQUIRE(e.size() == 1);
    CHECK(e[0].mark.line == 3);
    CHECK(e[0].mark.col == 7);
    return e[0].message;
  };
  CHECK(one("stal") == "unknown behaviour 'stal' (did you mean 'stall'?)");
  CHECK(one("flakey") == "unknown behaviour 'flakey' (did you mean 'flaky'?)");
  CHECK(one("reader") == "unknown behaviour 'reader' (did you mean 'pipeline.reader'?)");
  const std::string far = one("database");
  CHECK(far.starts_with("unknown behaviour 'database' (known: crash_after, echo, flaky, idle, "));
}

TEST_CASE("unknown argument: at the argument with a suggestion and the arguments the behaviour takes", "[catalogue][errors]") {
  std::vector<Diagnostic> e = errors_of(ref("trap_exit", {arg("shutdown_dealy", "1s", 4, 20)}, Mark{4, 5}));
  REQUIRE(e.size() == 1);
  CHECK(e[0].mark.line == 4);
  CHECK(e[0].mark.col == 20);
  CHECK(e[0].message == "unknown argument 'shutdown_dealy' for 'trap_exit' (did you mean 'shutdown_delay'? it "
                        "takes shutdown_delay, init, init_delay)");
  e = errors_of(ref("pipeline.sink", {arg("interval", "1s", 2, 2)}));
  REQUIRE(e.size() == 1);
  CHECK(e[0].message == "unknown argument 'interval' for 'pipeline.sink' (it takes name, batch, flush_every)");
  e = errors_of(ref("pipeline.sink", {arg("batch", "0", 3, 9)}));
  REQUIRE(e.size() == 1);
  CHECK(e[0].mark.line == 3);
  CHECK(e[0].mark.col == 9);
  CHECK(e[0].message.find("must be 1 or more") != std::string::npos);
}

TEST_CASE("bad values: the parser's message at the value - durations ratios ints reasons and init results", "[catalogue][errors]") {
  auto one = [](const BehaviourRef& r) {
    std::vector<Diagnostic> e = errors_of(r);
    REQUIRE(e.size() == 1);
    CHECK(e[0].mark.line == 9);
    return e[0].message;
  };
  CHECK(one(ref("crash_after", {arg("after", "5 parsecs", 9, 1)})) ==
        "argument 'after' of 'crash_after': bad duration '5 parsecs': unknown unit ' parsecs'; use ns, "
        "us, ms, s, m or h");
  CHECK(one(ref("pipeline.reader", {arg("negative", "150%", 9, 1)})) ==
        "argument 'negative' of 'pipeline.reader': ratio '150%' is more than 100%");
  CHECK(one(ref("ticker", {arg("ticks", "three", 9, 1)})) == "argument 'ticks' of 'ticker': bad integer 'three'");
  CHECK(one(ref("ticker", {arg("ticks", "-1", 9, 1)})) == "argument 'ticks' of 'ticker': must be 0 (for ever) or more");
  CHECK(one(ref("flaky", {arg("mtbf", "0", 9, 1)})) == "argument 'mtbf' of 'flaky': must be more than 0");
  CHECK(one(ref("crash_after", {arg("after", "1s"), arg("reason", "{oops", 9, 1)})).starts_with(
      "argument 'reason' of 'crash_after': bad exit reason '{oops' (write normal, shutdown, "));
  CHECK(one(ref("idle", {list_arg("init", {"ok", "maybe"}, 9, 1)})) ==
        "argument 'init' of 'idle': bad init result 'maybe' (write ok, ignore, error, error:What or stop:Reason)");
  CHECK(one(ref("idle", {list_arg("init", {}, 9, 1)})) ==
        "argument 'init' of 'idle': an empty list (give at least one result, e.g. [ok])");
  CHECK(one(ref("pipeline.reader", {arg("negative", "60%", 9, 1), arg("unparsable", "50%")})) ==
        "argument 'negative' of 'pipeline.reader': negative and unparsable add up to more than 100%");
}

TEST_CASE("values: reasons in Erlang form or as head:detail - init results as one value or a list", "[catalogue]") {
  for (const char* reason : {"normal", "shutdown", "kill", "{shutdown,x}", "shutdown:x", "{error,x}",
                             "error:x", "timeout"}) {
    INFO(reason);
    CHECK(errors_of(ref("crash_after", {arg("after", "1s"), arg("reason", reason)})).empty());
  }
  for (const char* init : {"ok", "ignore", "error", "error:bad_config", "stop:normal", "stop:{shutdown,x}"}) {
    INFO(init);
    CHECK(errors_of(ref("idle", {arg("init", init)})).empty());
  }
  CHECK(errors_of(ref("idle", {list_arg("init", {"ok", "error:x", "ignore"})})).empty());
}

TEST_CASE("wrong shape: a list where one value is expected is an error at the argument - a missing required argument one at the reference", "[catalogue][errors]") {
  std::vector<Diagnostic> e = errors_of(ref("crash_after", {list_arg("after", {"1s", "2s"}, 6, 12)}, Mark{6, 3}));
  REQUIRE(e.size() == 1);
  CHECK(e[0].mark.col == 12);
  CHECK(e[0].message == "argument 'after' of 'crash_after' takes one duration, not a list");
  e = errors_of(ref("crash_after", {}, Mark{6, 3}));
  REQUIRE(e.size() == 1);
  CHECK(e[0].mark.col == 3);
  CHECK(e[0].message == "'crash_after' needs argument 'after' (duration: how long after init it crashes)");
  e = errors_of(ref("idle", {arg("init", "ok", 1, 1), arg("init", "error", 2, 1)}));
  REQUIRE(e.size() == 1);
  CHECK(e[0].mark.line == 2);
  CHECK(e[0].message == "argument 'init' of 'idle' is given twice");
}

TEST_CASE("several mistakes in one reference are all reported each at its own mark", "[catalogue][errors]") {
  std::vector<Diagnostic> e = errors_of(ref("flaky",
                                            {list_arg("mtbf", {"1s", "2s"}, 1, 10), arg("reason", "{oops", 2, 10),
                                             arg("bogus", "1", 3, 10), list_arg("init", {"ok", "maybe"}, 4, 10),
                                             arg("init_delay", "soon", 5, 10)},
                                            Mark{1, 3}));
  REQUIRE(e.size() == 5);
  std::vector<int> lines;
  for (const Diagnostic& d : e) lines.push_back(d.mark.line);
  // Unknown names first, then each argument as the behaviour reads it.
  CHECK(lines == std::vector<int>{3, 4, 5, 1, 2});
}

TEST_CASE("availability of a lifecycle service: up while its service_state is running - the check and the timeline read the same intervals", "[catalogue]") {
  // The catalogue's lifecycle file: db fails three starts (backoff), then runs to the end; api
  // runs once db and cache do, crashes at 20 s (the script) and runs again after its backoff.
  lic::scenarios::ParseResult p = lic::scenarios::load_scenario(LIC_SOURCE_DIR "/scenarios/catalog/lifecycle.yaml");
  REQUIRE(p.ok());
  p.scenario.checks = {lic::scenarios::CheckDecl{"availability"}.with("of", "/root/db").with("min", "50%"),
                       lic::scenarios::CheckDecl{"availability"}.with("of", "/root/api").with("min", "50%")};
  const lic::scenarios::RunResult r = lic::scenarios::run(p.scenario);
  const lic::EventLog& log = r.sim->trace().events();
  // When each went to running, as the lifecycle supervisor reported it.
  std::map<std::string, std::vector<lic::Time>> running;
  for (const lic::HeldEvent& e : lic::scenarios::testing::system_events(r.sim->trace(), "service_state")) {
    const auto* to = lic::scenarios::testing::field<lic::Atom>(*e, "to");
    const auto* id = lic::scenarios::testing::field<lic::Atom>(*e, "id");
    if (to != nullptr && id != nullptr && *to == lic::Atom("running")) running["/root/" + std::string(id->text())].push_back(e->time);
  }
  REQUIRE(running["/root/db"].size() == 1U);
  REQUIRE(running["/root/api"].size() == 2U);
  const lic::Time end = r.end;
  CHECK(lic::properties::names_service(log, "/root/db"));
  CHECK_FALSE(lic::properties::names_service(log, "/root"));
  const lic::properties::Intervals db = lic::properties::subtree_up_intervals(log, "/root/db", lic::Time{}, end);
  CHECK(db == lic::properties::Intervals{{running["/root/db"][0], end}});
  const lic::properties::Intervals api = lic::properties::service_up_intervals(log, "/root/api", lic::Time{}, end);
  CHECK(api == lic::properties::Intervals{{running["/root/api"][0], lic::Time{} + lic::kSecond * 20}, {running["/root/api"][1], end}});
  // The check reads them (it said 0% before services were read), and passes at 50%.
  REQUIRE(r.checks.size() == 2U);
  for (const lic::scenarios::CheckResult& c : r.checks) {
    INFO(c.name << ": " << c.detail);
    CHECK(c.passed);
  }
  CHECK_THAT(r.checks[1].detail, Catch::Matchers::Contains("1 failure,"));
}
