// write_reports: every selected file into one directory, each atomically (temp file + rename);
// tree.svg by running Graphviz's `dot` on the written tree.dot when `dot` is on PATH. index.html
// goes last and links only what was written.

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "reports/atomic_file.hpp"
#include "reports/run_report.hpp"
#include "reports/trace_format.hpp"

extern char** environ;  // NOLINT: POSIX's, for posix_spawn

namespace lic::reports {
namespace {

namespace fs = std::filesystem;

/// The first executable regular file called `name` in a PATH directory (an empty entry is the
/// current directory, as the shell reads it).
std::optional<fs::path> find_on_path(const std::string& name) {
  const char* env = std::getenv("PATH");
  if (env == nullptr) return std::nullopt;
  std::string_view rest(env);
  while (true) {
    const std::size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    const fs::path candidate = (dir.empty() ? fs::path(".") : fs::path(dir)) / name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (colon == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(colon + 1);
  }
}

std::string first_line_of(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

/// Runs `dot -Tsvg -o TMP IN` (no shell: the paths are arguments, never parsed), then renames
/// TMP to `out`. Returns an error message, empty on success.
std::string render_svg(const fs::path& dot, const fs::path& in, const fs::path& out) {
  const std::string suffix = "." + std::to_string(::getpid());
  const fs::path tmp = out.string() + ".tmp" + suffix;
  const fs::path err = out.string() + ".err" + suffix;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::string a0 = dot.string(), a1 = "-Tsvg", a2 = "-o", a3 = tmp.string(), a4 = in.string();
  char* argv[] = {a0.data(), a1.data(), a2.data(), a3.data(), a4.data(), nullptr};
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, a0.c_str(), &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  std::error_code ec;
  if (spawned != 0) {
    fs::remove(err, ec);
    return "cannot run " + a0 + ": " + std::strerror(spawned);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && fs::file_size(tmp, ec) > 0 && !ec;
  std::string message;
  if (!ok) {
    const std::string why = first_line_of(err);
    message = WIFEXITED(status) ? "dot exited " + std::to_string(WEXITSTATUS(status))
                                : std::string("dot was killed");
    if (!why.empty()) message += ": " + why;
  } else {
    fs::rename(tmp, out, ec);
    if (ec) message = "cannot rename into " + out.string() + ": " + ec.message();
  }
  fs::remove(tmp, ec);
  fs::remove(err, ec);
  return message;
}

std::string trace_jsonl(const RunReport& r) {
  std::string out;
  if (!r.trace_header.empty()) out += r.trace_header + '\n';  // how to run it again (replay)
  for (const TraceEvent& e : *r.trace) {
    out += format_event_json(e);
    out += '\n';
  }
  return out;
}

}  // namespace

std::vector<std::string> write_reports(const RunReport& r, const fs::path& dir,
                                       const ReportSelection& which) {
  std::vector<std::string> errors;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return {"cannot create " + dir.string() + ": " + ec.message()};
  ReportSelection written{false, false, false, false, false, false, false};
  auto write = [&](bool wanted, bool& done, const char* name, auto render) {
    if (!wanted) return;
    std::string e = write_file_atomically(dir / name, render());
    done = e.empty();
    if (!done) errors.push_back(std::move(e));
  };
  if (which.trace && r.trace == nullptr) {
    errors.push_back("cannot write " + (dir / "trace.jsonl").string() + ": the run kept no trace");
  } else {
    write(which.trace, written.trace, "trace.jsonl", [&r] { return trace_jsonl(r); });
  }
  write(which.tree, written.tree, "tree.dot", [&r] { return tree_dot(r); });
  TreeSvg svg;
  if (written.tree) {
    if (const auto dot = find_on_path("dot")) {
      svg.problem = render_svg(*dot, dir / "tree.dot", dir / "tree.svg");
      svg.written = svg.problem.empty();
      if (!svg.written) errors.push_back("cannot write " + (dir / "tree.svg").string() + ": " + svg.problem);
    }
    // A tree.svg from an earlier run would not match this tree.dot.
    if (!svg.written) fs::remove(dir / "tree.svg", ec);
  }
  write(which.timeline, written.timeline, "timeline.svg", [&r] { return timeline_svg(r); });
  write(which.perfetto, written.perfetto, "trace.perfetto.json", [&r] { return perfetto_json(r); });
  write(which.junit, written.junit, "junit.xml", [&r] { return junit_xml(r); });
  write(which.summary, written.summary, "summary.json", [&r] { return summary_json(r); });
  write(which.html, written.html, "index.html", [&] { return index_html(r, written, svg); });
  return errors;
}

}  // namespace lic::reports
