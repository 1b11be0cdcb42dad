#include "scenarios/run/replay.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/run_report.hpp"
#include "reports/trace_format.hpp"
#include "scenarios/file/read.hpp"
#include "scenarios/run/runner.hpp"

namespace lic::scenarios {

namespace {

/// Compares each event of a re-run with the recorded line at the same position.
class Comparer final : public TraceSink {
 public:
  explicit Comparer(const std::vector<std::string>& lines) : lines_(lines) {}
  void on_event(const TraceEvent& e) override {
    const std::string got = reports::format_event_json(e);
    if (!diverged_ && (count_ >= lines_.size() || lines_[count_] != got)) {
      diverged_ = true;
      at_ = count_;
      replayed_ = got;
    }
    ++count_;
  }
  bool diverged() const { return diverged_ || count_ != lines_.size(); }
  std::size_t at() const { return diverged_ ? at_ : std::min(count_, lines_.size()); }
  const std::string& replayed() const { return replayed_; }
  std::size_t count() const { return count_; }

 private:
  const std::vector<std::string>& lines_;
  std::size_t count_ = 0;
  bool diverged_ = false;
  std::size_t at_ = 0;
  std::string replayed_;
};

/// The run header's options, or an error.
std::string read_header(const std::string& file, const nlohmann::json& h, RunOptions& o) {
  // Every field's type is checked before it is read: a header is the user's file, not ours.
  if (h.is_discarded() || !h.is_object() || !h.contains("kind") || !h["kind"].is_string() || h["kind"] != "letitcrash_run" || !h.contains("yaml") ||
      !h["yaml"].is_string() || !h.contains("seed") || !h["seed"].is_number_unsigned())
    return file + ":1:1: not a letitcrash trace: the first line must be the run header that `run --out` writes";
  o.seed = h["seed"].get<std::uint64_t>();
  TieBreak tie = TieBreak::fifo;
  if (h.contains("tie_break") && (!h["tie_break"].is_string() || !parse_tie_break(h["tie_break"].get<std::string>(), tie)))
    return file + ":1:1: unknown tie_break in the header";
  o.tie_break = tie;
  if (h.contains("until_ns")) {
    if (!h["until_ns"].is_number_integer()) return file + ":1:1: until_ns in the header is not a whole number";
    o.until = Time{h["until_ns"].get<std::int64_t>()};
  }
  return {};
}

/// A trace in a run's report folder must be the file its manifest.json names (the folder's own
/// run): otherwise the folder mixes two runs. Returns the reason it is not, empty when it is or
/// when there is no manifest (a trace copied out of its folder).
std::string check_manifest(const std::string& trace_file) {
  const std::filesystem::path trace(trace_file);
  const std::filesystem::path manifest = trace.parent_path() / "manifest.json";
  std::error_code ec;
  if (!std::filesystem::exists(manifest, ec)) return {};
  std::ifstream in(manifest);
  const nlohmann::json m = nlohmann::json::parse(in, nullptr, false);
  const std::string where = manifest.string() + ":1:1: ";
  if (!m.is_object() || m.value("kind", "") != "letitcrash_reports" || !m.contains("files") || !m["files"].is_object())
    return where + "not a letitcrash report manifest";
  const std::string name = trace.filename().string();
  const nlohmann::json& files = m["files"];
  if (!files.contains(name))
    return where + "the folder's run wrote no " + name + ": " + trace_file + " is another run's";
  const nlohmann::json& e = files[name];
  // XXH3-128; a manifest written before letitcrash moved to it has FNV-1a 64, checked as it was.
  const char* algorithm = e.is_object() && e.contains("xxh3_128") ? "xxh3_128" : "fnv1a64";
  if (!e.is_object() || !e.contains("bytes") || !e["bytes"].is_number_unsigned() || !e.contains(algorithm) ||
      !e[algorithm].is_string())
    return where + "the entry for " + name + " is not {bytes, xxh3_128} (or, in an older manifest, {bytes, fnv1a64})";
  const reports::Fingerprint f = reports::file_fingerprint(trace);
  const std::string hash = std::string(algorithm) == "xxh3_128" ? f.xxh3_128 : reports::file_fnv1a64(trace);
  if (e["bytes"].get<std::uint64_t>() != f.bytes || e[algorithm].get<std::string>() != hash)
    return where + fmt::format("{} is not the file the folder's run wrote ({} bytes, {} {}; it has {} bytes, {} {}): "
                               "the folder mixes two runs", name, e["bytes"].get<std::uint64_t>(), algorithm,
                               e[algorithm].get<std::string>(), f.bytes, algorithm, hash);
  return {};
}

}  // namespace

ReplayOutcome replay(const std::string& trace_file, const Registry& registry, const Budgets& budgets) {
  ReplayOutcome out;
  std::ifstream in(trace_file);
  if (!in) {
    out.errors.push_back(trace_file + ":0:0: cannot read the trace");
    return out;
  }
  if (std::string e = check_manifest(trace_file); !e.empty()) {
    out.errors.push_back(std::move(e));
    return out;
  }
  std::string header_line;
  std::getline(in, header_line);
  const nlohmann::json h = nlohmann::json::parse(header_line, nullptr, false);
  RunOptions o;
  if (std::string e = read_header(trace_file, h, o); !e.empty()) {
    out.errors.push_back(std::move(e));
    return out;
  }
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  const std::string embedded = trace_file + " (scenario in the header)";
  const ParseResult p = parse_scenario(h["yaml"].get<std::string>(), embedded, registry);
  for (const Diagnostic& d : p.errors) out.errors.push_back(format_diagnostic(embedded, d));
  if (!p.ok()) return out;
  Comparer cmp(lines);
  o.sinks.push_back(&cmp);
  o.trace = TraceMode::hash;
  o.registry = &registry;
  o.budgets = budgets;
  const RunResult r = run(p.scenario, o);
  out.scenario = p.scenario.name;
  out.seed = *o.seed;
  out.trace_hash = r.trace_hash;
  out.recorded = lines.size();
  out.replayed = cmp.count();
  out.status = cmp.diverged() ? ReplayOutcome::Status::diverged : ReplayOutcome::Status::identical;
  out.at = cmp.at();
  out.recorded_line = out.at < lines.size() ? lines[out.at] : "";
  out.replayed_line = cmp.replayed();
  return out;
}

}  // namespace lic::scenarios
