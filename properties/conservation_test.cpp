// Conservation (DESIGN.md §5) on small traces: the line protocol's own events, and the kernel's
// drops and deliveries of the messages that carry lines. The pipeline's runs are checked in
// scenarios/behaviours/pipeline_test.cpp.

#include <catch2/catch.hpp>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "properties/conservation.hpp"
#include "sim/simulation.hpp"

using namespace lic;
using namespace lic::literals;
using namespace lic::properties;

namespace {

const Atom kCarry("line");

/// Conservation over a trace of line protocol events (name, seq) from the world.
Conservation check(std::initializer_list<std::pair<Atom, std::int64_t>> events) {
  Simulation sim;
  for (const auto& [name, seq] : events) sim.emit(name, {{line::kSeq, seq}});
  return check_conservation(sim.trace().events());
}

/// A process that traces line `seq` entering the system and sends it to `to`.
Body source(std::int64_t seq, Pid to) {
  return [seq, to](Context& ctx) {
    ctx.emit(line::kEmitted, {{line::kSeq, seq}});
    ctx.send(to, kCarry);
  };
}

/// A process that takes nothing for `d`.
Body asleep(Duration d) {
  return [d](Context& ctx) { ctx.sleep(d); };
}

}  // namespace

TEST_CASE("conservation: every line stored or dead-lettered or lost exactly once holds", "[conservation]") {
  Simulation sim;
  for (std::int64_t seq : {1, 2, 3, 4}) sim.emit(line::kEmitted, {{line::kSeq, seq}});
  sim.emit(line::kStored, {{line::kSeq, std::int64_t{1}}});
  sim.emit(line::kDeadLettered, {{line::kSeq, std::int64_t{2}}, {line::kWhy, Atom("not_two_fields")}});
  sim.emit(line::kStored, {{line::kSeq, std::int64_t{4}}});
  sim.emit(line::kLost, {{line::kSeq, std::int64_t{3}}, {line::kWhy, Atom("crashed")}});
  const Conservation c = check_conservation(sim.trace().events());
  INFO(describe(c));
  CHECK(c.ok);
  CHECK(c.emitted.count == 4);
  CHECK(c.stored.seqs == std::vector<std::int64_t>{1, 4});
  CHECK(c.dead_lettered.seqs == std::vector<std::int64_t>{2});
  REQUIRE(c.lost.count("crashed") == 1);
  CHECK(c.lost.at("crashed").seqs == std::vector<std::int64_t>{3});
  CHECK(describe(c) == "4 emitted: 2 stored, 1 dead-lettered, 1 lost: crashed 1 (seq 3)");
}

TEST_CASE("conservation: a line stored twice fails the check and is named", "[conservation]") {
  const Conservation c = check({{line::kEmitted, 1}, {line::kEmitted, 2}, {line::kStored, 1},
                                {line::kStored, 2}, {line::kStored, 1}});
  CHECK(!c.ok);
  CHECK(c.duplicated.seqs == std::vector<std::int64_t>{1});
  CHECK(describe(c) == "2 emitted: 3 stored, 0 dead-lettered, 0 lost; 1 accounted more than once (seq 1)");
}

TEST_CASE("conservation: a line never accounted is unaccounted - one accounted but never emitted is unknown", "[conservation]") {
  const Conservation c = check({{line::kEmitted, 1}, {line::kEmitted, 2}, {line::kStored, 2},
                                {line::kDeadLettered, 9}});
  CHECK(!c.ok);
  CHECK(c.unaccounted.seqs == std::vector<std::int64_t>{1});
  CHECK(c.unknown.seqs == std::vector<std::int64_t>{9});
  CHECK(describe(c) == "2 emitted: 1 stored, 1 dead-lettered, 0 lost; 1 unaccounted (seq 1); 1 accounted "
                       "but never emitted (seq 9)");
}

TEST_CASE("conservation: a seq emitted twice cannot be told apart and fails the check", "[conservation]") {
  const Conservation c = check({{line::kEmitted, 1}, {line::kStored, 1}, {line::kEmitted, 1}, {line::kStored, 1}});
  CHECK(!c.ok);
  CHECK(c.duplicated.count >= 1);
}

