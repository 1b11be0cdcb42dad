// The mini pipeline (seed 000, DESIGN.md §6.1) on its tree, built from the catalogue, and
// conservation read from its trace: every line stored, dead-lettered, or lost with the reason.

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "sim/held_event.hpp"
#include "properties/conservation.hpp"
#include "scenarios/behaviours/pipeline.hpp"
#include "scenarios/testing/support.hpp"
#include "sim/simulation.hpp"
#include "supervision/stock_worker.hpp"

using namespace lic;
using namespace lic::literals;
using namespace lic::scenarios;
using namespace lic::scenarios::testing;
using lic::properties::Conservation;
using lic::properties::check_conservation;
using lic::supervision::find_by_path;
using lic::supervision::Strategy;
using lic::supervision::SupervisorSpec;

namespace {

Time at(Duration d) { return Time{} + d; }

/// Seed 000's tree: Root(one_for_one, 3 in 5 s) -> [sink(one_for_one) -> [db_sink,
/// dead_letter], input(rest_for_one) -> [reader, parser, validator]], the reader with `args`.
/// `input_intensity` lets a test keep the input supervisor from giving up.
/// `sink_args` go to DB.Sink (batch, flush_every).
SupervisorSpec seed_tree(std::vector<std::pair<std::string, ArgValue>> reader_args,
                         std::uint32_t input_intensity = 3,
                         std::vector<std::pair<std::string, ArgValue>> sink_args = {}) {
  SupervisorSpec sink;
  sink.flags = supervision::SupFlags::elixir();
  sink.children = {child("db_sink", ref("pipeline.sink", std::move(sink_args))),
                   child("dead_letter", ref("pipeline.dead_letter"))};
  SupervisorSpec input;
  input.flags = supervision::SupFlags::elixir();
  input.flags.strategy = Strategy::rest_for_one;
  input.flags.intensity = input_intensity;
  input.children = {child("reader", ref("pipeline.reader", std::move(reader_args))),
                    child("parser", ref("pipeline.parser")), child("validator", ref("pipeline.validator"))};
  SupervisorSpec root;
  root.flags = supervision::SupFlags::elixir();
  root.children = {supervision::Supervisor::child("sink", sink), supervision::Supervisor::child("input", input)};
  return root;
}

std::size_t exits_of(const Simulation& sim, const char* path, const Reason& why) {
  std::size_t n = 0;
  for (const TraceEvent& e : sim.trace().events()) {
    if (e.kind == EventKind::exit && e.label.name == Atom(path) && e.reason == why) ++n;
  }
  return n;
}

/// The seq before the first line of the Reader running now.
std::int64_t first_seq(const Simulation& sim) {
  return pipeline::kSeqsPerReader * static_cast<std::int64_t>(sim.whereis(Atom("Input.Reader")).id);
}

}  // namespace

TEST_CASE("pipeline: with no faults every valid line is stored and every unparsable one dead-lettered", "[pipeline][conservation]") {
  Simulation sim;
  spawn_root(sim, seed_tree({arg("unparsable", "10%")}));
  sim.run_until(at(10_s));
  const Conservation c = check_conservation(sim.trace().events());
  INFO(properties::describe(c));
  CHECK(c.ok);
  CHECK(c.emitted.count == 200);  // a line every 50 ms from 50 ms to 10 s
  CHECK(c.emitted.seqs.front() == first_seq(sim) + 1);
  CHECK(c.stored.count + c.dead_lettered.count + c.buffered.count == 200);
  CHECK(c.buffered.count <= 4);  // what came since the last flush (every 200 ms)
  CHECK(c.dead_lettered.count > 5);
  CHECK(c.dead_lettered.count < 40);
  CHECK(c.lost.empty());
  CHECK(c.in_flight.count == 0);
  CHECK(c.unaccounted.count == 0);
  // Dead letters say why each line did not parse.
  for (const HeldEvent& e : system_events(sim.trace(), "line_dead_lettered")) {
    const std::string why(field<Atom>(*e, "why")->text());
    CHECK((why == "not_two_fields" || why == "not_an_integer"));
  }
}

