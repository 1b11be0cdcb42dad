#include "properties/conservation.hpp"

#include <memory>
#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <variant>

namespace lic::properties {

namespace line {
const Atom kEmitted("line_emitted");
const Atom kSent("line_sent");
const Atom kBuffered("line_buffered");
const Atom kStored("line_stored");
const Atom kDeadLettered("line_dead_lettered");
const Atom kLost("line_lost");
const Atom kSeq("seq");
const Atom kTo("to");
const Atom kWhy("why");
}  // namespace line

void Lines::add(std::int64_t seq) {
  ++count;
  if (seqs.size() < kSeqsMax) seqs.push_back(seq);
}

std::size_t Conservation::lost_count() const {
  std::size_t n = 0;
  for (const auto& [why, lines] : lost) n += lines.count;
  return n;
}

namespace {

struct LineState {
  std::int64_t seq = 0;
  std::uint64_t order = 0;  // when it was first mentioned (or mentioned again once retired)
  bool emitted = false;
  std::size_t accounted = 0;
  std::uint64_t msg = 0;  // the message carrying it now (0: none, or held by a stage)
  bool landed = false;    // that message is in its receiver's mailbox
  Pid holder;             // the process whose buffer holds it (line_buffered), if any
};

std::optional<std::int64_t> seq_of(const TraceEvent& e) {
  for (const TraceField& f : e.fields()) {
    if (f.key != line::kSeq) continue;
    if (const auto* v = std::get_if<std::int64_t>(&f.value)) return *v;
  }
  return std::nullopt;
}

std::string why_of(const TraceEvent& e) {
  for (const TraceField& f : e.fields()) {
    if (f.key != line::kWhy) continue;
    if (const auto* a = std::get_if<Atom>(&f.value)) return std::string(a->text());
    if (const auto* s = std::get_if<std::string>(&f.value)) return *s;
  }
  return "unknown";
}

/// A drop of a message not (yet) in its receiver's mailbox.
std::string why_dropped(const Reason& r) {
  return r == Reason::noproc() ? "no_receiver" : "network";
}

/// A set of seqs: a bit each for the usual small non-negative ones, a tree for the others.
class SeqSet {
 public:
  void insert(std::int64_t seq) {
    if (dense(seq)) {
      const auto i = static_cast<std::size_t>(seq);
      if (bits_.size() <= i / 64) bits_.resize(std::max(i / 64 + 1, bits_.size() * 2));
      bits_[i / 64] |= std::uint64_t{1} << (i % 64);
    } else {
      insert_far(seq);
    }
  }
  /// Whether it was there.
  bool erase(std::int64_t seq) {
    if (!dense(seq)) return erase_far(seq);
    const auto i = static_cast<std::size_t>(seq);
    if (bits_.size() <= i / 64) return false;
    const std::uint64_t bit = std::uint64_t{1} << (i % 64);
    const bool was = (bits_[i / 64] & bit) != 0;
    bits_[i / 64] &= ~bit;
    return was;
  }

 private:
  static bool dense(std::int64_t seq) { return seq >= 0 && seq < (std::int64_t{1} << 26); }

  /// The run [first, last] of far seqs holding `seq`, or end().
  std::map<std::int64_t, std::int64_t>::iterator run_of(std::int64_t seq) {
    auto it = runs_.upper_bound(seq);
    if (it == runs_.begin()) return runs_.end();
    --it;
    return it->second >= seq ? it : runs_.end();
  }

  // Far seqs (the pipeline's readers count from 10^9 × their pid) as runs of consecutive seqs:
  // a reader's lines retire nearly in order, so its retired ones stay a run or a few.
  void insert_far(std::int64_t seq) {
    if (run_of(seq) != runs_.end()) return;
    auto next = seq == std::numeric_limits<std::int64_t>::max() ? runs_.end() : runs_.find(seq + 1);
    auto prev = seq == std::numeric_limits<std::int64_t>::min() ? runs_.end() : run_of(seq - 1);
    const std::int64_t last = next != runs_.end() ? next->second : seq;
    if (next != runs_.end()) runs_.erase(next);
    if (prev != runs_.end()) prev->second = last;
    else runs_.emplace(seq, last);
  }

  bool erase_far(std::int64_t seq) {
    const auto it = run_of(seq);
    if (it == runs_.end()) return false;
    const std::int64_t first = it->first, last = it->second;
    runs_.erase(it);
    if (first < seq) runs_.emplace(first, seq - 1);
    if (seq < last) runs_.emplace(seq + 1, last);
    return true;
  }

  std::vector<std::uint64_t> bits_;
  std::map<std::int64_t, std::int64_t> runs_;  // first -> last, disjoint and never adjacent
};

}  // namespace

/// The pass over the trace; `out` collects as it goes.
class ConservationStream::Checker {
  /// A process's buffer (line_buffered).
  struct Held {
    static constexpr std::size_t kCompactMin = 4096;
    std::vector<std::int64_t> seqs;  // the lines it buffered, in order (the retired ones let go now and then)
    std::size_t compact_at = kCompactMin;
  };
 public:
  explicit Checker(Conservation& out) : out_(out) {}