TEST_CASE("conservation: the kernel's drops account for lines sent to no process (no_receiver) and left in a dead mailbox (dead_mailbox)", "[conservation]") {
  Simulation sim;
  const Pid gone = sim.spawn([](Context&) {});
  const Pid holder = sim.spawn(asleep(10_s));
  sim.run_until(Time{} + 1_ms);
  sim.spawn(source(1, gone));
  sim.spawn(source(2, holder));
  sim.run_until(Time{} + 1_s);
  sim.exit(holder, Reason::kill());
  const Conservation c = check_conservation(sim.trace().events());
  INFO(describe(c));
  CHECK(c.ok);
  REQUIRE(c.lost.size() == 2);
  CHECK(c.lost.at("no_receiver").seqs == std::vector<std::int64_t>{1});
  CHECK(c.lost.at("dead_mailbox").seqs == std::vector<std::int64_t>{2});
}

TEST_CASE("conservation: a line crossing to another node at the end is in flight (no violation) - landed in a live mailbox it is unaccounted", "[conservation]") {
  Simulation sim;  // the default path takes 1 ms
  SpawnOptions far;
  far.node = Atom("node1");
  const Pid remote = sim.spawn(asleep(10_s), far);
  const Pid local = sim.spawn(asleep(10_s));
  sim.spawn(source(1, remote));
  sim.run_until(Time{} + 500_us);
  Conservation c = check_conservation(sim.trace().events());
  CHECK(c.ok);
  CHECK(c.in_flight.seqs == std::vector<std::int64_t>{1});
  sim.run_until(Time{} + 2_ms);
  c = check_conservation(sim.trace().events());
  CHECK(!c.ok);
  CHECK(c.in_flight.count == 0);
  CHECK(c.unaccounted.seqs == std::vector<std::int64_t>{1});
  sim.spawn(source(2, local));
  sim.run_until(Time{} + 3_ms);
  c = check_conservation(sim.trace().events());
  CHECK(c.unaccounted.seqs == std::vector<std::int64_t>{1, 2});
  CHECK(describe(c) == "2 emitted: 0 stored, 0 dead-lettered, 0 lost; 2 unaccounted (seq 1, 2)");
}

TEST_CASE("conservation: a line's message lost by the network is lost as network", "[conservation]") {
  Simulation sim;
  LinkParams lossy;
  lossy.loss = Ratio::always();
  sim.set_link(Atom("node0"), Atom("node1"), lossy);
  SpawnOptions far;
  far.node = Atom("node1");
  const Pid remote = sim.spawn(asleep(10_s), far);
  sim.spawn(source(1, remote));
  sim.run_until(Time{} + 1_s);
  const Conservation c = check_conservation(sim.trace().events());
  CHECK(c.ok);
  REQUIRE(c.lost.count("network") == 1);
  CHECK(c.lost.at("network").seqs == std::vector<std::int64_t>{1});
}

namespace {

/// A batching sink for the tests below: takes `n` messages, tracing line_buffered for the line
/// each carries (seq first, first + 1, ...), stores the first `flushed` of them, then waits.
Body buffering(std::int64_t first, int n, int flushed) {
  return [first, n, flushed](Context& ctx) {
    for (int i = 0; i < n; ++i) {
      ctx.receive();
      ctx.emit(line::kBuffered, {{line::kSeq, first + i}});
    }
    for (int i = 0; i < flushed; ++i) ctx.emit(line::kStored, {{line::kSeq, first + i}});
    ctx.sleep(10_s);
  };
}

/// A process that traces line_buffered for each of `seqs` (a stage's pretend buffer), then waits.
Body buffers(std::vector<std::int64_t> seqs) {
  return [seqs](Context& ctx) {
    for (const std::int64_t seq : seqs) ctx.emit(line::kBuffered, {{line::kSeq, seq}});
    ctx.sleep(10_s);
  };
}

}  // namespace

TEST_CASE("conservation: a buffered line that is flushed is stored - one whose sink ended before the flush is lost as sink_buffer and nowhere else", "[conservation][buffer]") {
  Simulation sim;
  const Pid sink = sim.spawn(buffering(1, 3, 1));
  for (std::int64_t seq : {1, 2, 3}) sim.spawn(source(seq, sink));
  sim.run_until(Time{} + 1_s);
  Conservation c = check_conservation(sim.trace().events());
  INFO(describe(c));
  CHECK(c.ok);  // lines in a live buffer at the end are no violation: their flush is to come
  CHECK(c.stored.seqs == std::vector<std::int64_t>{1});
  CHECK(c.buffered.seqs == std::vector<std::int64_t>{2, 3});
  CHECK(describe(c) == "3 emitted: 1 stored, 0 dead-lettered, 0 lost; 2 in a live buffer at the end");
  sim.spawn(source(4, sink));  // waits in the mailbox: the kernel drops it with the sink
  sim.run_until(Time{} + 2_s);
  sim.crash(sink, Reason::error(Atom("boom")));
  c = check_conservation(sim.trace().events());
  CHECK(c.ok);
  CHECK(c.buffered.count == 0);
  REQUIRE(c.lost.size() == 2);
  CHECK(c.lost.at("sink_buffer").seqs == std::vector<std::int64_t>{2, 3});
  CHECK(c.lost.at("dead_mailbox").seqs == std::vector<std::int64_t>{4});
  CHECK(c.duplicated.count == 0);
  CHECK(c.unaccounted.count == 0);
  CHECK(describe(c) == "4 emitted: 1 stored, 0 dead-lettered, 3 lost: dead_mailbox 1 (seq 4), sink_buffer 2 (seq 2, 3)");
}

