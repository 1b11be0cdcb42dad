#include "reports/trace_format.hpp"

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "reports/atomic_file.hpp"
#include "reports/run_report.hpp"
#include "reports/test_runs.hpp"
#include "sim/simulation.hpp"

using namespace lic;
using namespace lic::literals;

TEST_CASE("an exit event renders as a readable line and as one JSON object", "[reports]") {
  TraceEvent e;
  e.time = Time{0} + 250_ms;
  e.seq = 7;
  e.kind = EventKind::exit;
  e.node = Atom("node0");
  e.pid = Pid{3};
  e.label = Label{Atom("/root/input/parser"), 2};
  e.reason = Reason::error(Atom("bad_line"));
  const std::string text = reports::format_event_text(e);
  CHECK(text.find("0.25s") != std::string::npos);
  CHECK(text.find("<0.3.0> /root/input/parser#2") != std::string::npos);
  CHECK(text.find("reason={error,bad_line}") != std::string::npos);
  CHECK(reports::format_event_json(e) ==
        R"({"seq":7,"t_ns":250000000,"kind":"exit","node":"node0","pid":3,)"
        R"("path":"/root/input/parser","start":2,"reason":"{error,bad_line}"})");
}

TEST_CASE("the JSONL sink streams one line per event as the simulation runs", "[reports]") {
  std::ostringstream out;
  reports::JsonlSink sink(out);
  Simulation sim;
  sim.trace().add_sink(&sink);
  sim.spawn([](Context& ctx) { ctx.sleep(1_ms); });
  sim.run();
  std::istringstream lines(out.str());
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) ++n;
  CHECK(n == static_cast<int>(sim.trace().count()));
  CHECK(n == 2);
}

TEST_CASE("atomic writes replace the file whole and leave no temporary behind", "[reports]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "lic_atomic_test";
  fs::remove_all(dir);
  const fs::path f = dir / "sub" / "out.txt";
  CHECK(reports::write_file_atomically(f, "first").empty());
  CHECK(reports::write_file_atomically(f, "second").empty());
  std::ifstream in(f);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(s == "second");
  int files = 0;
  for (auto& entry : fs::directory_iterator(dir / "sub")) {
    (void)entry;
    ++files;
  }
  CHECK(files == 1);
  CHECK_FALSE(reports::write_file_atomically("/proc/no/such/dir/x", "y").empty());
  fs::remove_all(dir);
}

namespace {

/// Every event of `log` renders the same bytes by hand as through nlohmann.
std::size_t differing(const EventLog& log) {
  std::size_t bad = 0;
  for (const TraceEvent& e : log) bad += reports::format_event_json(e) != reports::format_event_json_reference(e) ? 1 : 0;
  return bad;
}

}  // namespace

TEST_CASE("the hand-written JSON line is nlohmann's byte for byte over whole runs", "[reports]") {
  const auto pipeline = reports::testing::pipeline_run({1_s, 3_s}, 10_s);
  const auto wide = reports::testing::wide_run(20, 3, 10_s);
  const auto dynamic = reports::testing::dynamic_run();
  const auto network = reports::testing::network_run();
  for (const auto* run : {&pipeline, &wide, &dynamic, &network}) {
    REQUIRE(run->report.trace->size() > 10);
    CHECK(differing(*run->report.trace) == 0);
  }
}

