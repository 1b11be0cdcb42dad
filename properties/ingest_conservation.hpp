#pragma once
// Conservation for an ingest server (seed 004; scenarios/behaviours/ingest.hpp): every event it
// accepted ends in exactly one place, uploaded to S3, saved in the DLQ (a complete file), or
// lost, and for a lost one: which batch, where it was (EventCh, CollectLoop's open batch,
// UploadCh, in flight to S3, a DLQ file cut short) and why (cancelled, sigkill, panic, dlq_full,
// exited). A pure function of the trace. Events refused at ingress (HTTP 503) are counted as
// refused, not lost.
//
// The protocol, traced by the server's goroutines (ids are 1, 2, ... in the order accepted, and
// a batch holds consecutive ids):
//   event_accepted {id}   event_refused {why}   event_collected {id, batch}
//   batch_queued / batch_taken / s3_put / batch_uploaded {batch, first, last, events}
//   batch_dropped / upload_cancelled / upload_failed {batch, first, last, events, why}
//   dlq_open {..., bytes}   dlq_written {batch}   dlq_full {..., bytes, free}
//   shutdown_step {step}
// and how the task ended comes from the kernel: task_exit (its main returned or panicked) or a
// SIGKILL `signal`.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/atom.hpp"
#include "sim/trace.hpp"

namespace lic::properties {

/// The protocol's event names and field keys.
namespace ingest {
extern const Atom kAccepted, kRefused, kCollected, kQueued, kDropped, kTaken, kPut, kUploaded, kUploadFailed,
    kUploadCancelled, kDlqOpen, kDlqWritten, kDlqFull, kShutdownStep;
extern const Atom kId, kBatch, kFirst, kLast, kEvents, kBytes, kFree, kWhy, kStep;
}  // namespace ingest

/// Events lost together: a batch (or, for EventCh, the ids never collected).
struct LostEvents {
  std::int64_t batch = 0;  ///< 0: never in a batch
  std::int64_t first = 0;
  std::int64_t last = 0;
  std::int64_t events = 0;
  std::string where;  ///< EventCh, open batch, UploadCh, UploadLoop, in flight to S3, DLQ, DLQ file cut short
  std::string why;    ///< cancelled, sigkill, panic, dlq_full, exited
  std::string detail;  ///< a panic's text, a failure's reason
  Time at{};           ///< when it was lost (the task's end, or the event that lost it)
};

struct IngestConservation {
  std::int64_t accepted = 0;
  std::int64_t uploaded = 0;  ///< events in batches S3 took
  std::int64_t dlq = 0;       ///< events in complete DLQ files
  std::int64_t refused = 0;   ///< 503s (busy, or after SIGTERM)
  std::int64_t pending = 0;   ///< still in the server when the run ended with the task running
  std::int64_t batches_uploaded = 0;
  std::int64_t batches_dlq = 0;
  std::vector<LostEvents> lost;
  /// How the task ended ("" while it runs): exited, panic: <reason>, sigkill.
  std::string ended;
  /// Accounting violations (an event in two batches, counts that do not add up).
  std::vector<std::string> violations;
  bool ok() const { return violations.empty(); }
  std::int64_t lost_events() const;
};

/// Whether the trace holds an ingest server's events.
bool has_ingest(const EventLog& events);

IngestConservation check_ingest(const EventLog& events);

/// One line: "12003 accepted: 11500 uploaded (23 batches), 503 in the DLQ (1 batch), 0 lost;
/// 12 refused", then each loss: "batch 24 (events 11501..12003, 503 events): UploadCh, cancelled
/// at t=60.1s".
std::string describe(const IngestConservation& c, std::size_t shown = 5);
std::string describe(const LostEvents& l);

}  // namespace lic::properties
