// write_reports: every file, atomically, with tree.svg from Graphviz when `dot` is on PATH, and
// the same bytes every time.

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "reports/atomic_file.hpp"
#include "reports/run_report.hpp"
#include "reports/test_runs.hpp"
#include "reports/trace_format.hpp"

using namespace lic;
using namespace lic::literals;
using namespace lic::reports;
namespace fs = std::filesystem;

namespace {

/// A fresh directory under the system's temp directory, removed again at the end of the test.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name)
      : path_(fs::temp_directory_path() / ("lic-reports-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

/// Sets PATH for the scope (the writer looks `dot` up there), then puts it back.
class PathVariable {
 public:
  explicit PathVariable(const std::string& value) {
    if (const char* old = std::getenv("PATH")) old_ = old;
    ::setenv("PATH", value.c_str(), 1);
  }
  ~PathVariable() {
    if (old_) {
      ::setenv("PATH", old_->c_str(), 1);
    } else {
      ::unsetenv("PATH");
    }
  }
  PathVariable(const PathVariable&) = delete;
  PathVariable& operator=(const PathVariable&) = delete;

 private:
  std::optional<std::string> old_;
};

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::map<std::string, std::string> files_in(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out[e.path().filename().string()] = read(e.path());
  return out;
}

bool dot_on_path() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (!dir.empty() && ::access((fs::path(dir) / "dot").c_str(), X_OK) == 0) return true;
  }
  return false;
}

TEST_CASE("rule: a report folder is one run's - a second run with fewer reports leaves none of the first's", "[reports][write]") {
  const auto run = testing::pipeline_run({1_s}, 2_s);
  const ScratchDir dir("one-run");
  REQUIRE(write_reports(run.report, dir.path() / "out").empty());
  CHECK(fs::exists(dir.path() / "out" / "trace.jsonl"));
  ReportSelection few{};
  few.trace = false;
  few.perfetto = false;
  REQUIRE(write_reports(run.report, dir.path() / "out", few).empty());
  const auto files = files_in(dir.path() / "out");
  CHECK(files.count("trace.jsonl") == 0);  // the first run's is gone with its folder
  CHECK(files.count("trace.perfetto.json") == 0);
  // The manifest names every file with its size and hash, and only those.
  const std::string manifest = files.at("manifest.json");
  for (const auto& [name, text] : files) {
    if (name == "manifest.json") continue;
    const Fingerprint f = file_fingerprint(dir.path() / "out" / name);
    CHECK(f.bytes == text.size());
    CHECK(manifest.find("\"" + name + "\": {\n      \"bytes\": " + std::to_string(f.bytes) + ",\n      \"xxh3_128\": \"" + f.xxh3_128 + "\"") !=
          std::string::npos);
  }
  CHECK(manifest.find("trace.jsonl") == std::string::npos);
  // Nothing is left beside it.
  CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 1);
}

TEST_CASE("rule: --out through a symlink replaces the folder it names and keeps the link", "[reports][write]") {
  const auto run = testing::pipeline_run({}, 1_s);
  const ScratchDir dir("symlink");
  fs::create_directories(dir.path() / "real");
  fs::create_directory_symlink(dir.path() / "real", dir.path() / "link");
  REQUIRE(write_reports(run.report, dir.path() / "link").empty());
  REQUIRE(write_reports(run.report, dir.path() / "link").empty());  // a second run swaps the real folder
  CHECK(fs::is_symlink(dir.path() / "link"));
  CHECK(fs::exists(dir.path() / "real" / "manifest.json"));
}

TEST_CASE("rule: a folder holding files a run does not write is refused and left as it was", "[reports][write]") {
  const auto run = testing::pipeline_run({}, 1_s);
  const ScratchDir dir("foreign");
  std::ofstream(dir.path() / "notes.txt") << "mine";
  const auto errors = write_reports(run.report, dir.path());
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].find("holds files a run does not write (notes.txt)") != std::string::npos);
  CHECK(files_in(dir.path()).size() == 1);
  CHECK(read(dir.path() / "notes.txt") == "mine");
}

