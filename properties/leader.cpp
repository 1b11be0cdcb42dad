#include "properties/leader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace lic::properties {

namespace leader {
const Atom kStart("db_start");
const Atom kSession("db_session");
const Atom kSessionEnd("db_session_end");
const Atom kLock("db_lock");
const Atom kUnlock("db_unlock");
const Atom kLease("db_lease");
const Atom kWrite("db_write");
const Atom kWriteRefused("db_write_refused");
const Atom kCoordinator("coordinator_start");
const Atom kBelief("leader_belief");
const Atom kTakeover("coordinator_takeover");
const Atom kRestart("db_restart");
const Atom kReady("db_ready");
const Atom kVictim("victim");
const Atom kIdle("idle_ns");
const Atom kTaken("taken");
const Atom kSessionKey("session");
const Atom kLockKey("lock");
const Atom kToken("token");
const Atom kLatest("latest");
const Atom kTerm("term");
const Atom kSeq("seq");
const Atom kTable("table");
const Atom kLoop("loop");
const Atom kTtl("ttl");
const Atom kOn("on");
const Atom kVariant("variant");
const Atom kKeepaliveIdle("keepalive_idle");
const Atom kKeepaliveInterval("keepalive_interval");
const Atom kKeepaliveCount("keepalive_count");
const Atom kRetry("retry");
const Atom kQueryTimeout("query_timeout");
const Atom kHeartbeatTimeout("heartbeat_timeout");
}  // namespace leader

namespace {

using namespace leader;

const Atom kNodeKey("node");
const Atom kWhy("why");

std::int64_t num(const TraceEvent& e, Atom key) {
  const std::int64_t* v = e.field<std::int64_t>(key);
  return v == nullptr ? 0 : *v;
}

bool is(const TraceEvent& e, Atom name) { return e.kind == EventKind::system && e.name == name; }

/// The node a db_* event is about (its `node` field: the client's node).
std::string client_node(const TraceEvent& e) { return e.text(kNodeKey); }

/// Who holds each lock and lease, in the database's order; its process ending releases the
/// locks (sessions die with it), not the leases (rows in a table).
class Holders {
 public:
  void read(const TraceEvent& e) {
    if (is(e, kStart) || is(e, kLock) || is(e, kLease)) db_ = e.pid;
    if (e.kind == EventKind::exit && e.pid == db_) locks_.clear();
    if (e.kind != EventKind::system) return;
    const std::int64_t lock = num(e, kLockKey);
    if (e.name == kLock) {
      locks_[lock] = {num(e, kSessionKey), client_node(e)};
    } else if (e.name == kUnlock) {
      const auto it = locks_.find(lock);
      if (it != locks_.end() && it->second.first == num(e, kSessionKey)) locks_.erase(it);
    } else if (e.name == kLease) {
      leases_[lock] = {client_node(e), e.time + Duration{num(e, kTtl)}};
    }
  }

  /// The node leading by `lock` at `at` ("" when none): its lock's holder, or its lease's.
  std::string holder(std::int64_t lock, Time at) const {
    if (const auto it = locks_.find(lock); it != locks_.end()) return it->second.second;
    if (const auto it = leases_.find(lock); it != leases_.end() && at <= it->second.second) return it->second.first;
    return "";
  }
  bool holds(std::int64_t lock, const std::string& node, Time at) const { return !node.empty() && holder(lock, at) == node; }
  /// The session holding `lock` (0: none).
  std::int64_t lock_session(std::int64_t lock) const {
    const auto it = locks_.find(lock);
    return it == locks_.end() ? 0 : it->second.first;
  }

 private:
  Pid db_;
  std::map<std::int64_t, std::pair<std::int64_t, std::string>> locks_;  // lock -> {session, node}
  std::map<std::int64_t, std::pair<std::string, Time>> leases_;         // lock -> {node, until}
};

}  // namespace

bool has_leader_election(const EventLog& events) {
  for (const TraceEvent& e : events.only({EventKind::system}, {kLock, kLease, kCoordinator}))
    if (is(e, kLock) || is(e, kLease) || is(e, kCoordinator)) return true;
  return false;
}

