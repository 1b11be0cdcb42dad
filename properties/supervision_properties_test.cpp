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

#include "scenarios/testing/counterexample.hpp"
#include "scenarios/checks/model.hpp"
#include "sim/rc_prop.hpp"

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "sim/simulation.hpp"
#include "supervision/model_gen.hpp"
#include "supervision/model_harness.hpp"
#include "supervision/reference_model.hpp"

using namespace lic;
using namespace lic::literals;
using namespace lic::supervision;
using namespace lic::supervision::model;
using namespace lic::supervision::model::gen;

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
    lic::test::counterexample_written().clear();  // says whether this case (the last run: the minimal one) wrote it
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
    std::vector<Time> at;
    const std::vector<Event> got = observe(sim, root, faults, &at);
    const std::string diff = first_difference(expected, got);
    RC_LOG() << diff;
    classify(expected);
    if (!diff.empty()) {
      // The case as a scenario file with the `model` check: `letitcrash run` replays it.
      const Time end = std::max(sim.now(), expected.empty() ? Time{} : expected.back().at);
      lic::test::write_counterexample(lic::scenarios::from_model_case(root, faults, at, end, seed, tie, ""));
    }
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
