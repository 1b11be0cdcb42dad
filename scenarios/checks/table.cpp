#include "scenarios/checks/table.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <fmt/format.h>

#include "properties/availability.hpp"
#include "properties/conservation.hpp"
#include "properties/ingest_conservation.hpp"
#include "scenarios/checks/model.hpp"
#include "scenarios/run/events.hpp"
#include "sim/trace_keys.hpp"
#include "supervision/events.hpp"

namespace lic::scenarios {

namespace {

using supervision::events::kReachedMax;

__extension__ typedef unsigned __int128 Wide;  // exact products of nanoseconds and ratio terms

/// A verdict with its failure kind, roles and margin (run_checks holds a margin to the verdict's
/// side of 0).
Verdict tagged(Verdict v, std::string kind, std::vector<std::string> roles, std::optional<double> margin = std::nullopt) {
  if (!v.passed) {
    v.kind = std::move(kind);
    v.roles = std::move(roles);
  }
  v.margin = margin;
  return v;
}

/// A verdict on a run that gave the check nothing to judge: it holds, and says so.
Verdict not_judged(const std::string& why) {
  Verdict v{true, "not judged: " + why};
  v.judged = false;
  return v;
}

/// How close the roots came to giving up: 1 - the highest root's restarts in its window over its
/// intensity (0 at the edge: one restart more and it gives up). None when no root supervisor
/// counts restarts.
std::optional<double> roots_margin(const CheckInput& in) {
  const std::map<std::string, double> peaks = intensity_peaks(in);
  std::optional<double> m;
  for (const std::string& r : in.roots)
    if (const auto it = peaks.find(r); it != peaks.end()) m = std::min(m.value_or(1.0), 1.0 - it->second);
  return m;
}

std::string join(const std::vector<std::string>& v, std::size_t cap = 5) {
  std::string s;
  for (std::size_t i = 0; i < v.size() && i < cap; ++i) s += (i == 0 ? "" : "; ") + v[i];
  if (v.size() > cap) s += fmt::format("; and {} more", v.size() - cap);
  return s;
}

/// Supervisors that gave up (reached their restart intensity), in trace order, each once.
std::vector<std::string> escalations(const EventLog& log) {
  std::vector<std::string> out;
  for (const TraceEvent& e : log.only({EventKind::system}, {kReachedMax})) {
    if (e.kind == EventKind::system && e.name == kReachedMax) {
      std::string p(e.label.name.text());
      if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
    }
  }
  return out;
}

/// The event where a root of `roots` reached its restart intensity (the first), if one did.
std::optional<TraceEvent> root_gave_up_at(const EventLog& log, const std::vector<std::string>& roots) {
  for (const TraceEvent& e : log.only({EventKind::system}, {kReachedMax})) {
    if (e.kind == EventKind::system && e.name == kReachedMax &&
        std::find(roots.begin(), roots.end(), std::string(e.label.name.text())) != roots.end())
      return e;
  }
  return std::nullopt;
}

/// The k-th start (from 1) of the process at `path`: its spawn event.
std::optional<TraceEvent> start_event(const EventLog& log, const std::string& path, std::uint32_t k) {
  for (const TraceEvent& e : log.only({EventKind::spawn})) {
    if (e.kind == EventKind::spawn && e.label.instance == k && e.label.name.text() == path) return e;
  }
  return std::nullopt;
}

/// The last exit of a process at `path` (with `abnormal`, the last that was not clean, or the
/// last of all when none was).
std::optional<TraceEvent> last_exit(const EventLog& log, const std::string& path, bool abnormal = false) {
  std::optional<TraceEvent> last;
  std::optional<TraceEvent> last_abnormal;
  for (const TraceEvent& e : log.only({EventKind::exit})) {
    if (e.kind != EventKind::exit || e.label.name.text() != path) continue;
    last = e;
    if (!e.reason.is_clean()) last_abnormal = e;
  }
  return abnormal && last_abnormal ? last_abnormal : last;
}

/// How a root that is gone at the end ended (a start that failed, an exit from outside), from
/// its last exit in the trace.
/// A root the script stopped, killed or made exit is said so, with the step (issue 34: a
/// scripted `stop: /root` read as if the tree had failed on its own).
std::string root_end(const CheckInput& in, const std::string& root) {
  std::string how = root + " is gone";
  std::string step;  // the last script step aimed at the root
  for (const TraceEvent& e : *in.events) {
    if (e.kind == EventKind::system && e.name == run_events::kScriptStep && e.text(run_events::kTarget) == root)
      step = fmt::format("the script's step `{}: {}` at {}", e.text(run_events::kOp), root, format_time(e.time));
    if (e.kind == EventKind::exit && e.label.name.text() == root)
      how = root + " is gone: it ended " + to_string(e.reason) + (step.empty() ? "" : " after " + step + ", not by giving up");
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
    const std::optional<TraceEvent> top = root_gave_up_at(*in.events, in.roots);
    const std::string top_path = top ? std::string(top->label.name.text()) : std::string();
    const auto at_top = [&](const std::string& detail) -> Verdict {
      return {expected, detail, witness_at(*top, {top_path}, top_path + " reached its restart intensity and gave up")};
    };
    if (expected) {
      if (root_gave_up && top) return at_top("escalated to the top: " + levels);
      return tagged(Verdict{root_gave_up, root_gave_up ? "escalated to the top: " + levels : "the root never gave up; " + levels},
                    "held", {});
    }
    const std::optional<double> margin = roots_margin(in);
    if (root_gave_up && top) return tagged(at_top("escalated to the top: " + levels), "escalated", {top_path}, margin);
    if (root_gave_up) return tagged(Verdict{false, "escalated to the top: " + levels}, "escalated", {}, margin);
    // A root gone another way (its own start failed, say) is not a tree that held either.
    for (const std::string& r : in.roots) {
      if (in.phases.escalated && std::find(in.alive.begin(), in.alive.end(), r) == in.alive.end())
        return tagged(Verdict{false, root_end(in, r) + "; " + levels}, "root_gone", {r});
    }
    return tagged(Verdict{true, "no root gave up; " + levels}, "", {}, margin);
  };
}

Verdict converges(const CheckInput& in) {
  if (!in.quiet_ran) return tagged(Verdict{false, "the run stopped before the quiet phase ended: convergence was not judged"}, "not_judged", {});
  if (!in.phases.converged) {
    Verdict v{false, "not converged: " + join(in.phases.not_running)};
    v.kind = "not_converged";
    // The last exit of the first path not running ("/root/c: a permanent child is not
    // running"): from there it stayed down.
    // ("/root is gone (escalated to the top)"): ids hold no space, and may hold a ':'.
    const std::string first = in.phases.not_running.empty() ? std::string() : in.phases.not_running.front();
    const std::size_t colon = first.find(": ");
    const std::string path = first.substr(0, colon != std::string::npos ? colon : first.find(' '));
    if (!path.empty()) v.roles = {path};
    if (const std::optional<TraceEvent> gone = path.empty() ? std::nullopt : last_exit(*in.events, path, true))
      v.witness = witness_at(*gone, {path}, path + " exited " + to_string(gone->reason) + " and was not running when the quiet phase ended");
    return v;
  }
  return {true, in.phases.settled_at ? fmt::format("settled at {} (quiet phase from {})", format_time(*in.phases.settled_at),
                                                   format_time(in.phases.chaos_end))
                                     : "nothing changed after the chaos phase"};
}

/// What an availability check measured, for the person reading it: the measured share, and
/// beside it seed 000's formula A = MTBF / (MTBF + MTTR) from the observed cycles with its 95 %
/// interval, and a final outage that was never repaired (it counts in the measured share, not
/// in MTTR).
std::string describe_availability(const properties::Availability& m, const properties::Intervals& up, Time end, Ratio min,
                                  std::size_t instant) {
  std::string d = fmt::format("up {:.4f}% of {} (at least {}); {} failure{}", m.availability * 100, format_duration(m.observed),
                              format_ratio(min), m.failures, m.failures == 1 ? "" : "s");
  if (instant > 0) d += fmt::format(" ({} restarted at the same instant)", instant);
  const auto secs = [](Duration x) { return fmt::format("{:.3f}s", static_cast<double>(x.ns) / 1e9); };
  if (m.failures > 0) d += fmt::format(", MTBF {}", secs(m.mtbf));
  if (m.repairs > 0) {
    const double formula = static_cast<double>(m.mtbf.ns) / static_cast<double>((m.mtbf + m.mttr).ns);
    d += fmt::format(", MTTR {}: MTBF/(MTBF+MTTR) = {:.4f}%", secs(m.mttr), formula * 100);
    d += m.repairs >= 2 ? fmt::format(", 95% interval {:.4f}%..{:.4f}% over {} cycles", m.low * 100, m.high * 100, m.repairs)
                        : std::string(", 1 cycle: no interval");
  }
  if (!up.empty() && up.back().to < end && m.failures > m.repairs)
    d += fmt::format("; an outage from t={} was never repaired ({} to the end)", format_time(up.back().to),
                     format_duration(end - up.back().to));
  else if (up.empty())
    d += "; never up";
  return d;
}

/// The cause of an availability check's longest outage, as its kind and roles: the fault that
/// acted at its start (crash_of PATH, killed PATH, node_down NODE, stopped NODE, cut), else
/// first_start (the subtree had not yet come up), never_repaired (down to the end with no fault
/// at its start) or outage.
void outage_cause(const EventLog& events, const properties::Interval& longest, const properties::Intervals& up, Time end, Verdict& v) {
  std::optional<TraceEvent> cause;
  for (const TraceEvent& e : events) {
    if (e.time > longest.from) break;
    if (e.kind == EventKind::system && e.name == fault_events::kFaultInjected && e.time + kSecond >= longest.from) cause = e;
  }
  if (cause) {
    const std::string kind = cause->text(keys::kKind);
    std::string target = cause->text(keys::kTarget);
    if (target.rfind("node:", 0) == 0) target = target.substr(5);
    if (kind == "crash" || kind == "exit") v.kind = "crash_of", v.roles = {target};
    else if (kind == "kill") v.kind = "killed", v.roles = {target};
    else if (kind == "node_crash") v.kind = "node_down", v.roles = {target};
    else if (kind == "stop_task") v.kind = "stopped", v.roles = {target};
    else if (kind == "pause") v.kind = "paused", v.roles = {target};
    else v.kind = "cut_by_" + kind;
    return;
  }
  if (up.empty() || longest.from == Time{} || up.front().from > longest.from) v.kind = "first_start";
  else if (longest.to == end) v.kind = "never_repaired";
}

CheckJudge availability(Args& a) {
  const std::string of = a.path("of");
  const Ratio min = a.ratio("min");
  return [of, min](const CheckInput& in) {
    const properties::Intervals up = properties::subtree_up_intervals(*in.events, of, Time{}, in.end);
    // A failure restarted at its very instant shows no down time: it still counts as a failure.
    const std::vector<Time> instant = properties::unseen_failures(*in.events, of, up);
    const properties::Availability m = properties::measure(up, Time{}, in.end, instant);
    // up / observed >= num / den, exactly, in integers.
    const auto lhs = static_cast<Wide>(m.up.ns) * min.den;
    const auto rhs = static_cast<Wide>(m.observed.ns) * min.num;
    Verdict v{m.observed > Duration::zero() && lhs >= rhs, describe_availability(m, up, in.end, min, instant.size())};
    // The margin: the measured share's distance to the floor, over what the floor leaves to be down.
    const double floor = static_cast<double>(min.num) / static_cast<double>(min.den);
    const double room = floor < 1 ? 1 - floor : 1;
    v.margin = m.observed > Duration::zero() ? (m.availability - floor) / room : -1.0;
    if (v.passed) return v;
    v.kind = "outage";
    // The longest outage: where most of what was missing went.
    const properties::Intervals down = properties::complement(up, Time{}, in.end);
    const auto longest = std::max_element(down.begin(), down.end(), [](const auto& x, const auto& y) { return x.length() < y.length(); });
    if (longest != down.end()) {
      if (const std::optional<TraceEvent> e = first_at(*in.events, longest->from))
        v.witness = witness_at(*e, {of}, fmt::format("{} down from here for {} (its longest outage{})", of, format_duration(longest->length()),
                                                     longest->to == in.end ? ", never repaired" : ""));
      outage_cause(*in.events, *longest, up, in.end, v);
    } else if (up.empty()) {
      v.kind = "never_up";
    }
    return v;
  };
}

CheckJudge alive(Args& a) {
  const std::string of = a.path("of");
  return [of](const CheckInput& in) {
    if (properties::names_service(*in.events, of)) return service_alive(in, of);
    const bool up = std::binary_search(in.alive.begin(), in.alive.end(), of);
    Verdict v = tagged(Verdict{up, up ? "running at the end" : "no process at " + of + " at the end"}, "not_alive", {of});
    if (const std::optional<TraceEvent> gone = up ? std::nullopt : last_exit(*in.events, of))
      v.witness = witness_at(*gone, {of}, of + " exited " + to_string(gone->reason) + " and was not running again by the end");
    return v;
  };
}

/// What a conservation check allows to be lost: at most `max` (none: any), not counting the
/// losses whose why is in `allowed`.
struct LossBound {
  std::optional<std::int64_t> max;
  std::vector<std::string> allowed;
  bool allows(const std::string& why) const { return std::find(allowed.begin(), allowed.end(), why) != allowed.end(); }
};

/// The pipeline's lines (seed 000): the losses beyond the bound, by why.
Verdict pipeline_conservation(const properties::Conservation& k, const LossBound& bound) {
  std::int64_t beyond = 0;
  for (const auto& [why, lines] : k.lost)
    if (!bound.allows(why)) beyond += static_cast<std::int64_t>(lines.count);
  const bool within = !bound.max || beyond <= *bound.max;
  std::string d = properties::describe(k);
  if (!within) d = fmt::format("{} lines lost beyond the bound (at most {}): {}", beyond, *bound.max, d);
  Verdict v{k.ok && within, d};
  if (k.duplicated.count > 0) v.kind = "duplicated";
  else if (k.unknown.count > 0) v.kind = "unknown_item";
  else if (k.unaccounted.count > 0) v.kind = "unaccounted";
  else if (!within) v.kind = "lost_over_bound";
  // A count's edge lies between max and max + 1 lost: half a line either side of it.
  if (bound.max) v.margin = (static_cast<double>(*bound.max - beyond) + 0.5) / static_cast<double>(*bound.max + 1);
  if (!k.ok) v.margin = -1.0;
  if (within) return v;
  // The loss that went past the bound: the (max + 1)-th that the bound does not allow.
  std::int64_t n = 0;
  for (const properties::LineLoss& l : k.losses) {
    if (bound.allows(l.why) || ++n <= *bound.max) continue;
    v.witness = Witness{l.at.ns, l.event, {std::string(l.label.text())},
                        fmt::format("line {} lost ({}): loss {} of at most {}", l.seq, l.why, n, *bound.max)};
    v.roles = {std::string(l.label.text()), "lost:" + l.why};
    if (!l.to.empty()) v.roles.push_back("to:" + std::string(l.to.text()));
    break;
  }
  return v;
}

/// The ingest server's events (seed 004): every loss beyond the bound named, batch, where, why.
Verdict ingest_conservation(const EventLog& events, const LossBound& bound) {
  const properties::IngestConservation k = properties::check_ingest(events);
  std::int64_t beyond = 0;
  std::vector<std::string> named;
  for (const properties::LostEvents& l : k.lost) {
    if (bound.allows(l.why)) continue;
    beyond += l.events;
    named.push_back(properties::describe(l));
  }
  const bool within = !bound.max || beyond <= *bound.max;
  std::string d = properties::describe(k, within ? 5 : 0);
  if (!within)
    d = fmt::format("{} event{} lost beyond the bound (at most {}): {}; {}", beyond, beyond == 1 ? "" : "s", *bound.max,
                    join(named), d);
  if (k.ok() && k.accepted == 0) return not_judged("the ingest server accepted nothing: " + d);
  Verdict v{k.ok() && within, d};
  if (!k.ok()) v.kind = "violation", v.margin = -1.0;
  else if (!within) v.kind = "lost_over_bound";
  if (bound.max && k.ok()) v.margin = (static_cast<double>(*bound.max - beyond) + 0.5) / static_cast<double>(*bound.max + 1);
  if (within) return v;
  // The batch whose loss went past the bound, at the instant it was lost.
  std::vector<const properties::LostEvents*> in_time;  // k.lost is by batch; the bound is crossed in time
  for (const properties::LostEvents& l : k.lost)
    if (!bound.allows(l.why)) in_time.push_back(&l);
  std::stable_sort(in_time.begin(), in_time.end(), [](const auto* a, const auto* b) { return a->at < b->at; });
  std::int64_t n = 0;
  for (const properties::LostEvents* l : in_time) {
    if ((n += l->events) <= *bound.max) continue;
    if (const std::optional<TraceEvent> e = first_at(events, l->at)) v.witness = witness_at(*e, {l->where}, properties::describe(*l));
    v.roles = {l->where, "lost:" + l->why};
    break;
  }
  return v;
}

/// The loss words conservation knows: the pipeline's and the ingest server's.
const std::vector<std::string>& loss_reasons() {
  static const std::vector<std::string> all{"crashed", "no_receiver", "dead_mailbox", "network", "sink_buffer",
                                            "cancelled", "sigkill", "panic", "dlq_full", "exited"};
  return all;
}

CheckJudge conservation(Args& a) {
  LossBound bound;
  if (a.given("max_lost")) {
    bound.max = a.integer("max_lost");
    if (*bound.max < 0) a.invalid("max_lost", "must be 0 or more");
  }
  if (a.given("allow_lost")) {
    bound.allowed = a.words("allow_lost");
    for (const std::string& w : bound.allowed) {
      if (std::find(loss_reasons().begin(), loss_reasons().end(), w) == loss_reasons().end())
        a.invalid("allow_lost", "unknown loss reason '" + w + "' (the reasons are " + join(loss_reasons(), 20) + ")");
    }
    if (!bound.max) bound.max = 0;  // allowing some reasons bounds the others at none
  }
  return [bound](const CheckInput& in) {
    const properties::Conservation k =
        in.conservation != nullptr ? *in.conservation : properties::check_conservation(*in.events);  // one pass, read twice
    const bool lines = k.emitted.count > 0;
    const bool ingest = properties::has_ingest(*in.events);
    if (!lines && !ingest)
      return not_judged("nothing to conserve: no pipeline line was emitted and no ingest event accepted");
    Verdict v{true, ""};
    v.judged = false;  // judged when either part is
    for (const Verdict& part : {lines ? pipeline_conservation(k, bound) : not_judged(""),
                                ingest ? ingest_conservation(*in.events, bound) : not_judged("")}) {
      v.judged = v.judged || part.judged;
      if (!part.judged) {
        if (part.detail != not_judged("").detail) v.detail += (v.detail.empty() ? "" : " | ") + part.detail;  // a part the run has, with why
        continue;
      }
      v.passed = v.passed && part.passed;
      if (!part.detail.empty()) v.detail += (v.detail.empty() ? "" : " | ") + part.detail;
      if (!v.witness && part.witness) v.witness = part.witness;
      if (!part.passed && v.kind.empty()) v.kind = part.kind, v.roles = part.roles;
      if (part.margin) v.margin = std::min(v.margin.value_or(*part.margin), *part.margin);
    }
    return v;
  };
}

/// `drained`: a task stopped with SIGTERM ended by its own main's clean return, within `within`.
CheckJudge drained(Args& a) {
  const std::optional<Duration> within = a.given("within") ? std::optional<Duration>(a.positive("within")) : std::nullopt;
  return [within](const CheckInput& in) {
    std::map<Atom, Time> since;
    std::map<Atom, Duration> grace;  // each node's SIGKILL delay, from its stop_task fault
    std::vector<std::string> out;
    bool ok = true, any = false;
    std::optional<Witness> first_bad;
    std::string kind;
    std::vector<std::string> roles;
    std::optional<double> margin;
    for (const TraceEvent& e : *in.events) {
      if (e.kind == EventKind::system && e.name == fault_events::kFaultInjected && e.text(keys::kKind) == "stop_task")
        if (const Duration* d = e.field<Duration>(keys::kDelay)) grace[Atom(e.text(keys::kNode))] = *d;
      if (e.kind == EventKind::signal && !e.pid && e.tag == Atom("sigterm")) since.try_emplace(e.node, e.time);
      const bool exit = e.kind == EventKind::task_exit, kill = e.kind == EventKind::signal && !e.pid && e.tag == Atom("sigkill");
      const auto it = since.find(e.node);
      if ((!exit && !kill) || it == since.end()) continue;
      any = true;
      const Duration took = e.time - it->second;
      const bool clean = exit && e.reason == Reason::normal() && (!within || took <= *within);
      ok = ok && clean;
      // How much of its time it had left: of `within` when given, else of its grace.
      const auto bound = within ? std::optional<Duration>(*within) : grace.count(e.node) > 0 ? std::optional<Duration>(grace[e.node]) : std::nullopt;
      if (bound && *bound > Duration::zero()) {
        const double left = kill ? -1.0 : static_cast<double>((*bound - took).ns) / static_cast<double>(bound->ns);
        margin = std::min(margin.value_or(left), left);
      }
      if (!clean && kind.empty()) {
        kind = kill ? "grace_exceeded" : exit && e.reason == Reason::normal() ? "late" : "crashed";
        roles = {std::string(e.node.text())};
      }
      out.push_back(fmt::format("{} {} {:.3f}s after SIGTERM (at t={})", e.node.text(),
                                kill ? "was killed (SIGKILL)" : exit && e.reason == Reason::normal() ? "exited" : "crashed with " + to_string(e.reason),
                                static_cast<double>(took.ns) / 1e9, format_time(e.time)));
      if (!clean && !first_bad) first_bad = witness_at(e, {std::string(e.node.text())}, out.back());
      since.erase(it);
    }
    for (const auto& [node, t] : since) {
      ok = false;
      out.push_back(fmt::format("{} still running {} after SIGTERM", node.text(), format_duration(in.end - t)));
      if (kind.empty()) kind = "still_running", roles = {std::string(node.text())};
    }
    if (!any && since.empty()) return not_judged("no task was sent SIGTERM (stop_task)");
    return tagged(Verdict{ok, join(out, 10) + (within ? fmt::format(" (within {})", format_duration(*within)) : ""), first_bad},
                  kind, roles, margin);
  };
}

/// `no_panic`: no process (under `under`) ended with an uncaught error that no fault injected:
/// Go's panic ("send on closed channel"), a raised exception. A panic that took nothing else down
/// fails it too (net/http recovers a handler's). Kind: the panic's text; role: the path.
CheckJudge no_panic(Args& a) {
  const std::string under = a.given("under") ? a.path("under") : std::string();
  return [under](const CheckInput& in) {
    std::set<std::uint64_t> not_own;  // pids a crash or exit fault hit, or a linked one's end took down
    std::map<std::string, std::size_t> texts;  // each panic's text, how often
    std::size_t n = 0;
    std::optional<Witness> first;
    std::string kind;
    std::vector<std::string> roles;
    for (const TraceEvent& e : *in.events) {
      if (e.kind == EventKind::system && e.name == fault_events::kFaultInjected) {
        if (const Pid* p = e.field<Pid>(keys::kPid)) not_own.insert(p->id);
        continue;
      }
      // A process that died of a linked one's exit signal did not panic itself: it ends with the
      // same reason, after the one that did.
      if (e.kind == EventKind::exit_signal && e.tag == Atom("died")) not_own.insert(e.pid.id);
      if (e.kind != EventKind::exit || e.reason.kind != ReasonKind::error || not_own.count(e.pid.id) != 0) continue;
      const std::string path(e.label.name.text());
      if (!under.empty() && path != under && !path.starts_with(under + "/")) continue;
      const std::string text(e.reason.detail.text());
      ++n;
      ++texts[text];
      if (!first) {
        const std::string who = path.empty() ? fmt::format("pid {}", e.pid.id) : path;
        first = witness_at(e, {who}, fmt::format("{} panicked: {}", who, text));
        kind = text;
        roles = {who};
      }
    }
    const std::string where = under.empty() ? "" : " under " + under;
    if (n == 0) return Verdict{true, "no process" + where + " panicked"};
    std::vector<std::string> parts;
    for (const auto& [text, count] : texts) parts.push_back(fmt::format("{} x {}", count, text));
    return tagged(Verdict{false, fmt::format("{} process{}{} panicked: {}; the first: {}", n, n == 1 ? "" : "es", where,
                                             join(parts, 5), first->why),
                          first},
                  kind, roles);
  };
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
    Verdict v{(!max || n <= *max) && (!count || n == *count), fmt::format("{} restart{} ({})", n, n == 1 ? "" : "s", want)};
    v = tagged(std::move(v), max && n > *max ? "too_many" : "not_exactly", {of},
               max ? std::optional<double>((static_cast<double>(*max - n) + 0.5) / static_cast<double>(*max + 1)) : std::nullopt);
    // Too many: the restart past the limit (start limit + 2: the first start is not a restart).
    const std::optional<std::int64_t> limit = max ? max : count;
    if (!v.passed && limit && n > *limit) {
      if (const std::optional<TraceEvent> e = start_event(*in.events, of, static_cast<std::uint32_t>(*limit + 2)))
        v.witness = witness_at(*e, {of}, fmt::format("restart {} of {} (the limit is {})", *limit + 1, of, *limit));
    }
    return v;
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

Witness witness_at(const TraceEvent& e, std::vector<std::string> processes, std::string why) {
  return Witness{e.time.ns, e.seq, std::move(processes), std::move(why)};
}

std::optional<TraceEvent> first_at(const EventLog& log, Time t) {
  // Binary search by index (the log's iterator yields values: the standard algorithms would step
  // through it one event at a time).
  std::size_t lo = 0, hi = log.size();
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (log[mid].time < t) lo = mid + 1;
    else hi = mid;
  }
  if (lo == log.size()) return std::nullopt;
  return log[lo];
}

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
                  "every input is accounted for exactly once, with every loss named by where and why: the pipeline's "
                  "lines (seed 000: stored, dead-lettered or lost) and the ingest server's events (seed 004: uploaded, "
                  "in the DLQ or lost); with max_lost or allow_lost, losses beyond the bound fail it",
                  {{"max_lost", "int", "", "at most this many lost (beyond those allow_lost allows)", true},
                   {"allow_lost", "list", "", "loss reasons that do not count: crashed, no_receiver, dead_mailbox, network, "
                                              "sink_buffer, cancelled, sigkill, panic, dlq_full, exited", true}},
                  conservation});
  r.push_back(CheckInfo{"drained", "a task stopped with SIGTERM (stop_task) exited by itself, cleanly (its main returned), "
                                   "within `within` when given, never killed",
                        {{"within", "duration", "", "at most this long after SIGTERM", true}},
                        drained});
  r.push_back(CheckInfo{"no_panic",
                        "no process ended with an uncaught error that no fault injected (Go's panic, a raised "
                        "exception), also one that took nothing else down (net/http recovers a handler's panic)",
                        {{"under", "path", "", "only processes at this path or under it", true}},
                        no_panic});
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