LeaderSafety check_leader_safety(const EventLog& events) {
  LeaderSafety out;
  Holders h;
  for (const TraceEvent& e : events.only({EventKind::system, EventKind::exit})) {  // all Holders reads
    h.read(e);
    if (is(e, kWriteRefused)) ++out.refused;
    if (!is(e, kWrite)) continue;
    ++out.writes;
    const std::int64_t lock = num(e, kLockKey);
    const std::int64_t term = num(e, kTerm);
    if (term != 0 ? h.lock_session(lock) == term : h.holds(lock, client_node(e), e.time)) continue;
    out.unsafe.push_back({e.time, num(e, kSeq), client_node(e), num(e, kSessionKey), e.text(kLoop), h.holder(lock, e.time), term,
                          h.lock_session(lock)});
  }
  if (!out.unsafe.empty()) {
    out.overlap_from = out.unsafe.front().at;
    for (const UnsafeWrite& w : out.unsafe)
      if (w.node == out.unsafe.front().node) out.overlap_to = w.at;
  }
  return out;
}

std::string describe(const LeaderSafety& s) {
  if (s.ok()) {
    return fmt::format("every one of {} leader writes came from the holder of the lock or lease{}", s.writes,
                       s.refused == 0 ? "" : fmt::format("; {} writes refused for their fencing token", s.refused));
  }
  const UnsafeWrite& w = s.unsafe.front();
  if (w.node == w.holder) {
    // The writer's node leads again, on another lock session: the write is from its lost term.
    return fmt::format(
        "{} of {} leader writes came from a leadership already lost: {} wrote under lock session {} while its lock session {} "
        "held the leadership, from t={} to t={}; the first: write {} ({}) at t={} from {} (session {})",
        s.unsafe.size(), s.writes, w.node, w.term, w.held_by, format_time(s.overlap_from), format_time(s.overlap_to), w.seq,
        w.loop, format_time(w.at), w.node, w.session);
  }
  return fmt::format(
      "{} of {} leader writes came from a node that did not lead: {} wrote while {} held the leadership, from t={} to "
      "t={}; the first: write {} ({}) at t={} from {} (session {})",
      s.unsafe.size(), s.writes, w.node, w.holder.empty() ? "nobody" : w.holder, format_time(s.overlap_from),
      format_time(s.overlap_to), w.seq, w.loop, format_time(w.at), w.node, w.session);
}

std::vector<Holding> holdings(const EventLog& events, Time end) {
  std::vector<Holding> out;
  std::map<std::int64_t, std::pair<std::int64_t, Holding>> locks;  // lock -> {session, open holding}
  std::map<std::int64_t, Holding> leases;                          // lock -> running lease
  Pid db;
  const auto close_lease = [&](std::int64_t lock) {
    if (const auto it = leases.find(lock); it != leases.end()) out.push_back(it->second), leases.erase(it);
  };
  for (const TraceEvent& e : events.only({EventKind::system, EventKind::exit})) {
    if (is(e, kStart) || is(e, kLock) || is(e, kLease)) db = e.pid;
    if (e.kind == EventKind::exit && e.pid == db) {
      for (auto& [lock, h] : locks) out.push_back({h.second.node, h.second.from, e.time});
      locks.clear();
    }
    if (e.kind != EventKind::system) continue;
    const std::int64_t lock = num(e, kLockKey);
    if (e.name == kLock) {
      locks[lock] = {num(e, kSessionKey), Holding{client_node(e), e.time, e.time}};
    } else if (e.name == kUnlock) {
      const auto it = locks.find(lock);
      if (it == locks.end() || it->second.first != num(e, kSessionKey)) continue;
      out.push_back({it->second.second.node, it->second.second.from, e.time});
      locks.erase(it);
    } else if (e.name == kLease) {
      const Time until = e.time + Duration{num(e, kTtl)};
      const auto it = leases.find(lock);
      if (it != leases.end() && it->second.node == client_node(e) && e.time <= it->second.to) {
        it->second.to = until;  // a renewal
        continue;
      }
      close_lease(lock);
      leases[lock] = Holding{client_node(e), e.time, until};
    }
  }
  for (auto& [lock, h] : locks) out.push_back({h.second.node, h.second.from, end});
  for (auto& [lock, h] : leases) out.push_back({h.node, h.from, std::min(h.to, end)});
  std::sort(out.begin(), out.end(), [](const Holding& a, const Holding& b) { return a.from < b.from; });
  return out;
}