TEST_CASE("conservation: a line buffered twice is lost once with its last holder - a line stored without a buffer is stored", "[conservation][buffer]") {
  Simulation sim;
  for (std::int64_t seq : {1, 2, 3}) sim.emit(line::kEmitted, {{line::kSeq, seq}});
  const Pid a = sim.spawn(buffers({1, 1, 2}));  // line 1 twice
  sim.run_until(Time{} + 1_ms);
  const Pid b = sim.spawn(buffers({2}));  // b takes line 2 over
  sim.emit(line::kStored, {{line::kSeq, std::int64_t{3}}});  // never buffered: stored all the same
  sim.run_until(Time{} + 2_ms);
  sim.exit(a, Reason::kill());
  Conservation c = check_conservation(sim.trace().events());
  INFO(describe(c));
  CHECK(c.ok);
  CHECK(c.stored.seqs == std::vector<std::int64_t>{3});
  REQUIRE(c.lost.count("sink_buffer") == 1);
  CHECK(c.lost.at("sink_buffer").seqs == std::vector<std::int64_t>{1});
  CHECK(c.buffered.seqs == std::vector<std::int64_t>{2});
  sim.exit(b, Reason::shutdown());
  c = check_conservation(sim.trace().events());
  CHECK(c.ok);
  CHECK(c.lost.at("sink_buffer").seqs == std::vector<std::int64_t>{1, 2});
  CHECK(c.buffered.count == 0);
  CHECK(c.duplicated.count == 0);
}

TEST_CASE("conservation: a line stored and then lost with a buffer is accounted twice - the check fails and names it", "[conservation][buffer]") {
  Simulation sim;
  sim.emit(line::kEmitted, {{line::kSeq, std::int64_t{1}}});
  sim.emit(line::kStored, {{line::kSeq, std::int64_t{1}}});
  const Pid a = sim.spawn(buffers({1}));
  sim.run_until(Time{} + 1_ms);
  sim.exit(a, Reason::kill());
  const Conservation c = check_conservation(sim.trace().events());
  CHECK(!c.ok);
  CHECK(c.duplicated.seqs == std::vector<std::int64_t>{1});
}

TEST_CASE("conservation: a sink that buffers and stores many lines loses at its end only what its buffer still held - in the order it took them", "[conservation][buffer]") {
  // Past 4,096 lines the sink's list lets go of the lines it stored (retired): what it still
  // holds at its end, and a line it passed on and took back, keep their first places.
  Simulation sim;
  constexpr std::int64_t kLines = 10'000;
  for (std::int64_t seq = 0; seq < kLines + 3; ++seq) sim.emit(line::kEmitted, {{line::kSeq, seq}});
  const Pid sink = sim.spawn([](Context& ctx) {
    ctx.emit(line::kBuffered, {{line::kSeq, kLines + 2}});
    ctx.emit(line::kSent, {{line::kSeq, kLines + 2}});  // passed on: held by nobody, not accounted
    for (std::int64_t seq = 0; seq < kLines; ++seq) {
      ctx.emit(line::kBuffered, {{line::kSeq, seq}});
      if (seq % 100 == 99)
        for (std::int64_t s = seq - 99; s <= seq; ++s) ctx.emit(line::kStored, {{line::kSeq, s}});
    }
    for (const std::int64_t seq : {kLines + 1, kLines, kLines + 2}) ctx.emit(line::kBuffered, {{line::kSeq, seq}});
    ctx.sleep(10_s);
  });
  sim.run_until(Time{} + 1_s);
  sim.exit(sink, Reason::kill());
  const Conservation c = check_conservation(sim.trace().events());
  INFO(describe(c));
  CHECK(c.ok);
  CHECK(c.stored.count == kLines);
  REQUIRE(c.lost.count("sink_buffer") == 1);
  CHECK(c.lost.at("sink_buffer").seqs == std::vector<std::int64_t>{kLines + 2, kLines + 1, kLines});
  CHECK(c.lost_count() == 3);
}
