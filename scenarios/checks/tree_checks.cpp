// Checks and metrics about the supervision trees themselves (issue 20): shutdowns cut short,
// services and supervisors that gave up, and how close each supervisor came to its restart
// intensity. Registered like a user's own (Registry::add).

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "properties/availability.hpp"
#include "scenarios/checks/table.hpp"
#include "supervision/events.hpp"
#include "supervision/restart_intensity.hpp"
#include "sim/trace_keys.hpp"

namespace lic::scenarios {

namespace {

namespace ev = supervision::events;

const Atom kKilled("killed");

/// Every node of the file's trees by path (roots, their children, start_child steps' children).
class TreeIndex {
 public:
  explicit TreeIndex(const Scenario* s) {
    if (s == nullptr) return;
    for (const TreeNode& t : s->trees) add(t, "/" + t.spec.id);
    for (const Step& st : s->script)
      if (st.child) add(*st.child, st.target + "/" + st.child->spec.id);
  }
  const TreeNode* find(const std::string& path) const {
    const auto it = nodes_.find(path);
    return it == nodes_.end() ? nullptr : it->second;
  }
  /// A dynamic child (<sup>/<template>.<n>): its template.
  const TreeNode* find_or_template(const std::string& path) const {
    if (const TreeNode* t = find(path)) return t;
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) return nullptr;
    const TreeNode* sup = find(path.substr(0, slash));
    return sup != nullptr && sup->kind == TreeNode::Kind::supervisor && sup->children.size() == 1 ? &sup->children.front() : nullptr;
  }
  const std::map<std::string, const TreeNode*>& all() const { return nodes_; }

