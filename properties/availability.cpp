#include "properties/availability.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

namespace lic::properties {

Intervals normalise(Intervals in) {
  std::erase_if(in, [](const Interval& i) { return !(i.from < i.to); });
  std::sort(in.begin(), in.end(), [](const Interval& a, const Interval& b) { return a.from < b.from; });
  Intervals out;
  for (const Interval& i : in) {
    if (!out.empty() && i.from <= out.back().to) {
      out.back().to = std::max(out.back().to, i.to);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

Intervals intersect(const Intervals& a, const Intervals& b) {
  Intervals out;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const Time from = std::max(a[i].from, b[j].from);
    const Time to = std::min(a[i].to, b[j].to);
    if (from < to) out.push_back({from, to});
    (a[i].to < b[j].to) ? ++i : ++j;
  }
  return normalise(std::move(out));
}

Intervals unite(const Intervals& a, const Intervals& b) {
  Intervals all = a;
  all.insert(all.end(), b.begin(), b.end());
  return normalise(std::move(all));
}

Intervals clip(const Intervals& in, Time from, Time to) {
  return intersect(normalise(in), Intervals{{from, to}});
}

Intervals complement(const Intervals& up, Time from, Time to) {
  Intervals out;
  Time at = from;
  for (const Interval& i : clip(up, from, to)) {
    if (at < i.from) out.push_back({at, i.from});
    at = i.to;
  }
  if (at < to) out.push_back({at, to});
  return out;
}

Duration total(const Intervals& in) {
  Duration d{};
  for (const Interval& i : in) d += i.length();
  return d;
}

Intervals up_intervals(const EventLog& events, const std::string& path, Time from, Time to) {
  static const Atom kChildStarted("child_started");
  static const Atom kPidKey("pid");
  const Atom wanted(path);
  Intervals up;
  std::map<Pid, Time> since;  // live processes at `path` that are past init
  for (const TraceEvent& e : events) {
    if (e.kind == EventKind::system && e.name == kChildStarted) {
      for (const TraceField& f : e.fields()) {
        const Pid* p = std::get_if<Pid>(&f.value);
        if (f.key == kPidKey && p != nullptr) since.emplace(*p, e.time);
      }
    } else if (e.kind == EventKind::exit && e.label.name == wanted) {
      auto it = since.find(e.pid);
      if (it != since.end()) {
        up.push_back({it->second, e.time});
        since.erase(it);
      }
    }
  }
  // Still running at the end: up to `to`. child_started names pids of any path; keep ours only.
  for (const TraceEvent& e : events) {
    if (e.kind != EventKind::spawn || e.label.name != wanted) continue;
    auto it = since.find(e.pid);
    if (it != since.end()) up.push_back({it->second, to});
  }
  return clip(up, from, to);
}

Availability measure(const Intervals& up_in, Time from, Time to, double z) {
  Availability a;
  const Intervals up = clip(up_in, from, to);
  a.observed = to - from;
  a.up = total(up);
  a.availability = a.observed > Duration::zero()
                       ? static_cast<double>(a.up.ns) / static_cast<double>(a.observed.ns)
                       : 0.0;
  // Complete cycles: an up interval that ended (a failure) and the down time that followed it
  // until the next up interval began (a repair).
  std::vector<double> u, c;
  Duration up_sum{}, down_sum{};
  for (std::size_t i = 0; i < up.size(); ++i) {
    if (!(up[i].to < to)) break;
    ++a.failures;
    up_sum += up[i].length();
    if (i + 1 < up.size()) {
      ++a.repairs;
      const Duration down = up[i + 1].from - up[i].to;
      down_sum += down;
      u.push_back(static_cast<double>(up[i].length().ns));
      c.push_back(static_cast<double>((up[i].length() + down).ns));
    }
  }
  if (a.failures > 0) a.mtbf = Duration{up_sum.ns / static_cast<std::int64_t>(a.failures)};
  if (a.repairs > 0) a.mttr = Duration{down_sum.ns / static_cast<std::int64_t>(a.repairs)};
  // Ratio estimator R = mean(U) / mean(C) over n cycles; by the delta method its standard error
  // is sqrt(sum (U_i - R C_i)^2 / (n - 1) / n) / mean(C). It assumes cycles independent and
  // alike (a renewal process), which a supervised worker with Poisson failures is.
  const std::size_t n = u.size();
  if (n >= 2) {
    double su = 0, sc = 0;
    for (std::size_t i = 0; i < n; ++i) su += u[i], sc += c[i];
    const double r = su / sc;
    const double mean_c = sc / static_cast<double>(n);
    double ss = 0;
    for (std::size_t i = 0; i < n; ++i) ss += (u[i] - r * c[i]) * (u[i] - r * c[i]);
    const double se = std::sqrt(ss / static_cast<double>(n - 1) / static_cast<double>(n)) / mean_c;
    a.low = std::max(0.0, r - z * se);
    a.high = std::min(1.0, r + z * se);
  }
  return a;
}

}  // namespace lic::properties
