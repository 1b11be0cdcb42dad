#include "tools/letitcrash/commands.hpp"

#include "scenarios/file/fix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "reports/trace_format.hpp"
#include "scenarios/run/replay.hpp"
#include "scenarios/run/report.hpp"
#include "scenarios/run/stream.hpp"
#include "scenarios/search/swarm.hpp"

namespace lic::tools {

namespace {

using scenarios::Scenario;

void print_checks(const scenarios::RunResult& r, const std::string& reproduce) {
  for (const scenarios::CheckResult& c : r.checks) {
    fmt::print("  {} {:<28} {}\n", !c.judged ? "SKIP" : c.passed ? "PASS" : "FAIL", c.name, c.detail);
    if (!c.passed && c.witness) fmt::print("       witness: {}\n", reports::format_witness(*c.witness));
    if (!c.passed) fmt::print("       reproduce: {}\n", reproduce);
  }
}

void print_run(const Scenario& s, const scenarios::RunResult& r, const RunArgs& a, const std::string& reproduce) {
  fmt::print("{}  seed {}  tie-break {}  ({})\n", s.name, r.seed, to_string(r.tie_break), a.file);
  fmt::print("  ran {} of virtual time: {} events, trace_hash {}, {} faults injected ({} skipped)\n", format_time(r.end),
             r.events, scenarios::hash_hex(r.trace_hash), r.faults_injected, r.faults_skipped);
  print_checks(r, reproduce);
  std::vector<std::string> idle;
  for (const faults::Injector::Tally& f : r.faults)
    if (f.injected == 0) idle.push_back(f.skipped == 0 ? f.name : fmt::format("{} (skipped {}x)", f.name, f.skipped));
  if (!idle.empty()) {
    std::string line;
    for (const std::string& n : idle) line += (line.empty() ? "" : ", ") + n;
    fmt::print("  faults that never acted: {}\n", line);
  }
  if (!r.metrics.empty()) {
    std::string line;
    for (const auto& [name, v] : r.metrics) {
      std::string vals;
      for (double x : v.values) vals += (vals.empty() ? "" : " ") + fmt::format("{:.4g}", x);
      line += fmt::format("{}{} {}", line.empty() ? "" : ", ", name, v.list ? "[" + vals + "]" : vals);
    }
    fmt::print("  metrics: {}\n", line);
  }
  const auto passed = std::count_if(r.checks.begin(), r.checks.end(), [](const auto& c) { return c.passed && c.judged; });
  const auto skipped = std::count_if(r.checks.begin(), r.checks.end(), [](const auto& c) { return !c.judged; });
  fmt::print("verdict: {} ({}/{} checks hold{})\n", r.passed ? "PASS" : "FAIL", passed, r.checks.size() - static_cast<std::size_t>(skipped),
             skipped == 0 ? std::string() : fmt::format(", {} not judged", skipped));
  // The page when the file's `reports:` lets it be written; else the folder (manifest.json
  // always lists what is there).
  if (!a.out_dir.empty()) fmt::print("reports: {}{}\n", a.out_dir, s.reports.html ? "/index.html" : "/");
}

/// Prints every event as a readable line. On std::cerr (--format json) the lines are gathered
/// 64 KiB at a time: std::cerr writes each insertion at once, two system calls an event; on
/// std::cout the stream's own buffering is kept (a line at a time on a terminal).
class TextSink final : public TraceSink {
 public:
  explicit TextSink(std::ostream& out) : out_(out), gather_(&out == &std::cerr) {}
  TextSink(const TextSink&) = delete;
  TextSink& operator=(const TextSink&) = delete;
  ~TextSink() override { flush(); }
  void on_event(const TraceEvent& e) override {
    if (!gather_) {
      out_ << reports::format_event_text(e) << "\n";
      return;
    }
    buf_ += reports::format_event_text(e);
    buf_ += '\n';
    if (buf_.size() >= (std::size_t{64} << 10)) flush();
  }
  void flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    out_.flush();
    buf_.clear();
  }

 private:
  std::ostream& out_;
  bool gather_;
  std::string buf_;
};

void print_args(const std::vector<scenarios::ArgInfo>& args) {
  std::size_t w = 18;
  for (const scenarios::ArgInfo& a : args) w = std::max(w, a.name.size());
  for (const scenarios::ArgInfo& a : args) {
    const std::string when = a.required() ? std::string(" (required)")
                             : a.optional ? std::string(" (optional)")
                                          : " (default " + a.fallback + ")";
    fmt::print("      {:<{}} {:<13} {}{}\n", a.name, w, a.type, a.help, when);
  }
}

void print_catalogue(const scenarios::Registry& registry) {
  fmt::print("behaviours:\n");
  for (const scenarios::BehaviourInfo& b : registry.behaviours()) {
    fmt::print("  {:<22} {}\n", b.name, b.help);
    print_args(b.args);
  }
  fmt::print("checks:\n");
  for (const scenarios::CheckInfo& c : registry.checks()) {
    std::string needs;
    for (const std::string& b : c.needs) needs += (needs.empty() ? "" : ", ") + b;
    fmt::print("  {:<22} {}{}\n", c.name, c.help, needs.empty() ? "" : " (needs " + needs + " in the file)");
    print_args(c.args);
  }
  fmt::print("buggify points (turned on by --swarm or a file's `buggify:` list; docs/swarm.md):\n");
  for (const scenarios::BuggifyPoint& p : registry.buggify_points()) fmt::print("  {:<22} {}\n", p.name, p.help);
  fmt::print("metrics (every run reports those that apply):\n");
  for (const scenarios::MetricInfo& m : registry.metrics()) fmt::print("  {:<22} {}\n", m.name, m.help);
}

}  // namespace

