#include "scenarios/run/report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "scenarios/file/write.hpp"
#include "scenarios/run/stream.hpp"

#ifndef LETITCRASH_VERSION
#define LETITCRASH_VERSION "0.0.0"
#endif

namespace lic::scenarios {

namespace {

std::string shutdown_text(const supervision::Shutdown& s) {
  switch (s.kind) {
    case supervision::Shutdown::Kind::brutal_kill: return "brutal_kill";
    case supervision::Shutdown::Kind::infinity: return "infinity";
    case supervision::Shutdown::Kind::timeout: break;
  }
  return format_duration(s.timeout);
}

void add_services(const TreeNode& t, reports::ShapeNode& n) {
  for (const ServiceDecl& s : t.services) {
    reports::ShapeNode c;
    c.path = n.path + "/" + s.name;
    c.id = s.name;
    c.kind = "service";
    c.behaviour = s.behaviour.name;
    c.depends_on = s.depends_on;
    n.children.push_back(std::move(c));
  }
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
      add_services(t, n);
      break;
  }
  return n;
}

}  // namespace

std::string_view version() { return LETITCRASH_VERSION; }

std::string shell_word(const std::string& w) {
  if (!w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") ==
                        std::string::npos)
    return w;
  std::string q = "'";
  for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string reproduce_command(const std::string& program, const std::string& file, std::uint64_t seed, TieBreak tie,
                              const std::optional<Time>& until) {
  std::string cmd =
      fmt::format("{} run {} --seed {} --tie-break {}", shell_word(program), shell_word(file), seed, to_string(tie));
  if (until) cmd += " --until " + format_duration(*until - Time{});
  return cmd;
}

std::string swarm_reproduce_command(const std::string& program, const std::string& file, std::uint64_t seed,
                                    const std::optional<TieBreak>& tie, const std::optional<Time>& until) {
  std::string cmd = fmt::format("{} run {} --seed {} --swarm", shell_word(program), shell_word(file), seed);
  if (tie) cmd += fmt::format(" --tie-break {}", to_string(*tie));
  if (until) cmd += " --until " + format_duration(*until - Time{});
  return cmd;
}

std::string trace_header(const Scenario& s, std::uint64_t seed, TieBreak tie, const std::optional<Time>& until,
                         const std::string& file) {
  nlohmann::ordered_json j;
  j["kind"] = "letitcrash_run";
  j["version"] = std::string(version());
  j["scenario"] = s.name;
  j["file"] = file;
  j["seed"] = seed;
  j["tie_break"] = std::string(to_string(tie));
  if (until) j["until_ns"] = until->ns;
  j["yaml"] = to_yaml(s);
  return j.dump();
}

std::vector<reports::ShapeNode> tree_shapes(const Scenario& s) {
  std::vector<reports::ShapeNode> out;
  for (const TreeNode& t : s.trees) out.push_back(shape(t, "/" + t.spec.id));
  return out;
}

reports::RunReport make_report(const Scenario& s, const RunResult& r, const std::string& file,
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
  rep.stopped = r.stopped;
  for (const CheckResult& c : r.checks) rep.checks.push_back({c.name, c.passed, c.detail, c.witness, c.kind, c.roles, c.margin, c.judged});
  rep.metrics = r.metrics;
  for (const faults::Injector::Tally& f : r.faults) {
    rep.faults.push_back({f.name, f.kind, f.injected, f.skipped});
    for (const faults::Fault& x : s.faults)
      if (x.name == f.name) rep.faults.back().window = x.duration;
  }
  rep.reproduce = reproduce;
  rep.trees = tree_shapes(s);
  rep.trace = &r.kept_events();
  if (r.stream != nullptr) {
    rep.line_flow = r.stream->line_flow();
    rep.message_flows = r.stream->message_flows();
    rep.trace_file = r.stream->trace_file();
  }
  rep.final_supervisors = r.final_state.supervisors;
  rep.final_lifecycles = r.final_state.lifecycles;
  rep.starts = r.final_state.starts;
  rep.alive = r.final_state.alive;
  return rep;
}

reports::ReportSelection selection(const ReportSet& set) {
  reports::ReportSelection sel;
  sel.trace = set.trace;
  sel.tree = set.tree;
  sel.timeline = set.timeline;
  sel.perfetto = set.perfetto;
  sel.junit = set.junit;
  sel.summary = set.summary;
  sel.html = set.html;
  return sel;
}

std::vector<std::string> write_run_reports(const Scenario& s, const RunResult& r, const std::string& file,
                                           const std::optional<Time>& until, const std::string& reproduce,
                                           const std::filesystem::path& dir) {
  reports::RunReport rep = make_report(s, r, file, reproduce);
  // The header re-serialises the whole scenario: only for a trace.jsonl that is written.
  if (s.reports.trace && rep.trace_file == nullptr) rep.trace_header = trace_header(s, r.seed, r.tie_break, until, file);
  return reports::write_reports(rep, dir, selection(s.reports));
}

}  // namespace lic::scenarios
