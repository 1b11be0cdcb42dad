#pragma once
// A simulated PostgreSQL (seed 001; docs/leader-election.md), compared with a real PostgreSQL 15
// on Linux case by case (docs/conformance-pg.md): sessions over the simulated network, advisory
// locks, a few tables, and how a session ends.
//
// - `pg.server` runs on its own node, registered as `name` ("Postgres"). A client connection is a
//   session. Advisory locks are per database, in two key spaces (one bigint; two int4), at
//   session or transaction level, exclusive or shared: pg_try_advisory_lock (non-blocking),
//   pg_advisory_lock (waits, at most lock_timeout: 55P03), pg_advisory_unlock (false and a
//   WARNING for a lock not held), pg_advisory_unlock_all, BEGIN/COMMIT/ROLLBACK. The line of
//   waiters is PostgreSQL's: a new request waits behind a conflicting waiter, a mode already held
//   is granted again at once, a holder goes ahead of a waiter that waits for it, a cycle of waits
//   fails one statement after deadlock_timeout (40P01), and an error inside a transaction aborts
//   it (its transaction-level locks go; later statements fail with 25P02 until COMMIT/ROLLBACK).
// - A session ends at once when its client closes it, when the client's process dies (its OS
//   resets the connection), when the client's node crashes (`rst_on_node_crash`), on
//   pg_terminate_backend, idle_session_timeout, idle_in_transaction_session_timeout, or a restart.
//   After a partition or a pause of the client's node, TCP decides, as Linux does: keepalive
//   (idle `tcp_keepalives_idle`, then `tcp_keepalives_count` probes `tcp_keepalives_interval`
//   apart, or the first probe past `tcp_user_timeout`) while the connection is idle, and
//   retransmission (until `tcp_user_timeout` or `tcp_retries2`) while the server has data the
//   client has not acknowledged; keepalive does not run then.
// - A keepalive probe to a connection whose process is gone (its socket closed while the path was
//   cut, so the close never arrived) is answered by the client's OS with a reset.
// - A query takes `query_latency`. A query on a session the server no longer has fails at once
//   (the server told the client, or its OS answers with a reset): the driver's
//   ConnectionDoesNotExistError, libpq's connection_lost.
// - Writes go to tables (workspaces, system_locks, leases) and each accepted write is traced
//   `db_write {seq, session, node, lock, token, table, loop, term}` with a DB-side sequence (term:
//   the writer's own lock session, when the query says one). With a
//   fencing token, a write whose token is older than the lock's latest is refused
//   (`db_write_refused`). Every acquisition of an exclusive bigint lock in the default database
//   takes the next token (an epoch per lock).
// - Tables, tokens and sequences are durable (on the node's disk, sim/disk.hpp): a restart (of the
//   process, of the node, or degrade mode `restart`, pg_ctl restart -m fast, or
//   `restart_immediate`) ends every session and keeps the data.
//
// The client side is `pg::Conn`: a connection process on the client's node (the driver's socket
// and the client's OS: it acknowledges data, retransmits its queries, answers keepalive probes
// whatever its owner is doing, and runs libpq's keepalives and tcp_user_timeout), used by calls.
//
// The code is in scenarios/behaviours/pg/, one part of the model a file: server.cpp (the server,
// its tables, its arguments), session.cpp (a session from connect to its end), locks.cpp
// (advisory locks), wire.hpp and wire.cpp (what the two ends send each other; the server's end of
// each connection), tcp.hpp and tcp.cpp (TCP's timers as Linux runs them) and client.cpp (pg::Conn
// and its connection process); docs/conformance-pg.md, "Where the model lives".

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/process.hpp"