std::optional<Scenario> load_or_report(const std::string& file, const scenarios::Registry& registry) {
  scenarios::ParseResult p = scenarios::load_scenario(file, registry);
  if (!p.ok()) {
    for (const scenarios::Diagnostic& d : p.errors) std::cerr << scenarios::format_diagnostic(file, d) << "\n";
    std::cerr << fmt::format("{}: {} error{}\n", scenarios::printable(file), p.errors.size(), p.errors.size() == 1 ? "" : "s");
    return std::nullopt;
  }
  return std::move(p.scenario);
}

std::optional<Scenario> load_or_report(const std::string& file, const scenarios::Registry& registry, bool fixed) {
  std::optional<Scenario> s = load_or_report(file, registry);
  if (!s || !fixed) return s;
  if (s->fix.empty()) {
    std::cerr << scenarios::format_diagnostic(file, {scenarios::Mark{1, 1}, "--fixed: the file declares no `fix:` (a known bug's fix, "
                                                                            "docs/scenario-format.md)"})
              << "\n";
    return std::nullopt;
  }
  scenarios::ParseResult p = scenarios::apply_fix(*s, registry);
  if (!p.ok()) {
    for (const scenarios::Diagnostic& d : p.errors) std::cerr << scenarios::format_diagnostic(file, d) << "\n";
    return std::nullopt;
  }
  return std::move(p.scenario);
}

int run_command(const Invocation& cli, const RunArgs& a) {
  std::optional<Scenario> s = load_or_report(a.file, *cli.registry, a.fixed);
  if (!s) return 2;
  if (!a.out_dir.empty()) {
    if (const std::string refused = reports::refused_out_dir(a.out_dir); !refused.empty()) {
      std::cerr << "letitcrash: " << scenarios::printable(refused) << "\n";
      return 2;
    }
  }
  if (a.swarm) {  // the seed's own configuration, run as a plain scenario (its trace header holds it)
    scenarios::Swarmed sw = scenarios::swarm(*s, a.seed.value_or(s->seed), *cli.registry);
    // With --format json, stdout holds the one object: the choice goes to stderr.
    if (!a.json) fmt::print("swarm: {}\n", scenarios::describe(sw.choice));
    else std::cerr << "swarm: " << scenarios::describe(sw.choice) << "\n";
    s = std::move(sw.scenario);
  }
  scenarios::RunOptions o;
  o.seed = a.seed;
  o.tie_break = a.tie_break;
  o.until = a.until;
  o.registry = cli.registry;
  o.budgets = a.budgets;
  o.partial_on_budget = !a.out_dir.empty();  // a budget still leaves the reports so far
  TextSink text(a.json ? std::cerr : std::cout);  // --format json: stdout holds only the object
  if (a.print_trace) o.sinks.push_back(&text);
  // Memory that does not grow with the run: what the checks and reports read is gathered as the
  // run goes, trace.jsonl included, unless a check reads the whole trace (run/stream.hpp).
  std::unique_ptr<scenarios::RunStream> stream;
  if (scenarios::RunStream::can_stream(*s, *cli.registry)) {
    stream = std::make_unique<scenarios::RunStream>(*s, !a.out_dir.empty());
    if (!a.out_dir.empty() && s->reports.trace)
      stream->write_trace(reports::streamed_trace_path(a.out_dir),
                          scenarios::trace_header(*s, a.seed.value_or(s->seed), a.tie_break.value_or(s->tie_break), a.until, a.file));
    o.stream = stream.get();
  }
  const scenarios::RunResult r = scenarios::run(*s, o);
  text.flush();  // every line before what follows them (an error, the summary)
  const std::string reproduce = (a.swarm ? scenarios::swarm_reproduce_command(cli.program, a.file, r.seed, a.tie_break, a.until)
                                         : scenarios::reproduce_command(cli.program, a.file, r.seed, r.tie_break, a.until)) +
                                (a.fixed ? " --fixed" : "");
  if (!a.out_dir.empty()) {
    const std::vector<std::string> errors = scenarios::write_run_reports(*s, r, a.file, a.until, reproduce, a.out_dir);
    for (const std::string& e : errors) std::cerr << "letitcrash: " << scenarios::printable(e) << "\n";
    if (!errors.empty()) return 2;
    if (!r.stopped.empty()) {
      std::cerr << "letitcrash: " << scenarios::printable(r.stopped) << "\nthe reports of the run so far are in "
                << scenarios::printable(a.out_dir) << "\n";
      return 2;
    }
  }
  if (a.json) std::cout << reports::summary_json(scenarios::make_report(*s, r, a.file, reproduce)) << "\n";
  else print_run(*s, r, a, reproduce);
  return r.passed ? 0 : 1;
}

