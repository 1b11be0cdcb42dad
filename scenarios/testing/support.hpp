#pragma once
// Small helpers for the catalogue and pipeline tests (test code only): behaviour references
// written in code, children started from them, and readers of system events.

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "sim/held_event.hpp"
#include "scenarios/registry.hpp"
#include "sim/simulation.hpp"
#include "supervision/supervisor.hpp"

namespace lic::scenarios::testing {

/// An argument as a file would give it, at line:col.
inline std::pair<std::string, ArgValue> arg(std::string name, std::string text, int line = 0, int col = 0) {
  ArgValue v;
  v.scalar = std::move(text);
  v.mark = Mark{line, col};
  return {std::move(name), std::move(v)};
}

inline std::pair<std::string, ArgValue> list_arg(std::string name, std::vector<std::string> items,
                                                 int line = 0, int col = 0) {
  ArgValue v;
  v.list = std::move(items);
  v.is_list = true;
  v.mark = Mark{line, col};
  return {std::move(name), std::move(v)};
}

inline BehaviourRef ref(std::string name, std::vector<std::pair<std::string, ArgValue>> args = {},
                        Mark mark = {}) {
  return BehaviourRef{std::move(name), std::move(args), mark};
}

/// The factory of a reference that must be right.
inline BehaviourFactory make(const BehaviourRef& r) {
  std::vector<Diagnostic> errors;
  BehaviourFactory f = Registry::builtin().make_behaviour(r, errors);
  for (const Diagnostic& d : errors) UNSCOPED_INFO(d.message);
  REQUIRE(errors.empty());
  REQUIRE(f);
  return f;
}

/// A supervised child running the behaviour `r`.
inline supervision::Child child(std::string id, const BehaviourRef& r,
                                supervision::Shutdown shutdown = supervision::Shutdown::after(kSecond * 5),
                                supervision::RestartType restart = supervision::RestartType::permanent) {
  supervision::Child c;
  c.spec.id = std::move(id);
  c.spec.shutdown = shutdown;
  c.spec.restart = restart;
  c.start.behaviour = [f = make(r)] { return f(""); };
  return c;
}

/// Spawns a root supervisor labelled /root (not run yet).
inline Pid spawn_root(Simulation& sim, supervision::SupervisorSpec spec) {
  SpawnOptions o;
  o.label = Label{Atom("/root"), 1};
  return sim.spawn(std::make_unique<supervision::Supervisor>(std::move(spec)), o);
}

inline std::vector<HeldEvent> system_events(const Trace& t, const char* name) {
  std::vector<HeldEvent> out;
  for (const TraceEvent& e : t.events()) {
    if (e.kind == EventKind::system && e.name == Atom(name)) out.push_back({e});
  }
  return out;
}

/// A field of a system event, or nullptr.
template <class T>
const T* field(const TraceEvent& e, const char* key) {
  return e.field<T>(Atom(key));
}

}  // namespace lic::scenarios::testing