  void on(const TraceEvent& e) {
    current_ = std::addressof(e);  // for this call only
    switch (e.kind) {
      case EventKind::spawn: node_[e.pid] = e.node; break;
      case EventKind::system: on_system(e); break;
      case EventKind::exit: on_exit(e.pid); break;
      case EventKind::send: on_send(e); break;
      case EventKind::deliver: on_deliver(e); break;
      case EventKind::drop: on_drop(e); break;
      default: break;
    }
  }

  void finish() {
    std::vector<const LineState*> open;  // never accounted: in order of first mention
    for (const auto& [seq, s] : lines_)
      if (s.accounted == 0) open.push_back(&s);
    std::sort(open.begin(), open.end(), [](const LineState* a, const LineState* b) { return a->order < b->order; });
    for (const LineState* line : open) {
      const LineState& s = *line;
      if (!s.emitted) {
        out_.unknown.add(s.seq);  // passed on by a stage, never emitted nor accounted
      } else {
        (s.holder ? out_.buffered : s.msg != 0 && !s.landed ? out_.in_flight : out_.unaccounted).add(s.seq);
      }
    }
    out_.ok = out_.unaccounted.count == 0 && out_.duplicated.count == 0 && out_.unknown.count == 0;
  }

 private:
  /// The line's state, made on its first mention. A retired line comes back as it was retired:
  /// emitted, accounted, carried and held by nobody.
  LineState& state(std::int64_t seq) {
    auto [it, fresh] = lines_.try_emplace(seq);
    if (fresh) {
      it->second.seq = seq;
      it->second.order = next_order_++;
      if (retired_.erase(seq)) {
        it->second.emitted = true;
        it->second.accounted = 1;
      }
    }
    return it->second;
  }

  /// The line's state when it is not retired, without making it.
  const LineState* peek(std::int64_t seq) const {
    const auto it = lines_.find(seq);
    return it == lines_.end() ? nullptr : &it->second;
  }

  void on_system(const TraceEvent& e) {
    const std::optional<std::int64_t> seq = seq_of(e);
    if (!seq) return;
    if (e.name == line::kEmitted) {
      LineState& s = state(*seq);
      if (s.emitted) out_.duplicated.add(*seq);  // a seq used twice: the check cannot tell them apart
      s.emitted = true;
      out_.emitted.add(*seq);
      hand_off(e.pid, s);
    } else if (e.name == line::kSent) {
      hand_off(e.pid, state(*seq));
    } else if (e.name == line::kBuffered) {
      hold(e.pid, state(*seq));
    } else if (e.name == line::kStored) {
      account(*seq, out_.stored);
    } else if (e.name == line::kDeadLettered) {
      account(*seq, out_.dead_lettered);
    } else if (e.name == line::kLost) {
      lose(*seq, why_of(e));
    }
  }

  /// The line is about to leave `pid` in its next send.
  void hand_off(Pid pid, LineState& s) {
    release(s);
    pending_[pid] = s.seq;
    if (const Atom* to = current_->field<Atom>(line::kTo)) pending_to_[pid] = *to;
    else pending_to_.erase(pid);
  }

  void release(LineState& s) {
    if (s.msg != 0) carrier_.erase(s.msg);
    s.msg = 0;
    s.landed = false;
    s.holder = Pid{};
  }

  /// The line left its message for `pid`'s buffer.
  void hold(Pid pid, LineState& s) {
    release(s);
    s.holder = pid;
    Held& h = held_[pid];
    h.seqs.push_back(s.seq);
    if (h.seqs.size() >= h.compact_at) compact(h);
  }

  /// Lets go of the retired lines in a buffer's list, so a sink that lives through the run does
  /// not keep every line it ever buffered: at its exit a retired line is skipped anyway (it is
  /// neither buffered nor held). Done each time the list doubles, so it costs O(1) a line.
  /// A retired line buffered again by the same process (a line already accounted for: the
  /// check fails on it) is then listed at its later place, not its first, if that process
  /// ends with it and the first place was let go.
  void compact(Held& h) {
    std::erase_if(h.seqs, [this](std::int64_t seq) { return peek(seq) == nullptr; });
    h.compact_at = std::max(Held::kCompactMin, 2 * h.seqs.size());
  }

  /// `pid` ended: what its buffer still held is lost there.
  void on_exit(Pid pid) {
    auto it = held_.find(pid);
    if (it == held_.end()) return;
    for (const std::int64_t seq : it->second.seqs) {
      const LineState* s = peek(seq);
      if (s != nullptr && s->holder == pid) lose(seq, "sink_buffer");
    }
    held_.erase(it);
  }

