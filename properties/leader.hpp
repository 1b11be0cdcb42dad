#pragma once
// Leader election over a database (seed 001; docs/leader-election.md), judged from the trace:
// who held the lock (or the lease) in the database's own order, who wrote while not holding it,
// when nodes believed they led, how long each failover took, and how much of the run some
// leader acted. Pure functions of the trace.
//
// The vocabulary (the simulated PostgreSQL and the coordinators trace it):
//   db_start {keepalive_idle, keepalive_interval, keepalive_count, tcp_user_timeout, tcp_retries2}
//                                              (ns, ns, count, ns (0: off), count)
//   db_session {session, node, pid}            db_session_end {session, node, why}
//   db_lock {lock, session, node, token}       db_unlock {lock, session, node, why}
//     why (of an end, and of the unlocks it causes): closed, reset, keepalive, retransmit (TCP
//     gave up on unacknowledged data: tcp_retries2 or tcp_user_timeout), terminated, restart,
//     idle_session_timeout, idle_in_transaction_session_timeout; a db_unlock's also: unlock
//   db_lease {lock, session, node, ttl}        (a lease granted or renewed for ttl ns from now)
//   db_write {seq, session, node, lock, token, table, loop, term}  (term: the writer's lock
//            session, when it says one)
//   db_write_refused {session, node, lock, token, latest, loop, why}
//   coordinator_start {lock, variant, retry, query_timeout, heartbeat_timeout}   (ns)
//   leader_belief {lock, on}                   (a coordinator starts (1) or stops (0) believing
//                                               it leads; its node is the event's node)
// The `node` field of a db_* event is the client's node; the event's own node is the database's.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "properties/availability.hpp"
#include "sim/atom.hpp"
#include "sim/trace.hpp"

namespace lic::properties {

namespace leader {
extern const Atom kStart, kSession, kSessionEnd, kLock, kUnlock, kLease, kWrite, kWriteRefused, kCoordinator, kBelief, kTakeover;
extern const Atom kRestart, kReady;
extern const Atom kSessionKey, kLockKey, kToken, kLatest, kSeq, kTable, kLoop, kTtl, kOn, kVariant, kTerm;
extern const Atom kKeepaliveIdle, kKeepaliveInterval, kKeepaliveCount, kRetry, kQueryTimeout, kHeartbeatTimeout;
extern const Atom kVictim, kIdle, kTaken;
}  // namespace leader

/// Whether the trace holds a leader election over the simulated database.
bool has_leader_election(const EventLog& events);

/// A write the database accepted from a node that did not hold the lock or the lease then.
struct UnsafeWrite {
  Time at{};
  std::int64_t seq = 0;
  std::string node;        ///< who wrote
  std::int64_t session = 0;
  std::string loop;
  std::string holder;      ///< who held it then ("" when nobody did)
  std::int64_t term = 0;   ///< the lock session the writer believed it led by (0: not said)
  std::int64_t held_by = 0;  ///< the lock session that held it then (0: none, or a lease)
};

struct LeaderSafety {
  std::int64_t writes = 0;  ///< accepted leader writes
  std::int64_t refused = 0; ///< writes the database refused for their fencing token
  std::vector<UnsafeWrite> unsafe;
  /// The first unsafe writer's overlap: from its first unsafe write to its last.
  Time overlap_from{}, overlap_to{};
  bool ok() const { return unsafe.empty(); }
};

/// Every accepted write against the holder of its lock (or of an unexpired lease) at that
/// instant, in the database's order. A write that says its term (db_write's `term`: the lock
/// session its writer believes it leads by) is safe when that session holds the lock then: a
/// write from a node's earlier leadership is stale though the node leads again. One that does
/// not say (a lease's, a writer outside the coordinator) is safe when its node is the holder's.
/// The database's process ending (a crash, its node's) releases everything.
LeaderSafety check_leader_safety(const EventLog& events);
std::string describe(const LeaderSafety& s);

/// Who the database had as leader, over time: a lock held (from db_lock to its release or the
/// database's process ending) or a lease running (from its grant to its end, renewals joined).
struct Holding {
  std::string node;
  Time from{}, to{};
};
std::vector<Holding> holdings(const EventLog& events, Time end);

/// When each node believed it led (leader_belief on..off, or until that process ended), and the
/// longest time two or more did at once.
struct Beliefs {
  std::vector<std::pair<std::string, Intervals>> by_node;  ///< in the order nodes first believed
  Duration longest_overlap{};
  Time overlap_at{};  ///< when the longest overlap began
  std::vector<std::string> overlap_nodes;
  /// Who believed at the end (`end` itself).
  std::vector<std::string> at_end;
};
Beliefs leader_beliefs(const EventLog& events, Time end);

/// One loss of the leader and how long until a new leadership (a new lock acquisition or lease)
/// made its first accepted write. A loss the leader rides out (a pause or a cut shorter than the
/// keepalive: its session, and so its lock, survive) is no failover.
struct Failover {
  std::string from;   ///< the node that lost it
  std::string to;     ///< the node that took over ("" when none did before the end)
  Time lost{};        ///< what took it away happened
  Time resumed{};     ///< the new leadership's first accepted write (the end when none)
  /// What took it: node_down, partition, pause (of the leader's node), db_down (the database's
  /// process ended), lease_expired, takeover (a new leadership whose loss was not seen), or, when
  /// the lock's session ended first, the why of its db_unlock: reset, closed, keepalive,
  /// restart, terminated.
  std::string cause;
  Duration blocked{}; ///< of [lost, resumed], how long no candidate node could reach the database
  bool done() const { return !to.empty(); }
  Duration took() const { return resumed - lost; }
};

struct Leadership {
  std::vector<Failover> failovers;  ///< in order; the last may be open (not done)
  /// Losses the leader rode out (its session and lock survived): from the loss to the end of the
  /// pause or cut that caused it (or, for another cause, its next accepted write); `to` is `from`.
  /// No failover, but no leader acted meanwhile.
  std::vector<Failover> stalls;
  Intervals acting;     ///< some leader acted: from the first accepted leader write, less each
                        ///< failover and stall
  Intervals reachable;  ///< some candidate node could reach the database (up, not paused, not cut off),
                        ///< and the database was up: the parallel composition of the candidates
  Time first_write{};   ///< the first accepted leader write
  bool any_write = false;
  /// The settings the trace declares (db_start, coordinator_start): the largest of each.
  Duration keepalive{};  ///< idle + interval × count
  Duration retry{}, query_timeout{}, heartbeat_timeout{};
  /// What a failover should take at most: the keepalive (the old session must end), a retry
  /// interval, and a connect and a query (two query timeouts), plus the time no candidate could
  /// reach the database.
  Duration bound(const Failover& f) const { return keepalive + retry + query_timeout * 2 + f.blocked; }
};

Leadership leadership(const EventLog& events, Time end);

}  // namespace lic::properties
