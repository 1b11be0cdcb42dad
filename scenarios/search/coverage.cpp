#include "scenarios/search/coverage.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "reports/escape.hpp"
#include "sim/trace_keys.hpp"
#include "supervision/backoff.hpp"
#include "supervision/events.hpp"

namespace lic::scenarios {

namespace {

using Json = nlohmann::ordered_json;

/// Each supervisor's path with its strategy, each lifecycle service by id with its policy.
struct TreeFacts {
  std::map<std::string, supervision::Strategy> strategies;
  std::map<std::string, supervision::BackoffPolicy> policies;
  std::set<std::size_t> depths;  ///< of the supervisors (a root: 0)
  bool lifecycle = false;
  bool significant = false;  ///< a child whose end may end its supervisor (auto_shutdown)
};

void walk(const TreeNode& t, const std::string& path, std::size_t depth, TreeFacts& f) {
  if (t.kind == TreeNode::Kind::worker) return;
  f.depths.insert(depth);
  if (t.kind == TreeNode::Kind::lifecycle) {
    f.lifecycle = true;
    for (const ServiceDecl& s : t.services) f.policies[s.name] = s.restart;
    return;
  }
  f.strategies[path] = t.flags.strategy;
  if (t.flags.auto_shutdown != supervision::AutoShutdown::never) f.significant = true;
  for (const TreeNode& c : t.children) walk(c, path + "/" + c.spec.id, depth + 1, f);
}

TreeFacts facts(const Scenario& s) {
  TreeFacts f;
  for (const TreeNode& t : s.trees) walk(t, "/" + t.spec.id, 0, f);
  return f;
}

std::size_t depth_of(std::string_view path) {
  return static_cast<std::size_t>(std::max<std::ptrdiff_t>(0, std::count(path.begin(), path.end(), '/') - 1));
}

std::string restart_outcome(supervision::Strategy s) { return fmt::format("restart under {}", supervision::to_string(s)); }
std::string gave_up_outcome(std::size_t depth) {
  return depth == 0 ? std::string("gave up at a root (depth 0)") : fmt::format("gave up at depth {}", depth);
}
const char* const kKilled = "shutdown timeout ran out: killed";
const char* const kAutoShutdown = "auto_shutdown";
const char* const kStartFailed = "a start failed (restart retried)";
const char* const kBackoffCap = "lifecycle backoff at its cap";
const char* const kServiceGaveUp = "lifecycle service gave up";

/// The outcome one supervisor event stands for, or "".
std::string outcome_of(const TraceEvent& e, const TreeFacts& f) {
  const std::string path(e.label.name.text());
  if (e.name == supervision::events::kChildTerminated) {
    const auto st = f.strategies.find(path);
    return st == f.strategies.end() ? std::string() : restart_outcome(st->second);
  }
  if (e.name == supervision::events::kReachedMax || e.name == supervision::events::kServiceGaveUp) {
    const std::string depth = gave_up_outcome(depth_of(path));
    return e.name == supervision::events::kReachedMax ? depth : std::string(kServiceGaveUp);
  }
  if (e.name == supervision::events::kShutdownError) return e.text(keys::kReason) == "killed" ? kKilled : "";
  if (e.name == supervision::events::kAutoShutdown) return kAutoShutdown;
  if (e.name == supervision::events::kStartError) return kStartFailed;
  if (e.name == supervision::events::kServiceRetry) {
    const auto p = f.policies.find(e.text(keys::kId));
    const std::int64_t* attempt = e.field<std::int64_t>(keys::kAttempt);
    if (p != f.policies.end() && attempt != nullptr &&
        supervision::backoff_base(p->second, static_cast<std::uint32_t>(*attempt)) >= p->second.max_delay)
      return kBackoffCap;
  }
  return {};
}

}  // namespace

std::vector<std::string> behaviours_in(const Scenario& s) {
  std::set<std::string> names;
  const auto walk_tree = [&names](const TreeNode& t, const auto& self) -> void {
    if (!t.behaviour.name.empty()) names.insert(t.behaviour.name);
    for (const TreeNode& c : t.children) self(c, self);
    for (const ServiceDecl& sv : t.services)
      if (!sv.behaviour.name.empty()) names.insert(sv.behaviour.name);
  };
  for (const TreeNode& t : s.trees) walk_tree(t, walk_tree);
  for (const Step& st : s.script)
    if (st.child) walk_tree(*st.child, walk_tree);
  return {names.begin(), names.end()};
}

std::vector<std::string> outcomes_reached(const Scenario& s, const RunResult& r) {
  const TreeFacts f = facts(s);
  std::set<std::string> out;
  for (const TraceEvent& e : r.sim->trace().events().only({EventKind::system})) {
    if (std::string o = outcome_of(e, f); !o.empty()) out.insert(std::move(o));
  }
  return {out.begin(), out.end()};
}

std::vector<std::string> outcomes_possible(const Scenario& s) {
  const TreeFacts f = facts(s);
  std::set<std::string> out{kKilled, kStartFailed};
  for (const auto& [path, strategy] : f.strategies) out.insert(restart_outcome(strategy));
  for (std::size_t d : f.depths) out.insert(gave_up_outcome(d));
  if (f.significant) out.insert(kAutoShutdown);
  if (f.lifecycle) out.insert({kBackoffCap, kServiceGaveUp});
  return {out.begin(), out.end()};
}

void record_coverage(const Scenario& s, const RunResult& run, SeedResult& r) {
  std::map<std::string, FaultUse> by_name;
  for (const faults::Injector::Tally& t : run.faults) by_name[t.name] = FaultUse{t.name, true, t.injected, t.skipped};
  Scenario named = s;
  name_faults(named);
  for (const faults::Fault& f : named.faults) {
    const auto it = by_name.find(f.name);
    r.faults.push_back(it != by_name.end() ? it->second : FaultUse{f.name, false, 0, 0});
  }
  for (const auto& [name, c] : run.buggify) r.buggify[name] = PointUse{c.evaluated, c.fired};
  r.reached = outcomes_reached(s, run);
  for (const CheckResult& c : run.checks)
    if (c.judged) r.judged.push_back(c.name);  // a check the run gave nothing to judge counts as not judged
}

Coverage::Coverage(const Scenario& s, const Registry& registry) {
  Scenario named = s;
  name_faults(named);
  for (const faults::Fault& f : named.faults) faults_.push_back(FaultRow{f.name});
  for (const BuggifyPoint& p : registry.buggify_points(behaviours_in(s))) points_.push_back(PointRow{p.name});
  for (const std::string& o : outcomes_possible(s)) outcomes_[o] = 0;
  pinned_ = s.buggify;
}

void Coverage::add(const SeedResult& r) {
  ++seeds_;
  for (const FaultUse& u : r.faults) {
    auto row = std::find_if(faults_.begin(), faults_.end(), [&](const FaultRow& x) { return x.name == u.name; });
    if (row == faults_.end()) continue;
    row->on += u.on ? 1 : 0;
    row->acted += u.injected > 0 ? 1 : 0;
    row->injected += u.injected;
  }
  for (PointRow& p : points_) {
    const bool on = std::count(pinned_.begin(), pinned_.end(), p.name) != 0 ||
                    (r.swarm && std::count(r.swarm->buggify.begin(), r.swarm->buggify.end(), p.name) != 0);
    p.on += on ? 1 : 0;
    const auto u = r.buggify.find(p.name);
    if (u == r.buggify.end()) continue;
    p.fired += u->second.fired > 0 ? 1 : 0;
    p.hits += u->second.fired;
  }
  for (const std::string& name : r.judged) {
    auto row = std::find_if(checks_.begin(), checks_.end(), [&](const CheckRow& x) { return x.name == name; });
    if (row == checks_.end()) row = checks_.insert(checks_.end(), CheckRow{name});
    const bool failed = std::count(r.failed.begin(), r.failed.end(), name) != 0;
    (failed ? row->failed : row->passed) += 1;
  }
  for (const std::string& o : r.reached) ++outcomes_[o];
}

std::uint64_t Coverage::not_judged(const CheckRow& c) const { return seeds_ - c.passed - c.failed; }

std::string Coverage::json() const {
  Json j;
  j["seeds"] = seeds_;
  j["faults"] = Json::array();
  for (const FaultRow& f : faults_) j["faults"].push_back({{"name", f.name}, {"on", f.on}, {"acted", f.acted}, {"injected", f.injected}});
  j["buggify"] = Json::array();
  for (const PointRow& p : points_) j["buggify"].push_back({{"name", p.name}, {"on", p.on}, {"fired", p.fired}, {"hits", p.hits}});
  j["checks"] = Json::array();
  for (const CheckRow& c : checks_)
    j["checks"].push_back({{"name", c.name}, {"passed", c.passed}, {"failed", c.failed}, {"not_judged", not_judged(c)}});
  j["outcomes"] = Json::object();
  for (const auto& [o, n] : outcomes_) j["outcomes"][o] = n;
  return j.dump(2, ' ', false, Json::error_handler_t::replace);
}

std::string Coverage::text() const {
  std::string out = fmt::format("coverage over {} seeds:\n  faults (seeds on / seeds it acted in / injections):\n", seeds_);
  for (const FaultRow& f : faults_)
    out += fmt::format("    {:<28} {:>6} {:>6} {:>8}{}\n", f.name, f.on, f.acted, f.injected, f.acted == 0 ? "   never acted" : "");
  if (!points_.empty()) out += "  buggify points (seeds on / seeds it fired in / hits):\n";
  for (const PointRow& p : points_)
    out += fmt::format("    {:<28} {:>6} {:>6} {:>8}{}\n", p.name, p.on, p.fired, p.hits, p.fired == 0 ? "   never fired" : "");
  out += "  checks (passed / failed / not judged):\n";
  for (const CheckRow& c : checks_) out += fmt::format("    {:<28} {:>6} {:>6} {:>6}\n", c.name, c.passed, c.failed, not_judged(c));
  out += "  supervision outcomes (seeds that reached it):\n";
  for (const auto& [o, n] : outcomes_) out += fmt::format("    {:<40} {:>6}{}\n", o, n, n == 0 ? "   never reached" : "");
  return out;
}

std::string Coverage::html(const std::string& title) const {
  const auto esc = [](const std::string& t) { return reports::xml_escape(t); };
  const auto row = [](const std::vector<std::string>& cells, bool zero) {
    std::string r = zero ? "<tr class=\"zero\">" : "<tr>";
    for (const std::string& c : cells) r += "<td>" + c + "</td>";
    return r + "</tr>\n";
  };
  std::string h = "<!doctype html><meta charset=\"utf-8\"><title>coverage: " + esc(title) +
                  "</title><style>body{font-family:sans-serif;margin:2em}td,th{padding:2px 10px;text-align:left}"
                  "tr.zero{color:#b00}</style>\n<h1>Coverage: " + esc(title) + "</h1>\n<p>" + std::to_string(seeds_) +
                  " seeds. Red rows: never tried.</p>\n<h2>Faults</h2><table><tr><th>fault</th><th>seeds on</th><th>seeds it acted in</th><th>injections</th></tr>\n";
  for (const FaultRow& f : faults_)
    h += row({esc(f.name), std::to_string(f.on), std::to_string(f.acted), std::to_string(f.injected)}, f.acted == 0);
  h += "</table>\n<h2>Buggify points</h2><table><tr><th>point</th><th>seeds on</th><th>seeds it fired in</th><th>hits</th></tr>\n";
  for (const PointRow& p : points_) h += row({esc(p.name), std::to_string(p.on), std::to_string(p.fired), std::to_string(p.hits)}, p.fired == 0);
  h += "</table>\n<h2>Checks</h2><table><tr><th>check</th><th>passed</th><th>failed</th><th>not judged</th></tr>\n";
  for (const CheckRow& c : checks_)
    h += row({esc(c.name), std::to_string(c.passed), std::to_string(c.failed), std::to_string(not_judged(c))}, false);
  h += "</table>\n<h2>Supervision outcomes</h2><table><tr><th>outcome</th><th>seeds that reached it</th></tr>\n";
  for (const auto& [o, n] : outcomes_) h += row({esc(o), std::to_string(n)}, n == 0);
  return h + "</table>\n";
}

}  // namespace lic::scenarios
