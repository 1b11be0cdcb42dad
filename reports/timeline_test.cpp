// The timeline SVG and the Perfetto trace, read back from real runs: lanes, up intervals,
// marks, bands, the axis, and how both scale.

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include <unistd.h>

#include "properties/availability.hpp"
#include "reports/atomic_file.hpp"
#include "reports/escape.hpp"
#include "reports/run_report.hpp"
#include "reports/run_view.hpp"
#include "reports/test_runs.hpp"
#include "sim/simulation.hpp"
#include "reports/time_axis.hpp"

using namespace lic;
using namespace lic::literals;
using namespace lic::reports;
using lic::reports::testing::count;

namespace {

/// The lane labels' tooltips in drawing order: each starts with the lane's path.
std::vector<std::string> lane_paths(const std::string& svg) {
  std::vector<std::string> out;
  const std::regex lane("<text class=\"lane\"[^>]*><title>([^ <]+)");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), lane); it != std::sregex_iterator(); ++it) {
    out.push_back((*it)[1]);
  }
  return out;
}

double attribute(const std::string& svg, const std::string& name) {
  const std::size_t at = svg.find(name + "=\"");
  return std::stod(svg.substr(at + name.size() + 2));
}

/// Total "X" duration per thread name, in ns (the trace's µs times back to whole ns).
std::map<std::string, std::int64_t> up_per_thread(const nlohmann::json& j) {
  std::map<std::int64_t, std::string> names;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") names[e["tid"].get<std::int64_t>()] = e["args"]["name"];
  }
  std::map<std::string, std::int64_t> out;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == "up") {
      out[names.at(e["tid"].get<std::int64_t>())] += std::llround(e["dur"].get<double>() * 1000);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("timeline.svg: a lane per path and an axis with its unit and a marker per crash and restart",
          "[reports][timeline]") {
  const auto run = testing::pipeline_run({1_s, 3_s, 6_s}, 10_s);
  const RunReport& r = run.report;
  const std::string svg = timeline_svg(r);
  INFO(testing::unbalanced_tags(svg));
  CHECK(testing::unbalanced_tags(svg).empty());
  CHECK(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1200\" height=\""));
  CHECK(svg.find("viewBox=\"0 0 1200 ") != std::string::npos);
  CHECK(lane_paths(svg) == std::vector<std::string>{"/root", "/root/input", "/root/input/reader",
                                                    "/root/input/parser", "/root/db_sink"});
  CHECK(svg.find(">virtual time (s)</text>") != std::string::npos);
  CHECK(svg.find(">2s</text>") != std::string::npos);
  CHECK(svg.find(">10s</text>") != std::string::npos);
  const std::size_t crashes = testing::count_exits(r, false, "/root/");
  CHECK(crashes == 3);
  CHECK(count(svg, "class=\"mk crash\"") == crashes);
  CHECK(count(svg, "class=\"mk restart\"") == 3);
  CHECK(count(svg, "class=\"mk kill\"") == 0);
  CHECK(count(svg, "class=\"mk escalation\"") == 0);
  CHECK(svg.find("crash at 3s: {error,boom} #2") != std::string::npos);
  // The parser was up four times (three restarts of 50 ms each); the others once, to the end.
  CHECK(count(svg, "<rect class=\"up\" x=") == 1 + 4 + 4);  // the legend's swatch, then the bars
  CHECK(count(svg, "<rect class=\"down\" x=") == 1 + 5);    // behind every lane that came up
  for (const char* legend : {"lg crash", "lg kill", "lg restart", "lg escalation", "lg fault"}) {
    INFO(legend);
    CHECK(svg.find(legend) != std::string::npos);
  }
}

TEST_CASE("timeline.svg marks an escalation on the supervisor that gave up", "[reports][timeline]") {
  const auto run = testing::pipeline_run({1000_ms, 1100_ms, 1200_ms, 1300_ms}, 5_s);
  const std::string svg = timeline_svg(run.report);
  CHECK(count(svg, "class=\"mk escalation\"") == 1);
  CHECK(svg.find("escalation at 1.3s: reached_max_restart_intensity") != std::string::npos);
}

TEST_CASE("timeline.svg gives dynamic children seen in the trace lanes after their template",
          "[reports][timeline]") {
  const auto run = testing::dynamic_run();
  const std::string svg = timeline_svg(run.report);
  CHECK(lane_paths(svg) == std::vector<std::string>{"/root", "/root/pool", "/root/pool/worker",
                                                    "/root/pool/worker.1", "/root/pool/worker.2",
                                                    "/root/pool/worker.3"});
  CHECK(svg.find("<title>/root/pool/worker.2 (dynamic) on node0") != std::string::npos);
  CHECK(count(svg, "class=\"mk crash\"") == 1);
  CHECK(count(svg, "class=\"mk restart\"") == 1);
}

