// A streamed run (run/stream.hpp: no kept trace, what the checks and reports read gathered as the
// run goes) writes the same reports, byte for byte, as the same run with its trace kept.

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

#include "scenarios/registry.hpp"
#include "scenarios/run/report.hpp"
#include "scenarios/run/stream.hpp"
#include "scenarios/testing/run_text.hpp"

using namespace lic;
using namespace lic::scenarios;
using namespace lic::scenarios::testing;

namespace {

namespace fs = std::filesystem;

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void same_reports(const Scenario& s, const std::string& name) {
  REQUIRE(RunStream::can_stream(s, Registry::builtin()));
  const fs::path root = fs::temp_directory_path() / ("lic-stream-test." + std::to_string(::getpid()));
  fs::remove_all(root);
  const fs::path kept_dir = root / "kept", streamed_dir = root / "streamed";

  const RunResult kept = run(s, RunOptions{});
  REQUIRE(write_run_reports(s, kept, name, std::nullopt, "again", kept_dir).empty());

  RunStream stream(s, true);
  stream.write_trace(reports::streamed_trace_path(streamed_dir), trace_header(s, s.seed, s.tie_break, std::nullopt, name));
  RunOptions o;
  o.stream = &stream;
  const RunResult streamed = run(s, o);
  REQUIRE(write_run_reports(s, streamed, name, std::nullopt, "again", streamed_dir).empty());

  CHECK(streamed.sim->trace().events().empty());  // nothing kept by the simulation
  CHECK(stream.kept().size() < streamed.events);   // the small log leaves the messages out
  CHECK(streamed.trace_hash == kept.trace_hash);
  std::size_t files = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(kept_dir)) {
    INFO(name << ": " << e.path().filename());
    CHECK(bytes_of(e.path()) == bytes_of(streamed_dir / e.path().filename()));
    ++files;
  }
  CHECK(files >= 8);
  CHECK_FALSE(fs::exists(reports::streamed_trace_path(streamed_dir)));  // moved into the folder
  fs::remove_all(root);
}

Scenario catalogue(const std::string& name) { return load_valid(std::string(LIC_SOURCE_DIR) + "/scenarios/catalog/" + name); }

/// A file under scenarios/ (`bugs/x.yaml`, `studies/y.yaml`).
Scenario scenario_file(const std::string& path) { return load_valid(std::string(LIC_SOURCE_DIR) + "/scenarios/" + path); }

void same_reports(const std::string& name) { same_reports(catalogue(name), name); }

/// How many message flows trace.perfetto.json of the kept run `s` draws.
std::size_t flows_drawn(const Scenario& s) {
  const fs::path dir = fs::temp_directory_path() / ("lic-stream-flows." + std::to_string(::getpid()));
  fs::remove_all(dir);
  REQUIRE(write_run_reports(s, run(s, RunOptions{}), "f", std::nullopt, "again", dir).empty());
  const std::string p = bytes_of(dir / "trace.perfetto.json");
  fs::remove_all(dir);
  std::size_t n = 0;
  for (std::size_t at = p.find("\"ph\":\"s\""); at != std::string::npos; at = p.find("\"ph\":\"s\"", at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("stream: every report of a streamed run is byte for byte the kept run's", "[stream]") {
  for (const char* name : {"mini_pipeline.yaml", "pipeline_escalation.yaml", "partition.yaml", "graceful_shutdown_slow_s3.yaml", "dynamic.yaml"}) {
    same_reports(name);
  }
}

TEST_CASE("stream: a file whose checks read the whole trace keeps it", "[stream]") {
  Scenario s = load_valid(std::string(LIC_SOURCE_DIR) + "/scenarios/catalog/one_for_one.yaml");
  s.checks = {CheckDecl{"model"}};
  CHECK_FALSE(RunStream::can_stream(s, Registry::builtin()));
}

TEST_CASE("stream: a registry of one's own keeps the whole trace - its checks and metrics may read any event", "[stream]") {
  const Scenario s = load_valid(std::string(LIC_SOURCE_DIR) + "/scenarios/catalog/mini_pipeline.yaml");
  REQUIRE(RunStream::can_stream(s, Registry::builtin()));
  Registry mine = Registry::with_builtins();
  mine.add(MetricInfo{"delivered", "messages delivered", [](const CheckInput& in, reports::Metrics& m) {
                        double n = 0;
                        for (const TraceEvent& e : *in.events) n += e.kind == EventKind::deliver ? 1 : 0;
                        m["delivered"] = reports::MetricValue{{n}};
                      }});
  CHECK_FALSE(RunStream::can_stream(s, mine));
}

TEST_CASE("stream: a network that duplicates messages draws a flow per copy in the streamed run as in the kept one", "[stream]") {
  // Perfetto's flows let a remote send go at its deliver only when nothing duplicates messages;
  // here every path does, so each send is kept for its second copy.
  Scenario s = catalogue("partition.yaml");
  s.net_ticks = NetTicks{};  // instant detection: under net ticks TCP drops the copies
  const std::size_t plain = flows_drawn(s);
  REQUIRE(plain > 0);
  s.default_link.duplicate = Ratio{1, 2};
  CHECK(flows_drawn(s) > plain);
  same_reports(s, "partition.yaml");
}

TEST_CASE("stream: files with the tree checks stream - their verdicts and witnesses are the kept run's", "[stream]") {
  // clean_shutdown, never_gives_up and intensity_headroom read only what the small log keeps;
  // the bugs fail them, so a witness is named too.
  for (const char* path : {"catalog/lifecycle_backoff.yaml", "bugs/shutdown_timeout_too_short.yaml", "bugs/supervisor_finite_shutdown.yaml",
                           "bugs/restart_intensity_default.yaml", "bugs/lifecycle_max_attempts_too_low.yaml",
                           "studies/flapping_dependency.yaml"}) {
    INFO(path);
    same_reports(scenario_file(path), path);
  }
}

TEST_CASE("stream: the leader checks keep the whole trace", "[stream]") {
  CHECK_FALSE(RunStream::can_stream(catalogue("leader_election.yaml"), Registry::builtin()));
}
