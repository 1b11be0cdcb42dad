#include "scenarios/checks/table.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "properties/availability.hpp"
#include "properties/conservation.hpp"
#include "scenarios/checks/model.hpp"
#include "supervision/events.hpp"

namespace lic::scenarios {

namespace {

using supervision::events::kReachedMax;

__extension__ typedef unsigned __int128 Wide;  // exact products of nanoseconds and ratio terms

std::string join(const std::vector<std::string>& v, std::size_t cap = 5) {
  std::string s;
  for (std::size_t i = 0; i < v.size() && i < cap; ++i) s += (i == 0 ? "" : "; ") + v[i];
  if (v.size() > cap) s += fmt::format("; and {} more", v.size() - cap);
  return s;
}

/// Supervisors that gave up (reached their restart intensity), in trace order, each once.
std::vector<std::string> escalations(const EventLog& log) {
  std::vector<std::string> out;
  for (const TraceEvent& e : log) {
    if (e.kind == EventKind::system && e.name == kReachedMax) {
      std::string p(e.label.name.text());
      if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
    }
  }
  return out;
}

bool is_root(const CheckInput& in, const std::string& p) {
  return std::find(in.roots.begin(), in.roots.end(), p) != in.roots.end();
}

CheckResult escalation_check(const CheckDecl& c, const CheckInput& in, bool expected) {
  const std::vector<std::string> gave_up = escalations(*in.events);
  std::vector<std::string> roots;
  for (const std::string& p : gave_up) {
    if (is_root(in, p)) roots.push_back(p);
  }
  CheckResult r{c.name, false, ""};
  const std::string levels = gave_up.empty() ? "no supervisor reached its restart intensity"
                                             : "reached the restart intensity, in order: " + join(gave_up, 10);
  if (expected) {
    r.passed = !roots.empty();
    r.detail = r.passed ? "escalated to the top: " + levels : "the root never gave up; " + levels;
  } else {
    r.passed = roots.empty();
    r.detail = r.passed ? "no root gave up; " + levels : "escalated to the top: " + levels;
  }
  return r;
}

}  // namespace

const std::vector<CheckInfo>& check_catalogue() {
  static const std::vector<CheckInfo> all = {
      {"converges", "after the quiet phase every permanent child runs and no restart is pending", false, false, false},
      {"no_escalation", "no root supervisor reached its restart intensity", false, false, false},
      {"escalates", "a root supervisor reached its restart intensity (the run expects it)", false, false, false},
      {"availability", "the subtree at `of` was up at least `min` of the run", true, true, false},
      {"alive", "a process runs at `of` at the end", true, false, false},
      {"conservation", "every line of the pipeline is stored, dead-lettered or recorded lost, exactly once (seed 000)", false, false, false},
      {"restarts", "the process at `of` was restarted exactly `count` or at most `max` times", true, false, true},
      {"model", "the trace equals the reference model of OTP supervision's prediction, event for event (files inside what the model covers: docs/scenario-format.md)", false, false, false},
  };
  return all;
}

const CheckInfo* find_check(const std::string& name) {
  for (const CheckInfo& c : check_catalogue()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::vector<CheckDecl> effective_checks(const Scenario& s) {
  if (!s.checks.empty()) return s.checks;
  std::vector<CheckDecl> out;
  out.push_back(CheckDecl{s.expect_escalation ? "escalates" : "no_escalation"});
  if (s.quiet && !s.expect_escalation) out.push_back(CheckDecl{"converges"});
  return out;
}

std::vector<CheckResult> run_checks(const std::vector<CheckDecl>& checks, const CheckInput& in) {
  std::vector<CheckResult> out;
  for (const CheckDecl& c : checks) {
    const std::string title = c.of.empty() ? c.name : c.name + "(" + c.of + ")";
    CheckResult r{title, false, ""};
    if (c.name == "converges") {
      if (!in.quiet_ran) {
        r.detail = "the run stopped before the quiet phase ended: convergence was not judged";
      } else if (in.phases.converged) {
        r.passed = true;
        r.detail = in.phases.settled_at
                       ? fmt::format("settled at {} (quiet phase from {})", format_time(*in.phases.settled_at),
                                     format_time(in.phases.chaos_end))
                       : "nothing changed after the chaos phase";
      } else {
        r.detail = "not converged: " + join(in.phases.not_running);
      }
    } else if (c.name == "no_escalation" || c.name == "escalates") {
      r = escalation_check(c, in, c.name == "escalates");
    } else if (c.name == "availability") {
      const properties::Intervals up = properties::subtree_up_intervals(*in.events, c.of, Time{}, in.end);
      const properties::Availability a = properties::measure(up, Time{}, in.end);
      const Ratio min = c.min.value_or(Ratio::never());
      // up / observed >= num / den, exactly, in integers.
      const auto lhs = static_cast<Wide>(a.up.ns) * min.den;
      const auto rhs = static_cast<Wide>(a.observed.ns) * min.num;
      r.passed = a.observed > Duration::zero() && lhs >= rhs;
      r.detail = fmt::format("up {:.4f}% of {} (at least {}); {} failures, MTTR {}", a.availability * 100,
                             format_duration(a.observed), format_ratio(min), a.failures, format_duration(a.mttr));
    } else if (c.name == "conservation") {
      const properties::Conservation k = properties::check_conservation(*in.events);
      r.passed = k.ok && k.emitted.count > 0;
      r.detail = k.emitted.count == 0 ? "no line was emitted (is there a pipeline.reader?)" : properties::describe(k);
    } else if (c.name == "alive") {
      r.passed = std::binary_search(in.alive.begin(), in.alive.end(), c.of);
      r.detail = r.passed ? "running at the end" : "no process at " + c.of + " at the end";
    } else if (c.name == "restarts") {
      const auto it = in.starts.find(c.of);
      const std::int64_t restarts = it == in.starts.end() ? 0 : std::int64_t{it->second} - 1;
      const std::int64_t n = std::max<std::int64_t>(restarts, 0);
      r.passed = (!c.max || n <= *c.max) && (!c.count || n == *c.count);
      std::string want;
      if (c.count) want = fmt::format("exactly {}", *c.count);
      if (c.max) want += fmt::format("{}at most {}", want.empty() ? "" : ", ", *c.max);
      r.detail = fmt::format("{} restart{} ({})", n, n == 1 ? "" : "s", want);
    } else if (c.name == "model") {
      if (in.scenario == nullptr) {
        r.detail = "no scenario to read the tree and script from";
      } else {
        const ModelComparison m = compare_with_model(*in.scenario, *in.events, in.end);
        r.passed = m.equal;
        r.detail = m.detail;
      }
    } else {
      r.detail = "unknown check";
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace lic::scenarios
