// The data-flow view of index.html (reports/dataflow.hpp) on real runs of the two systems with
// conservation: its counts are conservation's, path by path, and every lost item is listed.

#include <catch2/catch.hpp>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "properties/conservation.hpp"
#include "properties/ingest_conservation.hpp"
#include "reports/dataflow.hpp"
#include "scenarios/run/report.hpp"
#include "scenarios/testing/run_text.hpp"

using namespace lic;
using namespace lic::scenarios;
using namespace lic::scenarios::testing;

namespace {

RunResult run_file(const std::string& name) {
  RunOptions o;
  return run(load_valid(std::string(LIC_SOURCE_DIR) + "/scenarios/" + name), o);
}

const reports::FlowNode& node(const reports::Flow& f, const std::string& name) {
  for (const reports::FlowNode& n : f.nodes)
    if (n.name == name) return n;
  FAIL("no node " << name);
  return f.nodes.front();
}

std::uint64_t edge(const reports::Flow& f, const std::string& from, const std::string& to) {
  for (const reports::FlowEdge& e : f.edges)
    if (f.nodes[e.from].name == from && f.nodes[e.to].name == to) return e.count;
  return 0;
}

}  // namespace

TEST_CASE("data flow: the pipeline's lines path by path add up to conservation's and the lost ones are named where",
          "[dataflow]") {
  const RunResult r = run_file("bugs/pipeline_remote_sink_lossy_link.yaml");
  const EventLog& events = r.sim->trace().events();
  const properties::Conservation c = properties::check_conservation(events);
  const reports::Flow f = reports::flow_of(events);
  REQUIRE(f.what == "lines");
  for (const reports::FlowEdge& e : f.edges) CHECK(e.from != e.to);  // a timer to itself is no handoff
  CHECK(node(f, "/root/input/reader").count == c.emitted.count);
  CHECK(edge(f, "/root/input/reader", "/root/input/parser") == c.emitted.count);
  CHECK(node(f, "stored").count == c.stored.count);
  CHECK(node(f, "dead-lettered").count == c.dead_lettered.count);
  CHECK(edge(f, "/root/input/parser", "/root/dead_letter") == c.dead_lettered.count);
  // What the parser passed on went to the validator or the dead letters.
  CHECK(edge(f, "/root/input/parser", "/root/input/validator") + edge(f, "/root/input/parser", "/root/dead_letter") ==
        node(f, "/root/input/parser").count);
  REQUIRE(c.lost.count("network") == 1);
  CHECK(node(f, "lost: network").count == c.lost.at("network").count);
  bool listed = false;
  for (const reports::FlowLoss& l : f.losses) {
    if (l.why != "network") continue;
    listed = true;
    CHECK(l.count == c.lost.at("network").count);
    CHECK(l.where == "/root/input/validator -> /store/db");
    CHECK(l.items.find(std::to_string(c.lost.at("network").seqs.front())) != std::string::npos);
  }
  CHECK(listed);
  const std::string html = reports::dataflow_html(f);
  CHECK(html.find("<svg id=\"dataflow\"") != std::string::npos);
  CHECK(html.find("<table id=\"losses\">") != std::string::npos);
}

TEST_CASE("data flow: the ingest server's events from ingress to S3 with each loss by where and why", "[dataflow]") {
  const RunResult r = run_file("bugs/ingest_upload_timeout_past_grace.yaml");
  const EventLog& events = r.sim->trace().events();
  const properties::IngestConservation c = properties::check_ingest(events);
  const reports::Flow f = reports::flow_of(events);
  REQUIRE(f.what == "events");
  CHECK(node(f, "HTTP ingress").count == static_cast<std::uint64_t>(c.accepted + c.refused));
  CHECK(node(f, "EventCh").count == static_cast<std::uint64_t>(c.accepted));
  CHECK(node(f, "uploaded to S3").count == static_cast<std::uint64_t>(c.uploaded));
  std::uint64_t lost_nodes = 0, lost_rows = 0;
  for (const reports::FlowNode& n : f.nodes) lost_nodes += n.kind == "lost" ? n.count : 0;
  for (const reports::FlowLoss& l : f.losses) lost_rows += l.count;
  REQUIRE(c.lost_events() > 0);
  CHECK(lost_nodes == static_cast<std::uint64_t>(c.lost_events()));
  CHECK(lost_rows == static_cast<std::uint64_t>(c.lost_events() + c.pending));
  CHECK(f.losses.size() == c.lost.size() + (c.pending > 0 ? 1 : 0));
  // Every stage passes on what it took, less what was lost there.
  CHECK(edge(f, "EventCh", "CollectLoop batches") + node(f, "lost: sigkill (EventCh)").count == node(f, "EventCh").count);
}

TEST_CASE("data flow: a run without conservation has none and its page no such section", "[dataflow]") {
  const RunResult r = run_file("catalog/one_for_one.yaml");
  CHECK(reports::flow_of(r.sim->trace().events()).empty());
  CHECK(reports::dataflow_html(reports::flow_of(r.sim->trace().events())).empty());
}

