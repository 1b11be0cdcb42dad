#pragma once
// Small readers over a Trace for the kernel tests (test code only).

#include <optional>
#include <vector>

#include "sim/held_event.hpp"
#include "sim/simulation.hpp"

namespace lic::testing {

/// The reason `pid` exited with, if the trace has its exit.
inline std::optional<Reason> exit_reason(const Trace& t, Pid pid) {
  for (const TraceEvent& e : t.events()) {
    if (e.kind == EventKind::exit && e.pid == pid) return e.reason;
  }
  return std::nullopt;
}

inline std::vector<HeldEvent> events_of(const Trace& t, EventKind kind) {
  std::vector<HeldEvent> out;
  for (const TraceEvent& e : t.events()) {
    if (e.kind == kind) out.push_back({e});
  }
  return out;
}

/// Payload helper: the int a message carries (tests send ints).
inline int as_int(const Message& m) {
  const int* v = m.get<int>();
  return v != nullptr ? *v : -1;
}

}  // namespace lic::testing
