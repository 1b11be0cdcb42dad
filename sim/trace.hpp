#pragma once
// The trace: structured events appended by the kernel and by supervisors and simulated systems.
// Nothing here formats text (reports/ does). Every event feeds a stable 64-bit hash over a
// canonical encoding: integers and atom text hashes only, never addresses or atom indices.

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <type_traits>
#include <map>
#include <span>
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
                ///< it did: 'ignored', 'trapped' (became a message), 'died', 'crashed' (the
                ///< crash fault), or 'lost' (exit/2 across nodes out of contact: never arrived)
  down,         ///< monitor msg held by pid fired: other ended with reason
  trap_exit,    ///< pid set trap_exit; msg = 1 or 0
  register_name,    ///< pid registered under tag
  unregister_name,  ///< tag no longer names pid
  system,       ///< an event of the system under test: `name` and `fields`
  // Nodes and the network (sim/network.cpp). `node` is the node concerned.
  node_down,    ///< the node crashed: every process on it ends `killed`
  node_up,      ///< the node (re)started
  partition,    ///< messages from `node` to the node named by `tag` are blocked from now on
  heal,         ///< the path from `node` to `tag` carries messages again
  disconnect,   ///< `node` and `tag` lost contact: links and monitors between them fired
                ///< noconnection; msg = how many signals fired. Under net ticks, one per side:
                ///< `node`'s side saw it, `node`'s processes fired; reason = net_tick_timeout or
                ///< connection_closed
  node_pause,   ///< the node runs nothing until msg (ns of virtual time)
  node_resume,  ///< the pause ended
  link_change,  ///< the path from `node` to `tag` changed (latency, loss, clog, ...)
  // Channels (sim/channel.hpp). `tag` is the channel's name, `msg` its length after the event.
  chan_make,    ///< pid made the channel; msg = its capacity
  chan_send,    ///< pid sent on it; other = the receiver it was handed to, if one waited
  chan_recv,    ///< pid received from it; other = the sender it came from, if one waited;
                ///< reason `closed` when the channel was closed and drained (ok = false)
  chan_close,   ///< pid closed it
  chan_wait,    ///< pid waits on it; reason `send` or `recv` (one event per case of a select)
  chan_wake,    ///< pid stops waiting; reason: `done` (other = who completed it), `closed`, `timeout`
  // OS signals and tasks (a node as a container: sim/simulation.hpp, signal_node).
  signal,       ///< `node` got signal `tag` (sigterm, sigkill); pid: the process it was given to,
                ///< 0 for the node (one event for the node, then one per process that asked for it)
  task_exit,    ///< the node's main process ended with reason: the task ends, and what is left on
                ///< the node is killed (node_down follows)
  mailbox_wait,  ///< pid waits to send to `other`, whose bounded mailbox is full (msg: its length)
  clock_change,  ///< `node`'s clock changed: msg = its skew in ns, other = its drift in ppm (both signed)
  connect,       ///< net ticks: `node` set up a new connection to `tag` on demand (a send, link or
                 ///< monitor after both sides had dropped the old one)
  global_name,   ///< OTP's `global` (net ticks): `tag` names `pid`. reason `registered` (global:register_name
                 ///< returned yes; node = the caller's), `unregistered`, or `conflict`: two nodes that
                 ///< reconnected both had the name; `pid` keeps it and `other` is killed (node = the
                 ///< node that resolved it)
  // One process (sim/network.cpp; docs/network.md, "One process"). `pid` is the process.
  process_suspend,  ///< pid runs nothing until msg (ns of virtual time): SIGSTOP of one process
  process_resume,   ///< the suspension ended (SIGCONT)
  process_cut,      ///< every message pid sends to or gets from another node is dropped from now
                    ///< on: one socket's firewall rule (a connection cut)
  process_heal,     ///< the cut of pid ended
  /// A goroutine woken from a channel wait stays runnable but not running for msg (ns of virtual
  /// time) before its next statement: its node's CPU is busy (Simulation::set_preemption;
  /// docs/kernel.md, "Preemption"). `tag` names the channel it woke on (`timeout` for a timer).
  goroutine_preempt,
};
/// The last EventKind (a table indexed by kind has this + 1 entries).
inline constexpr EventKind kLastEventKind = EventKind::goroutine_preempt;