 private:
  void add(const TreeNode& t, const std::string& path) {
    nodes_[path] = &t;
    for (const TreeNode& c : t.children) add(c, path + "/" + c.spec.id);
  }
  std::map<std::string, const TreeNode*> nodes_;
};

bool within(const std::string& path, const std::string& scope) {
  return scope.empty() || path == scope || path.rfind(scope + "/", 0) == 0;
}

std::string join(const std::vector<std::string>& v, std::size_t cap = 5) {
  std::string s;
  for (std::size_t i = 0; i < v.size() && i < cap; ++i) s += (i == 0 ? "" : "; ") + v[i];
  if (v.size() > cap) s += fmt::format("; and {} more", v.size() - cap);
  return s;
}

// ---- clean_shutdown -----------------------------------------------------------------------------

/// A child its supervisor had to kill: the shutdown timeout ran out (OTP reports
/// shutdown_error {killed} for a child that is not brutal_kill).
struct CutShort {
  std::string child, supervisor;
  Time asked{}, killed{};
  std::optional<Duration> timeout;
  TraceEvent event;  ///< the shutdown_error that says it was killed
};

std::vector<CutShort> cut_short(const CheckInput& in, const std::string& scope) {
  const TreeIndex tree(in.scenario);
  std::map<Pid, std::string> label;                  // pid -> its path
  std::map<std::pair<Pid, Pid>, Time> asked;         // {child, supervisor} -> the shutdown signal
  std::vector<CutShort> out;
  for (const TraceEvent& e : *in.events) {
    if (e.kind == EventKind::spawn) label[e.pid] = std::string(e.label.name.text());
    if (e.kind == EventKind::exit_signal && e.reason == Reason::shutdown()) asked[{e.pid, e.other}] = e.time;
    if (e.kind != EventKind::system || e.name != ev::kShutdownError || e.text(keys::kReason) != "killed") continue;
    const Pid* child = e.field<Pid>(keys::kPid);
    const std::string sup(e.label.name.text());
    const std::string path = child != nullptr && label.contains(*child) ? label[*child] : sup + "/" + e.text(keys::kId);
    if (!within(path, scope)) continue;
    CutShort c{path, sup, e.time, e.time, std::nullopt, e};
    if (child != nullptr)
      if (const auto it = asked.find({*child, e.pid}); it != asked.end()) c.asked = it->second;
    if (const TreeNode* t = tree.find_or_template(path); t != nullptr && t->spec.shutdown.kind == supervision::Shutdown::Kind::timeout)
      c.timeout = t->spec.shutdown.timeout;
    out.push_back(c);
  }
  return out;
}

CheckJudge clean_shutdown(Args& a) {
  const std::string of = a.given("of") ? a.path("of") : std::string();
  return [of](const CheckInput& in) {
    const std::vector<CutShort> cut = cut_short(in, of);
    std::vector<std::string> what;
    for (const CutShort& c : cut) {
      what.push_back(fmt::format("{} was killed at t={} by {}: its shutdown timeout{} ran out after {} stopping (its clean-up never ran)",
                                 c.child, format_time(c.killed), c.supervisor,
                                 c.timeout ? " of " + format_duration(*c.timeout) : std::string(),
                                 format_duration(c.killed - c.asked)));
    }
    const std::string where = of.empty() ? "" : " under " + of;
    if (cut.empty()) return Verdict{true, "every child asked to stop" + where + " stopped within its shutdown timeout"};
    Verdict v{false, fmt::format("{} shutdown{} cut short{}: {}", cut.size(), cut.size() == 1 ? "" : "s", where, join(what)),
              witness_at(cut.front().event, {cut.front().child, cut.front().supervisor},
                         fmt::format("{} killed {}: its shutdown timeout ran out", cut.front().supervisor, cut.front().child))};
    v.kind = "cut_short";
    v.roles = {cut.front().child};
    return v;
  };
}

// ---- never_gives_up -----------------------------------------------------------------------------

std::map<std::string, double> peaks_in_window(const CheckInput& in);
std::map<std::string, double> attempt_peaks(const CheckInput& in);

CheckJudge never_gives_up(Args& a) {
  const std::string of = a.supervisor_path("of");
  return [of](const CheckInput& in) {
    const TreeIndex tree(in.scenario);
    const TreeNode* node = tree.find(of);
    const bool service = node == nullptr || properties::names_service(*in.events, of);
    for (const TraceEvent& e : in.events->only({EventKind::system})) {
      if (e.kind != EventKind::system) continue;
      const std::string label(e.label.name.text());
      if (e.name == ev::kServiceGaveUp && label + "/" + e.text(keys::kId) == of) {
        Verdict v{false, fmt::format("{} gave up for good at t={} ({}, after attempt {})", of, format_time(e.time), e.text(keys::kWhy),
                                     e.field<std::int64_t>(keys::kAttempt) ? *e.field<std::int64_t>(keys::kAttempt) : 0),
                  witness_at(e, {of}, fmt::format("{} gave up for good ({})", of, e.text(keys::kWhy)))};
        v.kind = "service_gave_up";
        v.roles = {of};
        v.margin = -1.0;
        return v;
      }
      if (e.name == ev::kReachedMax && label == of) {
        Verdict v{false, fmt::format("{} reached its restart intensity at t={} (when {} failed) and gave up", of,
                                     format_time(e.time), e.text(keys::kId)),
                  witness_at(e, {of, of + "/" + e.text(keys::kId)},
                             fmt::format("{} reached its restart intensity when {} failed", of, e.text(keys::kId)))};
        v.kind = "reached_intensity";
        v.roles = {of};
        const auto peaks = peaks_in_window(in);
        const auto it = peaks.find(of);
        v.margin = it != peaks.end() ? 1.0 - it->second : -1.0;
        return v;
      }
    }
    Verdict v{true, fmt::format("{} never gave up", service ? "the service " + of : "the supervisor " + of)};
    // How close it came: 1 - its peak share of the intensity (a supervisor) or of max_attempts (a service).
    const auto peaks = service ? attempt_peaks(in) : peaks_in_window(in);
    if (const auto it = peaks.find(of); it != peaks.end()) v.margin = 1.0 - it->second;
    return v;
  };
}

// ---- intensity peaks ----------------------------------------------------------------------------

/// Whether OTP restarts a child of this restart type that ended so.
bool restarts(supervision::RestartType t, const std::string& reason) {
  if (t == supervision::RestartType::permanent) return true;
  if (t == supervision::RestartType::temporary) return false;
  return reason != "normal" && reason != "shutdown" && reason.rfind("{shutdown,", 0) != 0;
}

/// Per supervisor path: the most restarts its window held at once, over its intensity. Each
/// incarnation counts afresh (a restarted supervisor starts with an empty window, as in OTP).
/// A restart counts when a child that is restarted ends, and again at each retry after a
/// restart that failed (OTP's try_again_restart adds to the window as a restart does: a
/// `start_error` of an incarnation that has restarted before). A supervisor that reached its
/// intensity peaks above 100 % whatever the window shows (issue 34: a child whose restarts fail
/// made its root give up while the peak read 33 %).
std::map<std::string, double> peaks_in_window(const CheckInput& in) {
  const TreeIndex tree(in.scenario);
  std::map<Pid, supervision::RestartIntensity> windows;
  std::map<std::string, double> peak;
  for (const auto& [path, t] : tree.all())
    if (t->kind == TreeNode::Kind::supervisor) peak[path] = 0;
  for (const TraceEvent& e : in.events->only({EventKind::system}, {ev::kChildTerminated, ev::kStartError, ev::kReachedMax})) {
    if (e.kind != EventKind::system) continue;
    const bool ended = e.name == ev::kChildTerminated;
    if (!ended && e.name != ev::kStartError && e.name != ev::kReachedMax) continue;
    const std::string sup(e.label.name.text());
    const TreeNode* s = tree.find(sup);
    if (s == nullptr || s->kind != TreeNode::Kind::supervisor || s->flags.intensity == 0) continue;
    if (e.name == ev::kReachedMax) {
      peak[sup] = std::max(peak[sup], (s->flags.intensity + 1.0) / s->flags.intensity);
      continue;
    }
    if (ended) {
      const TreeNode* child = tree.find_or_template(sup + "/" + e.text(keys::kId));
      if (child == nullptr || !restarts(child->spec.restart, e.text(keys::kReason))) continue;
    } else if (!windows.contains(e.pid)) {
      continue;  // a child that failed to start in the supervisor's own init: no retry follows
    }
    auto w = windows.try_emplace(e.pid, s->flags.intensity, s->flags.period, s->flags.window).first;
    w->second.add(e.time);
    const double now = static_cast<double>(w->second.in_window()) / s->flags.intensity;
    peak[sup] = std::max(peak[sup], now);
  }
  return peak;
}

/// Per lifecycle service with max_attempts: its most consecutive failed attempts over them.
std::map<std::string, double> attempt_peaks(const CheckInput& in) {
  const TreeIndex tree(in.scenario);
  std::map<std::string, double> peak;
  std::map<std::string, std::uint32_t> most;  // path -> max_attempts
  for (const auto& [path, t] : tree.all())
    for (const ServiceDecl& sv : t->services)
      if (sv.restart.max_attempts > 0) most[path + "/" + sv.name] = sv.restart.max_attempts, peak[path + "/" + sv.name] = 0;
  for (const TraceEvent& e : in.events->only({EventKind::system}, {ev::kServiceRetry, ev::kServiceGaveUp})) {
    if (e.kind != EventKind::system || (e.name != ev::kServiceRetry && e.name != ev::kServiceGaveUp)) continue;
    const std::string path = std::string(e.label.name.text()) + "/" + e.text(keys::kId);
    const auto it = most.find(path);
    const std::int64_t* n = e.field<std::int64_t>(keys::kAttempt);
    if (it == most.end() || n == nullptr) continue;
    peak[path] = std::max(peak[path], static_cast<double>(*n) / it->second);
  }
  return peak;
}

void measure_peaks(const CheckInput& in, reports::Metrics& out) {
  if (in.scenario == nullptr) return;
  for (const auto& [path, p] : peaks_in_window(in)) out["intensity_peak(" + path + ")"] = reports::MetricValue{{p}, false};
  for (const auto& [path, p] : attempt_peaks(in)) out["attempts_peak(" + path + ")"] = reports::MetricValue{{p}, false};
}

CheckJudge intensity_headroom(Args& a) {
  const std::string of = a.supervisor_path("of");
  const Ratio max = a.ratio("max");
  if (!a.failed() && (max.num <= 0 || max.num > max.den)) a.invalid("max", "must be more than 0% and at most 100%");
  return [of, max](const CheckInput& in) {
    const auto peaks = peaks_in_window(in);
    const auto it = peaks.find(of);
    if (it == peaks.end()) return Verdict{false, of + " is not a supervisor of the file's trees", std::nullopt, "not_a_supervisor", {of}};
    const double limit = static_cast<double>(max.num) / static_cast<double>(max.den);
    Verdict v{it->second <= limit, fmt::format("{}'s restarts in its window peaked at {:.0f}% of its intensity (at most {})", of,
                                               it->second * 100, format_ratio(max))};
    v.margin = (limit - it->second) / limit;
    if (!v.passed) v.kind = "over_headroom", v.roles = {of};
    return v;
  };
}

}  // namespace