TEST_CASE("timeline.svg shades partitions and node pauses and node outages and marks a service crash",
          "[reports][timeline]") {
  const auto run = testing::network_run();
  const std::string svg = timeline_svg(run.report);
  CHECK(testing::unbalanced_tags(svg).empty());
  // Both ways of the partition open and heal together: one band.
  CHECK(count(svg, "<rect class=\"band partition\"") == 1);
  CHECK(svg.find("partition node0 &lt;-&gt; node1, 2s \xe2\x80\x93 4s") != std::string::npos);
  CHECK(count(svg, "<rect class=\"band pause\"") == 1);
  CHECK(svg.find("pause node1 paused, 5s \xe2\x80\x93 6s") != std::string::npos);
  CHECK(count(svg, "<rect class=\"band node_down\"") == 1);
  CHECK(svg.find("node_down node1 down, 7s \xe2\x80\x93 8s") != std::string::npos);
  CHECK(lane_paths(svg) ==
        std::vector<std::string>{"/root", "/root/w", "/edge", "/edge/w", "/app", "/app/db", "/app/cache"});
  CHECK(svg.find("crash at 9s: {error,boom} #1") != std::string::npos);
  // The lifecycle supervisor retries the db after its backoff: a restart, its second start.
  CHECK(std::regex_search(svg, std::regex("<title>restart at (9|10)\\.[0-9]+s: start 2</title>")));
  CHECK(count(svg, "class=\"mk kill\"") ==
        testing::count_exits(run.report, true, "/edge"));  // the node crash
  // The injector's records: one names the db's pid (its lane), one names no process (the world's).
  CHECK(count(svg, "class=\"mk fault\"") == 1);
  CHECK(svg.find("fault at 9s: db_crash (crash) {error,boom}") != std::string::npos);
  CHECK(count(svg, "class=\"mk world fault\"") == 1);
  CHECK(svg.find("world: fault at 2s: split (partition)") != std::string::npos);
}

TEST_CASE("timeline.svg keeps 200 lanes readable and the file small", "[reports][timeline]") {
  const auto run = testing::wide_run(199, 3, 10_min);
  const std::string svg = timeline_svg(run.report);
  CHECK(lane_paths(svg).size() == 200);
  // Lanes shrink to their minimum (10 px), no further; labels stay legible (8 px and up).
  CHECK(attribute(svg, "height") <= 92 + 200 * 10 + 12);
  CHECK(svg.find("font-size=\"7") == std::string::npos);
  CHECK(count(svg, "class=\"mk crash\"") == testing::count_exits(run.report, false, "/root/"));
  CHECK(count(svg, "class=\"mk kill\"") == testing::count_exits(run.report, true, "/root/"));
  CHECK(count(svg, "class=\"mk kill\"") == 199);
  CHECK(svg.size() < 600'000);
}

TEST_CASE("timeline.svg merges a busy lane's marks so they stay few and still cover the whole run",
          "[reports][timeline]") {
  // One worker crashed 3000 times in ten minutes: more marks than the lane has pixels.
  const auto run = testing::wide_run(1, 3000, 10_min);
  const std::string svg = timeline_svg(run.report);
  CHECK(testing::count_exits(run.report, false, "/root/") == 2000);
  CHECK(count(svg, "class=\"mk ") <= 200);
  CHECK(svg.size() < 100'000);
  CHECK(testing::unbalanced_tags(svg).empty());
  // Every crash is in some marker's tooltip ("crash at T: ..." or "N x crash, T1 – T2"), and
  // the markers reach the end of the run.
  const std::regex one("<title>crash at ([0-9.]+)s:");
  const std::regex many("<title>([0-9]+) x crash, [0-9.]+s \xe2\x80\x93 ([0-9.]+)s</title>");
  std::size_t crashes = 0;
  double latest = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), one); it != std::sregex_iterator(); ++it) {
    ++crashes;
    latest = std::max(latest, std::stod((*it)[1]));
  }
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), many); it != std::sregex_iterator(); ++it) {
    crashes += std::stoul((*it)[1]);
    latest = std::max(latest, std::stod((*it)[2]));
  }
  CHECK(crashes == 2000);
  CHECK(latest > 590);
}