TEST_CASE("pipeline: a validator crash loses the line that crashed it - rest_for_one restarts only the validator - conservation holds", "[pipeline][conservation]") {
  Simulation sim(SimOptions{.seed = 5});
  spawn_root(sim, seed_tree({arg("negative", "2%"), arg("unparsable", "5%")}, 100));
  sim.run_until(at(1_s));
  const Pid reader = sim.whereis(Atom("Input.Reader"));
  const Pid parser = sim.whereis(Atom("Input.Parser"));
  sim.run_until(at(60_s));
  const Conservation c = check_conservation(sim.trace().events());
  INFO(properties::describe(c));
  CHECK(c.ok);
  const std::size_t crashes = exits_of(sim, "/root/input/validator", Reason::error(Atom("negative_value")));
  CHECK(crashes > 5);
  REQUIRE(c.lost.count("crashed") == 1);
  CHECK(c.lost.at("crashed").count == crashes);
  CHECK(c.lost.size() == 1);  // nothing else was lost: the validator is back before the next line
  CHECK(c.stored.count + c.dead_lettered.count + c.buffered.count + crashes == c.emitted.count);
  CHECK(sim.whereis(Atom("Input.Reader")) == reader);
  CHECK(sim.whereis(Atom("Input.Parser")) == parser);
}

TEST_CASE("pipeline: lines sent while the validator is restarting slowly are lost as no_receiver - conservation names them", "[pipeline][conservation]") {
  Simulation sim;
  spawn_root(sim, seed_tree({}));
  sim.run_until(at(1_s) + 10_ms);
  // The validator's next start takes 120 ms: the lines of 1.05 s and 1.1 s find no validator.
  sim.delay_next_start(Atom("/root/input/validator"), 120_ms);
  sim.exit(sim.whereis(Atom("Input.Validator")), Reason::kill());
  sim.run_until(at(2_s));
  const Conservation c = check_conservation(sim.trace().events());
  INFO(properties::describe(c));
  CHECK(c.ok);
  REQUIRE(c.lost.count("no_receiver") == 1);
  const std::int64_t first = first_seq(sim);
  CHECK(c.lost.at("no_receiver").seqs == std::vector<std::int64_t>{first + 21, first + 22});
  CHECK(c.stored.count + c.buffered.count == c.emitted.count - 2);
}

TEST_CASE("pipeline: a line waiting in the validator's mailbox when it dies is lost there (dead_mailbox)", "[pipeline][conservation]") {
  Simulation sim;
  spawn_root(sim, seed_tree({}));
  sim.run_until(at(1_s) - 1_ns);
  // Step through the tick at 1 s until the parser has handed its line to the validator, then
  // crash the validator before it takes it.
  std::int64_t handed = 0;
  const Pid validator = sim.whereis(Atom("Input.Validator"));
  const EventLog& log = sim.trace().events();
  std::size_t seen = log.size();
  while (handed == 0 && sim.step()) {
    for (std::size_t i = seen; i < log.size(); ++i) {
      if (log[i].kind == EventKind::send && log[i].other == validator && i > 0 &&
          log[i - 1].name == properties::line::kSent) {
        handed = *field<std::int64_t>(log[i - 1], "seq");
      }
    }
    seen = log.size();
  }
  REQUIRE(handed != 0);
  sim.crash(validator, Reason::error(Atom("injected_crash")));
  sim.run_until(at(2_s));
  const Conservation c = check_conservation(sim.trace().events());
  INFO(properties::describe(c));
  CHECK(c.ok);
  REQUIRE(c.lost.count("dead_mailbox") == 1);
  CHECK(c.lost.at("dead_mailbox").seqs == std::vector<std::int64_t>{handed});
}

TEST_CASE("pipeline: a parser crash restarts parser and validator and keeps the reader - a new reader numbers its lines from its pid", "[pipeline]") {
  Simulation sim;
  spawn_root(sim, seed_tree({}));
  sim.run_until(at(1_s) + 10_ms);
  const Pid reader = sim.whereis(Atom("Input.Reader"));
  const Pid validator = sim.whereis(Atom("Input.Validator"));
  sim.crash(sim.whereis(Atom("Input.Parser")), Reason::error(Atom("boom")));
  sim.run_until(at(1_s) + 20_ms);
  CHECK(sim.whereis(Atom("Input.Reader")) == reader);
  CHECK(sim.whereis(Atom("Input.Validator")) != validator);
  sim.crash(reader, Reason::error(Atom("boom")));
  sim.run_until(at(2_s));
  const Conservation c = check_conservation(sim.trace().events());
  INFO(properties::describe(c));
  CHECK(c.ok);
  const auto emitted = system_events(sim.trace(), "line_emitted");
  REQUIRE(!emitted.empty());
  CHECK(*field<std::int64_t>(*emitted.back(), "seq") == first_seq(sim) + 19);  // the new reader's 19th line
  CHECK(sim.whereis(Atom("Input.Reader")) != reader);
}