TEST_CASE("witness: conservation names the event that lost the first line past the bound", "[dataflow][witness]") {
  const RunResult r = run_file("bugs/pipeline_remote_sink_lossy_link.yaml");
  const EventLog& events = r.sim->trace().events();
  const properties::Conservation c = properties::check_conservation(events);
  REQUIRE(c.losses.size() == c.lost_count());  // every loss, with its event
  for (const properties::LineLoss& l : c.losses) CHECK(events[l.event].time == l.at);
  const CheckResult& k = check_named(r, "conservation");
  REQUIRE_FALSE(k.passed);
  REQUIRE(k.witness);
  const TraceEvent& e = events[k.witness->event];
  CHECK(e.kind == EventKind::drop);  // the lossy link dropped the message carrying it
  CHECK(k.witness->event == c.losses.front().event);
  CHECK(k.witness->why == "line " + std::to_string(c.losses.front().seq) + " lost (network): loss 1 of at most 0");

  const RunResult ingest = run_file("bugs/ingest_upload_timeout_past_grace.yaml");
  const CheckResult& ki = check_named(ingest, "conservation");
  REQUIRE_FALSE(ki.passed);
  REQUIRE(ki.witness);
  CHECK(ki.witness->t_ns == (Time{} + kSecond * 90).ns);  // the SIGKILL
  CHECK(ki.witness->why.find("sigkill at t=90s") != std::string::npos);
}

TEST_CASE("data flow: a line whose send failed goes nowhere - never to the stage's own timer", "[dataflow]") {
  // The parser is killed at 20s: the reader's sends to its name fail (kernel drops) until it is back.
  const RunResult r = run_file("catalog/mini_pipeline.yaml");
  const EventLog& events = r.sim->trace().events();
  const properties::Conservation c = properties::check_conservation(events);
  const reports::Flow f = reports::flow_of(events);
  for (const reports::FlowEdge& e : f.edges) CHECK(e.from != e.to);
  const std::uint64_t no_receiver = c.lost.count("no_receiver") == 1 ? c.lost.at("no_receiver").count : 0;
  CHECK(edge(f, "/root/input/reader", "/root/input/parser") + no_receiver >= c.emitted.count);
  CHECK(edge(f, "/root/input/reader", "/root/input/parser") <= c.emitted.count);
}

TEST_CASE("data flow: each lost line is named where it was last held - far seqs kept as runs of one holder", "[dataflow]") {
  // The built-in pipeline's seqs are far (10^9 x the reader's pid): the line flow keeps their
  // holders as runs of consecutive seqs. Lines handed on out of order, lost, and mentioned again
  // after their loss cut and join those runs; each lost line (its own `why`, so its own row)
  // must still be named by its last holder, as a plain map of every seq says.
  namespace line = properties::line;
  std::vector<std::vector<TraceField>> blocks;
  blocks.reserve(2000);
  EventLog events;
  std::map<std::int64_t, std::string> last_holder;
  const auto add = [&](Atom name, const char* where, std::int64_t seq, const char* to, const std::string& why) {
    // Every event carries all three keys (a holder reads only seq and, for line_sent, to).
    const std::vector<TraceField>& f = blocks.emplace_back(std::vector<TraceField>{
        {line::kSeq, FieldValue{seq}}, {line::kTo, FieldValue{Atom(to == nullptr ? "" : to)}}, {line::kWhy, FieldValue{Atom(why)}}});
    TraceEvent e;
    e.seq = events.size();
    e.name = name;
    e.label.name = Atom(where);
    e.field_data = f.data();
    e.field_count = static_cast<std::uint16_t>(f.size());
    events.push_back(e);
    last_holder[seq] = name == line::kSent ? std::string(where) + " -> " + to : std::string(where);
  };
  constexpr std::int64_t kFar = 7'000'000'000, kLines = 300;
  const auto seq = [](std::int64_t n) { return n % 50 == 49 ? -n : kFar + n; };  // a few negative ones too
  for (std::int64_t n = 0; n < kLines; ++n) add(line::kEmitted, "/r", seq(n), nullptr, "");
  for (std::int64_t k = 0; k < kLines; ++k) {  // handed on out of order: 7k mod 300 visits each once
    const std::int64_t n = (7 * k) % kLines;
    add(line::kSent, n % 9 == 0 ? "/b" : "/a", seq(n), n % 9 == 0 ? "y" : "x", "");
  }
  for (std::int64_t n = 0; n < kLines; n += 10) add(line::kLost, "/c", seq(n), nullptr, "w" + std::to_string(n));
  for (std::int64_t n = 0; n < kLines; n += 20) add(line::kSent, "/d", seq(n), "z", "");  // after the loss
  properties::ConservationStream c;
  reports::LineFlowStream s;
  for (const TraceEvent& e : events) {
    c.on(e);
    s.on(e);
  }
  const reports::Flow f = s.finish(c.finish());
  std::size_t rows = 0;
  for (const reports::FlowLoss& l : f.losses) {
    if (l.why.size() < 2 || l.why[0] != 'w') continue;
    const std::int64_t n = std::stoll(l.why.substr(1));
    INFO(l.why);
    CHECK(l.where == last_holder.at(seq(n)));
    CHECK(l.where == (n % 20 == 0 ? "/d -> z" : "/c"));
    ++rows;
  }
  CHECK(rows == kLines / 10);
}
