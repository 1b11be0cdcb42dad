// The pg.server behaviour as a process (server.hpp): it opens its data on its node's disk and
// registers its name, takes each message to the room that handles it (wire.cpp, session.cpp,
// locks.cpp; a degrade `restart` or `restart_immediate` ends every session), and keeps the
// tables a session writes (fenced writes, leases). Last, what a scenario file can name:
// pg.server and its arguments.
#include "scenarios/behaviours/pg/server.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "properties/leader.hpp"
#include "scenarios/behaviours/table.hpp"
#include "scenarios/faults/fault.hpp"
#include "sim/trace_keys.hpp"

namespace lic::scenarios::pg {

namespace detail {

namespace ev = properties::leader;

namespace {

const Atom kRestart("restart");
const Atom kRestartImmediate("restart_immediate");

}  // namespace

InitResult Server::init(Context& ctx) {
  ctx.raw_network(true);  // what crosses to its clients is TCP, modelled here (tcp.hpp), not Erlang's
  d_ = &ctx.disk().open<Durable>("pg/" + std::string(c_.name.text()));  // the data directory
  ctx.register_name(c_.name);
  ctx.emit(ev::kStart, {{ev::kKeepaliveIdle, c_.keepalive_idle.ns}, {ev::kKeepaliveInterval, c_.keepalive_interval.ns},
                        {ev::kKeepaliveCount, c_.keepalive_count}, {Atom("tcp_user_timeout"), c_.tcp_user_timeout.ns},
                        {Atom("tcp_retries2"), c_.tcp_retries2}});
  return InitResult::ok();
}

void Server::handle_info(Context& ctx, const Message& m) {
  if (m.kind == MsgKind::down) return down(ctx, m);
  if (m.tag == kSql) return sql(ctx, *m.payload.get<Sql>());
  if (m.tag == kExec) return exec(ctx, *m.payload.get<Sql>());
  if (m.tag == kAck) {
    heard(ctx, *m.payload.get<std::int64_t>());
    return;
  }
  if (m.tag == kDataAck) return data_acked(ctx, *m.payload.get<std::pair<std::int64_t, std::uint64_t>>());
  if (m.tag == kClientProbe) return client_probe(ctx, *m.payload.get<std::pair<std::int64_t, Pid>>());
  if (m.tag == kClose) return socket_end(ctx, *m.payload.get<std::int64_t>(), "closed");
  if (m.tag == kRst) return socket_end(ctx, *m.payload.get<std::int64_t>(), "reset");
  if (m.tag == kKeepalive) return keepalive(ctx, *m.payload.get<Tick>());
  if (m.tag == kRto) return retransmit(ctx, *m.payload.get<Tick>());
  if (m.tag == kIdle) return idle_timeout(ctx, *m.payload.get<Tick>());
  if (m.tag == kLockWait) return lock_timeout(ctx, *m.payload.get<Waiting>());
  if (m.tag == kDeadlockCheck) return deadlock_check(ctx, *m.payload.get<Waiting>());
  if (m.tag == kSlept) return slept(ctx, *m.payload.get<Sql>());
  if (m.tag == kBackendExit) return backend_exit(ctx, *m.payload.get<std::int64_t>());
  if (m.tag == kTerminateWait) return termination_looked(ctx, *m.payload.get<TerminateWait>());
  if (m.tag == kRewatch) return rewatch(ctx, *m.payload.get<std::int64_t>());
  if (m.tag == kOrphanFin) return orphan_fin(ctx, *m.payload.get<Tick>());
  if (m.tag == kReady) return ready(ctx, *m.payload.get<std::uint64_t>());
  if (m.tag == faults::kDegrade) {
    const auto* d = m.payload.get<faults::Degrade>();
    if (d != nullptr && d->on && (d->mode == kRestart || d->mode == kRestartImmediate)) restart(ctx, d->mode == kRestart);
  }
}

// ---- the tables --------------------------------------------------------------------------

/// A write. One with a fencing token is judged by the fence rule (ServerConfig::fence): strict,
/// refused unless the token is the lock's latest and a session holds the lock now (in SQL: the
/// row's WHERE compares the token with the epoch table's, and finds the epoch's session in
/// pg_locks); at_least, refused when a write already went through with a higher token; off,
/// never.
Result Server::write(Context& ctx, std::int64_t id, const Session& s, const Query& q) {
  Result r;
  const std::int64_t latest = d_->tokens[q.lock];
  const bool held = locks_.contains(Key{kDefaultDb, 1, q.lock, 0});
  const char* stale = nullptr;
  if (q.token != 0 && c_.fence == ServerConfig::Fence::strict) stale = q.token != latest ? "stale_token" : !held ? "lock_free" : nullptr;
  if (q.token != 0 && c_.fence == ServerConfig::Fence::at_least && q.token < d_->written[q.lock]) stale = "stale_token";
  if (stale != nullptr) {
    r.status = Result::Status::refused;
    r.error = stale;
    ctx.emit(ev::kWriteRefused, {{ev::kSessionKey, id}, {keys::kNode, s.node}, {ev::kLockKey, q.lock}, {ev::kToken, q.token},
                                 {ev::kLatest, latest}, {ev::kLoop, q.loop}, {keys::kWhy, Atom(stale)}});
    return r;
  }
  d_->written[q.lock] = std::max(d_->written[q.lock], q.token);
  std::vector<TraceField> fields{{ev::kSeq, ++d_->write_seq}, {ev::kSessionKey, id}, {keys::kNode, s.node}, {ev::kLockKey, q.lock},
                                 {ev::kToken, q.token}, {ev::kTable, q.table}, {ev::kLoop, q.loop},  {ev::kTerm, q.term}};
  if (q.term == 0) fields.pop_back();  // the writer said no term (built whole, then cut: GCC 12 warns on a push_back here)
  ctx.emit(ev::kWrite, std::move(fields));
  r.value = true;
  return r;
}

/// A lease on the DB's clock: granted when free, expired, or the asker's own.
Result Server::lease(Context& ctx, std::int64_t id, const Session& s, const Query& q) {
  Result r;
  Durable::Lease& l = d_->leases[q.lock];
  const bool free = l.holder.empty() || l.until < ctx.now() || l.holder == s.node;
  if (!free) return r;
  l = Durable::Lease{s.node, id, ctx.now() + q.ttl};
  ctx.emit(ev::kLease, {{ev::kLockKey, q.lock}, {ev::kSessionKey, id}, {keys::kNode, s.node}, {ev::kTtl, q.ttl.ns}});
  r.value = true;
  r.until = l.until;
  return r;
}

}  // namespace detail

std::unique_ptr<Behaviour> server(const ServerConfig& c) { return std::make_unique<detail::Server>(c); }

}  // namespace lic::scenarios::pg