std::string_view to_string(EventKind k);

/// One value in a system event's fields.
using FieldValue = std::variant<std::int64_t, Atom, Pid, Duration, std::string>;

struct TraceField {
  Atom key;
  FieldValue value;
};

/// One event. Trivially copyable (fields live elsewhere): a value to pass, copy and keep. 80
/// bytes; a kept trace holds it packed in 24 (EventLog) and hands it back decoded.
struct TraceEvent {
  Time time;
  std::uint64_t seq = 0;  ///< position in the trace, from 0
  Pid pid;
  Pid other;
  std::uint64_t msg = 0;
  Atom node;
  Atom tag;
  Atom name;  ///< system events: what happened (child_started, fault_injected, ...)
  Label label;
  Reason reason;
  EventKind kind = EventKind::system;
  std::uint16_t field_count = 0;  ///< at most kMaxFields (Trace::append checks)
  const TraceField* field_data = nullptr;  ///< owned by the Trace (keep mode) or the appender

  static constexpr std::size_t kMaxFields = 0xffff;

  std::span<const TraceField> fields() const { return {field_data, field_count}; }
  /// The field `key` when it holds a T (sim/trace_keys.hpp declares the keys); null when it is
  /// absent or holds another type.
  template <class T>
  const T* field(Atom key) const {
    for (const TraceField& f : fields()) {
      if (f.key == key) return std::get_if<T>(&f.value);
    }
    return nullptr;
  }
  /// An atom or string field as text; "" when absent or of another type.
  std::string text(Atom key) const;

  /// No `&e`: an event read from a log (EventLog, a check's `*in.events`) is a value decoded for
  /// the reader, gone at the loop's next step, so a pointer to it would dangle. Keep a copy (this
  /// type is trivially copyable) or its position (`e.seq` in a run's trace) instead.
  /// std::addressof still works where an address is needed within one call.
  const TraceEvent* operator&() const = delete;
  TraceEvent* operator&() = delete;
};

static_assert(std::is_trivially_copyable_v<TraceEvent> && std::is_trivially_destructible_v<TraceEvent>);
static_assert(sizeof(void*) != 8 || sizeof(TraceEvent) == 80, "no padding");

/// Kept events, compact: 24 bytes an event where a TraceEvent is 80, read back as TraceEvent
/// values (operator[] and the iterator decode; there is no TraceEvent in memory to point at).
///
/// An event is six 32-bit words (Packed): its time as an offset from its block's base (a block is
/// 256 events; the offset has 40 bits, 18 virtual minutes), pid, other (a system event: its field
/// count), msg (a system event: its fields' index), tag (a system event: its name), and a word of
/// kind, reason, reason detail and flags. Atoms are their 32-bit indices, but a reason's detail is
/// the log's own number for it (11 bits: a log's first 2,047 distinct details). A process's node and
/// label, the same at every event of it, are kept once per pid (the first event that names the
/// pid teaches them) and an event only says "the pid's own". Seq is the index, unless an event
/// came with another (a filtered log): then a side vector holds every seq. An event that does not
/// fit (a word over 32 bits, the 2,048th distinct detail, another node or label than its pid's,
/// time before its block's base or 2^40 ns past it, a system event with a tag) is kept whole out
/// of line, and its record says where. A jump of virtual time over 18 minutes thus keeps the rest
/// of its block whole: at most 255 events at 80 bytes.
///
/// Records sit in fixed chunks of 32,768 (768 KiB): appending never moves earlier records (a
/// growing vector would copy the whole trace at every doubling and fault in twice the memory).
/// Chunks are mapped whole and a thread keeps a few spare ones for its next simulation
/// (trace.cpp), so a sweep's seeds do not each fault in fresh pages. Huge pages were tried for
/// the chunks and were slower on the VM measured: its host reclaims free 2 MiB blocks (benchmarks.md).
class EventLog {
 public:
  /// One event, packed (see above). w[5]: bits 0-7 the time offset's high byte, 8-13 the kind,
  /// 14-17 the reason's kind, 18 "the pid's node and label", 19 "kept whole" (w[0] is then its
  /// index), 21-31 the reason's detail (the log's number for it: details_).
  struct Packed {
    std::uint32_t w[6];
  };
  static constexpr std::size_t kChunkBits = 15;
  static constexpr std::size_t kChunk = std::size_t{1} << kChunkBits;  ///< events a chunk
  static constexpr std::size_t kChunkBytes = kChunk * sizeof(Packed);
  static constexpr std::size_t kBlockBits = 8;  ///< events sharing one time base
  static constexpr std::uint64_t kOffsetLimit = std::uint64_t{1} << 40;
  static constexpr std::uint32_t kDetailLimit = 1u << 11;
  static constexpr std::uint32_t kOwnBit = 1u << 18;
  static constexpr std::uint32_t kWholeBit = 1u << 19;