TEST_CASE("time axis: steps of 1 or 2 or 5 of a unit and minutes past 50 seconds with whole-number labels",
          "[reports][timeline]") {
  CHECK(choose_ticks(10_s, 10).step == 1_s);
  CHECK(std::string(choose_ticks(10_s, 10).unit_name) == "s");
  CHECK(choose_ticks(10_min, 10).step == 1_min);
  CHECK(std::string(choose_ticks(10_min, 10).unit_name) == "min");
  CHECK(choose_ticks(2_h, 10).step == 15_min);
  CHECK(choose_ticks(1_ms, 10).step == 100_us);
  CHECK(std::string(choose_ticks(1_ms, 10).unit_name) == "\xc2\xb5s");
  CHECK(choose_ticks(3_ms, 10).step == 500_us);
  CHECK(choose_ticks(Duration::zero(), 10).step == 1_ns);
  CHECK(choose_ticks(9_ns, 10).step == 1_ns);
  const Ticks ms = choose_ticks(8_s, 4);
  CHECK(ms.step == 2_s);
  CHECK(tick_label(Time{0} + 4_s, ms) == "4s");
  CHECK(tick_label(Time{0} + 1500_ms, choose_ticks(3_s, 10)) == "1500ms");
  CHECK(tick_label(Time{0}, ms) == "0");
}

TEST_CASE("perfetto: a thread per path whose complete events add up to its up intervals",
          "[reports][perfetto]") {
  const auto run = testing::pipeline_run({1_s, 3_s, 6_s}, 10_s);
  const RunReport& r = run.report;
  const auto j = nlohmann::json::parse(perfetto_json(r));
  CHECK(j["displayTimeUnit"] == "ms");
  const auto up = up_per_thread(j);
  REQUIRE(up.size() == 5);
  for (const char* path : {"/root/input", "/root/input/reader", "/root/input/parser", "/root/db_sink"}) {
    INFO(path);
    CHECK(up.at(path) == properties::total(properties::up_intervals(*r.trace, path, Time{0}, r.end)).ns);
  }
  CHECK(up.at("/root") == (10_s).ns);  // the world started it; it ran to the end
  std::size_t crashes = 0, restarts = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "i") continue;
    crashes += e["name"] == "crash" ? 1 : 0;
    restarts += e["name"] == "restart" ? 1 : 0;
    CHECK(e["s"] == "t");
  }
  CHECK(crashes == 3);
  CHECK(restarts == 3);
  CHECK(j["otherData"]["trace_hash"] == hash_hex(r.trace_hash));
}

TEST_CASE(
    "perfetto: a process per node with partitions on a network track and heals and the world's faults as "
    "global instants",
    "[reports][perfetto]") {
  const auto run = testing::network_run();
  const auto j = nlohmann::json::parse(perfetto_json(run.report));
  std::map<std::string, int> processes;
  std::size_t partitions = 0, global = 0, pauses = 0, outages = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") processes[e["args"]["name"]] = e["pid"];
    if (e["ph"] == "X" && e["cat"] == "partition") ++partitions;
    if (e["ph"] == "X" && e["cat"] == "pause") ++pauses;
    if (e["ph"] == "X" && e["cat"] == "node_down") ++outages;
    if (e["ph"] == "i" && e["s"] == "g") ++global;
  }
  CHECK(processes.size() == 3);
  CHECK(processes.count("node0") == 1);
  CHECK(processes.count("node1") == 1);
  CHECK(processes.count("network") == 1);
  CHECK(partitions == 1);
  CHECK(global == 3);  // the partition, its heal, the fault that names no process
  CHECK(pauses == 1);
  CHECK(outages == 1);
  // /edge/w runs on node1: its thread is in node1's process.
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == "/edge/w")
      CHECK(e["pid"] == processes["node1"]);
  }
  const auto up = up_per_thread(j);
  CHECK(up.at("/app/db") > 0);
  CHECK(up.at("/app/db") < (12_s).ns);  // down for its backoff after its crash at 9 s
}

namespace {

/// The JSON in index.html's <script type="application/json" id="timeline-data">.
nlohmann::json timeline_data(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"timeline-data\">";
  const std::size_t from = html.find(open);
  REQUIRE(from != std::string::npos);
  const std::size_t begin = from + open.size();
  const std::size_t end = html.find("</script>", begin);
  REQUIRE(end != std::string::npos);
  return nlohmann::json::parse(html.substr(begin, end - begin));
}

}  // namespace