TEST_CASE("rule: a temporary file left by a killed writer is removed at the next write beside it", "[reports][write]") {
  const ScratchDir dir("stale-file");
  std::ofstream(dir.path() / "results.jsonl.tmp.999999999") << "half";
  std::ofstream(dir.path() / "results.jsonl.tmp.99999999999999999999999") << "not a pid";  // too long: left
  std::ofstream(dir.path() / "other.jsonl.tmp.999999999") << "another file's";
  REQUIRE(write_file_atomically(dir.path() / "results.jsonl", "{}\n").empty());
  const auto files = files_in(dir.path());
  CHECK(files.count("results.jsonl.tmp.999999999") == 0);
  CHECK(files.count("results.jsonl.tmp.99999999999999999999999") == 1);
  CHECK(files.count("other.jsonl.tmp.999999999") == 1);
  CHECK(files.at("results.jsonl") == "{}\n");
}

TEST_CASE("rule: a writer killed by a signal before its commit leaves no file where O_TMPFILE works - elsewhere the next writer removes its temporary", "[reports][write]") {
  const ScratchDir dir("killed-writer");
  const fs::path path = dir.path() / "trace.jsonl";
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // a long streamed run's trace: chunks already written out, then SIGKILL
    AtomicFileWriter w(path);
    for (int i = 0; i < 3 && w.error().empty(); ++i) w.write(std::string(AtomicFileWriter::kChunkBytes, 'x'));
    ::kill(::getpid(), SIGKILL);
    ::_exit(3);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFSIGNALED(status));
  const int probe = ::open(dir.path().c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  const bool unnamed = probe >= 0;
  if (unnamed) ::close(probe);
  const auto left = files_in(dir.path());
  if (unnamed) {
    CHECK(left.empty());  // its data had no name: the kernel freed it with the process
  } else {
    WARN("no O_TMPFILE in " << dir.path() << ": the named temporary is left until the next writer");
    CHECK(left.count("trace.jsonl.tmp." + std::to_string(child)) == 1);
  }
  REQUIRE(write_file_atomically(path, "{}\n").empty());
  CHECK(files_in(dir.path()) == std::map<std::string, std::string>{{"trace.jsonl", "{}\n"}});
}

TEST_CASE("rule: a staging folder left by a killed run is removed, one of a live process is not", "[reports][write]") {
  const auto run = testing::pipeline_run({}, 1_s);
  const ScratchDir dir("stale");
  const fs::path dead = dir.path() / "out.tmp.999999999";  // above pid_max: no such process
  const fs::path live = dir.path() / ("out.tmp." + std::to_string(::getppid()));
  fs::create_directories(dead);
  fs::create_directories(live);
  std::ofstream(dead / "trace.jsonl") << "half";
  REQUIRE(write_reports(run.report, dir.path() / "out").empty());
  CHECK_FALSE(fs::exists(dead));
  CHECK(fs::exists(live));
  CHECK(fs::exists(dir.path() / "out" / "manifest.json"));
}

}  // namespace

TEST_CASE("write_reports writes every file and tree.svg from Graphviz and leaves no temp file",
          "[reports][write]") {
  REQUIRE(dot_on_path());  // tools/setup.sh installs graphviz
  const auto run = testing::pipeline_run({1_s, 3_s}, 10_s);
  const ScratchDir dir("all");
  const auto errors = write_reports(run.report, dir.path() / "out");
  CHECK(errors.empty());
  const auto files = files_in(dir.path() / "out");
  std::string names;
  for (const auto& [name, content] : files) names += name + " ";
  CHECK(names ==
        "index.html junit.xml manifest.json summary.json timeline.svg trace.jsonl trace.perfetto.json tree.dot tree.svg ");
  CHECK(files.at("tree.svg").find("<svg") != std::string::npos);
  CHECK(files.at("tree.svg").find("/root/input/parser") != std::string::npos);  // dot's node titles
  CHECK(files.at("index.html").find("<img src=\"tree.svg\"") != std::string::npos);
  CHECK(files.at("summary.json") == summary_json(run.report));
  CHECK(files.at("timeline.svg") == timeline_svg(run.report));
  // trace.jsonl: a line per event, as format_event_json renders it.
  std::istringstream lines(files.at("trace.jsonl"));
  std::string line;
  std::size_t n = 0;
  bool same = true;
  while (std::getline(lines, line)) same = same && line == format_event_json((*run.report.trace)[n++]);
  CHECK(n == run.report.events);
  CHECK(same);
}

