#pragma once
// Measured availability (DESIGN.md §5, issue 4): up/down intervals of a tree path read from the
// trace, and what they give — uptime, observed MTBF and MTTR, A = uptime / time with a
// confidence interval — plus series (all up) and parallel (any up) composition of members.
// Pure functions of the trace; the CLI and the property tests use the same ones.

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "sim/time.hpp"
#include "sim/trace.hpp"

namespace lic::properties {

/// [from, to): half-open, from < to.
struct Interval {
  Time from;
  Time to;
  Duration length() const { return to - from; }
  bool operator==(const Interval&) const = default;
};

/// Sorted, disjoint, non-adjacent intervals (adjacent ones are merged).
using Intervals = std::vector<Interval>;

/// Normalises any list: sorts, drops empty intervals, merges overlapping and adjacent ones.
Intervals normalise(Intervals in);
/// Where both are up: a series composition (a one_for_all group is up when all members are).
Intervals intersect(const Intervals& a, const Intervals& b);
/// Where either is up: a parallel composition (primary + standby).
Intervals unite(const Intervals& a, const Intervals& b);
/// The parts of [from, to) not covered.
Intervals complement(const Intervals& up, Time from, Time to);
/// Clipped to [from, to).
Intervals clip(const Intervals& in, Time from, Time to);
Duration total(const Intervals& in);

/// When the process at `path` (a supervised child: its label's name) was up in [from, to): from
/// its supervisor's `child_started` (init done) to its exit.
Intervals up_intervals(const EventLog& events, const std::string& path, Time from, Time to);

/// up_intervals() of every path at once, in one pass (a report draws thousands of lanes): each
/// path with a supervised process, by its label.
std::map<Atom, Intervals> up_intervals_by_path(const EventLog& events, Time from, Time to);

/// When the lifecycle service at `path` (its supervisor's label + "/" + its name) was up in
/// [from, to): while its `service_state` says running, until it leaves running or its
/// supervisor's process ends.
Intervals service_up_intervals(const EventLog& events, const std::string& path, Time from, Time to);

/// service_up_intervals() of every lifecycle service at once, in one pass: each service that
/// was ever Running, by its path.
std::map<Atom, Intervals> service_up_intervals_by_path(const EventLog& events, Time from, Time to);

/// Whether a `service_state` event names `path` (a lifecycle service rather than a process).
bool names_service(const EventLog& events, const std::string& path);

/// When the whole subtree at `path` was up in [from, to) (a lifecycle service: its
/// service_up_intervals): the process at `path` is up and so is
/// every descendant (a label under `path + "/"`, dynamic children included) that is expected to
/// be running. The process at `path` is up from its supervisor's `child_started` to its exit, or,
/// when the world spawned it (no supervisor reports it), from the end of its init: the first
/// instant after its spawn at which no descendant it started is still in init. A descendant is
/// down from an exit its supervisor reported (`child_terminated`: a permanent child's every exit,
/// another's abnormal one) and from a restart's spawn, until its next `child_started`, or `to`
/// when it never starts again — unless a later start attempt ends cleanly (`ignore`). Leaving on
/// purpose (a temporary or transient child ending normal, shutdown or {shutdown, _}) and being
/// stopped by its supervisor (terminate_child, a group restart, a shutdown) are not failures of
/// their own. One pass over the events, then a sort of the down intervals (docs/availability.md).
Intervals subtree_up_intervals(const EventLog& events, const std::string& path, Time from, Time to);

struct Availability {
  Duration observed{};      ///< to - from
  Duration up{};            ///< total uptime
  std::size_t failures = 0; ///< up intervals that ended before `to`
  std::size_t repairs = 0;  ///< down intervals that ended before `to`
  Duration mtbf{};          ///< mean up interval (the time to failure), zero when none ended
  Duration mttr{};          ///< mean down interval that ended (the time to repair)
  double availability = 0;  ///< up / observed
  /// A confidence interval for the long-run availability MTBF / (MTBF + MTTR), from the
  /// observed cycles (the delta method on the ratio of mean up time to mean cycle time; see
  /// availability.cpp). Wide when few cycles were seen; [0, 1] when fewer than two.
  double low = 0;
  double high = 1;
};

/// The figures of `up` over [from, to); `z` sets the interval's width (1.96: 95 %).
Availability measure(const Intervals& up, Time from, Time to, double z = 1.96);

/// The instants at which a process at `path`, or under it, ended as its supervisor reported
/// (`child_terminated`) while `up` says the subtree stayed up: a restart at the very instant of
/// the failure (an init that takes no time), which no down time shows. In trace order.
std::vector<Time> unseen_failures(const EventLog& events, const std::string& path, const Intervals& up);

/// measure(), with each of `instants` inside an up interval counted as a failure repaired at
/// once: a cycle with no down time (it counts towards MTBF, MTTR and the interval's cycles).
Availability measure(const Intervals& up, Time from, Time to, const std::vector<Time>& instants, double z = 1.96);

}  // namespace lic::properties