TEST_CASE("index.html timeline: the run's lanes and marks as data and a failing check linked to its instant and trace line",
          "[reports][html][timeline]") {
  auto run = testing::pipeline_run({1_s, 1100_ms, 1200_ms, 1300_ms}, 3_s);
  RunReport& r = run.report;
  r.checks[1].witness = Witness{1'300'000'000, 41, {"/root/input"}, "it gave up"};
  const std::string html = index_html(r, ReportSelection{}, TreeSvg{});
  const nlohmann::json d = timeline_data(html);
  CHECK(d["end"] == r.end.ns);
  const std::vector<std::string> lanes = lane_paths(timeline_svg(r));  // the static file's lanes
  REQUIRE(d["lanes"].size() == lanes.size());
  std::size_t crashes = 0, escalations = 0;
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    CHECK(d["lanes"][i]["p"] == lanes[i]);
    for (const auto& m : d["lanes"][i]["m"]) {
      crashes += m[1] == "crash" ? m[3].get<std::size_t>() : 0;
      escalations += m[1] == "escalation";
    }
  }
  CHECK(crashes == testing::count_exits(r, false, "/root"));
  CHECK(escalations == 1);
  // The witness: a link to its instant on the timeline and one to its line (seq 41: line 43).
  CHECK(count(html, "class=\"witness-link\"") == 1);
  CHECK(html.find("<a class=\"witness-link\" href=\"#t=1300000000\">show t=1.3s on the timeline</a>") != std::string::npos);
  CHECK(html.find("<a class=\"trace-link\" href=\"trace.jsonl\">trace.jsonl line 43</a>") != std::string::npos);
  // Without the timeline or the trace written, nothing links to them.
  ReportSelection bare;
  bare.timeline = false;
  bare.trace = false;
  const std::string plain = index_html(r, bare, TreeSvg{});
  CHECK(plain.find("class=\"witness-link\"") == std::string::npos);
  CHECK(plain.find("class=\"trace-link\"") == std::string::npos);
  CHECK(plain.find("timeline-data") == std::string::npos);
}

TEST_CASE("index.html timeline: a link fault's window is a band from its injection cut short by the quiet phase",
          "[reports][html][timeline]") {
  Simulation sim(SimOptions{.seed = 3});
  const auto injected = [&sim](const char* name, const char* kind) {
    sim.emit(Atom("fault_injected"), {{Atom("fault"), Atom(name)}, {Atom("kind"), Atom(kind)}, {Atom("paths"), std::int64_t{2}}});
  };
  sim.schedule(Time{0} + 1_s, [&] { injected("lossy", "loss"); });
  sim.schedule(Time{0} + 2_s, [&] { injected("slow", "clog"); });
  sim.schedule(Time{0} + 5_s, [&] { injected("lossy", "loss"); });  // cut short at 6 s
  sim.schedule(Time{0} + 6_s, [&] { sim.emit(Atom("quiet_phase"), {{Atom("injected"), std::int64_t{3}}}); });
  sim.run_until(Time{0} + 8_s);
  RunReport r;
  r.scenario = "windows </script>";
  r.end = Time{0} + 8_s;
  r.trace = &sim.trace().events();
  r.faults = {{"lossy", "loss", 2, 0, 3_s}, {"slow", "clog", 1, 0, Duration{}}};
  const std::string html = index_html(r, ReportSelection{}, TreeSvg{});
  const nlohmann::json d = timeline_data(html);
  std::vector<std::tuple<std::int64_t, std::int64_t, std::string, std::string>> bands;
  for (const auto& b : d["bands"]) bands.emplace_back(b[0], b[1], b[2], b[3]);
  using B = decltype(bands)::value_type;
  CHECK(bands == std::vector<B>{B{1'000'000'000, 4'000'000'000, "loss", "lossy"},
                                B{2'000'000'000, 6'000'000'000, "clog", "slow"},  // no window: to the quiet phase
                                B{5'000'000'000, 6'000'000'000, "loss", "lossy"}});
  CHECK(d["phases"] == nlohmann::json::parse(R"([[0, 6000000000, "chaos"], [6000000000, 8000000000, "quiet"]])"));
  // The static file shades them too, and says what they are.
  const std::string svg = timeline_svg(r);
  CHECK(count(svg, "<rect class=\"band loss\"") == 2);
  CHECK(count(svg, "<rect class=\"band clog\"") == 1);
}

