#pragma once
// Tick spacing for a time axis: 1, 2 or 5 x 10^k of a unit (ns, µs, ms, s), or whole minutes
// (1, 2, 5, 10, 15, 30) and hours beyond, so that every label is a whole number of its unit.
// Internal to reports/.

#include <cstddef>
#include <string>

#include "sim/time.hpp"

namespace lic::reports {

struct Ticks {
  Duration step;          ///< between two ticks
  Duration unit;          ///< what the labels count: 1 ns, 1 µs, 1 ms, 1 s, 1 min or 1 h
  const char* unit_name;  ///< "ns", "µs", "ms", "s", "min" or "h"
};

/// The smallest step that puts at most `max_ticks` steps in `span` (at least one tick step;
/// a zero span gets 1 ns).
Ticks choose_ticks(Duration span, std::size_t max_ticks);

/// `at` in whole units with the unit's name: "0", "200ms", "1500ms", "2min" (a tick is a
/// multiple of the step, and the step of the unit).
std::string tick_label(Time at, const Ticks& t);

}  // namespace lic::reports
