#include "sim/event_queue.hpp"

#include <cassert>

namespace lic {

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
  if (policy_ == TieBreak::fifo && t == now_) {
    fifo_.push_back(e);
    return e.seq;
  }
  if (policy_ == TieBreak::random) e.key = rng_.next_u64();
  heap_push(e);
  return e.seq;
}

void EventQueue::heap_push(const Entry& e) {
  std::size_t i = heap_.size();
  heap_.push_back(e);
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!before(e, heap_[parent])) break;
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
      if (before(heap_[c], heap_[best])) best = c;
    }
    if (!before(heap_[best], last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
}

bool EventQueue::take_cancelled(const Entry& e) {
  if (cancelled_.empty()) return false;
  auto it = cancelled_.find(e.seq);
  if (it == cancelled_.end()) return false;
  cancelled_.erase(it);
  return true;
}

bool EventQueue::pop(Entry& out) {
  for (;;) {
    if (!heap_.empty() && (heap_.front().time <= now_ || fifo_head_ == fifo_.size())) {
      heap_pop(out);
    } else if (fifo_head_ < fifo_.size()) {
      out = fifo_[fifo_head_++];
      if (fifo_head_ == fifo_.size()) {
        fifo_.clear();
        fifo_head_ = 0;
      }
    } else {
      return false;
    }
    if (take_cancelled(out)) continue;
    now_ = out.time;
    return true;
  }
}

Time EventQueue::next_time() {
  for (;;) {
    if (fifo_head_ < fifo_.size()) {
      if (!take_cancelled(fifo_[fifo_head_])) return now_;
      ++fifo_head_;
      continue;
    }
    if (heap_.empty()) return Time::max();
    if (!take_cancelled(heap_.front())) return heap_.front().time;
    Entry dropped;
    heap_pop(dropped);
  }
}

}  // namespace lic