TEST_CASE("the hand-written JSON line escapes and orders every odd case as nlohmann does", "[reports]") {
  std::vector<TraceEvent> events;
  TraceEvent clock;
  clock.kind = EventKind::clock_change;
  clock.msg = static_cast<std::uint64_t>(-5'000'000);
  clock.other = Pid{static_cast<std::uint64_t>(-100)};
  clock.node = Atom("b");
  events.push_back(clock);
  for (EventKind k : {EventKind::chan_make, EventKind::chan_recv, EventKind::drop, EventKind::down,
                      EventKind::exit_signal, EventKind::task_exit, EventKind::send}) {
    TraceEvent e;
    e.kind = k;
    e.seq = 1ULL << 63;
    e.time = Time{std::int64_t{1} << 62};
    e.pid = Pid{7};
    e.other = Pid{9};
    e.msg = 3;
    e.tag = Atom("a\"quoted\\ tag\n\t\x01\x1f\x7f");
    e.reason = Reason::error(Atom("closed"));
    e.label = Label{Atom("/root/x"), 4294967295U};
    events.push_back(e);
  }
  const std::vector<TraceField> fields{
      {Atom("n"), FieldValue{std::int64_t{-42}}},
      {Atom("who"), FieldValue{Pid{12}}},
      {Atom("delay"), FieldValue{Duration{-1}}},
      {Atom("why"), FieldValue{std::string("ctl \b\f\r and \"q\" and \\")}},
      {Atom("utf8"), FieldValue{std::string("caf\xc3\xa9 \xe2\x80\xa6")}},
      {Atom("at\"om"), FieldValue{Atom("x\ty")}},
  };
  TraceEvent sys;
  sys.kind = EventKind::system;
  sys.name = Atom("fault_injected");
  sys.field_count = static_cast<std::uint32_t>(fields.size());
  sys.field_data = fields.data();
  events.push_back(sys);
  // Two fields with one key: nlohmann keeps the first's place and the last's value.
  const std::vector<TraceField> twice{{Atom("k"), FieldValue{std::int64_t{1}}},
                                      {Atom("j"), FieldValue{std::int64_t{2}}},
                                      {Atom("k"), FieldValue{std::int64_t{3}}}};
  TraceEvent dup = sys;
  dup.field_count = 3;
  dup.field_data = twice.data();
  events.push_back(dup);
  for (const TraceEvent& e : events) {
    INFO(reports::format_event_json_reference(e));
    CHECK(reports::format_event_json(e) == reports::format_event_json_reference(e));
  }
  CHECK(reports::format_event_json(dup).find(R"("fields":{"k":3,"j":2})") != std::string::npos);
  // Text that is not UTF-8 is refused the same way (nlohmann throws on it).
  const std::vector<TraceField> bad{{Atom("x"), FieldValue{std::string("\xff\xfe")}}};
  TraceEvent b = sys;
  b.field_count = 1;
  b.field_data = bad.data();
  CHECK_THROWS(reports::format_event_json_reference(b));
  CHECK_THROWS(reports::format_event_json(b));
}

TEST_CASE("a file written behind by a second thread holds the same bytes and hash", "[reports]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "lic_atomic_behind_test";
  fs::remove_all(dir);
  std::string expected;
  {
    reports::AtomicFileWriter w(dir / "behind.txt", true);
    REQUIRE(w.error().empty());
    for (int i = 0; i < 700'000; ++i) {  // several chunks and several staged blocks, and a partial last block
      const std::string line = "line " + std::to_string(i) + " " + std::string(static_cast<std::size_t>(i % 7), 'y') + "\n";
      w.buffer() += line;
      expected += line;
      w.flush_if_full();
    }
    w.write(std::string(3 * reports::AtomicFileWriter::kChunkBytes + 5, 'x'));
    expected += std::string(3 * reports::AtomicFileWriter::kChunkBytes + 5, 'x');
    w.write("tail");
    expected += "tail";
    REQUIRE(expected.size() % reports::AtomicFileWriter::kBlock != 0);
    CHECK_FALSE(fs::exists(dir / "behind.txt"));
    CHECK(w.commit().empty());
    const reports::Fingerprint f = reports::file_fingerprint(dir / "behind.txt");
    CHECK(w.bytes_written() == expected.size());
    CHECK(f.bytes == expected.size());
    CHECK(f.xxh3_128 == w.xxh3_128());
    CHECK(f.xxh3_128.size() == 32);
  }
  std::ifstream in(dir / "behind.txt", std::ios::binary);
  const std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(got == expected);
  {
    reports::AtomicFileWriter w(dir / "abandoned.txt", true);
    w.write(std::string(2 * reports::AtomicFileWriter::kChunkBytes, 'z'));
  }
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.path().filename() == "behind.txt" ? 1 : 100;
  CHECK(files == 1);
  fs::remove_all(dir);
}

TEST_CASE("a file written piece by piece lands whole, and a writer given up leaves nothing", "[reports]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "lic_atomic_stream_test";
  fs::remove_all(dir);
  const fs::path f = dir / "big.txt";
  std::string expected;
  {
    reports::AtomicFileWriter w(f);
    REQUIRE(w.error().empty());
    for (int i = 0; i < 200'000; ++i) {  // several chunks
      const std::string line = "line " + std::to_string(i) + "\n";
      w.buffer() += line;
      expected += line;
      w.flush_if_full();
    }
    w.write(std::string(3 * reports::AtomicFileWriter::kChunkBytes, 'x'));  // past the buffer
    expected += std::string(3 * reports::AtomicFileWriter::kChunkBytes, 'x');
    CHECK_FALSE(fs::exists(f));  // not before commit
    CHECK(w.commit().empty());
  }
  std::ifstream in(f, std::ios::binary);
  const std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(got == expected);
  {
    reports::AtomicFileWriter w(dir / "abandoned.txt");
    w.write("half");
  }
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.path().filename() == "big.txt" ? 1 : 100;
  CHECK(files == 1);
  fs::remove_all(dir);
}
