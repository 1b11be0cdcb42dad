#include "sim/event_queue.hpp"

#include <algorithm>
#include <cassert>
#include <climits>

namespace lic {

namespace {
// std::push_heap / pop_heap build a max-heap: invert the order for a min-heap on (key, seq).
struct Later {
  bool operator()(const EventQueue::Entry& x, const EventQueue::Entry& y) const {
    if (x.key != y.key) return x.key > y.key;
    return x.seq > y.seq;
  }
};
}  // namespace

std::string_view to_string(TieBreak t) { return t == TieBreak::fifo ? "fifo" : "random"; }

bool parse_tie_break(std::string_view text, TieBreak& out) {
  if (text == "fifo") out = TieBreak::fifo;
  else if (text == "random") out = TieBreak::random;
  else return false;
  return true;
}

std::uint64_t EventQueue::push(Time t, const Item& item) {
  assert(t >= now_);
  Entry e{t, 0, next_seq_++, item};
  if (policy_ == TieBreak::random) e.key = rng_.next_u64();
  if (t == now_) {
    now_push(e);
  } else if (radix_) {
    place(e);
  } else {
    heap_push(e);
    if (heap_.size() > kRadixAbove) to_radix();
  }
  return e.seq;
}

void EventQueue::heap_push(const Entry& e) {
  std::size_t i = heap_.size();
  heap_.push_back(e);
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!earlier(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void EventQueue::heap_pop(Entry& out) {
  out = heap_.front();
  const Entry last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return;
  std::size_t i = 0;
  for (;;) {
    const std::size_t first = 4 * i + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t end = first + 4 < n ? first + 4 : n;
    for (std::size_t c = first + 1; c < end; ++c) {
      if (earlier(heap_[c], heap_[best])) best = c;
    }
    if (!earlier(heap_[best], last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
}

void EventQueue::to_radix() {
  if (!buckets_) buckets_ = std::make_unique<Bucket[]>(static_cast<std::size_t>(kLevels) * kDigits);
  radix_ = true;
  for (const Entry& e : heap_) place(e);
  heap_.clear();
}

void EventQueue::Bucket::grow() {
  const std::uint32_t more = cap == 0 ? 16 : 2 * cap;
  std::unique_ptr<Entry[]> bigger(new Entry[more]);
  std::copy(begin(), end(), bigger.get());
  data = std::move(bigger);
  cap = more;
}

void EventQueue::place(const Entry& e) {
  const auto diff = static_cast<std::uint64_t>(e.time.ns) ^ static_cast<std::uint64_t>(now_.ns);
  const int level = (63 - __builtin_clzll(diff)) / 8;
  const int digit = static_cast<int>((static_cast<std::uint64_t>(e.time.ns) >> (8 * level)) & 0xff);
  Bucket& b = bucket(level, digit);
  const bool first = b.size == 0;
  b.append(e);  // first: a bad_alloc in grow() leaves the bucket empty and unmarked
  if (first) {
    occupied_[level][digit / 64] |= std::uint64_t{1} << (digit % 64);
    if (level_buckets_[level]++ == 0) levels_ |= 1U << level;
  }
  ++future_;
}

bool EventQueue::lowest(int& level, int& digit) const {
  if (levels_ == 0) return false;
  level = __builtin_ctz(levels_);
  for (int w = 0; w < kDigits / 64; ++w) {
    if (occupied_[level][w] != 0) {
      digit = w * 64 + __builtin_ctzll(occupied_[level][w]);
      return true;
    }
  }
  assert(false && "levels_ out of step with occupied_");
  return false;
}

std::size_t EventQueue::upcoming(Item* out, std::size_t n) const {
  if (!radix_) return 0;
  std::size_t k = 0;
  if (policy_ == TieBreak::fifo) {
    for (std::size_t i = now_head_; i < now_q_.size() && k < n; ++i) out[k++] = now_q_[i].item;
  }
  // Level 0 holds single instants, all after the current one (above its low byte), in digit
  // order.
  if ((levels_ & 1U) == 0) return k;
  for (int w = static_cast<int>(now_.ns & 0xff) / 64; w < kDigits / 64 && k < n; ++w) {
    for (std::uint64_t bits = occupied_[0][w]; bits != 0 && k < n; bits &= bits - 1) {
      for (const Entry& e : bucket(0, w * 64 + __builtin_ctzll(bits))) {
        if (k == n) break;
        out[k++] = e.item;
      }
    }
  }
  return k;
}

void EventQueue::now_push(const Entry& e) {
  now_q_.push_back(e);  // fifo: seq only grows, so the FIFO stays in order
  if (policy_ == TieBreak::random) std::push_heap(now_q_.begin(), now_q_.end(), Later{});
}

bool EventQueue::now_pop(Entry& out) {
  if (now_empty()) return false;
  if (policy_ == TieBreak::fifo) {
    out = now_q_[now_head_++];
    if (now_head_ == now_q_.size()) {
      now_q_.clear();
      now_head_ = 0;
    }
    return true;
  }
  std::pop_heap(now_q_.begin(), now_q_.end(), Later{});
  out = now_q_.back();
  now_q_.pop_back();
  return true;
}

void EventQueue::clear_bucket(int level, int digit) {
  bucket(level, digit).size = 0;  // keeps its room for the next batch
  occupied_[level][digit / 64] &= ~(std::uint64_t{1} << (digit % 64));
  if (--level_buckets_[level] == 0) levels_ &= ~(1U << level);
}

void EventQueue::advance(int level, int digit, std::int64_t m) {
  now_ = Time{m};
  Bucket& b = bucket(level, digit);
  future_ -= b.size;
  if (level == 0) {
    now_q_.assign(b.begin(), b.end());  // a level-0 bucket is one instant: all of it is now
  } else {
    // Every event of this bucket agrees with m on the bytes from `level` up, so each lands
    // either in the current instant or in a lower level (never this bucket): buckets above
    // stay valid.
    for (const Entry& e : b) {
      if (e.time.ns == m) {
        now_q_.push_back(e);
      } else if (e.time.ns < m) {
        cancelled_.erase(e.seq);  // earlier than the earliest live one: a cancelled event
      } else {
        place(e);
      }
    }
  }
  clear_bucket(level, digit);
  // now_q_ was empty: the batch becomes the current instant, in (key, seq) order.
  if (now_q_.size() > 1) {
    if (policy_ == TieBreak::fifo) {
      std::sort(now_q_.begin(), now_q_.end(), before);
    } else {
      std::make_heap(now_q_.begin(), now_q_.end(), Later{});
    }
  }
}

bool EventQueue::take_cancelled(const Entry& e) {
  if (cancelled_.empty()) return false;
  auto it = cancelled_.find(e.seq);
  if (it == cancelled_.end()) return false;
  cancelled_.erase(it);
  return true;
}

bool EventQueue::pop_until(Time deadline, Entry& out) {
  for (;;) {
    if (!now_empty()) {
      if (now_ > deadline) return false;
      now_pop(out);
      if (take_cancelled(out)) continue;
      return true;
    }
    if (!radix_) {
      // Cancelled events never move the clock: drop them before looking at the next time.
      while (!heap_.empty() && !cancelled_.empty() && cancelled_.count(heap_.front().seq) != 0) {
        Entry dropped;
        heap_pop(dropped);
        cancelled_.erase(dropped.seq);
      }
      if (heap_.empty() || heap_.front().time > deadline) return false;
      // The heap gives (time, key, seq) order: move the whole next instant to now_q_, or, when
      // the instant holds one event (the common case), hand it out directly.
      now_ = heap_.front().time;
      heap_pop(out);
      if (heap_.empty() || heap_.front().time != now_) {
        if (take_cancelled(out)) continue;
        return true;
      }
      now_push(out);
      while (!heap_.empty() && heap_.front().time == now_) {
        Entry e;
        heap_pop(e);
        now_push(e);
      }
      continue;
    }
    if (future_ == 0) {
      radix_ = false;
      return false;
    }
    int level = 0;
    int digit = 0;
    if (!lowest(level, digit)) return false;
    // The earliest live time in the bucket: cancelled events never move the clock (the
    // simulation's clock would be left behind it). A level-0 bucket is one instant.
    Bucket& b = bucket(level, digit);
    std::int64_t m = INT64_MAX;
    if (cancelled_.empty()) {
      if (level == 0) {
        m = b.data[0].time.ns;
      } else {
        for (const Entry& e : b) m = std::min(m, e.time.ns);
      }
    } else {
      for (const Entry& e : b) {
        if (cancelled_.count(e.seq) == 0) m = std::min(m, e.time.ns);
      }
    }
    if (m == INT64_MAX) {  // only cancelled events here
      for (const Entry& e : b) cancelled_.erase(e.seq);
      future_ -= b.size;
      clear_bucket(level, digit);
      continue;
    }
    if (Time{m} > deadline) return false;
    if (level == 0 && b.size == 1) {
      // The next instant holds one event (the common case at a million timers): hand it out
      // without passing it through now_q_. It is live: m was taken from live events.
      now_ = Time{m};
      out = b.data[0];
      --future_;
      clear_bucket(0, digit);
      return true;
    }
    advance(level, digit, m);
  }
}

Time EventQueue::next_time() {
  for (;;) {
    if (!now_empty()) {
      const Entry& front = now_front();
      if (cancelled_.empty() || cancelled_.count(front.seq) == 0) return now_;
      Entry dropped;
      now_pop(dropped);
      cancelled_.erase(dropped.seq);
      continue;
    }
    if (!radix_) {
      if (heap_.empty()) return Time::max();
      if (cancelled_.empty() || cancelled_.count(heap_.front().seq) == 0) return heap_.front().time;
      Entry dropped;
      heap_pop(dropped);
      cancelled_.erase(dropped.seq);
      continue;
    }
    int level = 0;
    int digit = 0;
    if (!lowest(level, digit)) return Time::max();
    // The earliest live time, without moving the clock: a caller may still push events before it.
    const Bucket& b = bucket(level, digit);
    std::int64_t m = INT64_MAX;
    for (const Entry& e : b) {
      if (!cancelled_.empty() && cancelled_.count(e.seq) != 0) continue;
      m = std::min(m, e.time.ns);
    }
    if (m != INT64_MAX) {
      // The bucket's earliest is live; but a live event in a later bucket cannot be earlier.
      return Time{m};
    }
    for (const Entry& e : b) cancelled_.erase(e.seq);  // a bucket of cancelled events only
    future_ -= b.size;
    clear_bucket(level, digit);
  }
}

}  // namespace lic
