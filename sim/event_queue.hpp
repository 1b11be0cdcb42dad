#pragma once
// The one owner of order: events keyed (time, key, seq). `seq` is taken at insertion; `key` is 0
// under the fifo tie-break and a seeded random draw under the random one, so same-time events
// run in insertion order or in a seeded shuffle. Cancelled events are skipped when popped.

#include <cstdint>
#include <set>
#include <string_view>
#include <vector>

#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace lic {

enum class TieBreak : std::uint8_t { fifo, random };
std::string_view to_string(TieBreak t);
bool parse_tie_break(std::string_view text, TieBreak& out);

class EventQueue {
 public:
  /// What to do; the kernel interprets it.
  struct Item {
    std::uint32_t type = 0;
    std::uint64_t a = 0;
    std::uint64_t b = 0;
    void* p = nullptr;
  };
  struct Entry {
    Time time;
    std::uint64_t key = 0;
    std::uint64_t seq = 0;
    Item item;
  };

  EventQueue(TieBreak policy, Rng rng) : policy_(policy), rng_(rng) {}

  /// Schedules `item` at `t` (never before the last popped time); returns its id.
  std::uint64_t push(Time t, const Item& item);
  /// Marks an event as cancelled; it is dropped when it comes up.
  void cancel(std::uint64_t id) { cancelled_.insert(id); }
  /// The next live event, or false when none is left.
  bool pop(Entry& out);
  /// Time of the next live event; Time::max() when none.
  Time next_time();
  bool empty() { return next_time() == Time::max(); }
  std::size_t size() const { return heap_.size() + (fifo_.size() - fifo_head_); }
  Time now() const { return now_; }

 private:
  static bool before(const Entry& x, const Entry& y) {
    if (x.time != y.time) return x.time < y.time;
    if (x.key != y.key) return x.key < y.key;
    return x.seq < y.seq;
  }
  void heap_push(const Entry& e);
  void heap_pop(Entry& out);
  bool take_cancelled(const Entry& e);

  TieBreak policy_;
  Rng rng_;
  Time now_;
  std::uint64_t next_seq_ = 1;
  // 4-ary min-heap: half the depth of a binary heap, and a node's children share cache lines.
  std::vector<Entry> heap_;
  // fifo tie-break only: events for the current instant in insertion order. Every heap event at
  // the current instant was pushed before time reached it, so it precedes all of these.
  std::vector<Entry> fifo_;
  std::size_t fifo_head_ = 0;
  std::set<std::uint64_t> cancelled_;
};

}  // namespace lic