// ---- beliefs ------------------------------------------------------------------------------------

namespace {

/// The longest stretch in which two or more nodes believed at once: a sweep over the ends, from
/// the instant a second node joined to the instant fewer than two were left.
void longest_overlap(Beliefs& out) {
  std::vector<std::tuple<Time, int, std::string>> edges;
  for (const auto& [node, iv] : out.by_node)
    for (const Interval& i : iv) edges.emplace_back(i.from, 1, node), edges.emplace_back(i.to, -1, node);
  std::sort(edges.begin(), edges.end(), [](const auto& a, const auto& b) {
    return std::get<0>(a) != std::get<0>(b) ? std::get<0>(a) < std::get<0>(b) : std::get<1>(a) < std::get<1>(b);
  });
  std::vector<std::string> now, together;  // who believes; who did since `since`
  Time since{};
  for (const auto& [at, d, node] : edges) {
    if (d > 0) {
      now.push_back(node);
      if (now.size() == 2) since = at, together = now;
      else if (now.size() > 2) together.push_back(node);
      continue;
    }
    if (now.size() == 2 && at - since > out.longest_overlap) {
      out.longest_overlap = at - since;
      out.overlap_at = since;
      out.overlap_nodes = together;
    }
    now.erase(std::find(now.begin(), now.end(), node));
  }
}

}  // namespace

Beliefs leader_beliefs(const EventLog& events, Time end) {
  Beliefs out;
  // Per node: the process that started believing, and since when. It stops believing when it
  // says so, or when that process ends.
  std::map<std::string, std::pair<Pid, Time>> open;
  const auto entry = [&](const std::string& node) -> Intervals& {
    auto n = std::find_if(out.by_node.begin(), out.by_node.end(), [&](const auto& x) { return x.first == node; });
    if (n == out.by_node.end()) n = out.by_node.insert(out.by_node.end(), {node, {}});
    return n->second;
  };
  const auto close = [&](const std::string& node, Time at) {
    const auto it = open.find(node);
    if (it == open.end()) return;
    if (it->second.second < at) entry(node).push_back({it->second.second, at});
    open.erase(it);
  };
  for (const TraceEvent& e : events.only({EventKind::system, EventKind::exit})) {
    // Only a process's exit and a belief matter here: most of a trace is neither.
    if (e.kind != EventKind::exit && !is(e, kBelief)) continue;
    const std::string node(e.node.text());
    if (e.kind == EventKind::exit && open.contains(node) && open[node].first == e.pid) close(node, e.time);
    if (!is(e, kBelief)) continue;
    if (num(e, kOn) != 0) {
      entry(node);  // in the order nodes first believed
      open.try_emplace(node, e.pid, e.time);
    } else {
      close(node, e.time);
    }
  }
  for (const auto& [node, since] : open) out.at_end.push_back(node);
  while (!open.empty()) close(open.begin()->first, end);
  longest_overlap(out);
  return out;
}

// ---- failovers ----------------------------------------------------------------------------------

namespace {

/// Which candidate nodes (those running a coordinator) can reach the database, over time: up,
/// not paused, and not cut from it either way, while the database's node is up and not paused.
class Reach {
 public:
  explicit Reach(Intervals& out) : out_(out) {}