  EventLog() = default;
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;
  ~EventLog();

  /// Keeps `e`. Its fields (a system event's) are not copied: `e.field_data` must outlive the log.
  void push_back(const TraceEvent& e) {
    // The kernel's events (no name, no fields, the pid's own node and label, small words) are
    // packed here, inline where the kernel records them; every other goes out of line.
    const std::size_t i = size_;
    if (next_ != end_ && (i & kBlockMask) != 0 && seqs_.empty() && e.seq == i && e.kind != EventKind::system &&
        e.name.empty() && e.field_count == 0) {
      const std::uint64_t off = static_cast<std::uint64_t>(e.time.ns) - static_cast<std::uint64_t>(base_);
      const bool none = e.node.empty() && e.label.name.empty() && e.label.instance == 0;
      const bool own = !none && e.pid.id < ctx_.size() && ctx_[e.pid.id].node == e.node &&
                       ctx_[e.pid.id].label == e.label;
      if (off < kOffsetLimit && ((e.pid.id | e.other.id | e.msg) >> 32) == 0 &&
          e.reason.detail.empty() && (none || own)) {
        Packed& p = *next_;
        p.w[0] = static_cast<std::uint32_t>(off);
        p.w[1] = static_cast<std::uint32_t>(e.pid.id);
        p.w[2] = static_cast<std::uint32_t>(e.other.id);
        p.w[3] = static_cast<std::uint32_t>(e.msg);
        p.w[4] = e.tag.index();
        p.w[5] = meta_word(off, e.kind, e.reason.kind, own, 0);
        ++next_;
        ++size_;
        return;
      }
    }
    push_slow(e);
  }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  /// The event at `i`, decoded. Inlined where it is read, so that a reader that looks at a few
  /// fields pays for those (the compiler drops the rest).
  [[gnu::always_inline]] TraceEvent operator[](std::size_t i) const {
    return decode(i, chunks_[i >> kChunkBits][i & (kChunk - 1)]);
  }
  TraceEvent front() const { return (*this)[0]; }
  TraceEvent back() const { return (*this)[size_ - 1]; }
  /// What the log holds (its records, time bases, the pids' nodes and labels, the events kept
  /// whole, the seqs and field pointers), not counting the fields themselves: --max-memory's measure.
  std::size_t bytes() const;
  /// How many events did not fit a record and are kept whole (benchmarks: the compact share).
  std::size_t whole_count() const { return whole_.size(); }

