#include "tools/letitcrash/commands.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "reports/trace_format.hpp"
#include "scenarios/file/write.hpp"
#include "scenarios/registry.hpp"

#ifndef LETITCRASH_VERSION
#define LETITCRASH_VERSION "0.0.0"
#endif

namespace lic::tools {

namespace {

using scenarios::Scenario;
using scenarios::TreeNode;

/// Quotes a command-line word for a POSIX shell when it needs it.
std::string shell_word(const std::string& w) {
  if (!w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") ==
                        std::string::npos)
    return w;
  std::string q = "'";
  for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string shutdown_text(const supervision::Shutdown& s) {
  switch (s.kind) {
    case supervision::Shutdown::Kind::brutal_kill: return "brutal_kill";
    case supervision::Shutdown::Kind::infinity: return "infinity";
    case supervision::Shutdown::Kind::timeout: break;
  }
  return format_duration(s.timeout);
}

reports::ShapeNode shape(const TreeNode& t, const std::string& path) {
  reports::ShapeNode n;
  n.path = path;
  n.id = t.spec.id;
  n.node = std::string(t.spec.node.text());
  n.restart = std::string(supervision::to_string(t.spec.restart));
  n.shutdown = shutdown_text(t.spec.shutdown);
  n.significant = t.spec.significant;
  switch (t.kind) {
    case TreeNode::Kind::worker:
      n.kind = "worker";
      n.behaviour = t.behaviour.name;
      break;
    case TreeNode::Kind::supervisor:
      n.kind = "supervisor";
      n.strategy = std::string(supervision::to_string(t.flags.strategy));
      n.intensity = t.flags.intensity;
      n.period = t.flags.period;
      for (const TreeNode& c : t.children) n.children.push_back(shape(c, path + "/" + c.spec.id));
      break;
    case TreeNode::Kind::lifecycle:
      n.kind = "lifecycle";
      for (const scenarios::ServiceDecl& s : t.services) {
        reports::ShapeNode c;
        c.path = path + "/" + s.name;
        c.id = s.name;
        c.kind = "service";
        c.behaviour = s.behaviour.name;
        c.depends_on = s.depends_on;
        n.children.push_back(std::move(c));
      }
      break;
  }
  return n;
}

void print_checks(const scenarios::RunResult& r, const std::string& reproduce) {
  for (const scenarios::CheckResult& c : r.checks) {
    fmt::print("  {} {:<28} {}\n", c.passed ? "PASS" : "FAIL", c.name, c.detail);
    if (!c.passed) fmt::print("       reproduce: {}\n", reproduce);
  }
}

/// Prints every event as a readable line.
class TextSink final : public TraceSink {
 public:
  void on_event(const TraceEvent& e) override { std::cout << reports::format_event_text(e) << "\n"; }
};

}  // namespace

std::optional<Scenario> load_or_report(const std::string& file) {
  scenarios::ParseResult p = scenarios::load_scenario(file);
  if (!p.ok()) {
    for (const scenarios::Diagnostic& d : p.errors) std::cerr << scenarios::format_diagnostic(file, d) << "\n";
    std::cerr << fmt::format("{}: {} error{}\n", file, p.errors.size(), p.errors.size() == 1 ? "" : "s");
    return std::nullopt;
  }
  return std::move(p.scenario);
}

std::string reproduce_command(const std::string& file, std::uint64_t seed, TieBreak tie,
                              const std::optional<Time>& until) {
  std::string cmd = fmt::format("letitcrash run {} --seed {} --tie-break {}", shell_word(file), seed, to_string(tie));
  if (until) cmd += " --until " + format_duration(*until - Time{});
  return cmd;
}

reports::RunReport make_report(const Scenario& s, const scenarios::RunResult& r, const std::string& file,
                               const std::string& reproduce) {
  reports::RunReport rep;
  rep.scenario = s.name;
  rep.file = file;
  rep.seed = r.seed;
  rep.tie_break = std::string(to_string(r.tie_break));
  rep.end = r.end;
  rep.events = r.events;
  rep.trace_hash = r.trace_hash;
  rep.passed = r.passed;
  for (const scenarios::CheckResult& c : r.checks) rep.checks.push_back({c.name, c.passed, c.detail});
  rep.reproduce = reproduce;
  for (const TreeNode& t : s.trees) rep.trees.push_back(shape(t, "/" + t.spec.id));
  rep.trace = &r.sim->trace().events();
  rep.final_supervisors = r.final_state.supervisors;
  rep.final_lifecycles = r.final_state.lifecycles;
  rep.starts = r.final_state.starts;
  rep.alive = r.final_state.alive;
  return rep;
}

std::string trace_header(const Scenario& s, std::uint64_t seed, TieBreak tie, const std::optional<Time>& until,
                         const std::string& file) {
  nlohmann::ordered_json j;
  j["kind"] = "letitcrash_run";
  j["version"] = LETITCRASH_VERSION;
  j["scenario"] = s.name;
  j["file"] = file;
  j["seed"] = seed;
  j["tie_break"] = std::string(to_string(tie));
  if (until) j["until_ns"] = until->ns;
  j["yaml"] = scenarios::to_yaml(s);
  return j.dump();
}

int run_command(const RunArgs& a) {
  std::optional<Scenario> s = load_or_report(a.file);
  if (!s) return 2;
  scenarios::RunOptions o;
  o.seed = a.seed;
  o.tie_break = a.tie_break;
  o.until = a.until;
  TextSink text;
  if (a.print_trace) o.sinks.push_back(&text);
  scenarios::RunResult r = scenarios::run(*s, o);
  const std::string reproduce = reproduce_command(a.file, r.seed, r.tie_break, a.until);
  reports::RunReport rep = make_report(*s, r, a.file, reproduce);
  rep.trace_header = trace_header(*s, r.seed, r.tie_break, a.until, a.file);
  if (!a.out_dir.empty()) {
    reports::ReportSelection sel;
    sel.trace = s->reports.trace;
    sel.tree = s->reports.tree;
    sel.timeline = s->reports.timeline;
    sel.perfetto = s->reports.perfetto;
    sel.junit = s->reports.junit;
    sel.summary = s->reports.summary;
    sel.html = s->reports.html;
    const std::vector<std::string> errors = reports::write_reports(rep, a.out_dir, sel);
    for (const std::string& e : errors) std::cerr << "letitcrash: " << e << "\n";
    if (!errors.empty()) return 2;
  }
  if (a.json) {
    std::cout << reports::summary_json(rep) << "\n";
  } else {
    fmt::print("{}  seed {}  tie-break {}  ({})\n", s->name, r.seed, to_string(r.tie_break), a.file);
    fmt::print("  ran {} of virtual time: {} events, trace_hash {}, {} faults injected ({} skipped)\n",
               format_time(r.end), r.events, scenarios::hash_hex(r.trace_hash), r.faults_injected, r.faults_skipped);
    print_checks(r, reproduce);
    const auto passed = std::count_if(r.checks.begin(), r.checks.end(), [](const auto& c) { return c.passed; });
    fmt::print("verdict: {} ({}/{} checks hold)\n", r.passed ? "PASS" : "FAIL", passed, r.checks.size());
    if (!a.out_dir.empty()) fmt::print("reports: {}/index.html\n", a.out_dir);
  }
  return r.passed ? 0 : 1;
}

int validate_command(const std::vector<std::string>& files, bool list) {
  if (list) {
    fmt::print("behaviours:\n");
    for (const scenarios::BehaviourInfo& b : scenarios::Registry::builtin().behaviours()) {
      fmt::print("  {:<22} {}\n", b.name, b.help);
      for (const scenarios::ArgInfo& a : b.args)
        fmt::print("      {:<18} {:<13} {}{}\n", a.name, a.type, a.help,
                   a.fallback.empty() ? std::string(" (required)") : " (default " + a.fallback + ")");
    }
    fmt::print("checks:\n");
    for (const scenarios::CheckInfo& c : scenarios::Registry::builtin().checks()) fmt::print("  {:<22} {}\n", c.name, c.help);
  }
  int rc = 0;
  for (const std::string& f : files) {
    if (load_or_report(f)) fmt::print("{}: ok\n", f);
    else rc = 2;
  }
  return rc;
}

namespace {

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
  // Dynamic children come from the final state: the live ones, in which_children order.
  std::vector<reports::ShapeNode> kids = n.children;
  if (n.strategy == "simple_one_for_one") {
    kids.clear();
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
  }
  for (std::size_t i = 0; i < kids.size(); ++i) print_tree(kids[i], rep, child_indent, i + 1 == kids.size(), false);
}

}  // namespace

int diagram_command(const DiagramArgs& a) {
  std::optional<Scenario> s = load_or_report(a.file);
  if (!s) return 2;
  scenarios::RunOptions o;
  o.seed = a.seed;
  o.until = a.at.value_or(Time{});  // the tree as it stands at that time (default: after the boot)
  scenarios::RunResult r = scenarios::run(*s, o);
  const reports::RunReport rep =
      make_report(*s, r, a.file, reproduce_command(a.file, r.seed, r.tie_break, o.until));
  if (a.dot) {
    std::cout << reports::tree_dot(rep);
    return 0;
  }
  fmt::print("{} at {} (seed {})\n", s->name, format_time(r.end), r.seed);
  for (const reports::ShapeNode& t : rep.trees) print_tree(t, rep, "", true, true);
  return 0;
}

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

}  // namespace