  void read(const TraceEvent& e) {
    // Whether a candidate reaches the database changes only at these events: the rest of the
    // trace (most of it: messages, the coordinators' own work) leaves it as it was.
    const bool start = is(e, kStart), coordinator = is(e, kCoordinator), restart = is(e, kRestart), ready = is(e, kReady);
    switch (e.kind) {
      case EventKind::node_down:
      case EventKind::node_up:
      case EventKind::node_pause:
      case EventKind::node_resume:
      case EventKind::partition:
      case EventKind::heal: break;
      default:
        if (!start && !coordinator && !restart && !ready) return;
    }
    if (start) db_ = std::string(e.node.text());
    if (restart) restarting_ = true;  // refusing connections until db_ready
    if (ready || start) restarting_ = false;
    if (coordinator) candidates_.insert(std::string(e.node.text()));
    const std::string node(e.node.text());
    switch (e.kind) {
      case EventKind::node_down: down_.insert(node); break;
      case EventKind::node_up: down_.erase(node); break;
      case EventKind::node_pause: paused_.insert(node); break;
      case EventKind::node_resume: paused_.erase(node); break;
      case EventKind::partition: cut_.insert({node, std::string(e.tag.text())}); break;
      case EventKind::heal: cut_.erase({node, std::string(e.tag.text())}); break;
      default: break;
    }
    update(e.time);
  }

  void finish(Time end) {
    if (open_) out_.push_back({*open_, end});
    out_ = normalise(std::move(out_));
  }

 private:
  bool reaches(const std::string& n) const {
    return !down_.contains(n) && !paused_.contains(n) && !cut_.contains({n, db_}) && !cut_.contains({db_, n});
  }

  void update(Time at) {
    const bool db_ok = !db_.empty() && !restarting_ && !down_.contains(db_) && !paused_.contains(db_);
    const bool any = db_ok && std::any_of(candidates_.begin(), candidates_.end(), [&](const std::string& n) { return reaches(n); });
    if (any && !open_) open_ = at;
    if (!any && open_) {
      out_.push_back({*open_, at});
      open_.reset();
    }
  }

  Intervals& out_;
  std::string db_;
  std::set<std::string> candidates_, down_, paused_;
  std::set<std::pair<std::string, std::string>> cut_;
  std::optional<Time> open_;
  bool restarting_ = false;
};

/// Follows the leadership the database accepts writes from, and what takes it away. An epoch is
/// one leadership: a lock acquisition, or a lease granted to a new holder (or after it ran out).
class Follower {
 public:
  explicit Follower(Leadership& out) : out_(out) {}

  void read(const TraceEvent& e) {
    holders_.read(e);
    settings(e);
    if (is(e, kStart) || is(e, kLock) || is(e, kLease)) {
      db_ = std::string(e.node.text());
      db_pid_ = e.pid;
    }
    if (is(e, kLock) || is(e, kLease)) return epoch(e);
    if (is(e, kWrite)) return write(client_node(e), num(e, kLockKey), e.time);
    if (leader_.empty()) return;
    // What takes a leadership away: a node's fault, the database's exit, a cut, an unlock.
    switch (e.kind) {
      case EventKind::node_down:
      case EventKind::node_pause:
      case EventKind::node_resume:
      case EventKind::partition:
      case EventKind::heal:
      case EventKind::exit:
      case EventKind::system: break;
      default: return;
    }
    const std::string node(e.node.text());
    if (lost_ && !lost_->cause_end && ((lost_->cause == "pause" && e.kind == EventKind::node_resume && node == lost_->from) ||
                                       (lost_->cause == "partition" && e.kind == EventKind::heal && cuts(node, std::string(e.tag.text())))))
      lost_->cause_end = e.time;
    if (e.kind == EventKind::node_down && node == leader_) lose(e.time, "node_down");
    else if (e.kind == EventKind::exit && e.pid == db_pid_) lose(e.time, "db_down");
    else if (e.kind == EventKind::node_pause && node == leader_) lose(e.time, "pause");
    else if (e.kind == EventKind::partition && cuts(node, std::string(e.tag.text()))) lose(e.time, "partition");
    else if (is(e, kUnlock) && client_node(e) == leader_) lose(e.time, e.text(kWhy));
  }

  void finish(Time end) {
    if (lost_) {
      lost_->resumed = end;
      out_.failovers.push_back(*lost_);
    }
    Intervals gaps;
    for (const auto* list : {&out_.failovers, &out_.stalls})
      for (const Failover& f : *list) gaps.push_back({f.lost, f.resumed});
    if (out_.any_write) out_.acting = complement(normalise(gaps), out_.first_write, end);
  }

 private:
  bool cuts(const std::string& a, const std::string& b) const { return (a == leader_ && b == db_) || (a == db_ && b == leader_); }

