#include "properties/ingest_conservation.hpp"

#include <fmt/format.h>

#include <map>

namespace lic::properties {

namespace ingest {
const Atom kAccepted("event_accepted");
const Atom kRefused("event_refused");
const Atom kCollected("event_collected");
const Atom kQueued("batch_queued");
const Atom kDropped("batch_dropped");
const Atom kTaken("batch_taken");
const Atom kPut("s3_put");
const Atom kUploaded("batch_uploaded");
const Atom kUploadFailed("upload_failed");
const Atom kUploadCancelled("upload_cancelled");
const Atom kDlqOpen("dlq_open");
const Atom kDlqWritten("dlq_written");
const Atom kDlqFull("dlq_full");
const Atom kShutdownStep("shutdown_step");
const Atom kId("id");
const Atom kBatch("batch");
const Atom kFirst("first");
const Atom kLast("last");
const Atom kEvents("events");
const Atom kBytes("bytes");
const Atom kFree("free");
const Atom kWhy("why");
const Atom kStep("step");
}  // namespace ingest

namespace {

using namespace ingest;

enum class State : std::uint8_t { queued, taken, in_flight, failed, dlq_open, uploaded, written, lost };

struct BatchState {
  std::int64_t first = 0, last = 0, events = 0;
  State state = State::queued;
  std::string why, detail, where;
  Time at{};
};

std::int64_t num(const TraceEvent& e, Atom key) {
  const std::int64_t* v = e.field<std::int64_t>(key);
  return v == nullptr ? 0 : *v;
}

/// Reads the protocol off the trace in one pass; resolve() then says where each event ended.
class Reader {
 public:
  void read(const TraceEvent& e) {
    if (e.kind == EventKind::task_exit && e.node == node_) {
      const bool clean = e.reason == Reason::normal();
      return end(clean ? "exited" : "panic", clean ? "" : lic::to_string(e.reason), e.time);
    }
    if (e.kind == EventKind::signal && !e.pid && e.node == node_ && e.tag == Atom("sigkill")) return end("sigkill", "", e.time);
    if (e.kind != EventKind::system) return;
    if (e.name == kAccepted) {
      node_ = e.node;
      out_.accepted = std::max(out_.accepted, num(e, kId));
    } else if (e.name == kRefused) {
      ++out_.refused;
    } else if (e.name == kCollected) {
      collect(num(e, kId), num(e, kBatch));
    } else {
      batch_event(e);
    }
  }

  IngestConservation resolve() {
    for (auto& [id, b] : batches_) settle(id, b);
    if (open_.events > 0) settle_open();
    if (collected_ < out_.accepted) {
      LostEvents l{0, collected_ + 1, out_.accepted, out_.accepted - collected_, "EventCh", why_, detail_, at_};
      lose_or_pend(l);
    }
    const std::int64_t sum = out_.uploaded + out_.dlq + out_.lost_events() + out_.pending;
    if (sum != out_.accepted)
      out_.violations.push_back(fmt::format("{} accepted but {} accounted for", out_.accepted, sum));
    return out_;
  }

 private:
  void end(const char* why, std::string detail, Time at) {
    if (!why_.empty()) return;  // the first end is the end
    why_ = why;
    detail_ = std::move(detail);
    at_ = at;
    out_.ended = why_ + (detail_.empty() ? "" : ": " + detail_);
  }

  void collect(std::int64_t id, std::int64_t batch) {
    if (id <= collected_) out_.violations.push_back(fmt::format("event {} collected twice", id));
    collected_ = std::max(collected_, id);
    if (batch != open_.batch) open_ = LostEvents{batch, id, id, 0, "open batch", "", "", {}};
    open_.last = id;
    ++open_.events;
  }

  void batch_event(const TraceEvent& e) {
    const std::int64_t id = num(e, kBatch);
    if (id == 0) return;
    BatchState& b = batches_[id];
    if (e.name == kQueued || e.name == kDropped) {
      b.first = num(e, kFirst);
      b.last = num(e, kLast);
      b.events = num(e, kEvents);
      if (id == open_.batch) open_ = LostEvents{};
    }
    const std::string why = e.text(kWhy);
    if (e.name == kQueued) b.state = State::queued;
    else if (e.name == kTaken) b.state = State::taken;
    else if (e.name == kPut) b.state = State::in_flight;
    else if (e.name == kUploaded) b.state = State::uploaded;
    else if (e.name == kUploadFailed) b.state = State::failed, b.detail = why;
    else if (e.name == kDlqOpen) b.state = State::dlq_open;
    else if (e.name == kDlqWritten) b.state = State::written;
    else if (e.name == kDropped) lose(b, "open batch", why, e.time);
    else if (e.name == kUploadCancelled) lose(b, "in flight to S3", why, e.time);
    else if (e.name == kDlqFull) lose(b, "DLQ", "dlq_full", e.time, fmt::format("{} bytes free", num(e, kFree)));
  }

