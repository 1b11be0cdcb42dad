// Seed 004's ingest server against its conservation: each way an accepted event can end, pinned
// on a small run (docs/graceful-shutdown.md).

#include <catch2/catch.hpp>

#include <string>

#include "properties/ingest_conservation.hpp"
#include "scenarios/file/read.hpp"
#include "scenarios/run/runner.hpp"

namespace {

using namespace lic;
using namespace lic::scenarios;

/// A file with the server's arguments, S3's and the disk's, and a stop at 10 s with `grace`.
std::string file(const std::string& server, const std::string& s3, const std::string& disk, const std::string& grace,
                 const std::string& faults = "") {
  return "scenario: t\nduration: 40s\nnodes: [ingest, s3]\ntrees:\n"
         "  - id: task\n    node: ingest\n    supervisor: {strategy: one_for_one}\n    children:\n"
         "      - {id: disk, behaviour: ingest.disk, args: {" + disk + "}}\n"
         "      - {id: server, behaviour: ingest.server, restart: temporary, args: {" + server + "}}\n"
         "  - id: storage\n    node: s3\n    supervisor: {strategy: one_for_one}\n    children:\n"
         "      - {id: s3, behaviour: ingest.s3, args: {" + s3 + "}}\n"
         "script:\n  - {at: 10s, stop_task: ingest, grace: " + grace + "}\n" + faults +
         "checks: [conservation]\n";
}

properties::IngestConservation run_file(const std::string& text) {
  const ParseResult p = parse_scenario(text, "t.yaml");
  for (const Diagnostic& d : p.errors) UNSCOPED_INFO(format_diagnostic("t.yaml", d));
  REQUIRE(p.ok());
  const RunResult r = run(p.scenario);
  return properties::check_ingest(r.sim->trace().events());
}

}  // namespace

TEST_CASE("ingest: in the correct order every accepted event is uploaded - requests after SIGTERM are refused not lost", "[ingest]") {
  const auto c = run_file(file("rate: 50, batch_size: 20", "latency: 50ms", "", "30s"));
  INFO(properties::describe(c));
  CHECK(c.ok());
  CHECK(c.accepted > 400);
  CHECK(c.uploaded == c.accepted);
  CHECK(c.lost.empty());
  CHECK(c.refused > 0);  // the requests after the stop got 503
  CHECK(c.ended == "exited");
}

TEST_CASE("ingest: net/http handlers - each event numbered by its place on EventCh - in the correct order every accepted one is uploaded", "[ingest][handlers]") {
  // Backpressure: batches of 20 into an UploadCh of 1, each put 300 ms or more, so handlers wait
  // on the full EventCh and wake in whatever order; their ids still add up, batch by batch.
  const auto c = run_file(file("handlers: true, ingress_wait: 5s, rate: 50, batch_size: 20, event_ch: 5, upload_ch: 1",
                               "latency_min: 300ms, latency: 400ms", "", "30s"));
  INFO(properties::describe(c));
  CHECK(c.ok());
  CHECK(c.accepted > 200);
  CHECK(c.uploaded == c.accepted);
  CHECK(c.lost.empty());
  CHECK(c.ended == "exited");
}

TEST_CASE("ingest: a SIGKILL in the middle of a DLQ write leaves the file cut short - its batch is lost there", "[ingest]") {
  // Every put fails, so each batch goes to the DLQ; gzip takes 5 s per MB and a batch is 1 MB:
  // the SIGKILL 1 s after SIGTERM finds a write in progress.
  const auto c = run_file(file("rate: 50, batch_size: 50, event_bytes: 20972, gzip_per_mb: 5s", "errors: 100%", "", "1s"));
  INFO(properties::describe(c));
  CHECK(c.ok());
  CHECK(c.ended == "sigkill");
  bool cut = false;
  for (const properties::LostEvents& l : c.lost) cut = cut || (l.where == "DLQ file cut short (corrupt)" && l.why == "sigkill");
  CHECK(cut);
  CHECK(c.dlq > 0);  // the files written before it are complete
}

TEST_CASE("ingest: a full DLQ disk loses the batches it refuses - each named with why dlq_full", "[ingest]") {
  const auto c = run_file(file("rate: 50, batch_size: 20", "errors: 100%", "capacity_mb: 0", "30s"));
  INFO(properties::describe(c));
  CHECK(c.ok());
  REQUIRE_FALSE(c.lost.empty());
  for (const properties::LostEvents& l : c.lost) {
    CHECK(l.where == "DLQ");
    CHECK(l.why == "dlq_full");
  }
  CHECK(c.uploaded == 0);
  CHECK(c.lost_events() == c.accepted);
}