namespace lic::scenarios::pg {

// TCP, as Linux does it (docs/leader-election.md, "The simulated PostgreSQL"): unacknowledged
// data is sent again after the retransmission timeout (RTO), which starts near TCP_RTO_MIN (200 ms:
// the floor on a fast network such as loopback) and doubles up to TCP_RTO_MAX (120 s). The
// connection is dead when, counted from the first retransmission, the data stays unacknowledged
// for `tcp_user_timeout` (when set) or `retransmission_timeout(tcp_retries2)` (15: 924.6 s).
// While data is unacknowledged keepalive does not run. Keepalive and retransmission timers fire as
// Linux's timer wheel fires them (whole 4 ms jiffies, rounded up to the wheel level's granule).
inline constexpr Duration kRtoMin = kMillisecond * 200;
/// The RTO a connection starts from: TCP_RTO_MIN plus the smoothed round trip, rounded up to the
/// next jiffy (4 ms at HZ=250, Debian's kernels): 204 ms on a fast network.
inline constexpr Duration kRtoInitial = kMillisecond * 204;
inline constexpr Duration kRtoMax = kSecond * 120;
/// How long Linux retransmits before it gives up after `retries2` retransmissions (the kernel's
/// tcp_model_timeout with TCP_RTO_MIN): 5 -> 12.6 s, 8 -> 102.2 s, 15 -> 924.6 s.
Duration retransmission_timeout(std::int64_t retries2);
/// The latest an end of a connection gives up on data the other side never acknowledges,
/// counted from when the data was first sent, as the model does it: the first RTO
/// (kRtoInitial), then the retransmissions until `user_timeout` (when above 0) or
/// `retransmission_timeout(retries2)` has passed since the first of them, each timer as Linux's
/// timer wheel fires it (later than due by up to a granule of its level: 2.048 s for a 120 s
/// RTO), from the worst instant to send at. The failover check's bound: for tcp_retries2 15,
/// 939.5 s, where retransmission_timeout alone is 924.6 s (issue 33: correct failovers were
/// flagged as too slow).
Duration retransmission_give_up(std::int64_t retries2, Duration user_timeout);

/// A session's own settings (libpq's `options=-c name=value`, or SET): each unset one is the
/// server's. Names and meanings are PostgreSQL's; 0 turns a timeout off.
struct SessionSettings {
  std::optional<Duration> tcp_keepalives_idle;
  std::optional<Duration> tcp_keepalives_interval;
  std::optional<std::int64_t> tcp_keepalives_count;
  std::optional<Duration> tcp_user_timeout;
  std::optional<Duration> idle_session_timeout;
  std::optional<Duration> idle_in_transaction_session_timeout;
  std::optional<Duration> lock_timeout;
  std::optional<Duration> deadlock_timeout;
};

struct ServerConfig {
  Atom name{"Postgres"};
  Duration keepalive_idle = kSecond * 7200;  ///< tcp_keepalives_idle (0 in PostgreSQL: the system's)
  Duration keepalive_interval = kSecond * 75;
  std::int64_t keepalive_count = 9;
  Duration tcp_user_timeout{};             ///< 0: off (the system's default)
  std::int64_t tcp_retries2 = 15;          ///< the server's OS (net.ipv4.tcp_retries2)
  Duration idle_session_timeout{};         ///< 0: off; ends an idle session (57P05)
  Duration idle_in_transaction_session_timeout{};  ///< 0: off; ends a session idle in a transaction (25P03)
  Duration lock_timeout{};                 ///< 0: wait for ever; a blocking lock gives up (55P03)
  Duration deadlock_timeout = kSecond;     ///< a blocking lock looks for a deadlock after it (40P01); 0: never
  Duration query_latency = kMillisecond * 2;
  /// How long a restart refuses connections, from its start until it accepts again: `pg_ctl
  /// restart -m fast` (a shutdown checkpoint, then a start) and `-m immediate` (no checkpoint,
  /// then crash recovery, which replays the WAL written since the last checkpoint). The defaults
  /// are the recorder's cluster (conformance/pg: fsync off, nearly empty): 230 ms and 121 ms; a
  /// durable cluster after 200,000 rows took 0.3-0.4 s and 2.7-3.8 s (docs/conformance-pg.md).
  Duration restart_downtime = kMillisecond * 230;
  Duration immediate_downtime = kMillisecond * 121;
  bool rst_on_node_crash = true;
  /// How a write with a fencing token is judged: strict, only with the lock's latest token while
  /// a session holds the lock; at_least, with a token no lower than the highest a write went
  /// through with (the store's check, with no look at the lock); off, never refused.
  enum class Fence : std::uint8_t { strict, at_least, off };
  Fence fence = Fence::strict;
  /// True: every acquisition takes the next token. False: a node that takes the lock again after
  /// holding it last keeps its token (the epoch moves only with the holder's node), so its own
  /// writes from before the loss still pass a strict fence.
  bool epoch_every_acquisition = true;
};

/// The client's side of a connection: libpq's connection parameters and the client's OS.
struct ClientOptions {
  std::string database = "postgres";  ///< advisory locks are per database
  SessionSettings set;                ///< the session's server settings
  bool keepalives = true;             ///< libpq keepalives (on by default)
  Duration keepalives_idle{};         ///< 0: the system's, 7200 s
  Duration keepalives_interval{};     ///< 0: the system's, 75 s
  std::int64_t keepalives_count = 0;  ///< 0: the system's, 9
  Duration tcp_user_timeout{};        ///< 0: off
  std::int64_t tcp_retries2 = 15;     ///< the client's OS
};

/// What a query asks (the SQL the coordinator sends, reduced to what the simulation needs).
struct Query {
  /// try_lock: pg_try_advisory_lock (and _shared, _xact); lock: pg_advisory_lock, which waits
  /// (at most lock_timeout); unlock: pg_advisory_unlock(_shared); unlock_all:
  /// pg_advisory_unlock_all; begin/commit/rollback; sleep: pg_sleep(duration).
  enum class Op : std::uint8_t { try_lock, unlock, ping, write, lease, terminate, lock, unlock_all, begin, commit, rollback, sleep, holder };
  Op op = Op::ping;
  std::int64_t lock = 0;    ///< try_lock, unlock, write (the lock the writer leads by), lease
  std::optional<std::int32_t> lock2;  ///< try_lock, lock, unlock: the two-int4 form (lock, lock2),
                                      ///< a key space of its own; `lock` must then fit an int4
  bool shared = false;      ///< try_lock, lock, unlock: the _shared form
  bool xact = false;        ///< try_lock, lock: the _xact form (held until the transaction ends)
  Duration duration{};      ///< sleep: how long; terminate: pg_terminate_backend's timeout
  std::int64_t token = 0;   ///< write: a fencing token (0: none)
  /// write: the writer's term, the lock session it believes it leads by (0: none said). Traced
  /// on db_write for leader_safety, never checked by the server: the writer's own belief.
  std::int64_t term = 0;
  Atom table;               ///< write
  Atom loop;                ///< write: who wrote it (HealthMonitor, ...)
  Duration ttl{};           ///< lease: how long the lease lasts from now (the DB's clock)
  std::int64_t session = 0; ///< terminate: the session to end; 0: every other session from the
                            ///< asker's node (pg_terminate_backend over pg_stat_activity)
  // holder: who holds `lock` and how long it has been idle: SELECT a.pid, now() - a.state_change
  // FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE l.locktype = 'advisory' AND
  // l.objid = LOCK AND l.granted AND a.pid <> pg_backend_pid() (Result::holder, Result::idle).
};

/// What a query got.
struct Result {
  /// refused: a fenced write refused; no_connection: the connection is gone (the server ended
  /// the session, or TCP gave up); timeout: no answer within the caller's timeout; error: the
  /// connection process is gone; sql_error: the server refused the statement (`sqlstate`).
  enum class Status : std::uint8_t { ok, refused, no_connection, timeout, error, sql_error };
  Status status = Status::ok;
  bool value = false;        ///< try_lock, unlock, lease, terminate: granted; ping: true
  std::int64_t token = 0;    ///< try_lock: the fencing token taken; lease: 0
  Time until{};              ///< lease: when it ends, on the DB's clock
  std::int64_t holder = 0;   ///< holder: the session that holds the lock (0: none but the asker)
  Duration idle{};           ///< holder: how long that session has been idle (0 while a statement runs)
  std::string error;         ///< the driver's error: ConnectionDoesNotExistError, TimeoutError, ...
  std::string sqlstate;      ///< the SQLSTATE the server sent (55P03, 57P01, 57P05, 25P03, 22003), or empty
  std::vector<std::string> notices;  ///< the server's WARNINGs for the statement
  bool ok() const { return status == Status::ok; }
};

/// libpq's view of a failed query: the SQLSTATE when the server sent one, `connection_lost`
/// when the connection is gone without one, `no_answer` after the caller's timeout; empty for
/// a result (ok, or a refused fenced write).
std::string error_class(const Result& r);

/// A connection to the server from a process: a connection process on the caller's node.
class Conn {
 public:
  /// Connects (a call to the server, at most `timeout`); nothing when the server cannot be
  /// reached or answers too late.
  static std::optional<Conn> connect(Context& ctx, Atom server, Duration timeout, const ClientOptions& o = ClientOptions{});
  /// A query; waits at most `timeout` (the driver's command_timeout) for its answer.
  Result query(Context& ctx, const Query& q, Duration timeout) const;
  /// Closes the session (the server ends it at once, releasing its locks).
  void close(Context& ctx) const;
  std::int64_t session() const { return session_; }
  Pid pid() const { return pid_; }

 private:
  Pid pid_;
  std::int64_t session_ = 0;
};

/// The server; its data (tables, fencing tokens, sequences) is a file on its node's disk
/// ("pg/<name>"), so it survives the server's and the node's restarts.
std::unique_ptr<Behaviour> server(const ServerConfig& c);

}  // namespace lic::scenarios::pg
