// The OTP supervisor against the reference model (RapidCheck through Catch2): generated trees
// (depth <= 3, width <= 5, mixed strategies, restart types, intensities and windows, shutdown
// specs, workers that stop at once / slowly / never, inits that fail or ignore, significant
// children) and generated timed faults (crashes with every exit reason, kills) are run in the
// simulator, and the trace must equal the model's prediction event for event: which processes
// start, in which order, which end, with which reason, at which virtual instant, and where the
// maximum restart intensity is reached. That covers restart scope per strategy, restart types x
// exit reasons, escalation exactly when the intensity is exceeded (and never otherwise),
// termination in reverse start order, and shutdown timeout -> kill (reported as a shutdown
// error). A failing case prints the shrunk tree, the faults, the first differing event, and
// RapidCheck's reproduce string.

#include <rapidcheck.h>

#include "sim/rc_prop.hpp"

#include <ostream>
#include <string>
#include <vector>

#include "sim/simulation.hpp"
#include "supervision/model_harness.hpp"
#include "supervision/reference_model.hpp"

using namespace lic;
using namespace lic::literals;
using namespace lic::supervision;
using namespace lic::supervision::model;

namespace lic::supervision::model {

void print(std::ostream& os, const Node& n, int depth) {
  os << std::string(static_cast<std::size_t>(depth) * 2, ' ') << n.spec.id << " "
     << to_string(n.spec.restart);
  if (n.spec.significant) os << " significant";
  if (n.spec.type == ChildType::supervisor) {
    os << " sup " << to_string(n.flags.strategy) << " " << n.flags.intensity << "/"
       << format_duration(n.flags.period)
       << (n.flags.window == IntensityWindow::precise ? " precise" : "")
       << (n.flags.auto_shutdown != AutoShutdown::never ? " auto_shutdown=" : "")
       << (n.flags.auto_shutdown != AutoShutdown::never ? to_string(n.flags.auto_shutdown) : "") << "\n";
    for (const Node& c : n.children) print(os, c, depth + 1);
    return;
  }
  const Shutdown& s = n.spec.shutdown;
  os << " shutdown="
     << (s.kind == Shutdown::Kind::brutal_kill ? "brutal_kill"
         : s.kind == Shutdown::Kind::infinity  ? "infinity"
                                               : format_duration(s.timeout));
  os << " stop=" << (n.stop == StopStyle::prompt ? "prompt" : n.stop == StopStyle::delay ? "delay " : "stall");
  if (n.stop == StopStyle::delay) os << format_duration(n.stop_delay);
  if (!n.inits.empty()) {
    os << " inits=";
    for (InitOutcome o : n.inits) os << (o == InitOutcome::ok ? "o" : o == InitOutcome::ignore ? "i" : "e");
  }
  os << "\n";
}

std::ostream& operator<<(std::ostream& os, const Node& n) {
  os << "\n";
  print(os, n, 0);
  return os;
}

std::ostream& operator<<(std::ostream& os, const Injection& i) {
  return os << "+" << format_duration(i.after) << " " << i.path << " " << to_string(i.reason);
}

}  // namespace lic::supervision::model

