// The leader-election checks and metrics (seed 001; docs/leader-election.md): what a file running
// pg.server and leader.coordinator can ask of a finished run, judged by properties/leader.hpp.
// Registered like a user's own (Registry::add).

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "properties/leader.hpp"
#include "scenarios/behaviours/pg.hpp"
#include "scenarios/checks/table.hpp"

namespace lic::scenarios {

namespace {

namespace pl = properties;

const std::vector<std::string> kNeeds{"pg.server", "leader.coordinator"};

double seconds(Duration d) { return static_cast<double>(d.ns) / 1e9; }


Verdict leader_safety(const CheckInput& in) {
  const pl::LeaderSafety s = pl::check_leader_safety(*in.events);
  if (s.writes == 0) return {false, "no leader write was accepted: nobody led", std::nullopt, "nobody_led"};
  Verdict v{s.ok(), pl::describe(s)};
  if (!v.passed) v.kind = s.unsafe.front().node == s.unsafe.front().holder ? "stale_term" : "stale_write";
  if (!s.unsafe.empty()) {
    const pl::UnsafeWrite& w = s.unsafe.front();
    for (const TraceEvent& e : in.events->only({EventKind::system}, {pl::leader::kWrite})) {
      if (e.time == w.at && e.kind == EventKind::system && e.name == pl::leader::kWrite && e.text(Atom("node")) == w.node) {
        v.witness = witness_at(e, {std::string(e.label.name.text())},
                               w.node == w.holder
                                   ? fmt::format("{} wrote (write {}, {}) under lock session {}, while its session {} held the lock",
                                                 w.node, w.seq, w.loop, w.term, w.held_by)
                                   : fmt::format("{} wrote (write {}, {}) while {}", w.node, w.seq, w.loop,
                                                 w.holder.empty() ? "nobody held the leadership" : w.holder + " held the leadership"));
        break;
      }
    }
  }
  return v;
}

CheckJudge single_leader(Args& a) {
  const Duration max = a.duration("max");
  return [max](const CheckInput& in) {
    const pl::Beliefs b = pl::leader_beliefs(*in.events, in.end);
    if (b.by_node.empty()) return Verdict{false, "no node ever believed it led", std::nullopt, "nobody_led"};
    std::string nodes;
    for (const std::string& n : b.overlap_nodes) nodes += (nodes.empty() ? "" : " and ") + n;
    const std::string what = b.longest_overlap == Duration::zero()
                                 ? "no two nodes ever believed they led at once"
                                 : fmt::format("the longest time two nodes believed they led: {:.3f}s ({}, from t={})",
                                               seconds(b.longest_overlap), nodes, format_time(b.overlap_at));
    Verdict v{b.longest_overlap <= max, fmt::format("{} (at most {})", what, format_duration(max))};
    if (!v.passed) v.kind = "two_leaders";
    if (max > Duration::zero()) {
      const double m = static_cast<double>((max - b.longest_overlap).ns) / static_cast<double>(max.ns);
      v.margin = m;
    }
    if (!v.passed)
      if (const std::optional<TraceEvent> e = first_at(*in.events, b.overlap_at))
        v.witness = witness_at(*e, b.overlap_nodes, fmt::format("{} believed they led at once from here, for {:.3f}s", nodes,
                                                                 seconds(b.longest_overlap)));
    return v;
  };
}

std::string describe(const pl::Failover& f) {
  return fmt::format("{} lost it at t={} ({}){}", f.from, format_time(f.lost), f.cause,
                     f.done() ? fmt::format(", {} acted {:.3f}s later", f.to, seconds(f.took())) : ", nobody took over");
}

/// How long the server's OS may keep a session whose data goes unacknowledged (keepalive does
/// not run meanwhile), from when the data was first sent: the first RTO, then tcp_user_timeout
/// when set, else tcp_retries2's retransmission timeout, every timer as late as Linux's wheel
/// fires it (pg::retransmission_give_up). The largest over the trace's db_start events (none:
/// zero).
Duration tcp_limit(const EventLog& events) {
  std::set<std::pair<std::int64_t, std::int64_t>> settings;  // each server start's, once (a restart repeats them)
  for (const TraceEvent& e : events.only({EventKind::system}, {pl::leader::kStart})) {
    if (e.kind != EventKind::system || e.name != pl::leader::kStart) continue;
    const auto* user = e.field<std::int64_t>(Atom("tcp_user_timeout"));
    const auto* retries = e.field<std::int64_t>(Atom("tcp_retries2"));
    if (user != nullptr && retries != nullptr) settings.insert({*retries, *user});
  }
  Duration out{};
  for (const auto& [retries, user] : settings) out = std::max(out, scenarios::pg::retransmission_give_up(retries, Duration{user}));
  return out;
}

/// How much longer than written a timer can last in true time: a node whose clock runs slow
/// (the slowest drift any clock had in the run) stretches the keepalive, the retransmissions,
/// the retry and the query timeouts alike. 1 when no clock ran slow.
double slowest_clock_stretch(const EventLog& events) {
  std::int64_t slowest = 0;
  for (const TraceEvent& e : events.only({EventKind::clock_change}))
    if (e.kind == EventKind::clock_change) slowest = std::min(slowest, static_cast<std::int64_t>(e.other.id));
  return 1e6 / static_cast<double>(1'000'000 + slowest);
}

CheckJudge failover(Args& a) {
  const std::optional<Duration> within = a.given("within") ? std::optional<Duration>(a.positive("within")) : std::nullopt;
  const std::int64_t min = a.integer("min");
  if (min < 0) a.invalid("min", "must be 0 or more");
  return [within, min](const CheckInput& in) {
    const pl::Leadership l = pl::leadership(*in.events, in.end);
    if (!l.any_write) return Verdict{false, "no leader ever acted", std::nullopt, "nobody_led"};
    const Duration tcp = tcp_limit(*in.events);
    const double stretch = slowest_clock_stretch(*in.events);
    std::optional<double> margin;
    const Duration session_end = std::max(l.keepalive, tcp);  // the old session must end
    std::vector<std::string> late;
    const pl::Failover* first_late = nullptr;
    Duration longest{};
    for (const pl::Failover& f : l.failovers) {
      const Duration bound = within ? *within : Duration{static_cast<std::int64_t>(static_cast<double>((l.bound(f) - l.keepalive + session_end).ns) * stretch)};
      longest = std::max(longest, f.took());
      if (bound > Duration::zero()) {
        const double m = f.done() ? static_cast<double>((bound - f.took()).ns) / static_cast<double>(bound.ns) : -1.0;
        margin = std::min(margin.value_or(m), m);
      }
      if (f.took() <= bound) continue;
      late.push_back(fmt::format("{}, more than {}", describe(f), format_duration(bound)));
      if (first_late == nullptr) first_late = &f;
    }
    const auto n = static_cast<std::int64_t>(l.failovers.size());
    const std::string bound = within ? format_duration(*within)
                                     : fmt::format("the larger of keepalive {} and TCP retransmission {} + retry {} + 2 x query "
                                                   "timeout {} + the time no candidate could reach the database{}",
                                                   format_duration(l.keepalive), format_duration(tcp), format_duration(l.retry),
                                                   format_duration(l.query_timeout),
                                                   stretch > 1 ? fmt::format(", all x {:.3f} for a clock that ran slow", stretch) : "");
    std::string d = fmt::format("{} failover{}, the longest {:.3f}s (bound: {})", n, n == 1 ? "" : "s", seconds(longest), bound);
    if (!late.empty()) d = fmt::format("{} too slow: {}; {}", late.size(), late.front(), d);
    if (n < min) d = fmt::format("only {} leader losses, fewer than {}; {}", n, min, d);
    Verdict v{late.empty() && n >= min, d};
    // Late, and taken by another node; late, and led again by the node that lost it (no other
    // could take over); or nobody led again by the end.
    if (!late.empty()) v.kind = !first_late->done() ? "not_taken_over" : first_late->to == first_late->from ? "retaken_late" : "too_slow";
    // Whether another candidate could reach the database for most of it (the lock held it off)
    // or none could (the cut alone): two bugs, the second no setting of the lock fixes.
    if (!late.empty() && first_late->done())
      v.roles = {first_late->blocked * 2 >= first_late->took() ? "no_candidate_could_reach" : "a_candidate_could_reach"};
    else if (n < min) v.kind = "too_few";
    if (n >= min) v.margin = margin;
    // The first failover too slow: from the instant its leader lost the leadership.
    if (first_late != nullptr)
      if (const std::optional<TraceEvent> e = first_at(*in.events, first_late->lost))
        v.witness = witness_at(*e, first_late->done() ? std::vector<std::string>{first_late->from, first_late->to}
                                                      : std::vector<std::string>{first_late->from},
                               late.front());
    return v;
  };
}

Verdict leader_at_end(const CheckInput& in) {
  if (!in.quiet_ran) return {false, "the run stopped before the quiet phase ended: not judged"};
  const pl::Beliefs b = pl::leader_beliefs(*in.events, in.end);
  if (b.at_end.size() != 1) {
    Verdict v{false, fmt::format("{} nodes believe they lead at the end, not one", b.at_end.size())};
    v.kind = b.at_end.empty() ? "no_leader" : "two_leaders";
    // The last change of anyone's belief: from there on the count stayed wrong.
    std::optional<TraceEvent> last;
    for (const TraceEvent& e : in.events->only({EventKind::system}, {pl::leader::kBelief}))
      if (e.kind == EventKind::system && e.name == pl::leader::kBelief) last = e;
    if (last)
      v.witness = witness_at(*last, b.at_end, fmt::format("the last change of belief; from here {} nodes believed they led", b.at_end.size()));
    return v;
  }
  const std::string& node = b.at_end.front();
  const pl::LeaderSafety s = pl::check_leader_safety(*in.events);
  std::int64_t writes = 0;
  for (const TraceEvent& e : in.events->only({EventKind::system}, {pl::leader::kWrite})) {
    writes += e.time >= in.phases.chaos_end && e.kind == EventKind::system && e.name == pl::leader::kWrite &&
              e.text(Atom("node")) == node;
  }
  const bool unsafe_late = std::any_of(s.unsafe.begin(), s.unsafe.end(), [&](const pl::UnsafeWrite& w) { return w.at >= in.phases.chaos_end; });
  if (writes == 0) return {false, node + " believes it leads at the end but made no accepted write in the quiet phase", std::nullopt, "no_write"};
  if (unsafe_late) {
    Verdict v{false, node + " leads at the end, but the quiet phase saw a write from a node that did not lead"};
    v.kind = "stale_write";
    const auto w = std::find_if(s.unsafe.begin(), s.unsafe.end(), [&](const pl::UnsafeWrite& u) { return u.at >= in.phases.chaos_end; });
    if (const std::optional<TraceEvent> e = first_at(*in.events, w->at))
      v.witness = witness_at(*e, {w->node}, fmt::format("{} wrote (write {}) in the quiet phase while {} led", w->node, w->seq,
                                                        w->holder.empty() ? "nobody" : w->holder));
    return v;
  }
  return {true, fmt::format("{} leads at the end: {} accepted writes in the quiet phase, from it alone", node, writes)};
}

CheckJudge leader_availability(Args& a) {
  const Ratio min = a.ratio("min");
  return [min](const CheckInput& in) {
    const pl::Leadership l = pl::leadership(*in.events, in.end);
    if (!l.any_write) return Verdict{false, "no leader ever acted", std::nullopt, "nobody_led"};
    const pl::Availability m = pl::measure(l.acting, l.first_write, in.end);
    const bool ok = m.availability * static_cast<double>(min.den) >= static_cast<double>(min.num);
    Verdict v{ok, fmt::format("some leader acted {:.4f}% of the run from its first write (at least {}); {} losses, MTTR {}",
                              m.availability * 100, format_ratio(min), l.failovers.size(), format_duration(m.mttr))};
    const double floor = static_cast<double>(min.num) / static_cast<double>(min.den);
    const double mm = (m.availability - floor) / (floor < 1 ? 1 - floor : 1);
    v.margin = mm;
    if (!ok) v.kind = "below_floor";
    return v;
  };
}

std::function<CheckJudge(Args&)> plain(Verdict (*judge)(const CheckInput&)) {
  return [judge](Args&) -> CheckJudge { return judge; };
}

/// failover_s and the availability of "some leader acts" against its predictions.
void measure_leadership(const CheckInput& in, reports::Metrics& out) {
  if (!pl::has_leader_election(*in.events)) return;
  const pl::Leadership l = pl::leadership(*in.events, in.end);
  reports::MetricValue failover_s{{}, true};
  for (const pl::Failover& f : l.failovers) {
    if (!f.done()) continue;
    failover_s.values.push_back(seconds(f.took()));
    // And by what took the leader away: failover_partition_s, failover_reset_s, ...
    reports::MetricValue& by = out["failover_" + f.cause + "_s"];
    by.list = true;
    by.values.push_back(seconds(f.took()));
  }
  out["failover_s"] = failover_s;
  out["leader_losses"] = reports::MetricValue{{static_cast<double>(l.failovers.size())}, false};
  reports::MetricValue stall_s{{}, true};
  for (const pl::Failover& f : l.stalls) stall_s.values.push_back(seconds(f.took()));
  out["leader_stall_s"] = stall_s;
  out["leader_overlap_s"] = reports::MetricValue{{seconds(pl::leader_beliefs(*in.events, in.end).longest_overlap)}, false};
  if (!l.any_write) return;
  const pl::Availability acting = pl::measure(l.acting, l.first_write, in.end);
  const pl::Availability reach = pl::measure(l.reachable, l.first_write, in.end);
  out["leader_availability"] = reports::MetricValue{{acting.availability}, false};
  if (acting.failures > 0)
    out["leader_availability_expected"] =
        reports::MetricValue{{seconds(acting.mtbf) / (seconds(acting.mtbf) + seconds(acting.mttr))}, false};
  out["leader_availability_reachable"] = reports::MetricValue{{reach.availability}, false};
}

}  // namespace

std::vector<CheckInfo> leader_checks() {
  std::vector<CheckInfo> r;
  r.push_back(CheckInfo{"leader_safety",
                        "every leader write the database accepted came from the node holding the lock (or an unexpired "
                        "lease) at that instant, in the database's order; names the two nodes, the overlap and the first "
                        "offending write",
                        {}, plain(leader_safety), kNeeds});
  r.push_back(CheckInfo{"single_leader", "no two nodes believed they led at once for longer than `max`, by default not at all (metric leader_overlap_s)",
                        {{"max", "duration", "0s", "the longest acceptable overlap (default: none at all)"}}, single_leader, kNeeds});
  r.push_back(CheckInfo{"failover",
                        "each loss of the leader (a crash, a cut, a pause, a database restart) was followed by a new "
                        "leadership's first accepted write within `within`, or by default within keepalive + retry + two "
                        "query timeouts + the time no candidate could reach the database; at least `min` losses",
                        {{"within", "duration", "", "at most this long (default: the bound from the settings)", true},
                         {"min", "int", "0", "at least this many leader losses in the run"}},
                        failover, kNeeds});
  r.push_back(CheckInfo{"leader_at_end",
                        "after the quiet phase exactly one node believes it leads and its writes were accepted in the quiet "
                        "phase, no one else's",
                        {}, plain(leader_at_end), kNeeds});
  r.push_back(CheckInfo{"leader_availability", "some leader acted at least `min` of the run from the first leader write",
                        {{"min", "ratio", "", "the least acceptable fraction"}}, leader_availability, kNeeds});
  return r;
}

std::vector<MetricInfo> leader_metrics() {
  return {{"failover_s",
           "leader election: each failover's seconds (loss to the new leadership's first accepted write), and by cause "
           "(failover_node_down_s, failover_partition_s, failover_pause_s, failover_reset_s, failover_restart_s, ...); with it "
           "leader_losses (failovers), leader_stall_s (each loss the leader rode out: seconds until it acted again), leader_overlap_s (the longest time two nodes believed they led), leader_availability (some "
           "leader acted, from the first write), leader_availability_expected (MTBF/(MTBF+MTTR) of the same), "
           "leader_availability_reachable (some candidate could reach the database: the parallel composition's ideal)",
           measure_leadership}};
}

}  // namespace lic::scenarios