  static void lose(BatchState& b, const char* where, std::string why, Time at, std::string detail = {}) {
    b.state = State::lost;
    b.where = where;
    b.why = std::move(why);
    b.detail = std::move(detail);
    b.at = at;
  }

  void settle(std::int64_t id, const BatchState& b) {
    LostEvents l{id, b.first, b.last, b.events, b.where, b.why, b.detail, b.at};
    switch (b.state) {
      case State::uploaded:
        out_.uploaded += b.events;
        ++out_.batches_uploaded;
        return;
      case State::written:
        out_.dlq += b.events;
        ++out_.batches_dlq;
        return;
      case State::lost:
        out_.lost.push_back(l);
        return;
      case State::queued: l.where = "UploadCh"; break;
      case State::taken: l.where = "UploadLoop"; break;
      case State::in_flight: l.where = "in flight to S3"; break;
      case State::failed: l.where = "UploadLoop, on its way to the DLQ"; break;
      case State::dlq_open: l.where = "DLQ file cut short (corrupt)"; break;
    }
    l.why = why_;
    l.detail = detail_;
    l.at = at_;
    lose_or_pend(l);
  }

  void settle_open() {
    LostEvents l = open_;
    l.why = why_;
    l.detail = detail_;
    l.at = at_;
    lose_or_pend(l);
  }

  /// Lost when the task has ended; otherwise the run stopped while it still held them.
  void lose_or_pend(const LostEvents& l) {
    if (why_.empty()) out_.pending += l.events;
    else out_.lost.push_back(l);
  }

  IngestConservation out_;
  Atom node_;
  std::int64_t collected_ = 0;
  LostEvents open_;  // the open batch: collected, not yet queued or dropped
  std::map<std::int64_t, BatchState> batches_;
  std::string why_, detail_;  // how the task ended
  Time at_{};
};

}  // namespace

std::int64_t IngestConservation::lost_events() const {
  std::int64_t n = 0;
  for (const LostEvents& l : lost) n += l.events;
  return n;
}

bool has_ingest(const EventLog& events) {
  for (const TraceEvent& e : events) {
    if (e.kind == EventKind::system && e.name == kAccepted) return true;
  }
  return false;
}

IngestConservation check_ingest(const EventLog& events) {
  Reader r;
  for (const TraceEvent& e : events) r.read(e);
  return r.resolve();
}

std::string describe(const LostEvents& l) {
  const std::string n = fmt::format("{} event{}", l.events, l.events == 1 ? "" : "s");
  const std::string what = l.batch != 0 ? fmt::format("batch {} (events {}..{}, {})", l.batch, l.first, l.last, n)
                                        : fmt::format("events {}..{} ({})", l.first, l.last, n);
  return fmt::format("{}: {}, {}{} at t={}", what, l.where, l.why, l.detail.empty() ? "" : " (" + l.detail + ")",
                     format_time(l.at));
}

std::string describe(const IngestConservation& c, std::size_t shown) {
  std::string s = fmt::format("{} accepted: {} uploaded ({} batches), {} in the DLQ ({} files), {} lost", c.accepted,
                              c.uploaded, c.batches_uploaded, c.dlq, c.batches_dlq, c.lost_events());
  if (c.pending > 0) s += fmt::format(", {} still in the server at the end", c.pending);
  s += fmt::format("; {} refused", c.refused);
  if (!c.ended.empty()) s += "; the task ended: " + c.ended;
  for (std::size_t i = 0; i < c.lost.size() && i < shown; ++i) s += "; lost " + describe(c.lost[i]);
  if (c.lost.size() > shown) s += fmt::format("; and {} more losses", c.lost.size() - shown);
  for (const std::string& v : c.violations) s += "; VIOLATION: " + v;
  return s;
}

}  // namespace lic::properties
