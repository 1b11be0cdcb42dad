#pragma once
// RapidCheck generators of reference-model cases (test code only): OTP supervision trees (depth
// <= 3, width <= 5, mixed strategies, restart types, intensities and windows, shutdown specs,
// workers that stop at once / slowly / never, inits that fail or ignore, significant children)
// and timed faults on their workers (crashes with every exit reason, kills). The model property
// (properties/supervision_properties_test.cpp) and the scenario-file property
// (scenarios/model_case_test.cpp) both draw from these.

#include <rapidcheck.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "supervision/reference_model.hpp"

namespace lic::supervision::model::gen {

inline rc::Gen<Duration> millis(std::initializer_list<int> values) {
  std::vector<Duration> ds;
  for (int v : values) ds.push_back(Duration{std::int64_t{v} * 1'000'000});
  return rc::gen::elementOf(ds);
}

inline Node gen_worker(std::string id, const SupFlags& parent) {
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

inline SupFlags gen_flags() {
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
inline Node gen_supervisor(std::string id, int depth, const SupFlags* parent) {
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

inline std::vector<Injection> gen_injections(const Node& root) {
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

}  // namespace lic::supervision::model::gen
