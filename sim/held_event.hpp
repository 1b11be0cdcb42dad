#pragma once
// A kept event held by value (test code only). A Trace's log hands its events out decoded, as
// values (sim/trace.hpp, EventLog), so a list of events picked from it holds copies. This reads
// like the pointer the tests held before the log was compact: `e->time`, `*e`.

#include <memory>

#include "sim/trace.hpp"

namespace lic {

struct HeldEvent {
  TraceEvent e;
  const TraceEvent* operator->() const { return std::addressof(e); }
  const TraceEvent& operator*() const { return e; }
};

}  // namespace lic
