// Every name docs/library.md promises in `lic::`, used once: this file compiles against the
// installed package only while each of them is there with the shape the docs give it. It is
// built with the example (CMakeLists.txt), which sets no C++ standard of its own: the package's
// targets ask for C++20 themselves. It runs nothing; cache_test.cpp and the CTest entries do.

#include <optional>
#include <letitcrash/letitcrash.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace {

// Time and numbers, from sim/.
static_assert(5 * lic::kSecond == lic::kSecond * 5);
static_assert(lic::fraction_at_most(1, 20, lic::Ratio::percent(5)));
static_assert(lic::fraction_at_least(1, 20, lic::Ratio::percent(5)));

// Writing processes.
class Echo final : public lic::Behaviour {
 public:
  lic::InitResult init(lic::Context&) override { return lic::InitResult::ok(); }
  lic::CallReply handle_call(lic::Context& ctx, const lic::Message& m, lic::From) override {
    const lic::CallResult r = ctx.call(lic::Atom("Other"), m.tag, std::int64_t{1}, 2 * lic::kSecond);
    if (!r.ok()) return lic::CallReply::reply(lic::Atom("error"));
    return lic::CallReply::reply(m.tag);
  }
  void terminate(lic::Context&, const lic::Reason&) override {}
};

[[maybe_unused]] void every_stable_name(lic::Context& ctx, const lic::TraceEvent& e, const lic::CheckInput& in) {
  const lic::Pid self = ctx.self();
  const lic::Time now = ctx.now();
  const bool exited = e.kind == lic::EventKind::exit;
  (void)self, (void)now, (void)exited;
  (void)std::make_unique<Echo>();
  // Registering: behaviours, checks (with a one-of argument), metrics.
  lic::Registry r = lic::Registry::with_builtins();
  const lic::ArgInfo arg{"retry", "none|once", "none", "a one-of argument"};
  const lic::BehaviourFactory factory = [](const std::string&) -> std::unique_ptr<lic::Behaviour> { return nullptr; };
  r.add(lic::BehaviourInfo{"x.idle", "help", {arg}, [factory](lic::Args& a) {
                             (void)a.choice("retry");
                             return factory;
                           }});
  r.add(lic::CheckInfo{"x.check", "help", {}, [](lic::Args&) -> lic::CheckJudge {
                         return [](const lic::CheckInput&) { return lic::Verdict{true, "fine"}; };
                       }});
  r.add(lic::MetricInfo{"x.metric", "help", [](const lic::CheckInput&, lic::Metrics& out) {
                          out["x.metric"] = lic::MetricValue{{1.0}};
                        }});
  // Judging: a verdict with its witness, kind, roles, margin and judged flag.
  lic::Verdict v{false, lic::format_ratio(lic::Ratio::percent(5)) + " " + lic::format_duration(lic::kSecond)};
  v.witness = lic::witness_at(e, {"/root/a"}, "why");
  if (const std::optional<lic::TraceEvent> at = lic::first_at(*in.events, lic::Time{})) v.witness = lic::witness_at(*at, {}, "the start");
  const lic::Witness w = *v.witness;
  v.kind = "a_kind";
  v.roles = {w.processes};
  v.margin = -0.5;
  v.judged = true;
  // Histories: a client's operations recorded, judged against a model of one's own as
  // `linearizable` judges the built-in ones.
  lic::history::Client client;
  const lic::history::OpId op = client.invoke(ctx, "read", "k");
  client.ok(ctx, op, "1");
  const lic::history::Model mine{"mine", [] { return lic::history::ModelState{}; },
                                 [](const lic::history::ModelState& s, const lic::history::Op&, lic::history::ModelState& next) {
                                   next = s;
                                   return true;
                                 }};
  (void)lic::judge_linearizable(in, mine);
  const lic::CheckResult c{};
  const lic::FailureId id = lic::failure_id(c);
  (void)id;
  (void)lic::buggify(ctx, "x.point");
  // Files: read, validate, write, the fix, diagnostics.
  lic::ParseResult p = lic::load_scenario("f.yaml", r);
  p = lic::parse_scenario("scenario: x", "x.yaml", r);
  for (const lic::Diagnostic& d : lic::validate(p.scenario, r)) (void)lic::format_diagnostic("x.yaml", d);
  p = lic::apply_fix(p.scenario, r);
  const std::string yaml = lic::to_yaml(p.scenario);
  // Runs, sweeps, search and shrinking.
  lic::RunOptions ro;
  ro.registry = &r;
  const lic::RunResult run = lic::run(p.scenario, ro);
  (void)lic::reproduce_command("mytool", "x.yaml", run.seed, run.tie_break, std::nullopt);
  lic::SweepOptions so;
  const std::vector<lic::SeedResult> seeds = lic::run_seeds(p.scenario, lic::SeedRange{1, 2}, so);
  lic::ShrinkOptions sh;
  const lic::ShrinkResult shrunk = lic::shrink(p.scenario, sh);
  lic::ExploreOptions xo;
  const lic::ExploreResult explored = lic::explore(p.scenario, xo);
  (void)lic::replay("trace.jsonl", r);
  lic::write_run_reports(p.scenario, run, "x.yaml", std::nullopt, "", "out");
  (void)seeds, (void)shrunk, (void)explored, (void)yaml;
}

}  // namespace