  /// Reads the log in order. Its reference is a value (a decoded TraceEvent): `&*it`, or the
  /// address of a range-for's `const TraceEvent& e`, is gone at the next step. Keep an index
  /// (`e.seq` of a Trace's log) or a copy (TraceEvent is trivially copyable) instead.
  class const_iterator {
   public:
    using iterator_category = std::input_iterator_tag;  // C++17's rules: a forward iterator yields references
    using iterator_concept = std::random_access_iterator_tag;
    using value_type = TraceEvent;
    using difference_type = std::ptrdiff_t;
    using reference = TraceEvent;
    struct pointer {
      TraceEvent e;
      const TraceEvent* operator->() const { return std::addressof(e); }
    };
    const_iterator() = default;
    const_iterator(const EventLog* log, std::size_t i) : log_(log), i_(i) {}
    [[gnu::always_inline]] TraceEvent operator*() const {
      // A loop's step: the record from the pointer ++ keeps, not the chunk table.
      if (at_ == nullptr || at_index_ != i_) {
        at_ = &log_->chunks_[i_ >> kChunkBits][i_ & (kChunk - 1)];
        at_index_ = i_;
      }
      return log_->decode(i_, *at_);
    }
    pointer operator->() const { return {(*log_)[i_]}; }
    TraceEvent operator[](difference_type n) const { return (*log_)[i_ + static_cast<std::size_t>(n)]; }
    const_iterator& operator++() {
      ++i_;
      if (at_ != nullptr && (i_ & (kChunk - 1)) != 0) ++at_, ++at_index_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator t = *this;
      ++i_;
      return t;
    }
    const_iterator& operator--() {
      --i_;
      return *this;
    }
    const_iterator operator--(int) {
      const_iterator t = *this;
      --i_;
      return t;
    }
    const_iterator& operator+=(difference_type n) {
      i_ += static_cast<std::size_t>(n);
      return *this;
    }
    const_iterator& operator-=(difference_type n) {
      i_ -= static_cast<std::size_t>(n);
      return *this;
    }
    friend const_iterator operator+(const_iterator a, difference_type n) { return a += n; }
    friend const_iterator operator+(difference_type n, const_iterator a) { return a += n; }
    friend const_iterator operator-(const_iterator a, difference_type n) { return a -= n; }
    friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
      return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
    }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }
    auto operator<=>(const const_iterator& o) const { return i_ <=> o.i_; }
    /// The event's position in the log.
    std::size_t index() const { return i_; }

   private:
    const EventLog* log_ = nullptr;
    std::size_t i_ = 0;
    mutable const Packed* at_ = nullptr;  ///< the record of at_index_, once read
    mutable std::size_t at_index_ = 0;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

  /// The events of some kinds only, in order: `for (const TraceEvent& e : log.only({EventKind::system}))`.
  /// It skips the others by their record's kind, without decoding them: a reader that wants a
  /// tenth of a trace pays for that tenth (a loop over every event decodes each, about 40
  /// instructions).
  class Selection {
   public:
    class iterator {
     public:
      using iterator_category = std::input_iterator_tag;
      using iterator_concept = std::forward_iterator_tag;
      using value_type = TraceEvent;
      using difference_type = std::ptrdiff_t;
      using reference = TraceEvent;
      iterator() = default;
      iterator(const EventLog* log, std::size_t i, std::uint64_t kinds, const std::array<std::uint32_t, 4>* names)
          : log_(log), i_(i), kinds_(kinds), names_(names) {
        settle();
      }
      [[gnu::always_inline]] TraceEvent operator*() const { return log_->decode(i_, *at_); }
      iterator& operator++() {
        ++i_;
        settle();
        return *this;
      }
      iterator operator++(int) {
        iterator t = *this;
        ++*this;
        return t;
      }
      bool operator==(const iterator& o) const { return i_ == o.i_; }
      std::size_t index() const { return i_; }

     private:
      /// Moves to the first event at or after i_ of a chosen kind (or the end).
      void settle() {
        for (; i_ < log_->size_; ++i_) {
          at_ = &log_->chunks_[i_ >> kChunkBits][i_ & (kChunk - 1)];
          const std::size_t stop = std::min(log_->size_, (i_ | (kChunk - 1)) + 1);  // this chunk's end
          for (; i_ < stop; ++i_, ++at_) {
            const std::uint32_t meta = at_->w[5];
            const std::uint32_t kind = (meta >> 8) & 0x3f;
            if (((kinds_ >> kind) & 1) == 0) continue;
            // A system event's name, when names were given (an event kept whole is let through:
            // the reader looks at its name itself).
            if (names_ == nullptr || kind != static_cast<std::uint32_t>(EventKind::system) || (meta & kWholeBit) != 0) return;
            const std::uint32_t n = at_->w[4];
            if (n == (*names_)[0] || n == (*names_)[1] || n == (*names_)[2] || n == (*names_)[3]) return;
          }
          --i_;  // the outer ++ moves to the next chunk's first event
        }
      }
      const EventLog* log_ = nullptr;
      std::size_t i_ = 0;
      std::uint64_t kinds_ = 0;
      const std::array<std::uint32_t, 4>* names_ = nullptr;
      const Packed* at_ = nullptr;
    };
    Selection(const EventLog* log, std::uint64_t kinds, std::initializer_list<Atom> names) : log_(log), kinds_(kinds) {
      if (names.size() == 0 || names.size() > names_.size()) return;  // no names, or more than it compares: every one
      std::size_t k = 0;
      for (Atom a : names) names_[k++] = a.index();
      for (; k < names_.size(); ++k) names_[k] = names_[0];
      named_ = true;
    }
    iterator begin() const { return {log_, 0, kinds_, named_ ? &names_ : nullptr}; }
    iterator end() const { return {log_, log_->size_, kinds_, nullptr}; }

   private:
    const EventLog* log_;
    std::uint64_t kinds_;
    std::array<std::uint32_t, 4> names_{};
    bool named_ = false;
  };
  /// `names` (up to four; more are not compared) narrows the system events to those names; the
  /// other kinds chosen come whatever their names. A Selection must outlive its loop (a
  /// range-for over `log.only(...)` keeps it).
  Selection only(std::initializer_list<EventKind> kinds, std::initializer_list<Atom> names = {}) const {
    std::uint64_t m = 0;
    for (EventKind k : kinds) m |= std::uint64_t{1} << static_cast<unsigned>(k);
    return {this, m, names};
  }

 private:
  static constexpr std::size_t kBlockMask = (std::size_t{1} << kBlockBits) - 1;
  struct Ctx {
    Atom node;
    Label label;
  };
  void push_slow(const TraceEvent& e);  ///< every event push_back does not pack inline
  /// A packed record's last word (Packed's comment says which bits hold what).
  static constexpr std::uint32_t meta_word(std::uint64_t off, EventKind kind, ReasonKind reason, bool own,
                                           std::uint32_t detail) {
    return static_cast<std::uint32_t>(off >> 32) | (static_cast<std::uint32_t>(kind) << 8) |
           (static_cast<std::uint32_t>(reason) << 14) | (own ? kOwnBit : 0) | (detail << 21);
  }
  TraceEvent whole(std::uint32_t k) const;  ///< the k-th event kept whole
  static constexpr Atom atom(std::uint32_t index) {
    Atom a;
    a.index_ = index;
    return a;
  }
  [[gnu::always_inline]] TraceEvent decode(std::size_t i, const Packed& p) const {
    const std::uint32_t meta = p.w[5];
    if ((meta & kWholeBit) != 0) [[unlikely]] return whole(p.w[0]);
    const auto kind = static_cast<EventKind>((meta >> 8) & 0x3f);
    const bool sys = kind == EventKind::system;
    Ctx c{};
    if ((meta & kOwnBit) != 0) c = ctx_[p.w[1]];
    return TraceEvent{
        .time = Time{bases_[i >> kBlockBits] +
                     static_cast<std::int64_t>((static_cast<std::uint64_t>(meta & 0xff) << 32) | p.w[0])},
        .seq = seqs_.empty() ? i : seqs_[i],
        .pid = Pid{p.w[1]},
        .other = Pid{sys ? 0 : p.w[2]},
        .msg = sys ? 0 : p.w[3],
        .node = c.node,
        .tag = atom(sys ? 0 : p.w[4]),
        .name = atom(sys ? p.w[4] : 0),
        .label = c.label,
        .reason = Reason{static_cast<ReasonKind>((meta >> 14) & 0xf), details_[meta >> 21]},
        .kind = kind,
        .field_count = static_cast<std::uint16_t>(sys ? p.w[2] : 0),
        .field_data = sys && p.w[2] != 0 ? fields_[p.w[3]] : nullptr};
  }
  void grow();  ///< the next chunk: a spare one of the thread's, or a fresh mapping

  std::vector<Packed*> chunks_;
  Packed* next_ = nullptr;  ///< the next free slot in chunks_.back()
  Packed* end_ = nullptr;   ///< chunks_.back()'s end
  std::size_t size_ = 0;
  std::int64_t base_ = 0;             ///< bases_.back()
  std::vector<std::int64_t> bases_;   ///< each block's time base: its first event's time
  std::vector<Ctx> ctx_;              ///< by pid: its node and label (empty until its first event)
  std::vector<TraceEvent> whole_;     ///< the events that did not fit a record
  std::vector<const TraceField*> fields_;  ///< system events' fields, by index
  std::vector<std::uint64_t> seqs_;   ///< every event's seq, once one was not its index
  std::vector<Atom> details_{Atom{}};  ///< the reasons' details by the log's number for them (0: none)
  std::map<std::uint32_t, std::uint16_t> detail_number_;  ///< by atom index: its number in details_
  std::uint32_t last_detail_atom_ = 0;    ///< the last detail looked up (drops repeat one reason)
  std::uint32_t last_detail_number_ = 0;
};

