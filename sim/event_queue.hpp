#pragma once
// The one owner of order: events keyed (time, key, seq). `seq` is taken at insertion; `key` is 0
// under the fifo tie-break and a seeded random draw under the random one, so same-time events
// run in insertion order or in a seeded shuffle. Cancelled events are skipped when popped.
//
// Structure: virtual time never goes back, so future events sit in a 256-way radix heap keyed by
// time: an event's bucket is (the highest byte in which its time differs from the current
// instant, that byte's value). A push is an append; when the current instant is used up, the
// lowest non-empty bucket holds the earliest events, and it is spread into lower buckets relative
// to the new instant. An event moves at most 8 times in its life, always through sequential
// memory: no cache-missing sift through a million-entry heap. Events of the current instant sit in
// `now_q_`: a FIFO under fifo (pushed in seq order; a batch arriving from a bucket is sorted
// first), a small binary heap on (key, seq) under random.
//
// A level-0 bucket is one instant (every byte of its time is fixed), so it needs no scan for its
// earliest time; when it holds one event (most instants of W3 at a million timers) that event is
// handed out directly, and otherwise the whole bucket becomes `now_q_` at once. Buckets are plain
// growing arrays appended to inline.
//
// While few events are pending, a 4-ary heap beats the radix heap (it is all in cache, and an
// event moves once); above kRadixAbove pending future events the queue moves them into the radix
// heap, and back to the heap once the radix heap has emptied. Both pop in the same order.
//
// The order invariant, whatever the structure: events pop by (time, key, seq); an event pushed
// for the current instant comes after the instant's earlier-pushed ones (fifo); a cancelled
// event never pops and never moves the clock. event_queue_test.cpp checks it against a std::map
// over random operation sequences (rapidcheck) that cross the radix threshold both ways.

#include <cstdint>
#include <memory>
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
    std::uint32_t b = 0;
    std::uint64_t a = 0;
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
  void cancel(std::uint64_t id) {
    cancelled_.insert(id);
    ++cancels_;
  }
  /// How many cancel() calls so far: work a run did that no event shows (the event budget
  /// counts it, so timers set and cancelled at every step cannot run for ever unseen).
  std::uint64_t cancels() const { return cancels_; }
  /// The next live event, or false when none is left.
  bool pop(Entry& out) { return pop_until(Time::max(), out); }
  /// The next live event if it is due at or before `deadline`; false otherwise (nothing moves).
  bool pop_until(Time deadline, Entry& out);
  /// Time of the next live event; Time::max() when none. Does not move the clock.
  Time next_time();
  bool empty() { return next_time() == Time::max(); }
  std::size_t size() const { return future_ + heap_.size() + (now_q_.size() - now_head_); }
  /// Copies up to `n` of the events that come up next into `out`, roughly in the order they
  /// will pop, and returns how many: a hint for prefetching what they will touch. It may leave
  /// some out (a cancelled one, one not yet sorted into the lowest buckets) and changes nothing.
  /// Only while the radix heap holds the future (above kRadixAbove pending events, when what the
  /// events touch no longer fits in the cache); 0 otherwise.
  std::size_t upcoming(Item* out, std::size_t n) const;
  Time now() const { return now_; }

 private:
  static constexpr std::size_t kRadixAbove = 16384;
  static constexpr int kLevels = 8;
  static constexpr int kDigits = 256;
  static bool before(const Entry& x, const Entry& y) {
    if (x.key != y.key) return x.key < y.key;
    return x.seq < y.seq;
  }
  static bool earlier(const Entry& x, const Entry& y) {
    if (x.time != y.time) return x.time < y.time;
    return before(x, y);
  }
  /// A radix bucket: an array that only grows (cleared buckets keep their room), appended to
  /// inline (a std::vector's push_back stayed an out-of-line call: 7 % of W3 at 1M).
  struct Bucket {
    std::unique_ptr<Entry[]> data;
    std::uint32_t size = 0;
    std::uint32_t cap = 0;
    void append(const Entry& e) {
      if (size == cap) [[unlikely]] grow();
      data[size++] = e;
    }
    void grow();
    const Entry* begin() const { return data.get(); }
    const Entry* end() const { return data.get() + size; }
  };
  void heap_push(const Entry& e);
  void heap_pop(Entry& out);
  void to_radix();
  void place(const Entry& e);
  /// The lowest non-empty bucket as (level, digit); false when there are no future events.
  bool lowest(int& level, int& digit) const;
  void now_push(const Entry& e);
  bool now_pop(Entry& out);
  bool now_empty() const { return now_head_ == now_q_.size(); }
  const Entry& now_front() const {
    return policy_ == TieBreak::fifo ? now_q_[now_head_] : now_q_.front();
  }
  /// Makes the earliest future instant (`m`, in bucket level/digit) the current one.
  void advance(int level, int digit, std::int64_t m);
  void clear_bucket(int level, int digit);
  bool take_cancelled(const Entry& e);

  TieBreak policy_;
  Rng rng_;
  Time now_;
  std::uint64_t next_seq_ = 1;
  bool radix_ = false;      // future events are in the radix buckets, not in heap_
  std::vector<Entry> heap_;  // 4-ary min-heap on (time, key, seq)
  /// kLevels x kDigits buckets, made when the queue first goes radix: 32 KiB that a short run
  /// (every sweep seed of a small file) would otherwise zero and free for nothing.
  std::unique_ptr<Bucket[]> buckets_;
  Bucket& bucket(int level, int digit) { return buckets_[static_cast<std::size_t>(level) * kDigits + static_cast<std::size_t>(digit)]; }
  const Bucket& bucket(int level, int digit) const {
    return buckets_[static_cast<std::size_t>(level) * kDigits + static_cast<std::size_t>(digit)];
  }
  std::uint64_t occupied_[kLevels][kDigits / 64] = {};  // which buckets are non-empty
  std::uint32_t levels_ = 0;                            // which levels have a non-empty bucket
  std::uint32_t level_buckets_[kLevels] = {};           // non-empty buckets per level
  std::size_t future_ = 0;                              // events in buckets
  std::vector<Entry> now_q_;              // fifo: a queue from now_head_; random: a min-heap
  std::size_t now_head_ = 0;
  std::set<std::uint64_t> cancelled_;
  std::uint64_t cancels_ = 0;
};

}  // namespace lic
