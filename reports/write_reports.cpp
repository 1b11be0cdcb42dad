// write_reports: every selected file into one directory, each atomically (temp file + rename);
// tree.svg by running Graphviz's `dot` on the written tree.dot when `dot` is on PATH. index.html
// goes last and links only what was written.

#include <fmt/format.h>

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/atomic_file.hpp"
#include "reports/run_report.hpp"
#include "reports/run_view.hpp"
#include "reports/streams.hpp"
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

/// trace.jsonl, streamed: each event is rendered into one reused buffer that goes to the file
/// a chunk at a time, so the file is never held whole in memory.
std::string write_trace_jsonl(const RunReport& r, const fs::path& path, Fingerprint& f) {
  if (r.trace_file != nullptr) {  // written as the run went: into place
    AtomicFileWriter& w = r.trace_file->writer();
    std::string e = w.commit(path);
    f = {w.bytes_written(), w.xxh3_128()};
    return e;
  }
  AtomicFileWriter w(path, true);
  if (!w.error().empty()) return w.error();
  std::string& buf = w.buffer();
  if (!r.trace_header.empty()) {  // how to run it again (replay)
    buf += r.trace_header;
    buf += '\n';
  }
  for (const TraceEvent& e : *r.trace) {
    append_event_json(buf, e);
    buf += '\n';
    w.flush_if_full();
  }
  std::string e = w.commit();
  f = {w.bytes_written(), w.xxh3_128()};
  return e;
}

/// Every file a run folder holds; another file in `--out` means it is not one.
bool ours(const std::string& name) {
  static const std::set<std::string> names{"trace.jsonl", "tree.dot",   "tree.svg",      "timeline.svg", "trace.perfetto.json",
                                           "junit.xml",   "summary.json", "index.html", "manifest.json"};
  return names.contains(name) || name.find(".tmp.") != std::string::npos || name.find(".err.") != std::string::npos;
}

/// A folder may become a run's folder when it is new, empty, or an earlier run's: a folder with
/// other files in it (`--out .`, a typo naming a source folder) is refused, never replaced.
std::string refuse_foreign(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return {};
  if (!fs::is_directory(dir, ec)) return dir.string() + " is a file, not a folder: give a new or empty folder for the reports";
  std::vector<std::string> foreign;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || !ours(name)) foreign.push_back(name);
  }
  if (ec) return "cannot read " + dir.string() + ": " + ec.message();
  if (foreign.empty()) return {};
  std::sort(foreign.begin(), foreign.end());
  return dir.string() + " holds files a run does not write (" + foreign.front() + (foreign.size() > 1 ? ", ..." : "") +
         "): the reports replace the whole folder, so give a new or empty folder, or an earlier run's";
}

/// The manifest: the run each file belongs to, and each file's size and hash (replay checks
/// trace.jsonl against it).
std::string manifest_json(const RunReport& r, const fs::path& staging, const std::map<std::string, Fingerprint>& known) {
  nlohmann::ordered_json j;
  j["kind"] = "letitcrash_reports";
  j["scenario"] = r.scenario;
  j["seed"] = r.seed;
  j["trace_hash"] = fmt::format("{:016x}", r.trace_hash);
  nlohmann::ordered_json files = nlohmann::ordered_json::object();
  std::vector<fs::path> paths;
  for (const fs::directory_entry& e : fs::directory_iterator(staging)) paths.push_back(e.path());
  std::sort(paths.begin(), paths.end());
  for (const fs::path& p : paths) {
    const auto k = known.find(p.filename().string());  // folded in as it was written
    const Fingerprint f = k != known.end() ? k->second : file_fingerprint(p);
    files[p.filename().string()] = {{"bytes", f.bytes}, {"xxh3_128", f.xxh3_128}};
  }
  j["hash"] = "xxh3_128";  // each file's, by this name (older manifests: fnv1a64)
  j["files"] = std::move(files);
  return j.dump(2) + "\n";
}

/// Puts the staged folder in place of `dir`: one atomic exchange when `dir` exists (a reader sees
/// the old run's folder or the new one, never a mix), a rename when it does not.
std::string swap_into_place(const fs::path& staging, const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) != 0)
      return "cannot put the reports in place of " + dir.string() + ": " + std::strerror(errno);
    fs::remove_all(staging, ec);  // the earlier run's folder, now at the staging name
    return {};
  }
  fs::rename(staging, dir, ec);
  return ec ? "cannot rename " + staging.string() + " to " + dir.string() + ": " + ec.message() : std::string();
}

