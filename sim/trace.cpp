#include "sim/trace.hpp"

#include <bit>

#include "sim/rng.hpp"

namespace lic {
namespace {

constexpr std::uint64_t kP1 = 0x9e3779b185ebca87ULL;
constexpr std::uint64_t kP2 = 0xc2b2ae3d27d4eb4fULL;

// xxHash64's round: pure 64-bit integer arithmetic, identical under every compiler.
inline std::uint64_t mix(std::uint64_t acc, std::uint64_t word) {
  acc += word * kP2;
  acc = std::rotl(acc, 31);
  return acc * kP1;
}

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

}  // namespace

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
  }
  return "?";
}

// The canonical encoding: four words per event, mixed in two independent lanes (so the CPU
// overlaps them), then one step of the running accumulator; a system event adds its name and
// fields. Pids and refs are per-simulation counters and atoms enter by their text hash, so the
// value is the same in every run and from every compiler. `seq` is not hashed: the chain
// already fixes each event's position.
std::uint64_t fold_event_hash(std::uint64_t acc, const TraceEvent& e) {
  const std::uint64_t w0 = static_cast<std::uint64_t>(e.time.ns);
  const std::uint64_t w1 = e.pid.id ^ std::rotl(e.other.id, 32);
  const std::uint64_t w2 =
      e.msg ^ std::rotl(static_cast<std::uint64_t>(e.kind) |
                            (static_cast<std::uint64_t>(e.reason.kind) << 16) |
                            (static_cast<std::uint64_t>(e.label.instance) << 32),
                        7);
  const std::uint64_t w3 = e.node.hash() ^ std::rotl(e.label.name.hash(), 16) ^
                           std::rotl(e.tag.hash(), 32) ^ std::rotl(e.reason.detail.hash(), 48);
  const std::uint64_t lane_a = mix(mix(kP1, w0), w2);
  const std::uint64_t lane_b = mix(mix(kP2, w1), w3);
  acc = mix(acc, lane_a ^ std::rotl(lane_b, 27));
  if (e.kind == EventKind::system) {
    acc = mix(acc, e.name.hash());
    acc = mix(acc, e.field_count);
    for (const TraceField& f : e.fields()) {
      acc = mix(acc, f.key.hash());
      acc = field_words(acc, f.value);
    }
  }
  return acc;
}

void Trace::stream(const TraceEvent& e) {
  for (TraceSink* s : sinks_) s->on_event(e);
}

void Trace::append(TraceEvent& e, std::vector<TraceField>&& fields) {
  if (mode_ == TraceMode::off) return;
  e.field_count = static_cast<std::uint32_t>(fields.size());
  e.field_data = fields.data();
  if (mode_ == TraceMode::keep && !fields.empty()) {
    auto block = std::make_unique<TraceField[]>(fields.size());
    for (std::size_t i = 0; i < fields.size(); ++i) block[i] = std::move(fields[i]);
    e.field_data = block.get();
    field_blocks_.push_back(std::move(block));
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
