// `linearizable` over the operations behaviours record (issue 38): the key-value store's stale
// read found and fixed, a malformed history named, a model name checked at its place.

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>

#include "properties/history.hpp"
#include "reports/run_view.hpp"
#include "scenarios/run/report.hpp"
#include "scenarios/file/fix.hpp"
#include "scenarios/registry.hpp"
#include "scenarios/testing/run_text.hpp"

using namespace lic;
using namespace lic::scenarios;
using lic::scenarios::testing::check_named;

namespace {

const char* const kBug = LIC_SOURCE_DIR "/scenarios/bugs/kv_async_replication_stale_read.yaml";

/// Reads `text` (it must be valid) with `r`'s behaviours and checks, and runs it.
RunResult run_with(const Registry& r, const std::string& text) {
  const ParseResult p = parse_scenario(text, "t.yaml", r);
  for (const Diagnostic& d : p.errors) UNSCOPED_INFO(format_diagnostic("t.yaml", d));
  REQUIRE(p.ok());
  RunOptions o;
  o.registry = &r;
  return run(p.scenario, o);
}

/// A client that records one write and then completes it twice, or completes an operation it
/// never invoked.
class Sloppy final : public Behaviour {
 public:
  explicit Sloppy(bool twice) : twice_(twice) {}
  InitResult init(Context& ctx) override {
    const history::OpId id = h_.invoke(ctx, "write", "x", "1");
    h_.ok(ctx, id);
    if (twice_) h_.ok(ctx, id);
    else h_.ok(ctx, id + 7);
    return InitResult::ok();
  }

 private:
  bool twice_;
  history::Client h_;
};

RunResult run_sloppy(bool twice) {
  Registry r = Registry::with_builtins();
  r.add(BehaviourInfo{"my.sloppy", "records badly", {{"twice", "bool", "true", "complete twice, or complete a stranger"}},
                      [](Args& a) -> BehaviourFactory {
                        const bool both = a.flag("twice");
                        return [both](const std::string&) { return std::make_unique<Sloppy>(both); };
                      }});
  return run_with(r, std::string("scenario: s\nphases: {chaos: 1s}\ntree:\n  root: {strategy: one_for_one}\n"
                                 "  children:\n    - {id: c, behaviour: my.sloppy, args: {twice: ") +
                         (twice ? "true" : "false") + "}}\nchecks:\n  - {linearizable: {model: register}}\n");
}

}  // namespace

TEST_CASE("linearizable: the store's stale read fails at its seed, names the read and the writes it missed - the fix passes", "[history]") {
  const Scenario s = testing::load_valid(kBug);
  const RunResult bad = run(s);
  const CheckResult& c = check_named(bad, "linearizable");
  INFO(c.detail);
  CHECK_FALSE(c.passed);
  CHECK(c.kind == "not_linearizable");
  CHECK(c.detail.find("not linearizable as a kv (key '") == 0);
  CHECK(c.detail.find("fits nowhere among the") != std::string::npos);
  REQUIRE(c.witness);
  CHECK(c.witness->processes.size() == 1);
  CHECK(c.witness->why.find("read(k") == 0);
  const ParseResult fixed = apply_fix(s);
  REQUIRE(fixed.ok());
  const RunResult good = run(fixed.scenario);
  INFO(check_named(good, "linearizable").detail);
  CHECK(check_named(good, "linearizable").passed);
  CHECK(check_named(good, "linearizable").detail.find("linearizable as a kv: ") == 0);
}

TEST_CASE("linearizable: an operation completed twice, or a completion of no invocation, fails naming it", "[history]") {
  const RunResult twice = run_sloppy(true);
  const CheckResult& a = check_named(twice, "linearizable");
  CHECK_FALSE(a.passed);
  CHECK(a.kind == "malformed_history");
  CHECK(a.detail == "the history is malformed: operation 1 of /root/c completed twice");
  const RunResult stranger = run_sloppy(false);
  const CheckResult& b = check_named(stranger, "linearizable");
  CHECK_FALSE(b.passed);
  CHECK(b.detail == "the history is malformed: a completion (op_ok, op 8) by /root/c, which invoked no such operation");
}

