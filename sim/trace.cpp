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
  }
  return "?";
}

std::uint64_t fold_event_hash(std::uint64_t acc, const TraceEvent& e) {
  acc = mix(acc, static_cast<std::uint64_t>(e.time.ns));
  acc = mix(acc, e.seq);
  acc = mix(acc, static_cast<std::uint64_t>(e.kind));
  acc = mix(acc, e.node.hash());
  acc = mix(acc, e.pid.id);
  acc = mix(acc, e.label.name.hash());
  acc = mix(acc, e.label.instance);
  acc = mix(acc, e.other.id);
  acc = mix(acc, static_cast<std::uint64_t>(e.reason.kind));
  acc = mix(acc, e.reason.detail.hash());
  acc = mix(acc, e.tag.hash());
  acc = mix(acc, e.msg);
  if (e.kind == EventKind::system) {
    acc = mix(acc, e.name.hash());
    acc = mix(acc, e.fields.size());
    for (const TraceField& f : e.fields) {
      acc = mix(acc, f.key.hash());
      acc = field_words(acc, f.value);
    }
  }
  return acc;
}

void Trace::append(TraceEvent&& e) {
  if (mode_ == TraceMode::off) return;
  e.seq = count_++;
  acc_ = fold_event_hash(acc_, e);
  for (TraceSink* s : sinks_) s->on_event(e);
  if (mode_ == TraceMode::keep) events_.push_back(std::move(e));
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

}  // namespace lic
