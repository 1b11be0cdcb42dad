#pragma once
// Conservation (DESIGN.md §5): every input a pipeline takes in is accounted for exactly once —
// stored, dead-lettered, or recorded as lost, and where. A pure function of the trace.
//
// The line protocol. A system that wants its inputs checked traces, for each input `seq` (an
// int, unique in the run):
//   line_emitted {seq}           the input enters the system (the source);
//   line_sent {seq, to}          a stage hands it on (to: the receiver's name, for people);
//   line_buffered {seq}          the tracing process took it from its mailbox into a buffer in
//                                its own state (a batching sink): not durable yet, and lost with
//                                the process if it ends before the line is stored or passed on;
//   line_stored {seq}            it reached the sink (durably: a batching sink traces it when it
//                                flushes the line, not when the line enters its buffer);
//   line_dead_lettered {seq, why} it reached the dead-letter queue;
//   line_lost {seq, why}         a stage lost it knowingly (e.g. crashed on it).
// line_emitted and line_sent are traced *just before* the send that carries the line, so the
// kernel's next `send` from that process (or the `drop` of that send, when no process has the
// name or pid) names the message that carries it; a later `drop` of that message (in a dead
// process's mailbox, across a partition, at a receiver gone when it lands) loses the line there,
// and a `deliver` of it means it landed. Nothing else is needed from the system.
// line_buffered was added later (issue 19) without changing the other events: a system that
// never traces it is read exactly as before, and a line stored without being buffered is stored.
// A buffered line is held by the process that traced it until that process stores it, loses
// it, dead-letters it or passes it on (line_sent); if the process's `exit` comes first the line
// is lost there, as `sink_buffer`, once (the line had left the mailbox, so it is never also a
// dead_mailbox drop). Buffered again, the latest holder holds it.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/atom.hpp"
#include "sim/trace.hpp"

namespace lic::properties {

/// The line protocol's event names and field keys.
namespace line {
extern const Atom kEmitted;       ///< line_emitted
extern const Atom kSent;          ///< line_sent
extern const Atom kBuffered;      ///< line_buffered
extern const Atom kStored;        ///< line_stored
extern const Atom kDeadLettered;  ///< line_dead_lettered
extern const Atom kLost;          ///< line_lost
extern const Atom kSeq;           ///< seq (int)
extern const Atom kTo;            ///< to (atom)
extern const Atom kWhy;           ///< why (atom)
}  // namespace line

/// Some lines: how many, and the seqs of the first `kSeqsMax` in trace order.
struct Lines {
  static constexpr std::size_t kSeqsMax = 20;
  std::size_t count = 0;
  std::vector<std::int64_t> seqs;
  void add(std::int64_t seq);
  bool operator==(const Lines&) const = default;
};

/// Why a line was lost, as conservation names it (the `lost` map's keys):
///   a line_lost's own `why` (the pipeline's validator says `crashed`);
///   `no_receiver`   sent to a name or pid with no live process;
///   `dead_mailbox`  in the mailbox of a process that ended before taking it;
///   `network`       lost by a path, blocked by a partition, or in flight when contact was lost;
///   `sink_buffer`   in the buffer of the process that traced line_buffered when it ended
///                   (the sink crashed, was killed or shut down before flushing it).
/// One line lost: the trace event that lost it (its index in the trace, its `seq` in
/// trace.jsonl), when, which line and why.
struct LineLoss {
  std::uint64_t event = 0;
  Time at{};
  Atom label;  ///< that event's process label (its path), for the witness
  std::int64_t seq = 0;
  std::string why;
  /// Where it was handed on to (the hand-off's `to`), when the send itself was lost: what the
  /// failure's identity names, since "no receiver" for the validator and for the dead-letter sink
  /// are two bugs.
  Atom to{};
};

struct Conservation {
  Lines emitted;
  Lines stored;
  Lines dead_lettered;
  std::map<std::string, Lines> lost;
  /// Every loss in trace order (what `lost` counts), with the event that lost it.
  std::vector<LineLoss> losses;
  /// Still crossing the network when the trace ends (sent to another node, not yet landed):
  /// the run stopped too soon to tell; not a violation.
  Lines in_flight;
  /// Buffered (line_buffered) by a process still alive when the trace ends, and not yet stored:
  /// the run stopped before that buffer's flush; not a violation.
  Lines buffered;
  /// Emitted and then neither stored, dead-lettered, lost nor in flight: taken by a live stage
  /// that never passed it on, or still in a live mailbox at the end. A violation.
  Lines unaccounted;
  /// Accounted more than once (stored twice, stored and lost, ...). A violation.
  Lines duplicated;
  /// Stored, dead-lettered, lost or passed on without ever being emitted. A violation.
  Lines unknown;
  /// Every emitted line accounted for exactly once, and nothing else accounted.
  bool ok = true;

  std::size_t lost_count() const;
};

/// Reads the line protocol off the trace, in one pass.
Conservation check_conservation(const EventLog& events);

/// The same pass fed one event at a time as the run appends them (a trace sink's), so the run
/// need not keep its events: on() each event in trace order, then finish() once.
class ConservationStream {
 public:
  ConservationStream();
  ConservationStream(const ConservationStream&) = delete;
  ConservationStream& operator=(const ConservationStream&) = delete;
  ~ConservationStream();
  void on(const TraceEvent& e);
  const Conservation& finish();

 private:
  class Checker;
  Conservation out_;
  std::unique_ptr<Checker> checker_;
};

/// One line for a report: "1200 emitted: 1100 stored, 80 dead-lettered, 20 lost: crashed 19 (seq
/// 17, 40, ...), no_receiver 1 (seq 52)", then what is in flight or still in a buffer at the
/// end, and each violation with its seqs.
std::string describe(const Conservation& c);

}  // namespace lic::properties
