#pragma once
// Rendering trace events as text for people and as JSON lines for tools. The kernel emits data;
// this is where it becomes text (STYLE.md: the kernel emits data, observers render it).

#include <iosfwd>
#include <string>

#include "sim/trace.hpp"

namespace lic::reports {

/// `<0.12.0>`, or `world` for the runtime itself (pid 0).
std::string format_pid(Pid p);

/// One readable line: `   0.25s  <0.3.0> /root/input/parser#2  exit  reason={error,bad_line}`.
std::string format_event_text(const TraceEvent& e);

/// One JSON object, no newline: {"seq":..,"t_ns":..,"kind":"exit","pid":3,...}.
std::string format_event_json(const TraceEvent& e);

/// The same object appended to `out` (a buffer reused from event to event: no allocation once
/// it has grown). Written by hand, byte for byte what nlohmann's dump() of the object writes.
void append_event_json(std::string& out, const TraceEvent& e);

/// The same object built with nlohmann::ordered_json: the reference the fast writer is tested
/// against (slow; for tests).
std::string format_event_json_reference(const TraceEvent& e);

/// Streams every event as a JSON line to `out` while the simulation runs.
class JsonlSink final : public TraceSink {
 public:
  explicit JsonlSink(std::ostream& out) : out_(out) {}
  void on_event(const TraceEvent& e) override;

 private:
  std::ostream& out_;
  std::string line_;
};

}  // namespace lic::reports
