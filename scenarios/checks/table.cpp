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

/// How a root that is gone at the end ended (a start that failed, an exit from outside), from
/// its last exit in the trace.
std::string root_end(const CheckInput& in, const std::string& root) {
  std::string how = root + " is gone";
  for (const TraceEvent& e : *in.events) {
    if (e.kind == EventKind::exit && e.label.name.text() == root) how = root + " is gone: it ended " + to_string(e.reason);
  }
  return how;
}

CheckJudge escalation(bool expected) {
  return [expected](const CheckInput& in) {
    const std::vector<std::string> gave_up = escalations(*in.events);
    const bool root_gave_up = std::any_of(gave_up.begin(), gave_up.end(), [&](const std::string& p) {
      return std::find(in.roots.begin(), in.roots.end(), p) != in.roots.end();
    });
    const std::string levels = gave_up.empty() ? "no supervisor reached its restart intensity"
                                               : "reached the restart intensity, in order: " + join(gave_up, 10);
    if (expected) {
      return Verdict{root_gave_up, root_gave_up ? "escalated to the top: " + levels : "the root never gave up; " + levels};
    }
    if (root_gave_up) return Verdict{false, "escalated to the top: " + levels};
    // A root gone another way (its own start failed, say) is not a tree that held either.
    for (const std::string& r : in.roots) {
      if (in.phases.escalated && std::find(in.alive.begin(), in.alive.end(), r) == in.alive.end())
        return Verdict{false, root_end(in, r) + "; " + levels};
    }
    return Verdict{true, "no root gave up; " + levels};
  };
}

Verdict converges(const CheckInput& in) {
  if (!in.quiet_ran) return {false, "the run stopped before the quiet phase ended: convergence was not judged"};
  if (!in.phases.converged) return {false, "not converged: " + join(in.phases.not_running)};
  return {true, in.phases.settled_at ? fmt::format("settled at {} (quiet phase from {})", format_time(*in.phases.settled_at),
                                                   format_time(in.phases.chaos_end))
                                     : "nothing changed after the chaos phase"};
}

CheckJudge availability(Args& a) {
  const std::string of = a.path("of");
  const Ratio min = a.ratio("min");
  return [of, min](const CheckInput& in) {
    const properties::Intervals up = properties::subtree_up_intervals(*in.events, of, Time{}, in.end);
    const properties::Availability m = properties::measure(up, Time{}, in.end);
    // up / observed >= num / den, exactly, in integers.
    const auto lhs = static_cast<Wide>(m.up.ns) * min.den;
    const auto rhs = static_cast<Wide>(m.observed.ns) * min.num;
    return Verdict{m.observed > Duration::zero() && lhs >= rhs,
                   fmt::format("up {:.4f}% of {} (at least {}); {} failures, MTTR {}", m.availability * 100,
                               format_duration(m.observed), format_ratio(min), m.failures, format_duration(m.mttr))};
  };
}

CheckJudge alive(Args& a) {
  const std::string of = a.path("of");
  return [of](const CheckInput& in) {
    const bool up = std::binary_search(in.alive.begin(), in.alive.end(), of);
    return Verdict{up, up ? "running at the end" : "no process at " + of + " at the end"};
  };
}

Verdict conservation(const CheckInput& in) {
  const properties::Conservation k = properties::check_conservation(*in.events);
  if (k.emitted.count == 0) return {false, "no line was emitted (is there a pipeline.reader?)"};
  return {k.ok, properties::describe(k)};
}

CheckJudge restarts(Args& a) {
  const std::string of = a.path("of");
  std::optional<std::int64_t> max;
  std::optional<std::int64_t> count;
  if (a.given("max")) max = a.integer("max");
  if (a.given("count")) count = a.integer("count");
  if (!max && !count) a.invalid("give `max` (at most) or `count` (exactly)");
  if (max && *max < 0) a.invalid("max", "must be 0 or more");
  if (count && *count < 0) a.invalid("count", "must be 0 or more");
  return [of, max, count](const CheckInput& in) {
    const auto it = in.starts.find(of);
    const std::int64_t n = std::max<std::int64_t>(it == in.starts.end() ? 0 : std::int64_t{it->second} - 1, 0);
    std::string want;
    if (count) want = fmt::format("exactly {}", *count);
    if (max) want += fmt::format("{}at most {}", want.empty() ? "" : ", ", *max);
    return Verdict{(!max || n <= *max) && (!count || n == *count), fmt::format("{} restart{} ({})", n, n == 1 ? "" : "s", want)};
  };
}

Verdict model(const CheckInput& in) {
  if (in.scenario == nullptr) return {false, "no scenario to read the tree and script from"};
  const ModelComparison m = compare_with_model(*in.scenario, *in.events, in.end);
  return {m.equal, m.detail};
}

/// A check without arguments.
std::function<CheckJudge(Args&)> plain(Verdict (*judge)(const CheckInput&)) {
  return [judge](Args&) -> CheckJudge { return judge; };
}

const ArgInfo kOf{"of", "path", "", "the tree path it is about"};

}  // namespace

std::vector<CheckInfo> builtin_checks() {
  std::vector<CheckInfo> r;
  r.push_back(CheckInfo{"converges", "after the quiet phase every permanent child runs and no restart is pending", {},
                  plain(converges)});
  r.push_back(CheckInfo{"no_escalation", "no root supervisor reached its restart intensity", {},
                  [](Args&) { return escalation(false); }});
  r.push_back(CheckInfo{"escalates", "a root supervisor reached its restart intensity (the run expects it)", {},
                  [](Args&) { return escalation(true); }});
  r.push_back(CheckInfo{"availability", "the subtree at `of` was up at least `min` of the run",
                  {kOf, {"min", "ratio", "", "the least acceptable fraction of the run"}}, availability});
  r.push_back(CheckInfo{"alive", "a process runs at `of` at the end", {kOf}, alive});
  r.push_back(CheckInfo{"conservation",
                  "every line of the pipeline is stored, dead-lettered or recorded lost, exactly once (seed 000)", {},
                  plain(conservation)});
  r.push_back(CheckInfo{"restarts", "the process at `of` was restarted exactly `count` or at most `max` times",
                  {kOf, {"max", "int", "", "at most this many restarts", true},
                   {"count", "int", "", "exactly this many restarts", true}},
                  restarts});
  r.push_back(CheckInfo{"model",
                  "the trace equals the reference model of OTP supervision's prediction, event for event (files "
                  "inside what the model covers: docs/scenario-format.md)",
                  {}, plain(model)});
  return r;
}

std::vector<CheckDecl> effective_checks(const Scenario& s) {
  if (!s.checks.empty()) return s.checks;
  std::vector<CheckDecl> out;
  out.push_back(CheckDecl{s.expect_escalation ? "escalates" : "no_escalation"});
  if (s.quiet && !s.expect_escalation) out.push_back(CheckDecl{"converges"});
  return out;
}

}  // namespace lic::scenarios