TEST_CASE("linearizable: a run that recorded nothing is not judged - a model name that does not exist is a mistake at its place", "[history]") {
  const RunResult r = testing::run_text("scenario: e\nphases: {chaos: 1s}\ntree:\n  root: {strategy: one_for_one}\n  children:\n"
                                        "    - {id: w, behaviour: idle}\nchecks:\n  - {linearizable: {model: kv}}\n");
  CHECK(check_named(r, "linearizable").passed);
  CHECK_FALSE(check_named(r, "linearizable").judged);
  const ParseResult p = parse_scenario("scenario: e\ntree:\n  root: {strategy: one_for_one}\n  children:\n    - {id: w, behaviour: idle}\n"
                                       "checks:\n  - {linearizable: {model: cas-registr}}\n",
                                       "e.yaml");
  REQUIRE(p.errors.size() == 1);
  CHECK(format_diagnostic("e.yaml", p.errors[0]) ==
        "e.yaml:7:28: argument 'model' of check 'linearizable': 'cas-registr' is not one of register, cas-register, kv, set, "
        "queue, counter (did you mean 'cas-register'?)");
}

namespace {

const Atom kMsg("msg");

/// Sends message 1, 2, ... every 10 ms to the process registered `Inbox`, recording each.
class Sender final : public Behaviour {
 public:
  InitResult init(Context& ctx) override {
    ctx.send_after(10 * kMillisecond, ctx.self(), kMsg);
    return InitResult::ok();
  }
  void handle_info(Context& ctx, const Message& m) override {
    if (m.tag != kMsg) return;
    ctx.send_after(10 * kMillisecond, ctx.self(), kMsg);
    const std::string id = std::to_string(++n_);
    history::sent(ctx, id);
    ctx.send(Atom("Inbox"), Atom("item"), id);
  }

 private:
  std::int64_t n_ = 0;
};

/// Records each item it takes in.
class Inbox final : public Behaviour {
 public:
  InitResult init(Context& ctx) override {
    ctx.register_name(Atom("Inbox"));
    return InitResult::ok();
  }
  void handle_info(Context& ctx, const Message& m) override {
    if (const std::string* id = m.tag == Atom("item") ? m.payload.get<std::string>() : nullptr) history::received(ctx, *id);
  }
};

RunResult run_delivery(const std::string& faults, const std::string& guarantee) {
  Registry r = Registry::with_builtins();
  r.add(BehaviourInfo{"my.sender", "sends", {}, [](Args&) -> BehaviourFactory {
                        return [](const std::string&) { return std::make_unique<Sender>(); };
                      }});
  r.add(BehaviourInfo{"my.inbox", "receives", {}, [](Args&) -> BehaviourFactory {
                        return [](const std::string&) { return std::make_unique<Inbox>(); };
                      }});
  // Instant detection: under net ticks (the default) a link's loss and duplication never reach
  // distributed Erlang's messages, which cross on TCP (docs/network.md).
  const std::string text = "scenario: d\nphases: {chaos: 2s, quiet: 1s}\nnodes: [a, b]\nnetwork: {detection: instant}\ntrees:\n"
                           "  - {id: s, node: a, supervisor: {strategy: one_for_one}, children: [{id: c, behaviour: my.sender}]}\n"
                           "  - {id: r, node: b, supervisor: {strategy: one_for_one}, children: [{id: c, behaviour: my.inbox}]}\n" +
                           faults + "checks:\n  - {delivery: {guarantee: " + guarantee + "}}\n";
  return run_with(r, text);
}

}  // namespace

TEST_CASE("delivery: a clean link delivers exactly once - loss fails at_least_once naming the first lost id - duplication fails at_most_once", "[history]") {
  const RunResult clean = run_delivery("", "exactly_once");
  INFO(check_named(clean, "delivery").detail);
  CHECK(check_named(clean, "delivery").passed);
  CHECK(check_named(clean, "delivery").detail.find(" 0 lost, 0 delivered more than once") != std::string::npos);

  const std::string loss = "faults:\n  - {at: 500ms, loss: [a], to: [b], ratio: 50%, duration: 1s}\n";
  const RunResult lossy = run_delivery(loss, "at_least_once");
  const CheckResult& lost = check_named(lossy, "delivery");
  CHECK_FALSE(lost.passed);
  CHECK(lost.kind == "lost");
  CHECK(lost.detail.find("was never received") != std::string::npos);
  REQUIRE(lost.witness);
  CHECK(lost.witness->processes == std::vector<std::string>{"/s/c"});
  CHECK(check_named(run_delivery(loss, "at_most_once"), "delivery").passed);  // losing is allowed there

  const std::string dup = "faults:\n  - {at: 500ms, duplicate: [a], to: [b], ratio: 50%, duration: 1s}\n";
  const RunResult duplicating = run_delivery(dup, "at_most_once");
  const CheckResult& twice = check_named(duplicating, "delivery");
  CHECK_FALSE(twice.passed);
  CHECK(twice.kind == "duplicated");
  CHECK(twice.witness->processes == std::vector<std::string>{"/r/c"});
  CHECK(check_named(run_delivery(dup, "at_least_once"), "delivery").passed);
  CHECK_FALSE(check_named(run_delivery(dup, "exactly_once"), "delivery").passed);
}