// ---- what a file can name ----------------------------------------------------------------------

namespace lic::scenarios {

std::vector<BehaviourInfo> pg_behaviours() {
  return {BehaviourInfo{
      "pg.server",
      "a simulated PostgreSQL: sessions over the network, advisory locks (session and transaction level, shared, "
      "blocking with lock_timeout), tables; a session ends at once on a close or a reset, after TCP keepalive or "
      "retransmission on a partition or a pause, or on its idle timeouts (docs/leader-election.md); degrade modes restart "
      "(pg_ctl restart -m fast) and restart_immediate, each refusing connections for its downtime",
      {registered_as({"name", "string", "Postgres", "the name it registers"}),
       {"tcp_keepalives_idle", "duration", "7200s", "silence before the first keepalive probe (Linux's tcp_keepalive_time)"},
       {"tcp_keepalives_interval", "duration", "75s", "between probes (Linux's tcp_keepalive_intvl)"},
       {"tcp_keepalives_count", "int", "9", "unanswered probes before the session ends (Linux's tcp_keepalive_probes)"},
       {"tcp_user_timeout", "duration", "0s",
        "0: off; how long data may stay unacknowledged, and an idle connection unanswered once probing, before the server's OS drops it"},
       {"tcp_retries2", "int", "15", "the server's OS: retransmissions of unacknowledged data before it gives up (15: 924.6 s)"},
       {"idle_session_timeout", "duration", "0s", "0: off; ends a session idle that long (57P05)"},
       {"idle_in_transaction_session_timeout", "duration", "0s", "0: off; ends a session idle that long inside a transaction (25P03)"},
       {"lock_timeout", "duration", "0s", "0: wait for ever; a blocking pg_advisory_lock gives up after it (55P03)"},
       {"deadlock_timeout", "duration", "1s", "0: never look; how long a blocking lock waits before it looks for a deadlock (40P01)"},
       {"query_latency", "duration", "2ms", "how long a query takes at the server"},
       {"restart_downtime", "duration", "230ms",
        "degrade restart (pg_ctl restart -m fast): connections are refused this long (the recorder's cluster: 230 ms)"},
       {"immediate_downtime", "duration", "121ms",
        "degrade restart_immediate: connections are refused this long, crash recovery included (the recorder's cluster: 121 ms; "
        "a durable one with WAL to replay: seconds)"},
       {"rst_on_node_crash", "bool", "true", "a client node's crash resets its connections at once (its OS does)"},
       {"fence", "strict|at_least|off", "strict",
        "a write's fencing token: strict, only the lock's latest while it is held; at_least, none lower than the highest "
        "a write went through with; off, never checked"},
       {"epoch", "every_acquisition|new_node", "every_acquisition",
        "when the lock's token moves: at every acquisition, or only when another node takes it (the same node again keeps its token)"}},
      [](Args& a) -> BehaviourFactory {
        pg::ServerConfig c;
        c.name = a.atom("name");
        c.keepalive_idle = a.positive("tcp_keepalives_idle");
        c.keepalive_interval = a.positive("tcp_keepalives_interval");
        c.keepalive_count = a.integer("tcp_keepalives_count");
        if (c.keepalive_count < 1) a.invalid("tcp_keepalives_count", "must be 1 or more");
        c.tcp_user_timeout = a.duration("tcp_user_timeout");
        // Linux takes it in milliseconds as an int (TCP_USER_TIMEOUT): at most 24.8 days.
        if (c.tcp_user_timeout > kMillisecond * std::numeric_limits<std::int32_t>::max())
          a.invalid("tcp_user_timeout", "must be at most 2147483647ms (Linux takes it as an int of milliseconds)");
        c.tcp_retries2 = a.integer("tcp_retries2");
        if (c.tcp_retries2 < 1 || c.tcp_retries2 > 255) a.invalid("tcp_retries2", "must be 1 to 255");
        c.idle_session_timeout = a.duration("idle_session_timeout");
        c.idle_in_transaction_session_timeout = a.duration("idle_in_transaction_session_timeout");
        c.lock_timeout = a.duration("lock_timeout");
        c.deadlock_timeout = a.duration("deadlock_timeout");
        c.query_latency = a.duration("query_latency");
        c.rst_on_node_crash = a.flag("rst_on_node_crash");
        c.restart_downtime = a.duration("restart_downtime");
        c.immediate_downtime = a.duration("immediate_downtime");
        const std::string fence = a.choice("fence");
        if (fence == "at_least") c.fence = pg::ServerConfig::Fence::at_least;
        if (fence == "off") c.fence = pg::ServerConfig::Fence::off;
        c.epoch_every_acquisition = a.choice("epoch") != "new_node";
        return [c](const std::string&) { return pg::server(c); };
      }}};
}

}  // namespace lic::scenarios
