#include "sim/event_queue.hpp"
#include "sim/rc_prop.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <rapidcheck.h>
#include <map>
#include <tuple>
#include <vector>

using namespace lic;

namespace {
EventQueue::Item item(std::uint64_t a) { return EventQueue::Item{1, 0, a}; }

std::vector<std::uint64_t> drain(EventQueue& q) {
  std::vector<std::uint64_t> out;
  EventQueue::Entry e;
  while (q.pop(e)) out.push_back(e.item.a);
  return out;
}

/// The queue's specification as a sorted map: (time, key, seq) -> id. Under random it draws the
/// same keys as the queue (one draw per push from a stream with the same seed).
struct Reference {
  TieBreak tb;
  Rng keys;
  std::map<std::tuple<std::int64_t, std::uint64_t, std::uint64_t>, std::uint64_t> events;
  std::uint64_t seq = 0;
  std::int64_t now = 0;

  Reference(TieBreak t, std::uint64_t seed) : tb(t), keys(seed) {}
  void push(EventQueue& q, std::int64_t t) {
    q.push(Time{t}, item(seq));
    events.emplace(std::make_tuple(t, tb == TieBreak::random ? keys.next_u64() : 0, seq + 1), seq);
    ++seq;
  }
  /// Pops from both and requires the same event.
  void pop(EventQueue& q) {
    EventQueue::Entry e;
    REQUIRE(q.pop(e));
    auto it = events.begin();
    REQUIRE(e.item.a == it->second);
    now = std::get<0>(it->first);
    events.erase(it);
  }
};
}  // namespace

TEST_CASE("fifo: events run by time - then in insertion order", "[event_queue]") {
  EventQueue q(TieBreak::fifo, Rng(1));
  q.push(Time{20}, item(1));
  q.push(Time{10}, item(2));
  q.push(Time{20}, item(3));
  q.push(Time{10}, item(4));
  CHECK(drain(q) == std::vector<std::uint64_t>{2, 4, 1, 3});
}

TEST_CASE("fifo: same-instant events pushed while running come after earlier ones", "[event_queue]") {
  // The fast path keeps "now" events in a side FIFO; heap events at the same instant were
  // inserted earlier and must still come first.
  EventQueue q(TieBreak::fifo, Rng(1));
  q.push(Time{5}, item(1));
  q.push(Time{5}, item(2));
  EventQueue::Entry e;
  REQUIRE(q.pop(e));
  CHECK(e.item.a == 1);
  q.push(Time{5}, item(3));  // now == 5: goes to the FIFO
  q.push(Time{6}, item(4));
  CHECK(drain(q) == std::vector<std::uint64_t>{2, 3, 4});
}

TEST_CASE("cancelled events are skipped", "[event_queue]") {
  EventQueue q(TieBreak::fifo, Rng(1));
  q.push(Time{1}, item(1));
  const auto id = q.push(Time{2}, item(2));
  q.push(Time{3}, item(3));
  q.cancel(id);
  CHECK(q.next_time() == Time{1});
  CHECK(drain(q) == std::vector<std::uint64_t>{1, 3});
}

TEST_CASE("random tie-break: a seeded shuffle of same-time events - time order kept", "[event_queue]") {
  auto run = [](std::uint64_t seed) {
    EventQueue q(TieBreak::random, Rng(seed));
    for (std::uint64_t i = 0; i < 20; ++i) q.push(Time{static_cast<std::int64_t>(i / 10)}, item(i));
    return drain(q);
  };
  const auto a = run(1);
  CHECK(a == run(1));  // same seed, same order
  bool differs = false;
  for (std::uint64_t s = 2; s < 6; ++s) differs = differs || run(s) != a;
  CHECK(differs);
  // Events of time 0 (ids 0..9) all come before events of time 1 (ids 10..19).
  for (std::size_t i = 0; i < 10; ++i) CHECK(a[i] < 10);
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (std::uint64_t i = 0; i < 20; ++i) CHECK(sorted[i] == i);
}