int replay_command(const std::string& trace_file) {
  std::ifstream in(trace_file);
  if (!in) {
    std::cerr << trace_file << ":0:0: cannot read the trace\n";
    return 2;
  }
  std::string header_line;
  std::getline(in, header_line);
  nlohmann::json h = nlohmann::json::parse(header_line, nullptr, false);
  if (h.is_discarded() || !h.is_object() || h.value("kind", "") != "letitcrash_run" || !h.contains("yaml") ||
      !h.contains("seed")) {
    std::cerr << trace_file << ":1:1: not a letitcrash trace: the first line must be the run header that `run --out` writes\n";
    return 2;
  }
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  const std::string embedded = trace_file + " (scenario in the header)";
  scenarios::ParseResult p = scenarios::parse_scenario(h["yaml"].get<std::string>(), embedded);
  if (!p.ok()) {
    for (const scenarios::Diagnostic& d : p.errors) std::cerr << scenarios::format_diagnostic(embedded, d) << "\n";
    return 2;
  }
  scenarios::RunOptions o;
  o.seed = h["seed"].get<std::uint64_t>();
  TieBreak tie = TieBreak::fifo;
  if (!parse_tie_break(h.value("tie_break", "fifo"), tie)) {
    std::cerr << trace_file << ":1:1: unknown tie_break in the header\n";
    return 2;
  }
  o.tie_break = tie;
  if (h.contains("until_ns")) o.until = Time{h["until_ns"].get<std::int64_t>()};
  Comparer cmp(lines);
  o.sinks.push_back(&cmp);
  o.trace = TraceMode::hash;
  const scenarios::RunResult r = scenarios::run(p.scenario, o);
  if (!cmp.diverged()) {
    fmt::print("replay: identical: {} events, trace_hash {} ({} seed {})\n", cmp.count(), scenarios::hash_hex(r.trace_hash),
               p.scenario.name, *o.seed);
    return 0;
  }
  const std::size_t k = cmp.at();
  fmt::print("replay: DIVERGED at event {} (line {} of {})\n", k, k + 2, trace_file);
  fmt::print("  recorded: {}\n", k < lines.size() ? lines[k] : std::string("(the recording ends here)"));
  fmt::print("  replayed: {}\n", cmp.replayed().empty() ? std::string("(the re-run ends here)") : cmp.replayed());
  fmt::print("  recorded {} events, re-run {}\n", lines.size(), cmp.count());
  return 1;
}

}  // namespace lic::tools