TEST_CASE("linearizable: the operation that fits nowhere is a history band on the timeline - from its invocation to its completion", "[history]") {
  const Scenario s = testing::load_valid(kBug);
  const RunResult r = run(s);
  const reports::RunReport report = make_report(s, r, kBug, "");
  const reports::RunView v = reports::view_of(report);
  std::vector<const reports::Band*> bands;
  for (const reports::Band& b : v.bands)
    if (b.kind == reports::BandKind::history) bands.push_back(&b);
  REQUIRE(bands.size() == 1);
  const CheckResult& c = check_named(r, "linearizable");
  REQUIRE(c.witness);
  CHECK(bands[0]->to.ns == c.witness->t_ns);  // it ends at the completion the witness names
  CHECK(bands[0]->from < bands[0]->to);
  CHECK(bands[0]->label.find("linearizable: read(k") == 0);
  // The operations the witness names besides it (the end of the longest linearizable prefix: the
  // write the stale read missed, and the reads that saw it) are marks on their clients' lanes, at
  // their completions, each saying what it did.
  REQUIRE_FALSE(c.witness->related.empty());
  std::size_t marks = 0, writes = 0;
  for (const reports::Lane& l : v.lanes)
    for (const reports::Mark& m : l.marks) {
      if (m.kind != reports::MarkKind::operation) continue;
      ++marks;
      writes += m.detail.find("linearizable: write(k") == 0 ? 1 : 0;
      CHECK((m.detail.find("linearizable: write(k") == 0 || m.detail.find("linearizable: read(k") == 0));
      const bool named = std::any_of(c.witness->related.begin(), c.witness->related.end(),
                                     [&](std::uint64_t e) { return r.kept_events()[e].time == m.at && l.path == r.kept_events()[e].label.name.text(); });
      CHECK(named);
    }
  CHECK(marks == c.witness->related.size());
  CHECK(writes >= 1);
}

TEST_CASE("linearizable: keys - only the operations on the keys given are checked - a failure names one of them", "[history]") {
  const Scenario s = testing::load_valid(kBug);
  const RunResult whole = run(s);  // kept: check_named returns a reference into it
  const CheckResult& all = check_named(whole, "linearizable");
  REQUIRE_FALSE(all.passed);
  const std::string bad = all.detail.substr(all.detail.find("(key '") + 6, 2);  // k0, k1 or k2
  std::ifstream in(kBug);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string check = "  - {linearizable: {model: kv}}";
  REQUIRE(text.find(check) != std::string::npos);
  for (const std::string& k : {std::string("k0"), std::string("k1"), std::string("k2")}) {
    std::string one = text;
    one.replace(one.find(check), check.size(), "  - {linearizable: {model: kv, keys: [" + k + "]}}");
    const RunResult r = run_with(Registry::with_builtins(), one);
    const CheckResult& c = check_named(r, "linearizable");
    INFO(k << ": " << c.detail);
    if (k == bad) CHECK_FALSE(c.passed);  // the first key a stale read was found on
    if (!c.passed) CHECK(c.detail.find("(key '" + k + "')") != std::string::npos);  // never another key's
    CHECK(c.detail.find(" 1 partition") != std::string::npos);
  }
  const RunResult none = run_with(Registry::with_builtins(), text.replace(text.find(check), check.size(),
                                                                          "  - {linearizable: {model: kv, keys: [nokey]}}"));
  CHECK(check_named(none, "linearizable").detail == "not judged: no operation on the keys given was recorded");
}