TEST_CASE("both tie-breaks agree with a reference sorted by (time - key - seq) on interleaved pushes and pops", "[event_queue]") {
  for (TieBreak tb : {TieBreak::fifo, TieBreak::random}) {
    Rng r(17);
    EventQueue q(tb, Rng(5));
    Reference ref(tb, 5);
    for (int step = 0; step < 20'000; ++step) {
      if (ref.events.empty() || r.uniform(3) != 0) {
        ref.push(q, ref.now + static_cast<std::int64_t>(r.uniform(4)));  // many ties, some now
      } else {
        ref.pop(q);
      }
    }
  }
}

TEST_CASE("next_time reports the earliest live event even when earlier ones were cancelled", "[event_queue]") {
  for (TieBreak tb : {TieBreak::fifo, TieBreak::random}) {
    EventQueue q(tb, Rng(1));
    const auto a = q.push(Time{10}, item(1));
    const auto b = q.push(Time{1000}, item(2));
    q.push(Time{5000}, item(3));
    q.cancel(a);
    CHECK(q.next_time() == Time{1000});
    q.cancel(b);
    CHECK(q.next_time() == Time{5000});
    // The clock did not move: an event before 5000 can still be pushed and comes first.
    q.push(Time{20}, item(4));
    CHECK(drain(q) == std::vector<std::uint64_t>{4, 3});
  }
}

