// The lifecycle supervisor of seed 003, read back from the trace: the backoff table on a real
// run, the stable-threshold reset, max_attempts, terminal errors, start and stop timeouts,
// depends_on order for a diamond, a cycle, the state diagram, determinism, management calls.

#include <catch2/catch.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/held_event.hpp"
#include "sim/simulation.hpp"
#include "supervision/lifecycle.hpp"

using namespace lic;
using namespace lic::literals;
using namespace lic::supervision;

namespace {

Time at(Duration d) { return Time{0} + d; }

/// What one start of a test service does.
struct Script {
  Duration init_delay{};             ///< init sleeps this long before it acknowledges
  std::optional<Reason> init_error;  ///< init returns stop(this)
  bool init_ignore = false;
  std::optional<Duration> crash_after;  ///< once running, exits with crash_reason after this
  Reason crash_reason = Reason::error(Atom("boom"));
  bool trap = false;
  Duration stop_delay{};  ///< terminate sleeps this long (a trapping service stopping slowly)
};

struct Svc : Behaviour {
  Script script;
  InitResult init(Context& ctx) override {
    if (script.trap) ctx.trap_exit(true);
    if (script.init_delay > Duration::zero()) ctx.sleep(script.init_delay);
    if (script.init_error) return InitResult::stop(*script.init_error);
    if (script.init_ignore) return InitResult::ignore();
    if (script.crash_after) ctx.send_after(*script.crash_after, ctx.self(), Atom("crash"));
    return InitResult::ok();
  }
  void handle_info(Context& ctx, const Message& m) override {
    if (m.tag == Atom("crash")) ctx.exit(script.crash_reason);
  }
  void terminate(Context& ctx, const Reason&) override {
    if (script.stop_delay > Duration::zero()) ctx.sleep(script.stop_delay);
  }
};

/// A service whose n-th start (from 1) follows script(n); auto_start on, unlike the default.
ServiceSpec service(const std::string& name, std::function<Script(int)> script,
                    std::vector<std::string> deps = {}) {
  ServiceSpec s;
  s.name = name;
  s.auto_start = true;
  s.depends_on = std::move(deps);
  auto count = std::make_shared<int>(0);
  s.start.behaviour = [script = std::move(script), count] {
    auto b = std::make_unique<Svc>();
    b->script = script(++*count);
    return b;
  };
  return s;
}

ServiceSpec service(const std::string& name, Script script, std::vector<std::string> deps = {}) {
  return service(name, [script](int) { return script; }, std::move(deps));
}

Pid start_lifecycle(Simulation& sim, LifecycleSpec spec) {
  SpawnOptions o;
  o.label = Label{Atom("/app"), 1};
  return sim.spawn(std::make_unique<LifecycleSupervisor>(std::move(spec)), o);
}

const FieldValue* field(const TraceEvent& e, const char* key) {
  for (const TraceField& f : e.fields()) {
    if (f.key == Atom(key)) return &f.value;
  }
  return nullptr;
}

std::string text(const TraceEvent& e, const char* key) {
  const FieldValue* v = field(e, key);
  return v != nullptr && std::holds_alternative<Atom>(*v) ? std::string(std::get<Atom>(*v).text()) : "";
}

std::int64_t number(const TraceEvent& e, const char* key) {
  const FieldValue* v = field(e, key);
  return v != nullptr && std::holds_alternative<std::int64_t>(*v) ? std::get<std::int64_t>(*v) : -1;
}

/// System events named `name` (about service `id` if given), in trace order.
std::vector<HeldEvent> events(const Simulation& sim, const char* name, const std::string& id = "") {
  std::vector<HeldEvent> out;
  for (const TraceEvent& e : sim.trace().events()) {
    if (e.kind == EventKind::system && e.name == Atom(name) && (id.empty() || text(e, "id") == id)) {
      out.push_back({e});
    }
  }
  return out;
}

/// One service_state event.
struct Change {
  Time time;
  std::uint64_t seq = 0;
  std::string from;
  std::string to;
  std::string reason;
  std::int64_t attempt = 0;
};

std::vector<Change> changes(const Simulation& sim, const std::string& id) {
  std::vector<Change> out;
  for (const HeldEvent& e : events(sim, "service_state", id)) {
    out.push_back({e->time, e->seq, text(*e, "from"), text(*e, "to"), text(*e, "reason"),
                   number(*e, "attempt")});
  }
  return out;
}

/// "from>to" for each change, to compare a whole life at once.
std::vector<std::string> path(const std::vector<Change>& cs) {
  std::vector<std::string> out;
  for (const Change& c : cs) out.push_back(c.from + ">" + c.to);
  return out;
}

/// The first change of `id` into `to` at or after `after`; fails the test if there is none.
Change first_to(const Simulation& sim, const std::string& id, const std::string& to,
                Time after = Time{0}) {
  for (const Change& c : changes(sim, id)) {
    if (c.to == to && c.time >= after) return c;
  }
  FAIL("no change of " << id << " to " << to);
  return {};
}

/// The gaps between entering Failed and leaving it for Starting: the retry delays as run.
std::vector<Duration> retry_gaps(const std::vector<Change>& cs) {
  std::vector<Duration> out;
  std::optional<Time> failed_at;
  for (const Change& c : cs) {
    if (c.to == "failed") failed_at = c.time;
    if (c.from == "failed" && c.to == "starting" && failed_at) out.push_back(c.time - *failed_at);
  }
  return out;
}

std::optional<Reason> exit_reason(const Simulation& sim, Pid pid) {
  for (const TraceEvent& e : sim.trace().events()) {
    if (e.kind == EventKind::exit && e.pid == pid) return e.reason;
  }
  return std::nullopt;
}

const ServiceInfo* info(const std::vector<ServiceInfo>& all, const std::string& name) {
  for (const ServiceInfo& s : all) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("lifecycle: a service's defaults are the seed's - auto_start false - 10 s start and stop timeouts - 5 s stable - backoff 1 s doubling to 90 s +/-10 % for ever", "[supervision][lifecycle]") {
  const ServiceSpec s;
  CHECK_FALSE(s.auto_start);
  CHECK(s.start_timeout == 10_s);
  CHECK(s.stop_timeout == 10_s);
  CHECK(s.stable_threshold == 5_s);
  CHECK(s.depends_on.empty());
  CHECK(s.restart.initial_delay == 1_s);
  CHECK(s.restart.max_delay == 90_s);
  CHECK(s.restart.factor == Ratio{2, 1});
  CHECK(s.restart.jitter == Ratio{1, 10});
  CHECK(s.restart.max_attempts == 0);
  CHECK(s.terminal.matches(Reason::shutdown()));  // a cancelled context
  CHECK(s.terminal.matches(Reason::normal()));    // an explicit request to end
  CHECK_FALSE(s.terminal.matches(Reason::error(Atom("boom"))));
  CHECK_FALSE(s.terminal.matches(Reason::killed()));
}

TEST_CASE("lifecycle: the state diagram allows exactly the seed's seven transitions", "[supervision][lifecycle]") {
  using S = ServiceState;
  const std::set<std::pair<S, S>> seed{{S::inactive, S::starting}, {S::starting, S::running},
                                       {S::running, S::stopping},  {S::stopping, S::stopped},
                                       {S::running, S::failed},    {S::starting, S::failed},
                                       {S::failed, S::starting}};
  const S all[] = {S::inactive, S::starting, S::running, S::stopping, S::stopped, S::failed};
  for (S from : all) {
    for (S to : all) {
      INFO(to_string(from) << " -> " << to_string(to));
      CHECK(allowed_transition(from, to) == (seed.count({from, to}) == 1));
    }
  }
}

TEST_CASE("lifecycle: retry delays on a real run follow the seed's table - 1 s - 2 s - 4 s - 8 s ... capped at 90 s - each within +/-10 %", "[supervision][lifecycle]") {
  Simulation sim(SimOptions{.seed = 7});
  Script fails;
  fails.init_error = Reason::error(Atom("db_down"));
  start_lifecycle(sim, {{service("flaky", fails)}});
  sim.run_until(at(900_s));
  const std::vector<Duration> gaps = retry_gaps(changes(sim, "flaky"));
  REQUIRE(gaps.size() >= 12);  // 1+2+...+64 = 127 s, then about 90 s each
  const auto retries = events(sim, "service_retry", "flaky");
  REQUIRE(retries.size() >= gaps.size());
  bool jittered = false;
  for (std::size_t k = 0; k < gaps.size(); ++k) {
    const std::int64_t attempt = static_cast<std::int64_t>(k) + 1;
    const Duration base = attempt >= 8 ? 90_s : 1_s * (std::int64_t{1} << (attempt - 1));
    INFO("attempt " << attempt << " waited " << format_duration(gaps[k]));
    CHECK(gaps[k] >= base - base / 10);
    CHECK(gaps[k] <= base + base / 10);
    if (attempt >= 8) {  // the seed's last row
      CHECK(gaps[k] >= 81_s);
      CHECK(gaps[k] <= 99_s);
    }
    // The trace's own account of the delay is the one the run took.
    CHECK(number(*retries[k], "attempt") == attempt);
    CHECK(std::get<Duration>(*field(*retries[k], "delay")) == gaps[k]);
    if (gaps[k] != base) jittered = true;
  }
  CHECK(jittered);
}

TEST_CASE("lifecycle: the attempt counter resets once a service ran longer than stable_threshold - exactly the threshold does not", "[supervision][lifecycle]") {
  Simulation sim;
  // Runs of 1 s, 1 s, exactly 5 s, 6 s, 1 s, then an init error marked terminal.
  const Duration runs[] = {1_s, 1_s, 5_s, 6_s, 1_s};
  ServiceSpec s = service("worker", [runs](int n) {
    Script sc;
    if (n <= 5) {
      sc.crash_after = runs[n - 1];
    } else {
      sc.init_error = Reason::error(Atom("give_up"));
    }
    return sc;
  });
  s.terminal.reasons = {Reason::error(Atom("give_up"))};
  start_lifecycle(sim, {{s}});
  sim.run();
  std::vector<std::int64_t> attempts;
  for (const HeldEvent& e : events(sim, "service_retry", "worker")) attempts.push_back(number(*e, "attempt"));
  CHECK(attempts == std::vector<std::int64_t>{1, 2, 3, 1, 2});
  const std::vector<Duration> gaps = retry_gaps(changes(sim, "worker"));
  REQUIRE(gaps.size() == 5);
  CHECK(gaps[2] >= 3600_ms);  // attempt 3: 4 s +/-10 %
  CHECK(gaps[3] <= 1100_ms);  // after the 6 s run: attempt 1 again
  const auto gave_up = events(sim, "service_gave_up", "worker");
  REQUIRE(gave_up.size() == 1);
  CHECK(text(*gave_up[0], "why") == "terminal_error");
}

TEST_CASE("lifecycle: max_attempts exhausted leaves the service Failed with no more retries", "[supervision][lifecycle]") {
  Simulation sim;
  Script fails;
  fails.init_error = Reason::error(Atom("db_down"));
  ServiceSpec s = service("flaky", fails);
  s.restart.max_attempts = 3;
  const Pid sup = start_lifecycle(sim, {{s}});
  sim.run();  // ends: nothing is left to retry
  const std::vector<Change> cs = changes(sim, "flaky");
  std::size_t starts = 0;
  for (const Change& c : cs) starts += c.to == "starting" ? 1 : 0;
  CHECK(starts == 4);  // the first start and three retries
  CHECK(events(sim, "service_retry", "flaky").size() == 3);
  const auto gave_up = events(sim, "service_gave_up", "flaky");
  REQUIRE(gave_up.size() == 1);
  CHECK(text(*gave_up[0], "why") == "max_attempts");
  CHECK(number(*gave_up[0], "attempt") == 4);
  const auto snap = lifecycle_snapshot(sim);
  REQUIRE(snap.size() == 1);
  CHECK(snap[0].pid == sup);
  REQUIRE(snap[0].services.size() == 1);
  CHECK(snap[0].services[0].state == ServiceState::failed);
  CHECK_FALSE(snap[0].services[0].pid);
  CHECK(sim.process_count() == 1);  // the supervisor alone
}

TEST_CASE("lifecycle: a terminal error stops retrying - a marked error - a clean exit - an ignore - while another error is retried", "[supervision][lifecycle]") {
  Simulation sim;
  Script bad;
  bad.init_error = Reason::error(Atom("bad_config"));
  ServiceSpec bad_config = service("bad_config", bad);
  bad_config.terminal.reasons = {Reason::error(Atom("bad_config"))};
  Script done;
  done.crash_after = 2_s;
  done.crash_reason = Reason::normal();  // it ended on purpose
  Script ignores;
  ignores.init_ignore = true;
  Script boom;
  boom.init_error = Reason::error(Atom("boom"));
  ServiceSpec crasher = service("crasher", boom);
  crasher.restart.max_attempts = 1;
  start_lifecycle(sim, {{bad_config, service("finisher", done), service("ignorer", ignores), crasher}});
  sim.run();
  for (const char* id : {"bad_config", "finisher", "ignorer"}) {
    INFO(id);
    CHECK(events(sim, "service_retry", id).empty());
    const auto gave_up = events(sim, "service_gave_up", id);
    REQUIRE(gave_up.size() == 1);
    CHECK(text(*gave_up[0], "why") == "terminal_error");
    CHECK(changes(sim, id).back().to == "failed");
  }
  CHECK(changes(sim, "finisher").back().from == "running");
  CHECK(changes(sim, "finisher").back().reason == "normal");
  CHECK(events(sim, "service_retry", "crasher").size() == 1);
  CHECK(text(*events(sim, "service_gave_up", "crasher").at(0), "why") == "max_attempts");
}

TEST_CASE("lifecycle: a start that does not ack within start_timeout is killed and counts as a failure", "[supervision][lifecycle]") {
  Simulation sim;
  Script slow;
  slow.init_delay = 1_h;
  ServiceSpec s = service("slow", slow);
  s.start_timeout = 2_s;
  s.restart.max_attempts = 1;
  start_lifecycle(sim, {{s}});
  sim.run();
  const std::vector<Change> cs = changes(sim, "slow");
  CHECK(path(cs) == std::vector<std::string>{"none>inactive", "inactive>starting", "starting>failed",
                                             "failed>starting", "starting>failed"});
  REQUIRE(cs.size() == 5);
  CHECK(cs[2].time == at(2_s));
  CHECK(cs[2].reason == "start_timeout");
  CHECK(cs[3].time >= at(2900_ms));  // the first retry: 1 s +/-10 % after the failure
  CHECK(cs[3].time <= at(3100_ms));
  CHECK(cs[4].time == cs[3].time + 2_s);
  const auto kills = events(sim, "service_kill", "slow");
  REQUIRE(kills.size() == 2);
  CHECK(text(*kills[0], "reason") == "start_timeout");
  CHECK(kills[0]->time == at(2_s));
  const Pid first = std::get<Pid>(*field(*kills[0], "pid"));
  CHECK(exit_reason(sim, first) == Reason::killed());
  CHECK(text(*events(sim, "service_gave_up", "slow").at(0), "why") == "max_attempts");
}

TEST_CASE("lifecycle: stop_service sends shutdown - a service that does not stop within stop_timeout is killed", "[supervision][lifecycle]") {
  Simulation sim;
  Script stalls;
  stalls.trap = true;
  stalls.stop_delay = 1_h;
  Script polite;
  polite.trap = true;
  polite.stop_delay = 500_ms;
  ServiceSpec a = service("stalls", stalls);
  a.stop_timeout = 3_s;
  ServiceSpec b = service("polite", polite);
  b.stop_timeout = 3_s;
  const Pid sup = start_lifecycle(sim, {{a, b}});
  ServiceReply r1;
  ServiceReply r2;
  sim.spawn([&](Context& ctx) {
    ctx.sleep(1_s);
    r1 = stop_service(ctx, sup, "stalls");
    r2 = stop_service(ctx, sup, "polite");
  });
  sim.run();
  CHECK(r1.ok);
  CHECK(r2.ok);
  const std::vector<Change> s = changes(sim, "stalls");
  REQUIRE(s.size() == 5);
  CHECK(path(s).back() == "stopping>stopped");
  CHECK(s[3].time == at(1_s));
  CHECK(s[4].time == at(4_s));  // stop_timeout, then kill
  CHECK(s[4].reason == "killed");
  const auto kills = events(sim, "service_kill", "stalls");
  REQUIRE(kills.size() == 1);
  CHECK(text(*kills[0], "reason") == "stop_timeout");
  const std::vector<Change> p = changes(sim, "polite");
  REQUIRE(p.size() == 5);
  CHECK(p[4].time == at(1500_ms));
  CHECK(p[4].reason == "shutdown");
  CHECK(events(sim, "service_kill", "polite").empty());
  CHECK(sim.process_count() == 1);
}

TEST_CASE("lifecycle: depends_on diamond - A first - B and C together at the same instant - then D - stop in reverse", "[supervision][lifecycle]") {
  Simulation sim;
  Script sc;
  sc.init_delay = 1_s;
  sc.trap = true;
  sc.stop_delay = 1_s;
  // Declared top first: the order comes from depends_on, not from the list.
  const Pid sup = start_lifecycle(sim, {{service("D", sc, {"B", "C"}), service("C", sc, {"A"}),
                                         service("B", sc, {"A"}), service("A", sc)}});
  sim.run_until(at(10_s));
  auto when = [&](const char* id, const char* to) { return first_to(sim, id, to).time; };
  CHECK(when("A", "starting") == at(0_s));
  CHECK(when("A", "running") == at(1_s));
  CHECK(when("B", "starting") == at(1_s));
  CHECK(when("C", "starting") == at(1_s));
  CHECK(when("B", "running") == at(2_s));
  CHECK(when("C", "running") == at(2_s));
  CHECK(when("D", "starting") == at(2_s));
  CHECK(when("D", "running") == at(3_s));
  // D started after both B and C were Running, in trace order too.
  CHECK(first_to(sim, "D", "starting").seq > first_to(sim, "C", "running").seq);
  CHECK(first_to(sim, "D", "starting").seq > first_to(sim, "B", "running").seq);

  sim.exit(sup, Reason::shutdown());  // as a parent stops it: terminate stops every service
  sim.run();
  CHECK(when("D", "stopping") == at(10_s));
  CHECK(when("D", "stopped") == at(11_s));
  CHECK(when("B", "stopping") == at(11_s));
  CHECK(when("C", "stopping") == at(11_s));
  CHECK(when("B", "stopped") == at(12_s));
  CHECK(when("C", "stopped") == at(12_s));
  CHECK(when("A", "stopping") == at(12_s));
  CHECK(when("A", "stopped") == at(13_s));
  CHECK_FALSE(sim.alive(sup));
  CHECK(exit_reason(sim, sup) == Reason::shutdown());
  CHECK(sim.process_count() == 0);
}

TEST_CASE("lifecycle: a dependency cycle is a clear error at init naming the cycle - never a hang", "[supervision][lifecycle]") {
  Simulation sim;
  Script sc;
  const Pid sup = start_lifecycle(sim, {{service("a", sc, {"c"}), service("b", sc, {"a"}),
                                         service("c", sc, {"b"}), service("d", sc, {"a"})}});
  sim.run();  // returns: nothing waits
  CHECK_FALSE(sim.alive(sup));
  CHECK(exit_reason(sim, sup) == Reason::error(Atom("{dependency_cycle,[a,c,b,a]}")));
  std::size_t spawns = 0;
  for (const TraceEvent& e : sim.trace().events()) spawns += e.kind == EventKind::spawn ? 1 : 0;
  CHECK(spawns == 1);  // the supervisor; no service started
  const auto err = events(sim, "lifecycle_spec_error");
  REQUIRE(err.size() == 1);
  CHECK(std::get<std::string>(*field(*err[0], "message")) == "dependency cycle: a -> c -> b -> a");
  // The other unusable specs, from the pure plan.
  CHECK(plan_lifecycle({{service("a", sc, {"a"})}}).message == "dependency cycle: a -> a");
  const LifecyclePlan unknown = plan_lifecycle({{service("web", sc, {"db"})}});
  CHECK(unknown.error == Reason::error(Atom("{unknown_dependency,web,db}")));
  CHECK(plan_lifecycle({{service("x", sc), service("x", sc)}}).message == "duplicate service name: x");
  CHECK(plan_lifecycle({{service("ok", sc)}}).ok());
}

TEST_CASE("lifecycle: every state change is a trace event - a crash - a retry - a stop read back as one life in the seed's diagram", "[supervision][lifecycle]") {
  Simulation sim;
  ServiceSpec w = service("w", [](int n) {
    Script sc;
    if (n == 1) sc.crash_after = 2_s;
    return sc;
  });
  const Pid sup = start_lifecycle(sim, {{w}});
  sim.spawn([&](Context& ctx) {
    ctx.sleep(20_s);
    stop_service(ctx, sup, "w");
  });
  sim.run();
  const std::vector<Change> cs = changes(sim, "w");
  CHECK(path(cs) == std::vector<std::string>{"none>inactive", "inactive>starting", "starting>running",
                                             "running>failed", "failed>starting", "starting>running",
                                             "running>stopping", "stopping>stopped"});
  REQUIRE(cs.size() == 8);
  CHECK(cs[3].time == at(2_s));
  CHECK(cs[3].reason == "{error,boom}");
  CHECK(cs[3].attempt == 1);
  CHECK(cs[7].time == at(20_s));
  const std::set<std::string> seed{"none>inactive",  "inactive>starting", "starting>running",
                                   "running>stopping", "stopping>stopped", "running>failed",
                                   "starting>failed",  "failed>starting"};
  for (const HeldEvent& e : events(sim, "service_state")) {
    CHECK(seed.count(text(*e, "from") + ">" + text(*e, "to")) == 1);
  }
  // The service's processes carry its tree path and start count.
  const auto retried = events(sim, "service_state", "w").at(4);  // failed>starting
  const Pid second = std::get<Pid>(*field(*retried, "pid"));
  std::optional<TraceEvent> spawn;
  for (const TraceEvent& e : sim.trace().events()) {
    if (e.kind == EventKind::spawn && e.pid == second) spawn = e;
  }
  REQUIRE(spawn.has_value());
  CHECK(spawn->label.name == Atom("/app/w"));
  CHECK(spawn->label.instance == 2);
}

TEST_CASE("lifecycle: a failed dependency leaves its running dependents alone - a dependent due to retry waits until it is Running again", "[supervision][lifecycle]") {
  Simulation sim;
  Script sc;
  ServiceSpec a = service("A", sc);
  a.restart.initial_delay = 10_s;  // A stays Failed from 5 s to about 15 s
  const Pid sup = start_lifecycle(sim, {{a, service("B", sc, {"A"})}});
  sim.run_until(at(5_s));
  auto pid_of = [&](const char* id) {
    for (const LifecycleSnapshot& s : lifecycle_snapshot(sim)) {
      if (const ServiceInfo* i = info(s.services, id)) return i->pid;
    }
    return Pid{};
  };
  const Pid b = pid_of("B");
  REQUIRE(b);
  sim.exit(pid_of("A"), Reason::kill());
  sim.run_until(at(6_s));
  CHECK(pid_of("B") == b);  // no cascade
  CHECK(changes(sim, "B").back().to == "running");
  sim.exit(b, Reason::kill());  // B's retry is due at about 7 s, A is not back before 14 s
  sim.run_until(at(30_s));
  const auto waiting = events(sim, "service_waiting", "B");  // at boot, then for the retry
  REQUIRE(waiting.size() == 2);
  CHECK(waiting[1]->time >= at(6_s));
  CHECK(text(*waiting[1], "on") == "A");
  const Change a_back = first_to(sim, "A", "running", at(6_s));
  const Change b_back = first_to(sim, "B", "starting", at(6_s));
  CHECK(a_back.time >= at(14_s));
  CHECK(b_back.time == a_back.time);
  CHECK(b_back.seq > a_back.seq);
  CHECK(sim.alive(sup));
}

TEST_CASE("lifecycle: management calls - start_service starts what it needs - stop_service stops dependents first - which_services and the snapshot agree", "[supervision][lifecycle]") {
  Simulation sim;
  Script sc;
  ServiceSpec db = service("db", sc);
  db.auto_start = false;
  ServiceSpec cache = service("cache", sc, {"db"});
  cache.auto_start = false;
  ServiceSpec solo;  // a free-form process, not auto-started (the default)
  solo.name = "solo";
  solo.start.body = [](Context& ctx) { ctx.receive(); };
  const Pid sup = start_lifecycle(sim, {{db, cache, service("api", sc, {"cache"}), solo}});
  std::vector<ServiceInfo> before;
  std::vector<ServiceInfo> running;
  std::vector<ServiceInfo> after_stop;
  ServiceReply started;
  ServiceReply again;
  ServiceReply missing;
  ServiceReply solo_started;
  ServiceReply stopped;
  ServiceReply restarted;
  sim.spawn([&](Context& ctx) {
    ctx.sleep(1_s);
    before = which_services(ctx, sup);
    started = start_service(ctx, sup, "api");
    solo_started = start_service(ctx, sup, "solo");
    ctx.sleep(1_s);
    again = start_service(ctx, sup, "api");
    missing = start_service(ctx, sup, "nope");
    running = which_services(ctx, sup);
    stopped = stop_service(ctx, sup, "db");
    ctx.sleep(1_s);
    after_stop = which_services(ctx, sup);
    restarted = start_service(ctx, sup, "cache");
  });
  sim.run();
  // api is auto-started but waits on cache, which is not: nothing runs until asked.
  REQUIRE(before.size() == 4);
  for (const ServiceInfo& s : before) CHECK(s.state == ServiceState::inactive);
  REQUIRE(events(sim, "service_waiting", "api").size() >= 1);
  CHECK(text(*events(sim, "service_waiting", "api")[0], "on") == "cache");
  REQUIRE(started.ok);
  REQUIRE(started.services.size() == 1);
  CHECK(started.services[0].state == ServiceState::inactive);  // waiting for db, then cache
  REQUIRE(solo_started.ok);
  CHECK(solo_started.services.at(0).state == ServiceState::running);  // no init to wait for
  CHECK(again.error == Reason::other(Atom("already_started")));
  CHECK(missing.error == Reason::other(Atom("not_found")));
  for (const ServiceInfo& s : running) {
    INFO(s.name);
    CHECK(s.state == ServiceState::running);
    CHECK(s.pid);
  }
  CHECK(stopped.ok);
  CHECK(info(after_stop, "api")->state == ServiceState::stopped);
  CHECK(info(after_stop, "cache")->state == ServiceState::stopped);
  CHECK(info(after_stop, "db")->state == ServiceState::stopped);
  CHECK(info(after_stop, "solo")->state == ServiceState::running);
  // Dependents first: api stopped before cache began to stop, cache before db.
  CHECK(first_to(sim, "api", "stopped").seq < first_to(sim, "cache", "stopping").seq);
  CHECK(first_to(sim, "cache", "stopped").seq < first_to(sim, "db", "stopping").seq);
  // A stopped service starts in a new life; api was not asked for and stays stopped.
  CHECK(restarted.ok);
  CHECK(path(changes(sim, "db")).back() == "starting>running");
  CHECK(path(changes(sim, "cache")) ==
        std::vector<std::string>{"none>inactive", "inactive>starting", "starting>running",
                                 "running>stopping", "stopping>stopped", "none>inactive",
                                 "inactive>starting", "starting>running"});
  const std::uint64_t count = sim.trace().count();
  const auto snap = lifecycle_snapshot(sim);
  CHECK(sim.trace().count() == count);  // reading it changed nothing
  REQUIRE(snap.size() == 1);
  CHECK(snap[0].path == "/app");
  CHECK(info(snap[0].services, "api")->state == ServiceState::stopped);
  CHECK(info(snap[0].services, "cache")->state == ServiceState::running);
  CHECK(info(snap[0].services, "cache")->starts == 2);
  CHECK(sim.alive(info(snap[0].services, "cache")->pid));
  CHECK(events(sim, "management").size() == 9);
}

TEST_CASE("lifecycle: same seed - same trace hash - another seed changes the jitter and the hash", "[supervision][lifecycle]") {
  auto run = [](std::uint64_t seed) {
    Simulation sim(SimOptions{.seed = seed, .tie_break = TieBreak::random});
    Script fails;
    fails.init_error = Reason::error(Atom("db_down"));
    ServiceSpec flaky = service("flaky", fails, {"base"});
    flaky.restart.max_attempts = 6;
    ServiceSpec crashy = service("crashy", [](int n) {
      Script sc;
      sc.crash_after = 1_s * n;
      return sc;
    }, {"base"});
    Script slow;
    slow.init_delay = 500_ms;
    start_lifecycle(sim, {{service("base", slow), flaky, crashy}});
    sim.run_until(at(120_s));
    return sim.trace().hash();
  };
  CHECK(run(3) == run(3));
  CHECK(run(3) != run(4));
}