namespace {

rc::Gen<Duration> millis(std::initializer_list<int> values) {
  std::vector<Duration> ds;
  for (int v : values) ds.push_back(Duration{std::int64_t{v} * 1'000'000});
  return rc::gen::elementOf(ds);
}

Node gen_worker(std::string id, const SupFlags& parent) {
  Node n;
  n.spec.id = std::move(id);
  n.spec.restart = *rc::gen::weightedElement<RestartType>(
      {{2, RestartType::permanent}, {1, RestartType::transient}, {1, RestartType::temporary}});
  n.stop = *rc::gen::weightedElement<StopStyle>(
      {{5, StopStyle::prompt}, {3, StopStyle::delay}, {2, StopStyle::stall}});
  if (n.stop == StopStyle::delay) n.stop_delay = *millis({5, 25, 60});
  // Timeouts and stop delays never coincide: which of the two comes first is then clear.
  const int kind = *rc::gen::inRange(0, n.stop == StopStyle::stall ? 2 : 3);
  n.spec.shutdown = kind == 0 ? Shutdown::brutal_kill()
                    : kind == 1 ? Shutdown::after(*millis({10, 40, 100}))
                                : Shutdown::infinity();
  if (*rc::gen::weightedElement<bool>({{4, false}, {1, true}})) {
    // Mostly the first start succeeds and later ones fail or ignore: restarts that fail are the
    // interesting part, and a tree that cannot start at all has little to show.
    const auto outcome = rc::gen::weightedElement<InitOutcome>(
        {{6, InitOutcome::ok}, {3, InitOutcome::error}, {2, InitOutcome::ignore}});
    n.inits.push_back(*rc::gen::weightedElement<bool>({{9, true}, {1, false}}) ? InitOutcome::ok : *outcome);
    const auto more = *rc::gen::container<std::vector<InitOutcome>>(*rc::gen::inRange(0, 3), outcome);
    n.inits.insert(n.inits.end(), more.begin(), more.end());
  }
  n.spec.significant = parent.auto_shutdown != AutoShutdown::never &&
                       n.spec.restart != RestartType::permanent && *rc::gen::arbitrary<bool>();
  return n;
}

SupFlags gen_flags() {
  SupFlags f;
  f.strategy = *rc::gen::element(Strategy::one_for_one, Strategy::one_for_all, Strategy::rest_for_one);
  f.intensity = *rc::gen::weightedElement<std::uint32_t>({{1, 0}, {3, 1}, {3, 2}, {3, 3}, {2, 5}});
  f.period = kSecond * *rc::gen::inRange(1, 6);
  f.window = *rc::gen::weightedElement<IntensityWindow>(
      {{6, IntensityWindow::otp_seconds}, {1, IntensityWindow::precise}});
  f.auto_shutdown = *rc::gen::weightedElement<AutoShutdown>(
      {{8, AutoShutdown::never}, {1, AutoShutdown::any_significant}, {1, AutoShutdown::all_significant}});
  return f;
}

/// A supervisor at `depth` (the root is 1; trees are at most 3 deep, at most 5 wide).
Node gen_supervisor(std::string id, int depth, const SupFlags* parent) {
  Node n;
  n.spec.id = std::move(id);
  n.spec.type = ChildType::supervisor;
  n.spec.shutdown = Shutdown::infinity();
  if (parent != nullptr) {
    n.spec.restart = *rc::gen::weightedElement<RestartType>(
        {{3, RestartType::permanent}, {1, RestartType::transient}, {1, RestartType::temporary}});
    n.spec.significant = parent->auto_shutdown != AutoShutdown::never &&
                         n.spec.restart != RestartType::permanent && *rc::gen::arbitrary<bool>();
  }
  n.flags = gen_flags();
  const int width = *rc::gen::inRange(1, 6);
  for (int k = 1; k <= width; ++k) {
    const bool sup = depth < 3 && *rc::gen::weightedElement<bool>({{3, false}, {1, true}});
    n.children.push_back(sup ? gen_supervisor("s" + std::to_string(k), depth + 1, &n.flags)
                             : gen_worker("w" + std::to_string(k), n.flags));
  }
  return n;
}

std::vector<Injection> gen_injections(const Node& root) {
  const std::vector<std::string> targets = worker_paths(root);
  std::vector<Injection> out;
  if (targets.empty()) return out;
  const int count = *rc::gen::inRange(0, 31);
  for (int k = 0; k < count; ++k) {
    Injection i;
    const int spacing = *rc::gen::weightedElement<int>({{1, 0}, {5, 1}, {3, 2}});
    i.after = spacing == 0 ? Duration::zero()
              : spacing == 1 ? Duration{std::int64_t{*rc::gen::inRange(1, 1500)} * 1'000'000}
                             : kSecond * *rc::gen::inRange(1, 7);
    i.path = *rc::gen::elementOf(targets);
    i.reason = *rc::gen::weightedElement<Reason>({{2, Reason::kill()},
                                                  {2, Reason::error(Atom("boom"))},
                                                  {1, Reason::normal()},
                                                  {1, Reason::shutdown()},
                                                  {1, Reason::shutdown(Atom("x"))},
                                                  {1, Reason::killed()}});
    out.push_back(std::move(i));
  }
  return out;
}

void classify(const std::vector<Event>& events) {
  bool escalated = false, root_gave_up = false, shutdown_error = false, killed_on_timeout = false, auto_shutdown = false;
  for (const Event& e : events) {
    escalated |= e.kind == Happened::max_intensity;
    root_gave_up |= e.kind == Happened::max_intensity && e.path == "/root";
    shutdown_error |= e.kind == Happened::shutdown_error;
    killed_on_timeout |= e.kind == Happened::shutdown_error && e.reason == "killed";
    auto_shutdown |= e.kind == Happened::auto_shutdown;
  }
  RC_CLASSIFY(escalated, "some supervisor reached its max restart intensity");
  RC_CLASSIFY(root_gave_up, "the root gave up");
  RC_CLASSIFY(killed_on_timeout, "a shutdown timed out and killed");
  RC_CLASSIFY(shutdown_error && !killed_on_timeout, "other shutdown errors");
  RC_CLASSIFY(auto_shutdown, "auto_shutdown");
  RC_CLASSIFY(events.size() < 20, "fewer than 20 events");
  RC_CLASSIFY(events.size() >= 100, "100 events or more");
}

}  // namespace

