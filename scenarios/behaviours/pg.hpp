#pragma once
// A simulated PostgreSQL (seed 001; docs/leader-election.md): sessions over the simulated
// network, session-level advisory locks, a few tables, and how a session ends.
//
// - `pg.server` runs on its own node, registered as `name` ("Postgres"). A client connection is a
//   session; `pg_try_advisory_lock(id)` takes a lock for the session (non-blocking), which
//   `pg_advisory_unlock` or the session's end releases.
// - A session ends at once when its client closes it, when the client's process dies (its OS
//   resets the connection), or when the client's node crashes (`rst_on_node_crash`: the
//   container's kernel resets it). After a partition or a pause of the client's node it ends only
//   when TCP keepalive gives up: idle `tcp_keepalives_idle`, then `tcp_keepalives_count` probes
//   `tcp_keepalives_interval` apart (PostgreSQL's settings; Linux's defaults are 7200 s, 75 s, 9).
// - A keepalive probe to a connection whose process is gone (its socket closed while the path was
//   cut, so the close never arrived) is answered by the client's OS with a reset: the session ends
//   then, at the first probe after the path is back.
// - `terminate` ends another session (pg_terminate_backend), releasing its locks; with session 0,
//   every other session from the asker's node (by pg_stat_activity's client address).
// - A query takes `query_latency`. A query on a session the server no longer has is refused at
//   once (the server's OS answers with a reset): the driver's ConnectionDoesNotExistError.
// - Writes go to tables (workspaces, system_locks, leases) and each accepted write is traced
//   `db_write {seq, session, node, lock, token, table, loop}` with a DB-side sequence. With a
//   fencing token, a write whose token is older than the lock's latest is refused
//   (`db_write_refused`). Every lock acquisition takes the next token (an epoch per lock).
// - Tables, tokens and sequences are durable (on the node's disk, sim/disk.hpp): a restart (of the
//   process, of the node, or degrade mode `restart`, pg_ctl restart -m fast) ends every session
//   and keeps the data.
//
// The client side is `pg::Conn`: a connection process on the client's node (the driver's socket:
// it answers keepalive probes whatever its owner is doing), used by calls.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "sim/process.hpp"

namespace lic::scenarios::pg {

struct ServerConfig {
  Atom name{"Postgres"};
  Duration keepalive_idle = kSecond * 7200;
  Duration keepalive_interval = kSecond * 75;
  std::int64_t keepalive_count = 9;
  Duration query_latency = kMillisecond * 2;
  bool rst_on_node_crash = true;
};

/// What a query asks (the SQL the coordinator sends, reduced to what the simulation needs).
struct Query {
  enum class Op : std::uint8_t { try_lock, unlock, ping, write, lease, terminate };
  Op op = Op::ping;
  std::int64_t lock = 0;    ///< try_lock, unlock, write (the lock the writer leads by), lease
  std::int64_t token = 0;   ///< write: a fencing token (0: none)
  Atom table;               ///< write
  Atom loop;                ///< write: who wrote it (HealthMonitor, ...)
  Duration ttl{};           ///< lease: how long the lease lasts from now (the DB's clock)
  std::int64_t session = 0; ///< terminate: the session to end; 0: every other session from the
                            ///< asker's node (pg_terminate_backend over pg_stat_activity)
};

/// What a query got.
struct Result {
  enum class Status : std::uint8_t { ok, refused, no_connection, timeout, error };
  Status status = Status::ok;
  bool value = false;        ///< try_lock, unlock, lease: granted
  std::int64_t token = 0;    ///< try_lock: the fencing token taken; lease: 0
  Time until{};              ///< lease: when it ends, on the DB's clock
  std::string error;         ///< the driver's error: ConnectionDoesNotExistError, TimeoutError, ...
  bool ok() const { return status == Status::ok; }
};

/// A connection to the server from a process: a connection process on the caller's node.
class Conn {
 public:
  /// Connects (a call to the server, at most `timeout`); nothing when the server cannot be
  /// reached or answers too late.
  static std::optional<Conn> connect(Context& ctx, Atom server, Duration timeout);
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
