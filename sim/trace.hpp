#pragma once
// The trace: structured events appended by the kernel and by supervisors and simulated systems.
// Nothing here formats text (reports/ does). Every event feeds a stable 64-bit hash over a
// canonical encoding: integers and atom text hashes only, never addresses or atom indices.

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sim/atom.hpp"
#include "sim/exit_reason.hpp"
#include "sim/pid.hpp"
#include "sim/time.hpp"

namespace lic {

enum class EventKind : std::uint16_t {
  spawn,        ///< pid started; other = parent (spawner)
  exit,         ///< pid ended with reason
  send,         ///< pid sent message `msg` tagged `tag` to other
  deliver,      ///< message `msg` reached other's mailbox later than it was sent (timers, network)
  drop,         ///< message `msg` to other was dropped (dead or unknown receiver); reason says why
  link,         ///< pid linked to other
  unlink,       ///< pid unlinked from other
  monitor,      ///< pid monitors other; msg = the monitor ref
  demonitor,    ///< pid removed monitor msg on other
  exit_signal,  ///< pid (target) received an exit signal from other with reason; tag says what
                ///< it did: 'ignored', 'trapped' (became a message) or 'killed' (it dies)
  down,         ///< monitor msg held by pid fired: other ended with reason
  trap_exit,    ///< pid set trap_exit; msg = 1 or 0
  register_name,    ///< pid registered under tag
  unregister_name,  ///< tag no longer names pid
  system,       ///< an event of the system under test: `name` and `fields`
};

std::string_view to_string(EventKind k);

/// One value in a system event's fields.
using FieldValue = std::variant<std::int64_t, Atom, Pid, Duration, std::string>;

struct TraceField {
  Atom key;
  FieldValue value;
};

struct TraceEvent {
  Time time;
  std::uint64_t seq = 0;  ///< position in the trace, from 0
  EventKind kind = EventKind::system;
  Atom node;
  Pid pid;
  Label label;
  Pid other;
  Reason reason;
  Atom tag;
  std::uint64_t msg = 0;
  Atom name;  ///< system events: what happened (child_started, fault_injected, ...)
  std::vector<TraceField> fields;
};

/// Receives every event as it is appended (streaming to a file, a checker, a test).
class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void on_event(const TraceEvent& e) = 0;
};

enum class TraceMode : std::uint8_t {
  off,   ///< nothing is kept and nothing is hashed (the benchmark's baseline)
  hash,  ///< every event is hashed and streamed to sinks, none is kept
  keep,  ///< hashed, streamed, and kept in memory (the default)
};

class Trace {
 public:
  explicit Trace(TraceMode mode = TraceMode::keep) : mode_(mode) {}

  TraceMode mode() const { return mode_; }
  bool enabled() const { return mode_ != TraceMode::off; }
  void add_sink(TraceSink* sink) { sinks_.push_back(sink); }

  /// Stamps seq, hashes, streams and (in keep mode) stores the event.
  void append(TraceEvent&& e);

  /// The hash of every event appended so far (0x… stable across runs and compilers).
  std::uint64_t hash() const;
  std::uint64_t count() const { return count_; }
  const std::vector<TraceEvent>& events() const { return events_; }

 private:
  TraceMode mode_;
  std::vector<TraceEvent> events_;
  std::vector<TraceSink*> sinks_;
  std::uint64_t count_ = 0;
  std::uint64_t acc_ = 0x9e3779b97f4a7c15ULL;
};

/// The canonical hash of one event, folded into `acc`; exposed for tests and replays.
std::uint64_t fold_event_hash(std::uint64_t acc, const TraceEvent& e);

}  // namespace lic
