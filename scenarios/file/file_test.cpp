// Scenario files: what the reader accepts and rejects (with file:line:col), and the round trip
// Scenario -> YAML -> Scenario over generated scenarios that use every part of the format.

#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <algorithm>
#include <limits>
#include <set>

#include "scenarios/file/read.hpp"
#include "scenarios/file/validate.hpp"
#include "scenarios/file/write.hpp"
#include "sim/rc_prop.hpp"

using namespace lic;
using namespace lic::scenarios;
using namespace lic::literals;

namespace {

std::string errors_of(const ParseResult& r) {
  std::string s;
  for (const Diagnostic& d : r.errors) s += format_diagnostic("f.yaml", d) + "\n";
  return s;
}

// ---- generators ------------------------------------------------------------------------------

std::string gen_name(const char* prefix) { return prefix + std::to_string(*rc::gen::inRange(0, 1000)); }

Duration gen_duration(std::int64_t max_ms, bool positive) {
  // Whole units of several sizes, so every unit of format_duration is exercised.
  const std::int64_t unit = *rc::gen::element<std::int64_t>(1, 1'000, 1'000'000, 1'000'000'000, 60'000'000'000);
  const std::int64_t max_units = std::max<std::int64_t>(1, max_ms * 1'000'000 / unit);
  return Duration{*rc::gen::inRange<std::int64_t>(positive ? 1 : 0, max_units + 1) * unit};
}

/// A duration, or now and then the largest one there is (it must write and read back too).
Duration gen_edge_duration(std::int64_t max_ms, bool positive) {
  if (*rc::gen::inRange(0, 8) == 0) return Duration{std::numeric_limits<std::int64_t>::max()};
  return gen_duration(max_ms, positive);
}

Ratio gen_ratio() {
  const auto den = *rc::gen::element<std::uint64_t>(1, 2, 3, 4, 7, 8, 10, 100, 1000, 200, 1 << 20);
  return reduce(Ratio{*rc::gen::inRange<std::uint64_t>(0, den + 1), den});
}

Reason gen_reason() {
  switch (*rc::gen::inRange(0, 7)) {
    case 0: return Reason::normal();
    case 1: return Reason::shutdown();
    case 2: return Reason::kill();
    case 3: return Reason::shutdown(Atom(gen_name("why")));
    case 4: return Reason::error(Atom(gen_name("boom")));
    case 5: return Reason::killed();
    default: return Reason::other(Atom(gen_name("oops")));
  }
}

LinkParams gen_link() {
  LinkParams p;
  p.latency_min = gen_duration(50, false);
  p.latency_mean = p.latency_min + (*rc::gen::arbitrary<bool>() ? gen_duration(50, false) : Duration{});
  if (*rc::gen::arbitrary<bool>()) {  // the uniform model: `latency: {uniform: [min, max]}`
    p.latency_max = p.latency_min + gen_duration(50, true);
    p.latency_mean = p.latency_min + (p.latency_max - p.latency_min) / 2;
  }
  if (*rc::gen::arbitrary<bool>()) p.loss = gen_ratio();
  if (*rc::gen::arbitrary<bool>()) p.duplicate = gen_ratio();
  if (*rc::gen::arbitrary<bool>()) p.reorder = gen_ratio();
  if (*rc::gen::arbitrary<bool>()) p.clog = gen_duration(100, false);
  return p;
}

/// A generated tree and what a script can aim at in it.
struct Paths {
  std::vector<std::string> all;
  std::vector<std::string> supervisors;  // OTP supervisors (management calls)
  std::set<std::string> templated;       // simple_one_for_one with a template
};

supervision::ChildSpec gen_spec(const std::string& id, TreeNode::Kind kind, const std::vector<std::string>& nodes) {
  using namespace supervision;
  ChildSpec s;
  s.id = id;
  s.restart = *rc::gen::element(RestartType::permanent, RestartType::transient, RestartType::temporary);
  s.type = kind == TreeNode::Kind::worker ? ChildType::worker : ChildType::supervisor;
  if (*rc::gen::weightedElement<bool>({{4, false}, {1, true}})) s.type = *rc::gen::element(ChildType::worker, ChildType::supervisor);
  switch (*rc::gen::inRange(0, 4)) {
    case 0: s.shutdown = Shutdown::brutal_kill(); break;
    case 1: s.shutdown = Shutdown::infinity(); break;
    case 2: s.shutdown = Shutdown::after(gen_duration(10'000, false)); break;
    default: s.shutdown = default_shutdown(s.type); break;
  }
  s.significant = *rc::gen::weightedElement<bool>({{4, false}, {1, true}});
  if (!nodes.empty() && *rc::gen::arbitrary<bool>()) s.node = Atom(*rc::gen::elementOf(nodes));
  return s;
}

BehaviourRef gen_behaviour() {
  switch (*rc::gen::inRange(0, 4)) {
    case 0: return BehaviourRef{"idle", {}, {}};
    case 1: return BehaviourRef{"stall", {}, {}};
    case 2:  // a scalar argument
      return BehaviourRef{"trap_exit", {{"shutdown_delay", ArgValue{format_duration(gen_duration(5'000, false)), {}, false, {}}}}, {}};
    default: {  // a list argument
      ArgValue init{"", {}, true, {}};
      for (int i = 0, n = *rc::gen::inRange(1, 4); i < n; ++i) init.list.push_back(*rc::gen::element<std::string>("ok", "ignore", "error"));
      return BehaviourRef{"idle", {{"init", init}}, {}};
    }
  }
}

ServiceDecl gen_service(const std::string& name, const std::vector<std::string>& earlier) {
  ServiceDecl s;
  s.name = name;
  s.behaviour = gen_behaviour();
  s.auto_start = *rc::gen::arbitrary<bool>();
  if (*rc::gen::arbitrary<bool>()) s.start_timeout = gen_duration(20'000, true);
  if (*rc::gen::arbitrary<bool>()) s.stop_timeout = gen_duration(20'000, true);
  if (*rc::gen::arbitrary<bool>()) s.stable_threshold = gen_duration(20'000, true);
  for (const std::string& e : earlier) {
    if (*rc::gen::weightedElement<bool>({{2, false}, {1, true}})) s.depends_on.push_back(e);  // acyclic: earlier only
  }
  if (*rc::gen::arbitrary<bool>()) {
    s.restart.initial_delay = gen_duration(5'000, true);
    s.restart.max_delay = gen_duration(100'000, true);
    const auto den = *rc::gen::inRange<std::uint64_t>(1, 11);  // a factor of 1 or more: below 1 is refused
    s.restart.factor = reduce(Ratio{*rc::gen::inRange<std::uint64_t>(den, 4 * den + 1), den});
    s.restart.jitter = gen_ratio();
    s.restart.max_attempts = *rc::gen::inRange<std::uint32_t>(0, 20);
  }
  s.terminal_clean_exits = *rc::gen::arbitrary<bool>();
  if (*rc::gen::arbitrary<bool>()) s.terminal_reasons.push_back(gen_reason());
  return s;
}

TreeNode gen_node(const std::string& id, const std::string& path, int depth, const std::vector<std::string>& nodes,
                  Paths& paths) {
  TreeNode t;
  const int pick = depth <= 0 ? 0 : *rc::gen::weightedElement<int>({{3, 0}, {2, 1}, {1, 2}});
  t.kind = pick == 0 ? TreeNode::Kind::worker : pick == 1 ? TreeNode::Kind::supervisor : TreeNode::Kind::lifecycle;
  t.spec = gen_spec(id, t.kind, nodes);
  paths.all.push_back(path);
  if (t.kind == TreeNode::Kind::worker) {
    t.behaviour = gen_behaviour();
  } else if (t.kind == TreeNode::Kind::supervisor) {
    using namespace supervision;
    t.flags.strategy = *rc::gen::element(Strategy::one_for_one, Strategy::one_for_all, Strategy::rest_for_one,
                                         Strategy::simple_one_for_one);
    t.flags.intensity = *rc::gen::inRange<std::uint32_t>(0, 10);
    t.flags.period = gen_duration(60'000, true);
    t.flags.auto_shutdown = *rc::gen::element(AutoShutdown::never, AutoShutdown::any_significant, AutoShutdown::all_significant);
    t.flags.window = *rc::gen::element(IntensityWindow::otp_seconds, IntensityWindow::precise);
    paths.supervisors.push_back(path);
    const bool dynamic = t.flags.strategy == Strategy::simple_one_for_one;
    if (dynamic && *rc::gen::arbitrary<bool>()) t.flags.max_children = *rc::gen::inRange<std::uint32_t>(0, 100);
    if (*rc::gen::weightedElement<bool>({{1, true}, {3, false}})) {
      for (int i = 0, k = *rc::gen::inRange(1, 4); i < k; ++i)
        t.init.push_back(*rc::gen::element<std::string>("ok", "ignore", "error", "error:no_db", "stop:normal",
                                                        "stop:{shutdown,x}"));
    }
    const int n = dynamic ? *rc::gen::inRange(0, 2) : *rc::gen::inRange(0, 4);
    if (dynamic && n == 1) paths.templated.insert(path);
    for (int i = 0; i < n; ++i) {
      const std::string cid = "c" + std::to_string(i);
      t.children.push_back(gen_node(cid, path + "/" + cid, depth - 1, nodes, paths));
    }
  } else {
    std::vector<std::string> names;
    for (int i = 0, n = *rc::gen::inRange(0, 4); i < n; ++i) {
      const std::string name = "s" + std::to_string(i);
      t.services.push_back(gen_service(name, names));
      names.push_back(name);
      paths.all.push_back(path + "/" + name);
    }
  }
  return t;
}

Step gen_step(const Paths& p, const std::vector<std::string>& nodes) {
  Step s;
  s.at = Time{} + gen_duration(60'000, false);
  if (!nodes.empty() && *rc::gen::weightedElement<bool>({{1, true}, {5, false}})) {
    s.op = Step::Op::stop_task;
    s.target = *rc::gen::elementOf(nodes);
    s.grace = gen_duration(30'000, true);
    return s;
  }
  const bool manage = !p.supervisors.empty() && *rc::gen::arbitrary<bool>();
  if (!manage) {
    s.op = *rc::gen::element(Step::Op::crash, Step::Op::kill, Step::Op::exit, Step::Op::stop);
    s.target = *rc::gen::elementOf(p.all);
    if (s.op == Step::Op::stop) s.reason = Reason::normal();
    if (s.op == Step::Op::exit) s.reason = Reason::shutdown();
    if (s.op != Step::Op::kill && *rc::gen::arbitrary<bool>()) s.reason = gen_reason();
    return s;
  }
  s.op = *rc::gen::element(Step::Op::start_child, Step::Op::terminate_child, Step::Op::restart_child,
                           Step::Op::delete_child, Step::Op::which_children);
  s.target = *rc::gen::elementOf(p.supervisors);
  if (s.op == Step::Op::start_child) {
    if (p.templated.contains(s.target)) {
      s.arg = *rc::gen::element<std::string>("", "key1", "a b", "x:y");
    } else {
      Paths scratch;
      s.child = gen_node("new", s.target + "/new", 1, nodes, scratch);
    }
  } else if (s.op != Step::Op::which_children) {
    s.id = *rc::gen::element<std::string>("c0", "c1", "c0.1");
  }
  return s;
}

/// When a fault fires: at a time (maybe repeating) or stochastic (maybe from `after`), maybe
/// until a time.
void gen_timing(faults::Fault& f) {
  if (*rc::gen::arbitrary<bool>()) {
    f.at = Time{} + gen_duration(60'000, false);
    if (*rc::gen::arbitrary<bool>()) f.every = gen_duration(10'000, true);
  } else {
    f.mtbf = gen_edge_duration(60'000, true);
    if (*rc::gen::arbitrary<bool>()) f.after = Time{} + gen_duration(30'000, false);
  }
  if (*rc::gen::arbitrary<bool>()) f.until = Time{} + gen_edge_duration(120'000, false);
}

faults::Fault gen_fault(const Paths& p, const std::vector<std::string>& nodes, std::size_t i) {
  using faults::Kind;
  faults::Fault f;
  std::vector<Kind> kinds = {Kind::crash, Kind::kill, Kind::exit, Kind::slow_start, Kind::heal, Kind::degrade};
  if (!nodes.empty()) {
    for (Kind k : {Kind::node_crash, Kind::node_restart, Kind::pause, Kind::partition, Kind::clog, Kind::loss,
                   Kind::duplicate, Kind::reorder, Kind::stop_task, Kind::clock})
      kinds.push_back(k);
  }
  f.kind = *rc::gen::elementOf(kinds);
  if (*rc::gen::arbitrary<bool>()) f.name = "f" + std::to_string(i);
  gen_timing(f);
  auto side = [&] {
    std::vector<Atom> out;
    for (const std::string& n : nodes) {
      if (*rc::gen::arbitrary<bool>()) out.push_back(Atom(n));
    }
    return out;
  };
  switch (f.kind) {
    case Kind::crash:
    case Kind::exit:
      if (*rc::gen::arbitrary<bool>()) f.reason = gen_reason();
      [[fallthrough]];
    case Kind::kill:
    case Kind::slow_start:
    case Kind::degrade:
      f.target = *rc::gen::arbitrary<bool>() ? faults::Target::path(*rc::gen::elementOf(p.all))
                                              : faults::Target::name(gen_name("reg"));
      if (f.kind == Kind::slow_start) f.delay = gen_duration(5'000, true);
      if (f.kind == Kind::degrade) {
        f.mode = *rc::gen::element<std::string>("errors", "full", "slow");
        if (*rc::gen::arbitrary<bool>()) f.duration = gen_duration(5'000, true);
      }
      break;
    case Kind::node_crash:
    case Kind::node_restart:
    case Kind::pause:
    case Kind::stop_task:
    case Kind::clock:
      f.target = faults::Target::node(*rc::gen::elementOf(nodes));
      if (f.kind == Kind::clock && *rc::gen::arbitrary<bool>())
        f.skew = *rc::gen::arbitrary<bool>() ? gen_duration(5'000, false) : Duration::zero() - gen_duration(5'000, true);
      if (f.kind == Kind::clock && *rc::gen::arbitrary<bool>()) f.drift_ppm = *rc::gen::inRange<std::int64_t>(-500'000, 500'001);
      if (f.kind == Kind::pause) f.duration = gen_edge_duration(5'000, false);  // 0s included
      if (f.kind == Kind::pause && f.duration <= 10_s && *rc::gen::arbitrary<bool>()) {  // each pause its own length
        const Duration hi = f.duration + gen_duration(5'000, false);
        f.each.push_back({"duration", format_duration(f.duration), format_duration(hi)});
      }
      if (f.kind == Kind::stop_task) f.grace = gen_edge_duration(30'000, true);
      if (f.kind == Kind::node_crash && *rc::gen::arbitrary<bool>()) f.restart_after = gen_duration(5'000, false);
      break;
    case Kind::heal:
      break;
    default:
      f.side_a = side();
      if (f.side_a.empty()) f.side_a.push_back(Atom(nodes.front()));
      for (Atom b : side())  // a node on both sides is refused (it is never cut from itself)
        if (std::find(f.side_a.begin(), f.side_a.end(), b) == f.side_a.end()) f.side_b.push_back(b);
      if (*rc::gen::arbitrary<bool>()) f.duration = gen_edge_duration(5'000, false);
      if (f.kind == Kind::partition) f.one_way = *rc::gen::arbitrary<bool>();
      if (f.kind == Kind::clog) f.delay = gen_duration(500, true);
      if (f.kind == Kind::loss || f.kind == Kind::duplicate || f.kind == Kind::reorder) {
        f.ratio = gen_ratio();  // 0% included: the writer must keep it
        if (*rc::gen::arbitrary<bool>()) f.each.push_back({"ratio", format_ratio(f.ratio), "100%"});
      }
      break;
  }
  return f;
}

/// Pinned streams (in key order, as the reader keeps them): of a tree path, a fault, a link, the tie-break.
void gen_streams(Scenario& s, const Paths& paths, const std::vector<std::string>& nodes) {
  std::set<std::string> keys;
  for (int i = 0, n = *rc::gen::inRange(0, 4); i < n; ++i) {
    const int kind = *rc::gen::inRange(0, 4);
    if (kind == 0) keys.insert("process " + *rc::gen::elementOf(paths.all));
    if (kind == 1 && !s.faults.empty()) {
      const std::size_t k = *rc::gen::inRange<std::size_t>(0, s.faults.size());
      keys.insert("fault " + (s.faults[k].name.empty() ? std::string(faults::to_string(s.faults[k].kind)) + "#" + std::to_string(k)
                                                       : s.faults[k].name));
    }
    if (kind == 2 && !nodes.empty()) keys.insert("link " + *rc::gen::elementOf(nodes) + " " + *rc::gen::elementOf(nodes));
    if (kind == 3) keys.insert("tie-break");
  }
  for (const std::string& k : keys) s.streams.push_back(StreamPin{k, *rc::gen::arbitrary<std::uint64_t>(), {}});
}

Scenario gen_scenario() {
  Scenario s;
  s.name = *rc::gen::element<std::string>("mini", "partition_and_heal", "x");
  s.description = *rc::gen::element<std::string>("", "plain words", "yes", "null", "~", "- dash", "a: colon",
                                                  "#hash", "{braces}", "  lead", "quote's \"q\"", "multi\nline");
  s.seed = *rc::gen::arbitrary<std::uint64_t>();
  s.tie_break = *rc::gen::element(TieBreak::fifo, TieBreak::random);
  s.duration = gen_duration(600'000, true);
  if (*rc::gen::arbitrary<bool>()) s.quiet = gen_duration(60'000, false);
  s.expect_escalation = *rc::gen::arbitrary<bool>();
  std::vector<std::string> nodes;
  for (int i = 0, n = *rc::gen::inRange(0, 4); i < n; ++i) {
    nodes.push_back("n" + std::to_string(i));
    const Duration skew = *rc::gen::arbitrary<bool>() ? gen_duration(100, false) : Duration{};
    s.nodes.push_back(NodeDecl{nodes.back(), *rc::gen::arbitrary<bool>() ? Duration::zero() - skew : skew,
                               *rc::gen::arbitrary<bool>() ? *rc::gen::inRange<std::int64_t>(-500'000, 500'001) : 0});
    if (*rc::gen::arbitrary<bool>()) {
      s.nodes.back().preempt = gen_ratio();  // a chance of 0 is written too, with its mean
      s.nodes.back().preempt_mean = gen_duration(1'000, true);
    }
  }
  if (*rc::gen::arbitrary<bool>()) s.default_link = gen_link();
  if (*rc::gen::inRange(0, 4) == 0) {
    s.net_ticks.ticktime = kMillisecond * *rc::gen::inRange<std::int64_t>(4, 120'000);
    if (*rc::gen::arbitrary<bool>()) s.net_ticks.setuptime = kMillisecond * *rc::gen::inRange<std::int64_t>(1, 30'000);
  }
  for (int i = 0, n = nodes.size() < 2 ? 0 : *rc::gen::inRange(0, 3); i < n; ++i) {
    s.links.push_back(LinkDecl{*rc::gen::elementOf(nodes), *rc::gen::elementOf(nodes), gen_link(), {}});
  }
  Paths paths;
  for (int i = 0, n = *rc::gen::inRange(1, 3); i < n; ++i) {
    const std::string id = i == 0 ? "root" : "root" + std::to_string(i);
    TreeNode t = gen_node(id, "/" + id, 3, nodes, paths);
    if (t.kind == TreeNode::Kind::worker) {  // a root is a supervisor
      t.kind = TreeNode::Kind::supervisor;
      paths.supervisors.push_back("/" + id);
    }
    // A root has no place under a parent: its spec is the defaults but for id and node.
    supervision::ChildSpec spec;
    spec.id = id;
    spec.type = supervision::ChildType::supervisor;
    spec.shutdown = supervision::Shutdown::infinity();
    spec.node = t.spec.node;
    t.spec = spec;
    t.behaviour = {};
    s.trees.push_back(std::move(t));
  }
  for (int i = 0, n = *rc::gen::inRange(0, 4); i < n; ++i) s.script.push_back(gen_step(paths, nodes));
  for (int i = 0, n = *rc::gen::inRange(0, 4); i < n; ++i) s.faults.push_back(gen_fault(paths, nodes, i));
  for (int i = 0, n = *rc::gen::inRange(0, 4); i < n; ++i) {
    CheckDecl c;
    c.name = *rc::gen::element<std::string>("converges", "no_escalation", "escalates", "availability", "alive", "restarts",
                                            "conservation");
    if (c.name == "availability" || c.name == "alive" || c.name == "restarts") c.with("of", *rc::gen::elementOf(paths.all));
    if (c.name == "availability") c.with("min", format_ratio(gen_ratio()));
    if (c.name == "restarts") {
      const bool max = *rc::gen::arbitrary<bool>();
      if (max) c.with("max", std::to_string(*rc::gen::inRange<std::int64_t>(0, 50)));
      if (!max || *rc::gen::arbitrary<bool>()) c.with("count", std::to_string(*rc::gen::inRange<std::int64_t>(0, 50)));
    }
    s.checks.push_back(c);
  }
  if (*rc::gen::arbitrary<bool>()) {
    s.reports = ReportSet{*rc::gen::arbitrary<bool>(), *rc::gen::arbitrary<bool>(), *rc::gen::arbitrary<bool>(),
                          *rc::gen::arbitrary<bool>(), *rc::gen::arbitrary<bool>(), *rc::gen::arbitrary<bool>(),
                          *rc::gen::arbitrary<bool>()};
  }
  gen_streams(s, paths, nodes);
  return s;
}

}  // namespace

TEST_CASE("scenario file: Scenario to YAML to Scenario gives the same scenario", "[scenario][property]") {
  lic::test::prop("generated scenarios with every section - trees of supervisors and lifecycles - scripts - faults of every kind - checks", [] {
    const Scenario s = gen_scenario();
    RC_PRE(validate(s).empty());  // the generator keeps to valid scenarios; count how often it does not
    const std::string yaml = to_yaml(s);
    const ParseResult back = parse_scenario(yaml, "generated.yaml");
    if (!back.errors.empty()) RC_FAIL("what was written does not read:\n" + errors_of(back) + "\n" + yaml);
    if (!(back.scenario == s)) RC_FAIL("read back differs:\n" + yaml + "\nwritten again:\n" + to_yaml(back.scenario));
    RC_ASSERT(to_yaml(back.scenario) == yaml);
    RC_TAG(s.trees.size(), s.faults.size() > 0);
  });
}

TEST_CASE("scenario file: the example of DESIGN.md reads as written", "[scenario]") {
  const char* text = R"(scenario: mini_pipeline
seed: 1
duration: 10m
tree:
  root: {strategy: one_for_one, intensity: 3, period: 5s}
  children:
    - id: input
      supervisor: {strategy: rest_for_one}
      children:
        - {id: reader, behaviour: idle}
        - {id: parser, behaviour: idle, restart: transient, shutdown: brutal_kill}
        - {id: validator, behaviour: stall, shutdown: 2s}
faults:
  - {at: 30s, kill: /root/input/validator}
  - {crash: /root/input/parser, mtbf: 2m, reason: {error: bad_line}}
checks: [no_escalation, {availability: {of: /root/input, min: 99%}}]
)";
  const ParseResult r = parse_scenario(text, "f.yaml");
  INFO(errors_of(r));
  REQUIRE(r.ok());
  const Scenario& s = r.scenario;
  CHECK(s.name == "mini_pipeline");
  CHECK(s.duration == 10_min);
  REQUIRE(s.trees.size() == 1);
  const TreeNode& root = s.trees[0];
  CHECK(root.spec.id == "root");
  CHECK(root.flags.intensity == 3);
  REQUIRE(root.children.size() == 1);
  const TreeNode& input = root.children[0];
  CHECK(input.flags.strategy == supervision::Strategy::rest_for_one);
  CHECK(input.flags.intensity == 1);  // OTP's default
  CHECK(input.spec.shutdown == supervision::Shutdown::infinity());
  REQUIRE(input.children.size() == 3);
  CHECK(input.children[0].spec.shutdown == supervision::Shutdown::after(5_s));
  CHECK(input.children[1].spec.restart == supervision::RestartType::transient);
  CHECK(input.children[1].spec.shutdown == supervision::Shutdown::brutal_kill());
  CHECK(input.children[2].spec.shutdown == supervision::Shutdown::after(2_s));
  REQUIRE(s.faults.size() == 2);
  CHECK(s.faults[0].kind == faults::Kind::kill);
  CHECK(*s.faults[0].at == Time{} + 30_s);
  CHECK(s.faults[1].target == faults::Target::path("/root/input/parser"));
  CHECK(*s.faults[1].mtbf == 2_min);
  CHECK(s.faults[1].reason == Reason::error(Atom("bad_line")));
  REQUIRE(s.checks.size() == 2);
  REQUIRE(s.checks[1].arg("of") != nullptr);
  CHECK(s.checks[1].arg("of")->scalar == "/root/input");
  CHECK(s.checks[1].arg("min")->scalar == "99%");
}

TEST_CASE("scenario file: every mistake in a file is reported with its line and column", "[scenario]") {
  const char* text = R"(scenario: broken
duration: 5sec
tree:
  root: {strategy: one_for_some, intensity: many}
  children:
    - {id: a, behaviour: idle, restrat: permanent}
    - {id: a, behaviour: idle}
    - {id: b, behaviour: idle, shutdown: soon}
faults:
  - {at: 1s, crash: /root/c}
  - {at: 1s, loss: [node0], ratio: 150%}
)";
  const ParseResult r = parse_scenario(text, "f.yaml");
  const std::string all = errors_of(r);
  INFO(all);
  CHECK(all.find("f.yaml:2:12: bad duration for duration: unknown unit 'sec'") != std::string::npos);
  CHECK(all.find("f.yaml:4:20: unknown strategy 'one_for_some'") != std::string::npos);
  CHECK(all.find("f.yaml:4:45: intensity must be a whole number") != std::string::npos);
  CHECK(all.find("f.yaml:6:32: unknown key 'restrat' in a child (did you mean 'restart'?)") != std::string::npos);
  CHECK(all.find("f.yaml:7:7: duplicate child id 'a' under /root") != std::string::npos);
  CHECK(all.find("f.yaml:8:42: bad duration for shutdown") != std::string::npos);
  CHECK(all.find("f.yaml:10:5: '/root/c' names nothing in the tree") != std::string::npos);
  CHECK(all.find("f.yaml:11:36: bad ratio for ratio: ratio '150%' is more than 100%") != std::string::npos);
  CHECK(r.errors.size() == 8);
}

TEST_CASE("scenario file: a YAML syntax error is one diagnostic at its place", "[scenario]") {
  const ParseResult r = parse_scenario("scenario: x\ntree: {root: [\n", "f.yaml");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].mark.line >= 2);
  CHECK(r.errors[0].message.rfind("YAML: ", 0) == 0);
}

TEST_CASE("scenario file: ratios read exactly and print back the same", "[scenario]") {
  for (const char* text : {"2%", "0.5%", "0.02", "1/3", "0", "1", "100%", "12.5%", "0.001%"}) {
    Ratio r;
    std::string why;
    REQUIRE(parse_ratio(text, r, why));
    Ratio again;
    REQUIRE(parse_ratio(format_ratio(r), again, why));
    CHECK(again == r);
  }
  Ratio r;
  std::string why;
  CHECK(parse_ratio("2%", r, why));
  CHECK(r == Ratio{1, 50});
  CHECK(format_ratio(Ratio{1, 3}) == "1/3");
  CHECK(format_ratio(Ratio{1, 200}) == "0.5%");
  CHECK_FALSE(parse_ratio("101%", r, why));
  CHECK_FALSE(parse_ratio("1/0", r, why));
  CHECK_FALSE(parse_ratio("-1%", r, why));
  CHECK_FALSE(parse_ratio("x", r, why));
}

TEST_CASE("scenario file: seed 003's restart keys read - backoff_factor is factor - not both", "[scenario]") {
  const std::string head = "scenario: s\ntrees:\n  - id: app\n    lifecycle:\n      services:\n        - name: w\n"
                           "          behaviour: idle\n          restart:\n";
  const ParseResult seed = parse_scenario(head + "            initial_delay: 1s\n            max_delay: 90s\n"
                                                 "            backoff_factor: 2.0\n            jitter: 0.1\n"
                                                 "            max_attempts: 0\n", "s.yaml");
  REQUIRE(seed.ok());
  const supervision::BackoffPolicy& p = seed.scenario.trees.front().services.front().restart;
  CHECK(p.factor == Ratio{2, 1});
  CHECK(p.jitter == Ratio{1, 10});
  CHECK(p.max_delay == kSecond * 90);
  const ParseResult both = parse_scenario(head + "            factor: 2\n            backoff_factor: 2\n", "s.yaml");
  REQUIRE(both.errors.size() == 1);
  CHECK(both.errors.front().message == "restart gives both `factor` and `backoff_factor` (the same setting, seed 003's name): give one");
}

TEST_CASE("scenario file: network detection - net ticks of 60 s by default, instant when said - mistakes at their place", "[scenario]") {
  const std::string head = "scenario: s\nnodes: [a, b]\ntree: {id: root, supervisor: {strategy: one_for_one}, children: [{id: w, behaviour: idle}]}\n";
  const ParseResult none = parse_scenario(head, "s.yaml");
  REQUIRE(none.ok());
  CHECK(none.scenario.net_ticks.ticktime == kSecond * 60);  // OTP's net_ticktime
  CHECK(none.scenario.net_ticks == Scenario::default_net_ticks());
  CHECK(to_yaml(none.scenario).find("network") == std::string::npos);  // the default is not written
  const ParseResult ticks = parse_scenario(head + "network: {detection: ticks}\n", "s.yaml");
  REQUIRE(ticks.ok());
  CHECK(ticks.scenario.net_ticks.ticktime == kSecond * 60);
  CHECK(ticks.scenario.net_ticks.setuptime == kSecond * 7);
  CHECK(ticks.scenario.net_ticks == none.scenario.net_ticks);
  const ParseResult alone = parse_scenario(head + "network: {net_ticktime: 8s, net_setuptime: 3s}\n", "s.yaml");
  REQUIRE(alone.ok());
  CHECK(alone.scenario.net_ticks.ticktime == kSecond * 8);
  CHECK(alone.scenario.net_ticks.setuptime == kSecond * 3);
  CHECK(to_yaml(alone.scenario).find("detection: ticks\n  net_ticktime: 8s\n  net_setuptime: 3s") != std::string::npos);
  const ParseResult instant = parse_scenario(head + "network: {detection: instant}\n", "s.yaml");
  REQUIRE(instant.ok());
  CHECK(instant.scenario.net_ticks.ticktime == Duration::zero());
  CHECK(to_yaml(instant.scenario).find("detection: instant") != std::string::npos);
  CHECK(parse_scenario(to_yaml(instant.scenario), "w.yaml").scenario.net_ticks == instant.scenario.net_ticks);
  const ParseResult both = parse_scenario(head + "network: {detection: instant, net_ticktime: 8s}\n", "s.yaml");
  REQUIRE(both.errors.size() == 1);
  CHECK(both.errors.front().message == "`detection: instant` has no net ticks: drop net_ticktime, net_setuptime and prevent_overlapping_partitions, or say `detection: ticks`");
  CHECK(both.errors.front().mark.line == 4);
  CHECK(ticks.scenario.net_ticks.prevent_overlapping_partitions);
  const ParseResult no_pop = parse_scenario(head + "network: {detection: ticks, prevent_overlapping_partitions: false}\n", "s.yaml");
  REQUIRE(no_pop.ok());
  CHECK(!no_pop.scenario.net_ticks.prevent_overlapping_partitions);
  CHECK(to_yaml(no_pop.scenario).find("prevent_overlapping_partitions: false") != std::string::npos);
  CHECK(parse_scenario(to_yaml(no_pop.scenario), "w.yaml").scenario.net_ticks == no_pop.scenario.net_ticks);
  const ParseResult bad_pop = parse_scenario(head + "network: {detection: ticks, prevent_overlapping_partitions: sometimes}\n", "s.yaml");
  REQUIRE(bad_pop.errors.size() == 1);
  CHECK(bad_pop.errors.front().mark.line == 4);
  const ParseResult small = parse_scenario(head + "network: {net_ticktime: 3ms}\n", "s.yaml");
  REQUIRE(small.errors.size() == 1);
  CHECK(small.errors.front().message == "net_ticktime must be at least 4ms (a tick is a quarter of it), not 3ms");
}

TEST_CASE("scenario file: a supervisor's own init results read - one or a list - bad ones at their place", "[scenario]") {
  const char* good = R"(scenario: sup_init
tree:
  root: {strategy: one_for_one, init: [ok, ignore]}
  children:
    - id: s
      supervisor: {init: "stop:{shutdown,no_config}"}
      children: [{id: w, behaviour: idle}]
)";
  const ParseResult r = parse_scenario(good, "f.yaml");
  INFO(errors_of(r));
  REQUIRE(r.errors.empty());
  CHECK(r.scenario.trees.front().init == std::vector<std::string>{"ok", "ignore"});
  CHECK(r.scenario.trees.front().children.front().init == std::vector<std::string>{"stop:{shutdown,no_config}"});
  const ParseResult back = parse_scenario(to_yaml(r.scenario), "back.yaml");
  REQUIRE(back.errors.empty());
  CHECK(back.scenario == r.scenario);

  const char* bad = R"(scenario: sup_init_bad
tree:
  root: {strategy: one_for_one, init: [ok, maybe]}
  children:
    - id: s
      supervisor: {init: []}
      children: [{id: w, behaviour: idle}]
    - id: t
      supervisor: {init: "stop:{error,}"}
      children: [{id: w, behaviour: idle}]
)";
  const ParseResult e = parse_scenario(bad, "f.yaml");
  const std::string all = errors_of(e);
  INFO(all);
  CHECK(all.find("f.yaml:3:44: init: bad init result 'maybe' (write ok, ignore, error, error:What or stop:Reason)") !=
        std::string::npos);
  CHECK(all.find("f.yaml:6:26: init: an empty list (give at least one result, e.g. [ok])") != std::string::npos);
  CHECK(all.find("f.yaml:9:26: init: bad exit reason '{error,}'") != std::string::npos);
  CHECK(e.errors.size() == 3);
}

TEST_CASE("did you mean: the bounded edit distance is the distance, or limit + 1 past it - so a 1,000-letter path costs no square", "[file]") {
  lic::test::prop("edit_distance(a, b, limit) == min(edit_distance(a, b), limit + 1)", [] {
    const auto word = rc::gen::container<std::string>(rc::gen::element('a', 'b', 'c', '/'));
    const std::string a = *rc::gen::resize(12, word);
    const std::string b = *rc::gen::resize(12, word);
    const std::size_t limit = *rc::gen::inRange<std::size_t>(0, 10);
    RC_ASSERT(edit_distance(a, b, limit) == std::min(edit_distance(a, b), limit + 1));
  });
  CHECK(edit_distance("kitten", "sitting", 3) == 3);
  CHECK(edit_distance("kitten", "sitting", 2) == 3);
  // A typo deep in a long path is still found, and a path far from every name suggests nothing.
  std::string deep;
  for (int i = 0; i < 246; ++i) deep += "/s" + std::to_string(i);
  std::string typo = deep;
  typo[typo.size() - 2] = 'x';
  CHECK(closest_name(typo, {"/root", deep}) == deep);
  CHECK(closest_name(deep + "/far/away/from/it", {"/root", deep}).empty());
}
