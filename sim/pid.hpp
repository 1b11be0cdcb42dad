#pragma once
// Identifiers handed out by a Simulation: process ids, references (monitors, calls, timers) and
// process labels. Pids and refs are per-simulation counters, so they are the same in every run
// of the same scenario and seed.

#include <compare>
#include <cstdint>

#include "sim/atom.hpp"

namespace lic {

/// A process identifier; 0 is "no process" (Erlang's `undefined`).
struct Pid {
  std::uint64_t id = 0;
  constexpr explicit operator bool() const { return id != 0; }
  constexpr auto operator<=>(const Pid&) const = default;
};

/// A unique reference (make_ref): monitors, calls, timers.
struct Ref {
  std::uint64_t id = 0;
  constexpr explicit operator bool() const { return id != 0; }
  constexpr auto operator<=>(const Ref&) const = default;
};

/// Who a process is in the system under test, given by whoever spawns it: supervisors use the
/// child's tree path (`/root/input/parser`) and its start attempt number.
struct Label {
  Atom name;
  std::uint32_t instance = 0;
  bool operator==(const Label&) const = default;
};

}  // namespace lic