std::map<std::string, double> intensity_peaks(const CheckInput& in) { return peaks_in_window(in); }

Verdict service_alive(const CheckInput& in, const std::string& path) {
  std::string state = "never registered";
  Time since{};
  std::optional<Time> next;
  std::string gave_up;
  for (const TraceEvent& e : in.events->only({EventKind::system})) {
    if (e.kind != EventKind::system || std::string(e.label.name.text()) + "/" + e.text(keys::kId) != path) continue;
    if (e.name == ev::kServiceState) state = e.text(keys::kTo), since = e.time, next.reset();
    if (e.name == ev::kServiceRetry)
      if (const Duration* d = e.field<Duration>(keys::kDelay)) next = e.time + *d;
    if (e.name == ev::kServiceGaveUp) gave_up = e.text(keys::kWhy);
  }
  if (state == "running") return {true, fmt::format("running at the end (since t={})", format_time(since))};
  if (!gave_up.empty() && state == "failed")
    return {false, fmt::format("failed for good at t={} ({}): it will not be started again", format_time(since), gave_up)};
  if (next) return {false, fmt::format("{} at the end: waiting in backoff, next attempt at t={}", state, format_time(*next))};
  return {false, fmt::format("{} at the end (since t={})", state, format_time(since))};
}

std::vector<CheckInfo> tree_checks() {
  const ArgInfo of{"of", "supervisor path", "", "the supervisor or lifecycle service it is about"};
  std::vector<CheckInfo> r;
  r.push_back(CheckInfo{"clean_shutdown",
                        "no child (under `of`, when given) was killed because its shutdown timeout ran out, and no "
                        "supervisor's shutdown was cut short so: names the child, its timeout, how long it had been "
                        "stopping, and the supervisor that gave the order",
                        {{"of", "path", "", "only this subtree", true}}, clean_shutdown});
  r.push_back(CheckInfo{"never_gives_up",
                        "the lifecycle service or supervisor at `of` never gave up for good (a service's max_attempts or "
                        "terminal error; a supervisor's restart intensity)",
                        {of}, never_gives_up});
  r.push_back(CheckInfo{"intensity_headroom",
                        "the supervisor at `of` never had more than `max` of its intensity's restarts in its window "
                        "(metric intensity_peak(PATH): above 100% it gave up)",
                        {of, {"max", "ratio", "", "the highest acceptable share of the intensity, above 0 and at most 100%"}},
                        intensity_headroom});
  return r;
}

std::vector<MetricInfo> tree_metrics() {
  return {{"intensity_peak(PATH)",
           "per supervisor: the most restarts its window held at once, over its intensity (above 1: it gave up); with it "
           "attempts_peak(PATH) per lifecycle service with max_attempts: its most consecutive failed attempts over them (above "
           "1: it gave up)",
           measure_peaks}};
}

}  // namespace lic::scenarios