/// Receives every event as it is appended (streaming to a file, a checker, a test).
class TraceSink {
 public:
  virtual ~TraceSink() = default;
  /// `e.fields()` is valid during the call only.
  virtual void on_event(const TraceEvent& e) = 0;
  /// Memory it holds that grows with the events (the run's --max-memory counts it with the kept
  /// trace); 0 for a sink that holds nothing.
  virtual std::size_t held_bytes() const { return 0; }
};

enum class TraceMode : std::uint8_t {
  off,   ///< nothing is kept and nothing is hashed (the benchmark's baseline)
  hash,  ///< every event is hashed and streamed to sinks, none is kept
  keep,  ///< hashed, streamed, and kept in memory (the default)
};

/// The canonical hash of one event, folded into `acc`; exposed for tests and replays.
/// The encoding is fixed (see trace.cpp); changing it changes every pinned hash.
std::uint64_t fold_event_hash(std::uint64_t acc, const TraceEvent& e);

namespace trace_hash {
// fold_event_hash in two parts, so that Trace::append, inlined where the kernel builds an event,
// hashes it from registers instead of calling out and reloading it (a third of a hashed hop's
// trace cost was that). The encoding is trace.cpp's; only the split is here.
inline constexpr std::uint64_t kP1 = 0x9e3779b185ebca87ULL;
inline constexpr std::uint64_t kP2 = 0xc2b2ae3d27d4eb4fULL;

/// xxHash64's round: pure 64-bit integer arithmetic, identical under every compiler.
inline std::uint64_t mix(std::uint64_t acc, std::uint64_t word) {
  acc += word * kP2;
  acc = std::rotl(acc, 31);
  return acc * kP1;
}

/// The four words every event has, in two lanes, then one step of the chain.
inline std::uint64_t fold_words(std::uint64_t acc, Time time, Pid pid, Pid other, std::uint64_t msg,
                                EventKind kind, Reason reason, Label label, Atom node, Atom tag) {
  const std::uint64_t w0 = static_cast<std::uint64_t>(time.ns);
  const std::uint64_t w1 = pid.id ^ std::rotl(other.id, 32);
  const std::uint64_t w2 =
      msg ^ std::rotl(static_cast<std::uint64_t>(kind) |
                          (static_cast<std::uint64_t>(reason.kind) << 16) |
                          (static_cast<std::uint64_t>(label.instance) << 32),
                      7);
  // Atom::hash() each, but the table is loaded once: each call is an atomic load the compiler
  // may not merge (three instructions less an event).
  const std::uint64_t* h = detail::g_atom_hashes.load(std::memory_order_acquire);
  const std::uint64_t w3 = h[node.index()] ^ std::rotl(h[label.name.index()], 16) ^
                           std::rotl(h[tag.index()], 32) ^ std::rotl(h[reason.detail.index()], 48);
  const std::uint64_t lane_a = mix(mix(kP1, w0), w2);
  const std::uint64_t lane_b = mix(mix(kP2, w1), w3);
  return mix(acc, lane_a ^ std::rotl(lane_b, 27));
}
inline std::uint64_t fold_words(std::uint64_t acc, const TraceEvent& e) {
  return fold_words(acc, e.time, e.pid, e.other, e.msg, e.kind, e.reason, e.label, e.node, e.tag);
}

/// A system event's name and fields, after fold_words.
std::uint64_t fold_system(std::uint64_t acc, const TraceEvent& e);
}  // namespace trace_hash