TEST_CASE("pipeline: validator crashes faster than 3 in 5 s escalate through input to the root - conservation still accounts for every line", "[pipeline][conservation]") {
  Simulation sim(SimOptions{.seed = 2});
  const Pid root = spawn_root(sim, seed_tree({arg("negative", "20%")}));
  sim.run_until(at(60_s));
  CHECK(!sim.alive(root));
  CHECK(!system_events(sim.trace(), "reached_max_restart_intensity").empty());
  const Conservation c = check_conservation(sim.trace().events());
  INFO(properties::describe(c));
  CHECK(c.ok);
  CHECK(c.lost.count("crashed") == 1);
  CHECK(c.emitted.count == c.stored.count + c.lost_count());
}

TEST_CASE("pipeline: DB.Sink stores at its flushes - a crash with lines in its buffer loses them as sink_buffer", "[pipeline][conservation][buffer]") {
  Simulation sim;
  spawn_root(sim, seed_tree({}));
  sim.run_until(at(1_s) + 10_ms);
  // A line every 50 ms from 50 ms; the first buffered line of a batch sets a 200 ms timer: the
  // flushes fall at 250, 450, 650, 850 and 1050 ms, and each takes the line of its own instant
  // after it. At 1.01 s the buffer holds the lines of 850, 900, 950 and 1000 ms.
  const std::int64_t first = first_seq(sim);
  Conservation c = check_conservation(sim.trace().events());
  INFO(properties::describe(c));
  CHECK(c.ok);
  CHECK(c.stored.count == 16);
  CHECK(c.buffered.seqs == std::vector<std::int64_t>{first + 17, first + 18, first + 19, first + 20});
  const Pid sink = sim.whereis(Atom("DB.Sink"));
  sim.crash(sink, Reason::error(Atom("db_down")));
  sim.run_until(at(2_s));
  c = check_conservation(sim.trace().events());
  CHECK(c.ok);
  REQUIRE(c.lost.size() == 1);  // nothing else: the sink is back before the next line
  CHECK(c.lost.at("sink_buffer").seqs == std::vector<std::int64_t>{first + 17, first + 18, first + 19, first + 20});
  CHECK(c.stored.count + c.buffered.count + 4 == c.emitted.count);
  CHECK(sim.whereis(Atom("DB.Sink")) != sink);
}

TEST_CASE("pipeline: DB.Sink flushes a full batch at once - batch 1 stores each line as it comes", "[pipeline][buffer]") {
  for (const std::int64_t batch : {1, 3}) {
    Simulation sim;
    spawn_root(sim, seed_tree({}, 3, {arg("batch", std::to_string(batch)), arg("flush_every", "10s")}));
    sim.run_until(at(1_s) + 10_ms);  // 20 lines
    const Conservation c = check_conservation(sim.trace().events());
    INFO(properties::describe(c));
    CHECK(c.ok);
    CHECK(c.stored.count == static_cast<std::size_t>(20 / batch * batch));
    CHECK(c.buffered.count == static_cast<std::size_t>(20 % batch));
  }
}

TEST_CASE("pipeline: the same seed gives the same trace - another seed another one", "[pipeline]") {
  auto hash = [](std::uint64_t seed) {
    Simulation sim(SimOptions{.seed = seed});
    spawn_root(sim, seed_tree({arg("negative", "3%"), arg("unparsable", "10%")}, 100));
    sim.run_until(at(20_s));
    return sim.trace().hash();
  };
  CHECK(hash(11) == hash(11));
  CHECK(hash(11) != hash(12));
}

TEST_CASE("pipeline: parse_line reads k-comma-v with an integer v and names what is wrong otherwise", "[pipeline]") {
  std::string key;
  std::int64_t value = 0;
  CHECK(pipeline::parse_line("k1,-42", key, value).empty());
  CHECK(key == "k1");
  CHECK(value == -42);
  CHECK(pipeline::parse_line("k1 42", key, value) == Atom("not_two_fields"));
  CHECK(pipeline::parse_line("k1,4,2", key, value) == Atom("not_two_fields"));
  CHECK(pipeline::parse_line(",42", key, value) == Atom("empty_key"));
  CHECK(pipeline::parse_line("k1,x42", key, value) == Atom("not_an_integer"));
  CHECK(pipeline::parse_line("k1,", key, value) == Atom("not_an_integer"));
  CHECK(pipeline::check_mix(Ratio{1, 2}, Ratio{1, 2}).empty());
  CHECK(!pipeline::check_mix(Ratio{1, 2}, Ratio{2, 3}).empty());
}