  void settings(const TraceEvent& e) {
    if (is(e, kStart))
      out_.keepalive = std::max(out_.keepalive, Duration{num(e, kKeepaliveIdle) + num(e, kKeepaliveInterval) * num(e, kKeepaliveCount)});
    if (!is(e, kCoordinator)) return;
    out_.retry = std::max(out_.retry, Duration{num(e, kRetry)});
    out_.query_timeout = std::max(out_.query_timeout, Duration{num(e, kQueryTimeout)});
    out_.heartbeat_timeout = std::max(out_.heartbeat_timeout, Duration{num(e, kHeartbeatTimeout)});
  }

  void epoch(const TraceEvent& e) {
    const std::string node = client_node(e);
    const Time until = lease_until_;  // the running lease's end, before this grant
    const bool renewal = is(e, kLease) && node == epoch_node_ && e.time <= until;
    if (is(e, kLease)) lease_until_ = e.time + Duration{num(e, kTtl)};
    if (renewal) return;
    // A lease that ran out unrenewed is a loss when it ran out.
    if (is(e, kLease) && !leader_.empty() && epoch_node_ == leader_) lose(std::min(until, e.time), "lease_expired");
    ++epoch_;
    epoch_node_ = node;
  }

  void write(const std::string& node, std::int64_t lock, Time at) {
    if (!out_.any_write) {
      out_.any_write = true;
      out_.first_write = at;
      leader_ = node;
      leader_epoch_ = epoch_;
      return;
    }
    if (lost_) {
      if (epoch_ != lost_->epoch && node == epoch_node_) return take_over(node, at);
      if (epoch_ == lost_->epoch && node == lost_->from && holders_.holds(lock, node, at)) {  // rode it out
        lost_->to = node;
        lost_->resumed = lost_->cause_end.value_or(at);  // able to act again when the pause or cut ended
        out_.stalls.push_back(*lost_);
        lost_.reset();
      }
      return;
    }
    if (node == leader_ || node != epoch_node_ || epoch_ == leader_epoch_) return;  // an unsafe writer is not a leader
    lose(at, "takeover");  // a new leadership whose predecessor's loss was not seen
    take_over(node, at);
  }

  void lose(Time at, std::string cause) {
    if (lost_) return;
    lost_ = Lost{};
    lost_->from = leader_;
    lost_->lost = at;
    lost_->resumed = at;
    lost_->cause = std::move(cause);
    lost_->epoch = epoch_;
  }

  void take_over(const std::string& node, Time at) {
    lost_->to = node;
    lost_->resumed = at;
    out_.failovers.push_back(*lost_);
    lost_.reset();
    leader_ = node;
    leader_epoch_ = epoch_;
  }

  struct Lost : Failover {
    std::int64_t epoch = 0;
    std::optional<Time> cause_end;  // the pause or cut that took it ended
  };

  Leadership& out_;
  Holders holders_;
  std::string db_;
  Pid db_pid_;
  std::string leader_;  // whose leadership acts now
  std::int64_t leader_epoch_ = 0;
  std::int64_t epoch_ = 0;
  std::string epoch_node_;
  Time lease_until_{};
  std::optional<Lost> lost_;  // the leadership's loss, until a new one writes
};

}  // namespace

Leadership leadership(const EventLog& events, Time end) {
  Leadership out;
  Follower f(out);
  Reach r(out.reachable);
  // What Follower and Reach read; the rest of a trace (messages, most of it) changes neither.
  for (const TraceEvent& e : events.only({EventKind::system, EventKind::exit, EventKind::node_down, EventKind::node_up,
                                          EventKind::node_pause, EventKind::node_resume, EventKind::partition,
                                          EventKind::heal})) {
    f.read(e);
    r.read(e);
  }
  f.finish(end);
  r.finish(end);
  const Intervals blocked = complement(out.reachable, Time{}, end);
  for (auto* list : {&out.failovers, &out.stalls})
    for (Failover& x : *list) x.blocked = total(clip(blocked, x.lost, std::max(x.lost, x.resumed)));
  return out;
}

}  // namespace lic::properties