TEST_CASE("without dot on PATH there is no tree.svg and index.html says how to render tree.dot",
          "[reports][write]") {
  const auto run = testing::pipeline_run({1_s}, 2_s);
  const ScratchDir dir("nodot");
  std::ofstream(dir.path() / "tree.svg") << "<svg>an older run's tree</svg>";
  {
    const PathVariable path((dir.path() / "no-such-bin").string());
    CHECK(write_reports(run.report, dir.path()).empty());
  }
  CHECK_FALSE(fs::exists(dir.path() / "tree.svg"));  // a stale one would not match tree.dot
  CHECK(fs::exists(dir.path() / "tree.dot"));
  const std::string html = read(dir.path() / "index.html");
  CHECK(html.find("Graphviz <code>dot</code> was not found on PATH: <a href=\"tree.dot\">tree.dot</a> is "
                  "there to render") != std::string::npos);
  CHECK(html.find("<img src=\"tree.svg\"") == std::string::npos);
}

TEST_CASE("write_reports writes only the selected files and index.html links only those",
          "[reports][write]") {
  const auto run = testing::pipeline_run({1_s}, 2_s);
  const ScratchDir dir("some");
  ReportSelection some{};
  some.trace = false;
  some.tree = false;
  some.perfetto = false;
  CHECK(write_reports(run.report, dir.path(), some).empty());
  const auto files = files_in(dir.path());
  CHECK(files.size() == 5);  // with manifest.json
  CHECK(files.count("trace.jsonl") == 0);
  CHECK(files.at("index.html").find("trace.jsonl") == std::string::npos);
  CHECK(files.at("index.html").find("<a href=\"junit.xml\">") != std::string::npos);
}

TEST_CASE("the same run written twice or run twice and written gives identical bytes",
          "[reports][write][determinism]") {
  const ScratchDir dir("twice");
  const auto first = testing::network_run();
  const auto second = testing::network_run();
  REQUIRE(first.report.trace_hash == second.report.trace_hash);
  CHECK(write_reports(first.report, dir.path() / "a").empty());
  CHECK(write_reports(first.report, dir.path() / "b").empty());
  CHECK(write_reports(second.report, dir.path() / "c").empty());
  CHECK(write_reports(second.report, dir.path() / "c").empty());  // over the old files
  const auto a = files_in(dir.path() / "a");
  CHECK(a.size() >= 7);
  CHECK(files_in(dir.path() / "b") == a);
  CHECK(files_in(dir.path() / "c") == a);
}

TEST_CASE("a directory that cannot be made is one error naming it", "[reports][write]") {
  const auto run = testing::pipeline_run({}, 1_s);
  const ScratchDir dir("blocked");
  std::ofstream(dir.path() / "file") << "not a directory";
  const auto errors = write_reports(run.report, dir.path() / "file" / "out");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].find("cannot create") != std::string::npos);
  CHECK(errors[0].find("file/out") != std::string::npos);
}

TEST_CASE("rule: a tree too large for Graphviz to lay out quickly gets tree.dot and a note and no tree.svg", "[reports][write]") {
  const auto run = testing::wide_run(kDotNodesMax, 0, 1_s);  // the root and its children: one node too many
  ScratchDir dir("wide");
  REQUIRE(write_reports(run.report, dir.path() / "out").empty());
  const auto files = files_in(dir.path() / "out");
  CHECK(files.count("tree.dot") == 1);
  CHECK(files.count("tree.svg") == 0);
  CHECK(files.at("index.html").find(fmt::format("tree.svg was not drawn: the tree has {} nodes, more than the {}", kDotNodesMax + 1,
                                                kDotNodesMax)) != std::string::npos);
  // Every lane is still drawn: the timeline's data holds each child.
  CHECK(testing::count(files.at("index.html"), "\"p\":\"/root/w") == kDotNodesMax);
}
