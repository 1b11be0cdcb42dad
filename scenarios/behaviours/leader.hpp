#pragma once
// Seed 001's Coordinator: a single leader among nodes, elected through the database
// (scenarios/behaviours/pg.hpp), running four periodic loops that write while it leads
// (docs/leader-election.md). Three variants:
//
// - naive: the seed's code as written. The main loop opens a dedicated lock connection and tries
//   pg_try_advisory_lock every `retry` (COORDINATOR_RETRY_INTERVAL, 5 s); as leader it runs
//   HealthMonitor (30 s), StateReconciler (10 s), TTL Manager (1 m) and Archive GC (1 h), each
//   writing through a connection of its own (a pool's) and skipping a tick on any error, while
//   `is_leader`. Nothing clears `is_leader` when the lock connection dies quietly (a partition, a
//   pause, the server ending the session after its keepalive): the old leader goes on writing
//   while a new one acts. The classic split-brain.
// - fenced: before each leader tick a loop checks the lock's session (a query on the lock
//   connection, timing out in `heartbeat_timeout`, shorter than the keepalive), and every write
//   carries the fencing token taken with the lock: the database refuses a stale one. When it
//   starts, and after it gives up, it first ends every other session from its node
//   (pg_terminate_backend): a lock session whose close was lost on a cut, or that a crashed
//   incarnation left, would otherwise hold the lock until the server's keepalive ended it
//   (2 h 11 m with Linux's defaults).
// - check_only / fence_only: fenced with one of its two defences: the lock check before each
//   tick without a token on the writes, or the token on the writes without the check (issue 33:
//   the fence never refused a write in 600 fenced runs; alone it must).
// - takeover (`takeover_after` above 0, with any lock variant): a standby that finds the lock held
//   asks who holds it and how long that session has been idle (pg_locks joined with
//   pg_stat_activity); idle longer than takeover_after, it terminates that backend and takes the
//   lock at once. pg_terminate_backend only signals: the try right after it can find the lock
//   still held (the backend has not exited yet), unless `takeover_wait` makes the terminate wait
//   for the exit (pg_terminate_backend(pid, timeout)). Idle is not dead: a naive leader never
//   queries its lock session, so a standby takes over from a live leader that goes on writing
//   (scenarios/bugs/leader_election_takeover_idle.yaml).
// - lease: leadership is a time lease in the database (granted for `lease_ttl` on the database's
//   clock, renewed every `renew_at` of it: a third by default); a leader acts while its own wall clock says the lease
//   runs. No fencing: a skewed or paused node breaks it.
//
// Each coordinator traces `coordinator_start {lock, variant, retry, query_timeout,
// heartbeat_timeout}` when it starts, `leader_belief {lock, on}` when it starts and stops
// believing it leads, and `coordinator_takeover {lock, victim, idle_ns, taken}` after each
// takeover's terminate (taken: whether the lock try right after it got the lock).

#include <cstdint>
#include <memory>

#include "sim/process.hpp"

namespace lic::scenarios::leader {

enum class Variant : std::uint8_t { naive, fenced, lease, check_only, fence_only };

/// The fenced family's two defences, each alone in a variant of its own so that each is measured
/// alone: the lock check before each tick (fenced, check_only) and the fencing token on each write
/// (fenced, fence_only). All three sweep the node's leftover sessions before competing.
inline bool checks_lock(Variant v) { return v == Variant::fenced || v == Variant::check_only; }
inline bool fences_writes(Variant v) { return v == Variant::fenced || v == Variant::fence_only; }
inline bool fenced_family(Variant v) { return checks_lock(v) || fences_writes(v); }

struct CoordinatorConfig {
  Variant variant = Variant::naive;
  std::int64_t lock_id = 12345;
  Duration retry = kSecond * 5;
  Duration query_timeout = kSecond * 10;  ///< the driver's command_timeout
  Duration heartbeat_timeout = kSecond * 2;  ///< fenced: the lock session's check
  Duration takeover_after{};  ///< 0: never; else a holder's session idle this long is terminated
  Duration takeover_wait{};   ///< the terminate waits this long for the backend's exit (0: it does not)
  Duration lease_ttl = kSecond * 15;         ///< lease
  /// lease: the share of lease_ttl after which the leader renews (each renewal grants a new ttl).
  /// At 1 it renews as the lease runs out, and another node can take it in between.
  Ratio renew_at{1, 3};
  Duration health = kSecond * 30;
  Duration reconcile = kSecond * 10;
  Duration ttl = kSecond * 60;
  Duration gc = kSecond * 3600;
  std::int64_t workspaces = 3;  ///< rows each tick writes
  Duration work = kMillisecond * 200;  ///< each workspace's work before its write
  Atom db{"Postgres"};
  Atom leader_name;  ///< registered while leading (none: empty)
  /// Record each write in the operation history (properties/history.hpp): the loops' (a write of
  /// the row TABLE/w to NODE:TOKEN) and the monitoring row's on taking the lead (system_locks);
  /// ok, fail when the server refused it (the fence, an SQL error), info when no answer came or
  /// the connection went with it (it may have landed).
  bool history = false;
};

bool parse_variant(std::string_view text, Variant& out);
const char* variant_name(Variant v);

std::unique_ptr<Behaviour> coordinator(const CoordinatorConfig& c);

}  // namespace lic::scenarios::leader
