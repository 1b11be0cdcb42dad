#include "reports/trace_format.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "reports/atomic_file.hpp"
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