std::vector<std::string> write_files(const RunReport& r, const fs::path& dir, const ReportSelection& which,
                                     std::map<std::string, Fingerprint>& known) {
  std::vector<std::string> errors;
  std::error_code ec;
  ReportSelection written{false, false, false, false, false, false, false};
  auto write = [&](bool wanted, bool& done, const char* name, auto render) {
    if (!wanted) return;
    std::string e = write_file_atomically(dir / name, render());
    done = e.empty();
    if (!done) errors.push_back(std::move(e));
  };
  if (which.trace && r.trace == nullptr) {
    errors.push_back("cannot write " + (dir / "trace.jsonl").string() + ": the run kept no trace");
  } else if (which.trace) {
    Fingerprint f;
    std::string e = write_trace_jsonl(r, dir / "trace.jsonl", f);
    written.trace = e.empty();
    if (written.trace) known["trace.jsonl"] = f;
    if (!written.trace) errors.push_back(std::move(e));
  }
  write(which.tree, written.tree, "tree.dot", [&r] { return tree_dot(r); });
  TreeSvg svg;
  std::size_t nodes = 0;
  const auto count = [&nodes](const ShapeNode& n, const auto& self) -> void {
    ++nodes;
    for (const ShapeNode& c : n.children) self(c, self);
  };
  for (const ShapeNode& t : r.trees) count(t, count);
  if (written.tree && nodes > kDotNodesMax) {
    svg.skipped = fmt::format("the tree has {} nodes, more than the {} Graphviz lays out in seconds", nodes, kDotNodesMax);
  } else if (written.tree) {
    if (const auto dot = find_on_path("dot")) {
      svg.problem = render_svg(*dot, dir / "tree.dot", dir / "tree.svg");
      svg.written = svg.problem.empty();
      if (!svg.written) errors.push_back("cannot write " + (dir / "tree.svg").string() + ": " + svg.problem);
    }
    // A tree.svg from an earlier run would not match this tree.dot.
    if (!svg.written) fs::remove(dir / "tree.svg", ec);
  }
  // The view of the run (lanes, marks, bands) is built from the trace once, for the three
  // writers that draw it.
  std::optional<RunView> view;
  const auto view_once = [&]() -> const RunView& {
    if (!view) view = view_of(r);
    return *view;
  };
  write(which.timeline, written.timeline, "timeline.svg", [&] { return timeline_svg(r, view_once()); });
  if (which.perfetto) {
    std::string e = write_perfetto_json(r, view_once(), dir / "trace.perfetto.json");
    written.perfetto = e.empty();
    if (!written.perfetto) errors.push_back(std::move(e));
  }
  write(which.junit, written.junit, "junit.xml", [&r] { return junit_xml(r); });
  write(which.summary, written.summary, "summary.json", [&r] { return summary_json(r); });
  write(which.html, written.html, "index.html",
        [&] { return index_html(r, written, svg, written.timeline ? &view_once() : nullptr); });
  return errors;
}

}  // namespace

Fingerprint file_fingerprint(const fs::path& file) {
  Fingerprint f;
  f.xxh3_128 = hash_file_xxh3_128(file, f.bytes);
  return f;
}

std::string file_fnv1a64(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a, 64 bits
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto n = static_cast<std::size_t>(in.gcount());
    for (std::size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(buf[i])) * 0x100000001b3ULL;
  }
  return fmt::format("{:016x}", h);
}

namespace {

/// The folder's own name: `out/` and `out/.` are `out`; a symlink is followed (the folder it
/// names is the one replaced, and the link stays).
fs::path run_folder(const fs::path& out_dir) {
  std::error_code canon;
  fs::path dir = fs::weakly_canonical(fs::absolute(out_dir), canon);
  if (canon) dir = fs::absolute(out_dir).lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();
  return dir;
}

}  // namespace

fs::path streamed_trace_path(const fs::path& out_dir) { return run_folder(out_dir).string() + ".trace.jsonl"; }

std::string refused_out_dir(const fs::path& out_dir) { return refuse_foreign(run_folder(out_dir)); }

std::vector<std::string> write_reports(const RunReport& r, const fs::path& out_dir, const ReportSelection& which) {
  const fs::path dir = run_folder(out_dir);
  if (std::string refused = refuse_foreign(dir); !refused.empty()) return {refused};
  std::error_code ec;
  fs::create_directories(dir.parent_path(), ec);
  if (ec) return {"cannot create " + dir.string() + ": " + ec.message()};
  remove_stale_temporaries(dir);  // staging folders of killed runs
  // Everything is written into a fresh folder beside `dir`, then swapped in: a folder holds one
  // run's files, and a run that fails half-way leaves the earlier folder as it was.
  const fs::path staging = dir.string() + ".tmp." + std::to_string(::getpid());
  fs::remove_all(staging, ec);
  fs::create_directory(staging, ec);
  if (ec) return {"cannot create " + staging.string() + ": " + ec.message()};
  std::map<std::string, Fingerprint> known;
  std::vector<std::string> errors = write_files(r, staging, which, known);
  if (errors.empty()) {
    if (std::string e = write_file_atomically(staging / "manifest.json", manifest_json(r, staging, known)); !e.empty()) errors.push_back(e);
  }
  if (errors.empty()) {
    if (std::string e = swap_into_place(staging, dir); !e.empty()) errors.push_back(e);
  }
  if (!errors.empty()) fs::remove_all(staging, ec);
  // Messages name the files where they were to land, not the staging folder.
  for (std::string& e : errors) {
    for (std::size_t at = e.find(staging.string()); at != std::string::npos; at = e.find(staging.string()))
      e.replace(at, staging.string().size(), dir.string());
  }
  return errors;
}

}  // namespace lic::reports