class Trace {
 public:
  explicit Trace(TraceMode mode = TraceMode::keep) : mode_(mode) {}

  TraceMode mode() const { return mode_; }
  bool enabled() const { return mode_ != TraceMode::off; }
  void add_sink(TraceSink* sink) { sinks_.push_back(sink); }
  void remove_sink(TraceSink* sink) { std::erase(sinks_, sink); }
  /// What the sinks hold (TraceSink::held_bytes), summed.
  std::size_t sink_bytes() const {
    std::size_t n = 0;
    for (const TraceSink* s : sinks_) n += s->held_bytes();
    return n;
  }

  /// Calls `fn(arg)` before the append that would make count() pass `at`, and again each time
  /// `fn` sets a later one (set_checkpoint): the simulation's budgets see events that processes
  /// record between two kernel events (a loop in a process's own code). UINT64_MAX: never.
  void on_checkpoint(void (*fn)(void*), void* arg) {
    check_fn_ = fn;
    check_arg_ = arg;
  }
  void set_checkpoint(std::uint64_t at) { check_at_ = check_fn_ != nullptr ? at : ~std::uint64_t{0}; }

  /// Stamps seq, hashes, streams and (in keep mode) stores a kernel event (no fields).
  void append(TraceEvent& e) {
    if (mode_ == TraceMode::off) return;
    if (count_ >= check_at_) [[unlikely]] check_fn_(check_arg_);
    e.seq = count_++;
    acc_ = trace_hash::fold_words(acc_, e);
    if (e.kind == EventKind::system) acc_ = trace_hash::fold_system(acc_, e);
    if (!sinks_.empty()) stream(e);
    if (mode_ == TraceMode::keep) events_.push_back(e);
  }
  /// The same for a system event with its fields.
  void append(TraceEvent& e, std::vector<TraceField>&& fields);
  /// A kernel event from its parts: the same as filling a TraceEvent and calling append(e), but
  /// the event is built only where it is needed: not at all when it is only hashed, and in place
  /// in the log when it is kept and no sink reads it (the kernel's own events, two a message).
  void append_kernel(Time time, EventKind kind, Pid pid, Pid other, Reason reason, Atom tag,
                     std::uint64_t msg, Atom node, Label label) {
    if (mode_ == TraceMode::off) return;
    if (count_ >= check_at_) [[unlikely]] check_fn_(check_arg_);
    const std::uint64_t seq = count_++;
    acc_ = trace_hash::fold_words(acc_, time, pid, other, msg, kind, reason, label, node, tag);
    if (sinks_.empty()) {
      if (mode_ == TraceMode::keep) {
        events_.push_back(TraceEvent{.time = time, .seq = seq, .pid = pid, .other = other, .msg = msg, .node = node,
                                     .tag = tag, .name = {}, .label = label, .reason = reason, .kind = kind,
                                     .field_count = 0, .field_data = nullptr});
      }
      return;
    }
    stream_and_keep(TraceEvent{.time = time, .seq = seq, .pid = pid, .other = other, .msg = msg, .node = node,
                               .tag = tag, .name = {}, .label = label, .reason = reason, .kind = kind,
                               .field_count = 0, .field_data = nullptr});
  }