TEST_CASE("supervision model: the simulator's trace equals the reference model's prediction") {
  lic::test::prop("generated trees and faults - fifo and random tie-break", [] {
    const Node root = gen_supervisor("root", 1, nullptr);
    const std::vector<Injection> faults = gen_injections(root);
    const std::uint64_t seed = *rc::gen::inRange<std::uint64_t>(1, 1'000'000);
    const TieBreak tie = *rc::gen::element(TieBreak::fifo, TieBreak::random);
    RC_LOG() << "tree:" << root << "faults:\n";
    for (const Injection& i : faults) RC_LOG() << "  " << i << "\n";

    const std::vector<Event> expected = predict(root, faults);
    SimOptions o;
    o.seed = seed;
    o.tie_break = tie;
    Simulation sim(o);
    const std::vector<Event> got = observe(sim, root, faults);
    const std::string diff = first_difference(expected, got);
    RC_LOG() << diff;
    classify(expected);
    RC_ASSERT(diff.empty());
  });
}

TEST_CASE("supervision model: a wrong model is caught - the comparison can fail") {
  // A one_for_one root where w1 crashes: the model told one_for_all instead predicts w2 is
  // restarted too, and the comparison must say so.
  Node w1;
  w1.spec.id = "w1";
  Node w2;
  w2.spec.id = "w2";
  SupFlags flags;
  flags.intensity = 3;
  const Node real = root("root", flags, {w1, w2});
  SupFlags wrong_flags = flags;
  wrong_flags.strategy = Strategy::one_for_all;
  const Node wrong = root("root", wrong_flags, {w1, w2});
  const std::vector<Injection> faults{{1_s, "/root/w1", Reason::error(Atom("boom"))}};
  Simulation sim;
  const std::vector<Event> got = observe(sim, real, faults);
  CHECK(first_difference(predict(real, faults), got).empty());
  const std::string diff = first_difference(predict(wrong, faults), got);
  CHECK_THAT(diff, Catch::Matchers::Contains("first difference"));
  CHECK_THAT(diff, Catch::Matchers::Contains("/root/w2"));
}

TEST_CASE("supervision model: OTP's window - restarts 5.9 s apart count together and 5.1 s apart do not") {
  // period 5 s, intensity 1: two restarts in one window exceed it. Restarts at 5.0 s and 10.9 s
  // share the window (floor: 5 >= 10 - 5); at 4.9 s and 10.0 s they do not (4 < 10 - 5).
  Node w;
  w.spec.id = "w";
  const Node tree = root("root", SupFlags{}, {w});
  auto gives_up = [&](Duration first, Duration second) {
    const std::vector<Injection> faults{{first, "/root/w", Reason::error(Atom("boom"))},
                                        {second - first, "/root/w", Reason::error(Atom("boom"))}};
    Simulation sim;
    const std::vector<Event> got = observe(sim, tree, faults);
    REQUIRE(first_difference(predict(tree, faults), got).empty());
    for (const Event& e : got) {
      if (e.kind == Happened::max_intensity) return true;
    }
    return false;
  };
  CHECK(gives_up(5_s, 10_s + 900_ms));
  CHECK_FALSE(gives_up(4_s + 900_ms, 10_s));
}