TEST_CASE("perfetto: every message between two lanes is a flow from its send to its delivery", "[reports][perfetto]") {
  const auto run = testing::network_run();
  const nlohmann::json j = nlohmann::json::parse(perfetto_json(run.report));
  std::map<std::int64_t, nlohmann::json> starts, finishes;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "s") CHECK(starts.emplace(e["id"].get<std::int64_t>(), e).second);
    if (e["ph"] == "f") CHECK(finishes.emplace(e["id"].get<std::int64_t>(), e).second);
  }
  REQUIRE(!starts.empty());
  CHECK(starts.size() == finishes.size());
  for (const auto& [id, s] : starts) {
    INFO(id);
    REQUIRE(finishes.count(id) == 1);
    const auto& f = finishes.at(id);
    CHECK(f["ts"].get<double>() >= s["ts"].get<double>());
    CHECK(f["name"] == s["name"]);
    CHECK(f["bp"] == "e");
    CHECK((f["pid"] != s["pid"] || f["tid"] != s["tid"]));  // never a process to itself
  }
  CHECK(!j["otherData"].contains("flows_omitted"));
}

TEST_CASE("index.html timeline: a lifecycle service's states as they change - waiting - starting - running - failed - backoff",
          "[reports][html][timeline]") {
  const auto run = testing::network_run();  // /app/db crashes at 9 s; /app/cache depends on it
  const nlohmann::json d = timeline_data(index_html(run.report, ReportSelection{}, TreeSvg{}));
  std::map<std::string, std::vector<std::pair<std::int64_t, std::string>>> states;
  for (const auto& l : d["lanes"])
    if (l.contains("st"))
      for (const auto& s : l["st"]) states[l["p"]].emplace_back(s[0], s[1]);
  REQUIRE(states.count("/app/db") == 1);
  const auto& db = states.at("/app/db");
  const auto at_or_after = [&db](std::int64_t t, const std::string& prefix) {
    return std::any_of(db.begin(), db.end(), [&](const auto& s) { return s.first >= t && s.second.rfind(prefix, 0) == 0; });
  };
  CHECK(db.front().second == "inactive");
  CHECK(at_or_after(0, "running"));
  CHECK(at_or_after(9'000'000'000, "failed"));
  CHECK(at_or_after(9'000'000'000, "backoff "));  // "backoff 1s (attempt 1)"
  CHECK(std::is_sorted(db.begin(), db.end(), [](const auto& a, const auto& b) { return a.first < b.first; }));
  // Processes that are not services have no states.
  for (const auto& l : d["lanes"])
    if (std::string(l["p"]).rfind("/app/", 0) != 0) CHECK_FALSE(l.contains("st"));
}

TEST_CASE("index.html timeline: run text holding markup never leaves the page's JSON", "[reports][html][timeline]") {
  Simulation sim(SimOptions{.seed = 3});
  const std::string hostile = "x<!--<script></script>-->y";
  sim.schedule(Time{0} + 1_s, [&] {
    sim.emit(Atom("fault_injected"), {{Atom("fault"), Atom(hostile)}, {Atom("kind"), Atom("loss")}, {Atom("paths"), std::int64_t{1}}});
  });
  sim.run_until(Time{0} + 2_s);
  RunReport r;
  r.end = Time{0} + 2_s;
  r.trace = &sim.trace().events();
  r.faults = {{hostile, "loss", 1, 0, 500_ms}};
  const std::string html = index_html(r, ReportSelection{}, TreeSvg{});
  const std::size_t data = html.find("id=\"timeline-data\">");
  REQUIRE(data != std::string::npos);
  const std::size_t end = html.find("</script>", data);
  CHECK(html.substr(data, end - data).find('<') == std::string::npos);  // no markup at all inside
  const nlohmann::json d = timeline_data(html);
  REQUIRE(d["bands"].size() == 1);
  CHECK(d["bands"][0][3] == hostile);  // and the text comes back whole
  CHECK(count(html, "<script") == 2);
}

TEST_CASE("perfetto: the file written as it renders is byte for byte the document, across its chunks", "[reports][perfetto]") {
  // Enough lanes and crashes for a document over one AtomicFileWriter chunk, so the writer
  // spills to the file several times before the tail.
  const auto run = testing::wide_run(400, 12, 60_s);
  const std::string whole = perfetto_json(run.report);
  REQUIRE(whole.size() > 2 * AtomicFileWriter::kChunkBytes);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("lic-perfetto-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::filesystem::path file = dir / "trace.perfetto.json";
  CHECK(write_perfetto_json(run.report, view_of(run.report), file).empty());
  std::ifstream in(file, std::ios::binary);
  const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(written.size() == whole.size());
  CHECK(written == whole);
  std::filesystem::remove_all(dir);
}