int validate_command(const Invocation& cli, const std::vector<std::string>& files, bool list) {
  if (list) print_catalogue(*cli.registry);
  int rc = 0;
  for (const std::string& f : files) {
    if (load_or_report(f, *cli.registry)) fmt::print("{}: ok\n", f);
    else rc = 2;
  }
  return rc;
}

namespace {

/// Dynamic children come from the final state: the live ones, in which_children order.
std::vector<reports::ShapeNode> dynamic_children(const reports::ShapeNode& n, const reports::RunReport& rep) {
  std::vector<reports::ShapeNode> kids;
  for (const auto& sup : rep.final_supervisors) {
    if (sup.path != n.path) continue;
    for (const auto& c : sup.children) {
      reports::ShapeNode k = n.children.empty() ? reports::ShapeNode{} : n.children.front();
      k.id = c.id;
      k.kind = "worker";
      k.path = n.path + "/" + c.id;
      kids.push_back(k);
    }
  }
  return kids;
}

void print_tree(const reports::ShapeNode& n, const reports::RunReport& rep, const std::string& indent, bool last,
                bool root) {
  const bool alive = std::binary_search(rep.alive.begin(), rep.alive.end(), n.path);
  const auto st = rep.starts.find(n.path);
  const std::uint32_t starts = st == rep.starts.end() ? 0 : st->second;
  std::string what = n.kind;
  if (n.kind == "supervisor") what = fmt::format("{} {}/{}", n.strategy, n.intensity, format_duration(n.period));
  else if (n.kind == "worker" || n.kind == "service") what = n.kind + " " + n.behaviour;
  if (!root && n.kind != "service") what += " " + n.restart;
  const std::string state = alive ? "running" : starts == 0 ? "not started" : "down";
  fmt::print("{}{}{}  {}  {}{}\n", indent, root ? "" : (last ? "└─ " : "├─ "), root ? n.path : n.id, what, state,
             starts > 1 ? fmt::format(" (started {} times)", starts) : std::string());
  const std::string child_indent = root ? indent : indent + (last ? "   " : "│  ");
  const std::vector<reports::ShapeNode> kids = n.strategy == "simple_one_for_one" ? dynamic_children(n, rep) : n.children;
  for (std::size_t i = 0; i < kids.size(); ++i) print_tree(kids[i], rep, child_indent, i + 1 == kids.size(), false);
}

}  // namespace

int diagram_command(const Invocation& cli, const DiagramArgs& a) {
  std::optional<Scenario> s = load_or_report(a.file, *cli.registry);
  if (!s) return 2;
  scenarios::RunOptions o;
  o.seed = a.seed;
  o.until = a.at.value_or(Time{});  // the tree as it stands at that time (default: after the boot)
  o.registry = cli.registry;
  const scenarios::RunResult r = scenarios::run(*s, o);
  const reports::RunReport rep = scenarios::make_report(
      *s, r, a.file, scenarios::reproduce_command(cli.program, a.file, r.seed, r.tie_break, o.until));
  if (a.dot) {
    // A tree at a time is no judged run: its title says when, not PASS or FAIL.
    std::cout << reports::tree_dot(rep, "at " + format_time(r.end));
    return 0;
  }
  fmt::print("{} at {} (seed {})\n", s->name, format_time(r.end), r.seed);
  for (const reports::ShapeNode& t : rep.trees) print_tree(t, rep, "", true, true);
  return 0;
}

int replay_command(const Invocation& cli, const std::string& trace_file, const scenarios::Budgets& budgets) {
  const scenarios::ReplayOutcome r = scenarios::replay(trace_file, *cli.registry, budgets);
  using Status = scenarios::ReplayOutcome::Status;
  if (r.status == Status::bad_input) {
    for (const std::string& e : r.errors) std::cerr << scenarios::printable(e) << "\n";
    return 2;
  }
  if (r.status == Status::identical) {
    fmt::print("replay: identical: {} events, trace_hash {} ({} seed {})\n", r.replayed, scenarios::hash_hex(r.trace_hash),
               r.scenario, r.seed);
    return 0;
  }
  fmt::print("replay: DIVERGED at event {} (line {} of {})\n", r.at, r.at + 2, trace_file);
  fmt::print("  recorded: {}\n", r.at < r.recorded ? r.recorded_line : std::string("(the recording ends here)"));
  fmt::print("  replayed: {}\n", r.replayed_line.empty() ? std::string("(the re-run ends here)") : r.replayed_line);
  fmt::print("  recorded {} events, re-run {}\n", r.recorded, r.replayed);
  return 1;
}

}  // namespace lic::tools
