#include "sim/trace.hpp"

#include <algorithm>
#include <sys/mman.h>

#include <bit>
#include <new>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/chunk_cache.hpp"
#include "sim/rng.hpp"

namespace lic {
namespace {

using trace_hash::kP1;
using trace_hash::kP2;
using trace_hash::mix;

std::uint64_t field_words(std::uint64_t acc, const FieldValue& v) {
  acc = mix(acc, v.index());
  switch (v.index()) {
    case 0: return mix(acc, static_cast<std::uint64_t>(std::get<std::int64_t>(v)));
    case 1: return mix(acc, std::get<Atom>(v).hash());
    case 2: return mix(acc, std::get<Pid>(v).id);
    case 3: return mix(acc, static_cast<std::uint64_t>(std::get<Duration>(v).ns));
    default: return mix(acc, stable_hash(std::get<std::string>(v)));
  }
}

/// A thread's spare event chunks (sim/chunk_cache.hpp), like sim/arena.cpp's record chunks. A
/// chunk is handed back as it is: EventLog reads only slots it wrote.
struct EventChunks {
  static constexpr std::size_t kKept = 4;  // 10 MiB per thread at most
  static void unmap(void* c) { munmap(c, EventLog::kChunkBytes); }
};
using EventChunkCache = ChunkCache<EventChunks>;

}  // namespace

static_assert(static_cast<std::uint32_t>(kLastEventKind) < 64, "EventLog::Packed keeps a kind in 6 bits");
static_assert(static_cast<std::uint32_t>(ReasonKind::other) < 16, "EventLog::Packed keeps a reason's kind in 4 bits");
static_assert(sizeof(EventLog::Packed) == 24);

EventLog::~EventLog() {
  EventChunkCache* cache = EventChunkCache::of_thread();
  for (Packed* c : chunks_) {
    if (cache == nullptr || !cache->give(c)) munmap(c, kChunkBytes);
  }
}

void EventLog::grow() {
  // First, so a full vector cannot leak the new chunk; doubling, so the pointers are not copied
  // once a chunk.
  if (chunks_.size() == chunks_.capacity()) chunks_.reserve(std::max<std::size_t>(16, 2 * chunks_.capacity()));
  EventChunkCache* cache = EventChunkCache::of_thread();
  void* c = cache != nullptr ? cache->take() : nullptr;
  if (c == nullptr) {
    c = mmap(nullptr, kChunkBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (c == MAP_FAILED) throw std::bad_alloc();
  }
  chunks_.push_back(static_cast<Packed*>(c));
  next_ = chunks_.back();
  end_ = next_ + kChunk;
}

void EventLog::push_slow(const TraceEvent& e) {
  if (next_ == end_) grow();
  const std::size_t i = size_;
  // Each step below is redone whole if a later one throws (bad_alloc) and the event is pushed
  // again: nothing counts until size_ moves.
  if ((i & kBlockMask) == 0) {
    base_ = e.time.ns;
    bases_.resize(i >> kBlockBits);
    bases_.push_back(base_);
  }
  if (!seqs_.empty() || e.seq != i) {
    if (seqs_.empty()) {
      seqs_.reserve(std::max<std::size_t>(64, 2 * i));
      for (std::size_t j = 0; j < i; ++j) seqs_.push_back(j);
    }
    seqs_.resize(i);
    seqs_.push_back(e.seq);
  }
  // The pid's node and label: taught by its first event that has them. Pids are a simulation's
  // counters, dense from 1, so the table grows by one now and then; a pid far past it (a test's
  // made-up one) is not worth the table and its events are kept whole.
  const bool none = e.node.empty() && e.label.name.empty() && e.label.instance == 0;
  bool own = false;
  if (!none && e.pid.id != 0 && e.pid.id < ctx_.size() + 4096 && (e.pid.id >> 32) == 0) {
    if (e.pid.id >= ctx_.size()) ctx_.resize(e.pid.id + 1);
    Ctx& c = ctx_[e.pid.id];
    if (c.node.empty() && c.label.name.empty() && c.label.instance == 0) c = Ctx{e.node, e.label};
    own = c.node == e.node && c.label == e.label;
  }
  // The reason's detail: the log's number for it, given at its first sight.
  std::uint32_t detail = 0;
  if (const std::uint32_t a = e.reason.detail.index(); a != 0) {
    if (a == last_detail_atom_) {
      detail = last_detail_number_;
    } else if (const auto it = detail_number_.find(a); it != detail_number_.end()) {
      detail = it->second;
    } else if (details_.size() < kDetailLimit) {
      detail = static_cast<std::uint32_t>(details_.size());
      details_.push_back(e.reason.detail);
      detail_number_.emplace(a, static_cast<std::uint16_t>(detail));
    }
    if (detail != 0) last_detail_atom_ = a, last_detail_number_ = detail;
  }
  const std::uint64_t off = static_cast<std::uint64_t>(e.time.ns) - static_cast<std::uint64_t>(base_);
  bool fits = off < kOffsetLimit && ((e.pid.id | e.other.id | e.msg) >> 32) == 0 &&
              (e.reason.detail.empty() || detail != 0) && (none || own);
  Packed& p = *next_;
  if (e.kind == EventKind::system) {
    fits = fits && e.tag.empty() && e.other.id == 0 && e.msg == 0;
    if (fits) {
      p.w[2] = e.field_count;
      p.w[3] = 0;
      if (e.field_count != 0) {
        p.w[3] = static_cast<std::uint32_t>(fields_.size());
        fields_.push_back(e.field_data);
      }
      p.w[4] = e.name.index();
    }
  } else {
    fits = fits && e.name.empty() && e.field_count == 0;
    if (fits) {
      p.w[2] = static_cast<std::uint32_t>(e.other.id);
      p.w[3] = static_cast<std::uint32_t>(e.msg);
      p.w[4] = e.tag.index();
    }
  }
  if (fits) {
    p.w[0] = static_cast<std::uint32_t>(off);
    p.w[1] = static_cast<std::uint32_t>(e.pid.id);
    p.w[5] = meta_word(off, e.kind, e.reason.kind, own, detail);
  } else {
    p.w[0] = static_cast<std::uint32_t>(whole_.size());
    p.w[1] = p.w[2] = p.w[3] = p.w[4] = 0;
    p.w[5] = kWholeBit | (static_cast<std::uint32_t>(e.kind) << 8);
    whole_.push_back(e);
  }
  ++next_;
  ++size_;
}

TraceEvent EventLog::whole(std::uint32_t k) const { return whole_[k]; }

std::size_t EventLog::bytes() const {
  return size_ * sizeof(Packed) + bases_.size() * sizeof(std::int64_t) + ctx_.size() * sizeof(Ctx) +
         whole_.size() * sizeof(TraceEvent) + fields_.size() * sizeof(const TraceField*) +
         seqs_.size() * sizeof(std::uint64_t) + details_.size() * sizeof(Atom) +
         detail_number_.size() * 48;  // a node of the map, about
}

std::string_view to_string(EventKind k) {
  switch (k) {
    case EventKind::spawn: return "spawn";
    case EventKind::exit: return "exit";
    case EventKind::send: return "send";
    case EventKind::deliver: return "deliver";
    case EventKind::drop: return "drop";
    case EventKind::link: return "link";
    case EventKind::unlink: return "unlink";
    case EventKind::monitor: return "monitor";
    case EventKind::demonitor: return "demonitor";
    case EventKind::exit_signal: return "exit_signal";
    case EventKind::down: return "down";
    case EventKind::trap_exit: return "trap_exit";
    case EventKind::register_name: return "register";
    case EventKind::unregister_name: return "unregister";
    case EventKind::system: return "system";
    case EventKind::node_down: return "node_down";
    case EventKind::node_up: return "node_up";
    case EventKind::partition: return "partition";
    case EventKind::heal: return "heal";
    case EventKind::disconnect: return "disconnect";
    case EventKind::node_pause: return "node_pause";
    case EventKind::node_resume: return "node_resume";
    case EventKind::link_change: return "link_change";
    case EventKind::chan_make: return "chan_make";
    case EventKind::chan_send: return "chan_send";
    case EventKind::chan_recv: return "chan_recv";
    case EventKind::chan_close: return "chan_close";
    case EventKind::chan_wait: return "chan_wait";
    case EventKind::chan_wake: return "chan_wake";
    case EventKind::signal: return "signal";
    case EventKind::task_exit: return "task_exit";
    case EventKind::mailbox_wait: return "mailbox_wait";
    case EventKind::clock_change: return "clock_change";
    case EventKind::connect: return "connect";
    case EventKind::global_name: return "global_name";
    case EventKind::process_suspend: return "process_suspend";
    case EventKind::process_resume: return "process_resume";
    case EventKind::process_cut: return "process_cut";
    case EventKind::process_heal: return "process_heal";
    case EventKind::goroutine_preempt: return "goroutine_preempt";
  }
  return "?";
}

// The canonical encoding: four words per event (trace_hash::fold_words, sim/trace.hpp), mixed in two independent lanes (so the CPU
// overlaps them), then one step of the running accumulator; a system event adds its name and
// fields. Pids and refs are per-simulation counters and atoms enter by their text hash, so the
// value is the same in every run and from every compiler. `seq` is not hashed: the chain
// already fixes each event's position.
std::uint64_t fold_event_hash(std::uint64_t acc, const TraceEvent& e) {
  acc = trace_hash::fold_words(acc, e);  // sim/trace.hpp: inlined into Trace::append
  if (e.kind == EventKind::system) acc = trace_hash::fold_system(acc, e);
  return acc;
}

std::uint64_t trace_hash::fold_system(std::uint64_t acc, const TraceEvent& e) {
  acc = mix(acc, e.name.hash());
  acc = mix(acc, e.field_count);
  for (const TraceField& f : e.fields()) {
    acc = mix(acc, f.key.hash());
    acc = field_words(acc, f.value);
  }
  return acc;
}

void Trace::stream(const TraceEvent& e) {
  for (TraceSink* s : sinks_) s->on_event(e);
}

void Trace::stream_and_keep(const TraceEvent& e) {
  stream(e);
  if (mode_ == TraceMode::keep) events_.push_back(e);
}

void Trace::append(TraceEvent& e, std::vector<TraceField>&& fields) {
  if (mode_ == TraceMode::off) return;
  if (fields.size() > TraceEvent::kMaxFields) {
    throw std::length_error(fmt::format("trace: the system event '{}' has {} fields, over the {} an event can hold",
                                        e.name.text(), fields.size(), TraceEvent::kMaxFields));
  }
  e.field_count = static_cast<std::uint16_t>(fields.size());
  e.field_data = fields.data();
  if (mode_ == TraceMode::keep && !fields.empty()) {
    auto block = std::make_unique<TraceField[]>(fields.size());
    for (std::size_t i = 0; i < fields.size(); ++i) block[i] = std::move(fields[i]);
    e.field_data = block.get();
    field_blocks_.push_back(std::move(block));
    field_bytes_ += fields.size() * sizeof(TraceField) + sizeof(std::unique_ptr<TraceField[]>);
  }
  append(e);
}

std::uint64_t Trace::hash() const {
  // xxHash64's avalanche over the accumulator and the count.
  std::uint64_t h = acc_ ^ (count_ * kP1);
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= 0x165667b19e3779f9ULL;
  h ^= h >> 32;
  return h;
}

std::string TraceEvent::text(Atom key) const {
  if (const Atom* a = field<Atom>(key)) return std::string(a->text());
  if (const std::string* t = field<std::string>(key)) return *t;
  return {};
}

}  // namespace lic
