#include "scenarios/run/replay.hpp"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

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

}  // namespace

ReplayOutcome replay(const std::string& trace_file, const Registry& registry, const Budgets& budgets) {
  ReplayOutcome out;
  std::ifstream in(trace_file);
  if (!in) {
    out.errors.push_back(trace_file + ":0:0: cannot read the trace");
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