TEST_CASE("a million timers at scattered times come out in time order", "[event_queue]") {
  EventQueue q(TieBreak::fifo, Rng(1));
  Rng r(3);
  for (std::uint64_t i = 0; i < 1'000'000; ++i) {
    q.push(Time{static_cast<std::int64_t>(r.uniform(1'000'000'000))}, item(i));
  }
  EventQueue::Entry e;
  std::int64_t last = -1;
  std::uint64_t last_seq = 0;
  std::size_t n = 0;
  while (q.pop(e)) {
    REQUIRE(e.time.ns >= last);
    if (e.time.ns == last) REQUIRE(e.seq > last_seq);
    last = e.time.ns;
    last_seq = e.seq;
    ++n;
  }
  CHECK(n == 1'000'000);
}

TEST_CASE("the queue switches between its heap and its radix buckets without changing the order", "[event_queue]") {
  // Bursts above the switch-over size (16384 pending) alternate with drains to a handful, under
  // both tie-breaks, against the reference.
  for (TieBreak tb : {TieBreak::fifo, TieBreak::random}) {
    Rng r(21);
    EventQueue q(tb, Rng(8));
    Reference ref(tb, 8);
    for (int phase = 0; phase < 6; ++phase) {
      const std::size_t target = phase % 2 == 0 ? 40'000 : (phase == 5 ? 0 : 3);  // ends empty
      while (ref.events.size() < target) {
        ref.push(q, ref.now + static_cast<std::int64_t>(r.uniform(phase < 3 ? 5'000'000 : 3)));
      }
      while (ref.events.size() > target) ref.pop(q);
    }
    const std::int64_t now = ref.now;
    // Empty again: back on the heap, still in order.
    for (std::uint64_t i = 0; i < 5; ++i) q.push(Time{now + 10 - static_cast<std::int64_t>(i)}, item(1000 + i));
    CHECK(drain(q) == std::vector<std::uint64_t>{1004, 1003, 1002, 1001, 1000});
  }
}

TEST_CASE("a cancelled event never moves the clock: after it the queue accepts the current time (regression)", "[event_queue]") {
  for (TieBreak tb : {TieBreak::fifo, TieBreak::random}) {
    EventQueue q(tb, Rng(1));
    const auto id = q.push(Time{10'000}, item(1));
    q.cancel(id);
    EventQueue::Entry e;
    CHECK_FALSE(q.pop(e));
    CHECK(q.now() == Time{0});
    q.push(Time{5}, item(2));  // before the cancelled event's time: still allowed
    REQUIRE(q.pop(e));
    CHECK(e.item.a == 2);
  }
}

namespace {
/// One step of a random run: what to do and a number that says how (rapidcheck draws both).
struct Op {
  int kind;            // 0-3 push, 4 cancel, 5 pop, 6 pop_until, 7 next_time, 8 burst
  std::uint64_t arg;
};

/// Runs `ops` on a queue and on a std::map ordered by (time, key, seq), and requires the same
/// events in the same order. Pushes are at the current instant (same-instant re-arms), a few ns
/// ahead (ties), within a level-1 or level-2 span of the radix buckets, or far ahead; bursts
/// cross the radix threshold (16384 pending) so both of the queue's structures are exercised.
void run_against_map(TieBreak tb, const std::vector<Op>& ops) {
  EventQueue q(tb, Rng(11));
  Rng keys(11);
  std::map<std::tuple<std::int64_t, std::uint64_t, std::uint64_t>, std::uint64_t> ref;
  std::map<std::uint64_t, std::tuple<std::int64_t, std::uint64_t, std::uint64_t>> by_id;
  std::vector<std::uint64_t> ids;
  std::int64_t now = 0;
  std::uint64_t next_item = 0;
  const auto push = [&](std::int64_t t) {
    const std::uint64_t id = q.push(Time{t}, item(next_item));
    const auto k = std::make_tuple(t, tb == TieBreak::random ? keys.next_u64() : 0, id);
    ref.emplace(k, next_item++);
    by_id.emplace(id, k);
    ids.push_back(id);
  };
  const auto expect_pop = [&](Time deadline) {
    EventQueue::Entry e;
    const bool due = !ref.empty() && std::get<0>(ref.begin()->first) <= deadline.ns;
    RC_ASSERT(q.pop_until(deadline, e) == due);
    if (!due) return;
    RC_ASSERT(e.item.a == ref.begin()->second);
    RC_ASSERT(e.time.ns == std::get<0>(ref.begin()->first));
    now = e.time.ns;
    by_id.erase(std::get<2>(ref.begin()->first));
    ref.erase(ref.begin());
  };
  static constexpr std::int64_t kSpan[4] = {0, 4, 70'000, 1'000'000'000'000};
  for (const Op& op : ops) {
    if (op.kind < 4) {
      push(now + (kSpan[op.kind] == 0 ? 0 : static_cast<std::int64_t>(op.arg % static_cast<std::uint64_t>(kSpan[op.kind]))));
    } else if (op.kind == 4 && !ids.empty()) {
      const std::uint64_t id = ids[op.arg % ids.size()];  // pending, fired or already cancelled
      q.cancel(id);
      if (auto it = by_id.find(id); it != by_id.end()) {
        ref.erase(it->second);
        by_id.erase(it);
      }
    } else if (op.kind == 5) {
      expect_pop(Time::max());
    } else if (op.kind == 6) {
      expect_pop(Time{now + static_cast<std::int64_t>(op.arg % 100'000)});
    } else if (op.kind == 7) {
      RC_ASSERT(q.next_time() == (ref.empty() ? Time::max() : Time{std::get<0>(ref.begin()->first)}));
    } else if (op.kind == 8) {
      Rng r(op.arg);
      const std::uint64_t n = op.arg % (op.arg % 4 == 0 ? 20'000 : 200);
      for (std::uint64_t i = 0; i < n; ++i) push(now + static_cast<std::int64_t>(r.uniform(i % 2 == 0 ? 3 : 2'000'000)));
    }
  }
  while (!ref.empty()) expect_pop(Time::max());
  EventQueue::Entry e;
  RC_ASSERT(!q.pop(e));
}
}  // namespace

TEST_CASE("random operation sequences pop in the order of a map keyed (time - key - seq) under both tie-breaks", "[event_queue]") {
  const auto gen_ops = [] {
    return *rc::gen::container<std::vector<Op>>(rc::gen::build<Op>(
        rc::gen::set(&Op::kind, rc::gen::weightedOneOf<int>({{4, rc::gen::inRange(0, 4)},
                                                             {2, rc::gen::just(4)},
                                                             {6, rc::gen::inRange(5, 8)},
                                                             {1, rc::gen::just(8)}})),
        rc::gen::set(&Op::arg, rc::gen::arbitrary<std::uint64_t>())));
  };
  lic::test::prop("fifo", [&] { run_against_map(TieBreak::fifo, gen_ops()); });
  lic::test::prop("random", [&] { run_against_map(TieBreak::random, gen_ops()); });
}