  /// The hash of every event appended so far: the same in every run of the same scenario, seed
  /// and binary, and the goal is the same from gcc and clang builds.
  std::uint64_t hash() const;
  std::uint64_t count() const { return count_; }
  const EventLog& events() const { return events_; }
  /// What keeping costs so far: the log's bytes and its system events' fields (--max-memory).
  std::size_t kept_bytes() const { return events_.bytes() + field_bytes_; }

 private:
  void stream(const TraceEvent& e);
  /// A kernel event with sinks attached: streams it, and keeps it in keep mode. Out of line, so
  /// that append_kernel, inlined where the kernel records an event, is shorter on its usual paths
  /// (hashed only, or kept without sinks): 8 instructions less a W1 hop in both (callgrind).
  void stream_and_keep(const TraceEvent& e);

  TraceMode mode_;
  EventLog events_;
  std::vector<std::unique_ptr<TraceField[]>> field_blocks_;
  std::size_t field_bytes_ = 0;  ///< field_blocks_' fields
  std::vector<TraceSink*> sinks_;
  std::uint64_t count_ = 0;
  std::uint64_t acc_ = 0x9e3779b97f4a7c15ULL;
  std::uint64_t check_at_ = ~std::uint64_t{0};
  void (*check_fn_)(void*) = nullptr;
  void* check_arg_ = nullptr;
};

}  // namespace lic