  /// The line is lost, by the event being read.
  void lose(std::int64_t seq, const std::string& why, Atom to = {}) {
    account(seq, out_.lost[why]);
    out_.losses.push_back({current_->seq, current_->time, current_->label.name, seq, why, to});
  }

  void account(std::int64_t seq, Lines& where) {
    LineState& s = state(seq);
    release(s);
    where.add(seq);
    if (!s.emitted) out_.unknown.add(seq);
    if (++s.accounted > 1) out_.duplicated.add(seq);
    // Emitted and accounted, carried and held by nobody: all a later mention needs is that, so
    // the state goes and memory does not grow with the lines that went through.
    if (s.emitted) {
      lines_.erase(seq);
      retired_.insert(seq);
    }
  }

  std::optional<std::int64_t> take_pending(Pid sender) {
    auto it = pending_.find(sender);
    if (it == pending_.end()) return std::nullopt;
    const std::int64_t seq = it->second;
    pending_.erase(it);
    return seq;
  }

  void on_send(const TraceEvent& e) {
    const std::optional<std::int64_t> seq = take_pending(e.pid);
    if (!seq) return;
    LineState& s = state(*seq);
    s.msg = e.msg;
    // Between processes on one node a message is in the mailbox as it is sent; across nodes
    // it lands with a `deliver`.
    auto to = node_.find(e.other);
    s.landed = to == node_.end() || to->second == e.node;
    carrier_[e.msg] = *seq;
  }

  void on_deliver(const TraceEvent& e) {
    auto it = carrier_.find(e.msg);
    if (it != carrier_.end()) state(it->second).landed = true;
  }

  void on_drop(const TraceEvent& e) {
    auto it = carrier_.find(e.msg);
    if (it == carrier_.end()) {
      // The send itself failed (no such receiver, a partition, a lost path): the drop stands
      // where the send would have.
      const auto to = pending_to_.find(e.other);
      const Atom dest = to == pending_to_.end() ? Atom() : to->second;
      const std::optional<std::int64_t> seq = take_pending(e.other);
      if (seq) lose(*seq, why_dropped(e.reason), dest);
      return;
    }
    const std::int64_t seq = it->second;
    const bool landed = state(seq).landed;
    lose(seq, landed ? "dead_mailbox" : why_dropped(e.reason));
  }

  Conservation& out_;
  const TraceEvent* current_ = nullptr;           // the event being read
  std::unordered_map<std::int64_t, LineState> lines_;  // the lines not retired, by seq
  SeqSet retired_;                                 // emitted and accounted, nothing else open
  std::uint64_t next_order_ = 0;
  std::map<Pid, std::int64_t> pending_;           // sender -> the line its next send carries
  std::map<Pid, Atom> pending_to_;                // sender -> where that send goes (the hand-off's `to`)
  std::map<std::uint64_t, std::int64_t> carrier_; // message id -> the line it carries
  std::map<Pid, Atom> node_;
  std::map<Pid, Held> held_;                      // process -> its buffer's lines
};

namespace {

/// " (seq 4, 9, ...)": the listed seqs of `l`.
std::string seq_list(const Lines& l) {
  std::string s = " (seq";
  for (std::size_t i = 0; i < l.seqs.size(); ++i) s += (i == 0 ? " " : ", ") + std::to_string(l.seqs[i]);
  if (l.count > l.seqs.size()) s += ", ...";
  return s + ")";
}

void append_violation(std::string& s, const char* what, const Lines& l) {
  if (l.count != 0) s += "; " + std::to_string(l.count) + " " + what + seq_list(l);
}

}  // namespace

ConservationStream::ConservationStream() : checker_(std::make_unique<Checker>(out_)) {}
ConservationStream::~ConservationStream() = default;
void ConservationStream::on(const TraceEvent& e) { checker_->on(e); }
const Conservation& ConservationStream::finish() {
  checker_->finish();
  return out_;
}

Conservation check_conservation(const EventLog& events) {
  ConservationStream s;
  for (const TraceEvent& e : events) s.on(e);
  return s.finish();
}

std::string describe(const Conservation& c) {
  std::string s = std::to_string(c.emitted.count) + " emitted: " + std::to_string(c.stored.count) +
                  " stored, " + std::to_string(c.dead_lettered.count) + " dead-lettered, " +
                  std::to_string(c.lost_count()) + " lost";
  if (!c.lost.empty()) {
    s += ":";
    bool first = true;
    for (const auto& [why, lines] : c.lost) {
      s += (first ? " " : ", ") + why + " " + std::to_string(lines.count) + seq_list(lines);
      first = false;
    }
  }
  if (c.in_flight.count != 0) s += "; " + std::to_string(c.in_flight.count) + " in flight at the end";
  if (c.buffered.count != 0) s += "; " + std::to_string(c.buffered.count) + " in a live buffer at the end";
  append_violation(s, "unaccounted", c.unaccounted);
  append_violation(s, "accounted more than once", c.duplicated);
  append_violation(s, "accounted but never emitted", c.unknown);
  return s;
}

}  // namespace lic::properties
