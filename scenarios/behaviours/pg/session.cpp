// A session, from pg_connect to its end (server.hpp). It starts with the client's settings over
// the server's, runs one statement at a time (query_latency after it arrives; an error inside a
// transaction aborts it, and the rest fail until COMMIT or ROLLBACK), and between statements it
// is idle (idle_session_timeout, idle_in_transaction_session_timeout). It ends when its client
// closes it or is gone (at once on a reset; after a cut, once the path is back), on
// pg_terminate_backend, an idle timeout or a restart, and when TCP gives up (decided in wire.cpp).
// What a statement does to locks is locks.cpp's, to the tables server.cpp's.
#include "scenarios/behaviours/pg/server.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "properties/leader.hpp"
#include "sim/simulation.hpp"
#include "sim/trace_keys.hpp"

namespace lic::scenarios::pg::detail {

namespace ev = properties::leader;

// ---- its start ---------------------------------------------------------------------------

CallReply Server::handle_call(Context& ctx, const Message& m, From) {
  if (m.tag != kConnect) return CallReply::reply(kAnswer);
  // Restarting: nothing listens yet, or the startup process answers 57P03 ("the database system
  // is starting up"); either way the client's connect fails.
  if (ctx.now() < accepting_at_) return CallReply::reply(kAnswer);
  const Hello& h = *m.payload.get<Hello>();
  const std::int64_t id = ++d_->next_session;
  Session& s = sessions_[id];
  s.client = h.client;
  s.node = h.node;
  s.db = h.db;
  s.sent = h.sent;
  s.monitor = ctx.monitor(h.client);
  s.ka.idle = h.set.tcp_keepalives_idle.value_or(c_.keepalive_idle);
  s.ka.interval = h.set.tcp_keepalives_interval.value_or(c_.keepalive_interval);
  s.ka.count = h.set.tcp_keepalives_count.value_or(c_.keepalive_count);
  s.ka.user_timeout = h.set.tcp_user_timeout.value_or(c_.tcp_user_timeout);
  s.idle_timeout = h.set.idle_session_timeout.value_or(c_.idle_session_timeout);
  s.idle_tx_timeout = h.set.idle_in_transaction_session_timeout.value_or(c_.idle_in_transaction_session_timeout);
  s.lock_timeout = h.set.lock_timeout.value_or(c_.lock_timeout);
  s.deadlock_timeout = h.set.deadlock_timeout.value_or(c_.deadlock_timeout);
  ctx.emit(ev::kSession, {{ev::kSessionKey, id}, {keys::kNode, s.node}, {keys::kPid, h.client}});
  s.ka.heard(ctx.now());
  arm(ctx, id, s, s.ka.idle);
  idle(ctx, id, s);
  return CallReply::reply(kAnswer, id);
}

// ---- statements --------------------------------------------------------------------------

void Server::exec(Context& ctx, const Sql& q) {
  const auto it = sessions_.find(q.session);
  if (it == sessions_.end()) return;
  Session& s = it->second;
  // A backend that was sent SIGTERM dies at its next interrupt check: it runs nothing more, and
  // its client sees the connection end.
  if (s.terminating) return;
  const bool ends_block = q.q.op == Query::Op::commit || q.q.op == Query::Op::rollback;
  s.state_change = ctx.now();  // active
  if (s.tx_failed && !ends_block)
    return finish(ctx, q, sql_error("25P02", "current transaction is aborted, commands ignored until end of transaction block"));
  Result r;
  switch (q.q.op) {
    case Query::Op::ping: r.value = true; break;
    case Query::Op::try_lock: r = try_lock(ctx, q.session, s, q.q); break;
    case Query::Op::lock: return lock(ctx, q, s);
    case Query::Op::unlock: r = unlock_one(ctx, q.session, s, q.q); break;
    case Query::Op::unlock_all: unlock_all(ctx, q.session, s); break;
    case Query::Op::begin: s.in_tx = true; break;
    case Query::Op::commit:
    case Query::Op::rollback: end_transaction(ctx, q.session, s); break;
    case Query::Op::sleep: ctx.send_after(q.q.duration, ctx.self(), kSlept, q); return;
    case Query::Op::write: r = write(ctx, q.session, s, q.q); break;
    case Query::Op::lease: r = lease(ctx, q.session, s, q.q); break;
    case Query::Op::holder: r = holder(ctx, q.session, s, q.q); break;
    case Query::Op::terminate: {
      const std::vector<std::int64_t> victims = terminate_backends(ctx, q.session, s, q.q.session);
      if (!victims.empty() && q.q.duration > Duration::zero()) return termination_wait(ctx, TerminateWait{q, victims, q.q.duration});
      r.value = !victims.empty();
      break;
    }
  }
  finish(ctx, q, r);
}

/// A statement is over: its answer goes out, a transaction-level lock taken outside a
/// transaction ends with it, and the session is idle. An error inside a transaction aborts it:
/// its transaction-level locks go at once, and it stays failed until COMMIT or ROLLBACK.
void Server::finish(Context& ctx, const Sql& q, const Result& r) {
  const auto it = sessions_.find(q.session);
  if (it == sessions_.end()) return;
  Session& s = it->second;
  // A backend sent SIGTERM answers nothing more: it dies at its next interrupt check (a
  // pg_sleep, a lock wait, its own pg_terminate_backend), and its client sees the connection end.
  if (s.terminating) return;
  // The connection ended while it ran: the answer meets a closed socket, and the backend ends.
  if (s.gone != nullptr) return end(ctx, q.session, s.gone, s.gone_bye);
  s.busy = false;
  if (s.in_tx && r.status == Result::Status::sql_error) s.tx_failed = true;
  if (!s.in_tx || s.tx_failed) release_level(ctx, q.session, s, 1);
  reply(ctx, q, r);
  idle(ctx, q.session, s);
}

void Server::slept(Context& ctx, const Sql& q) {
  Result r;
  finish(ctx, q, r);
}

void Server::end_transaction(Context& ctx, std::int64_t id, Session& s) {
  s.in_tx = false;
  s.tx_failed = false;
  release_level(ctx, id, s, 1);
}

// ---- idle --------------------------------------------------------------------------------

/// idle_session_timeout, or idle_in_transaction_session_timeout inside a transaction.
void Server::idle(Context& ctx, std::int64_t id, Session& s) {
  ++s.idle_gen;
  s.state_change = ctx.now();
  const Duration t = s.in_tx ? s.idle_tx_timeout : s.idle_timeout;
  if (t > Duration::zero()) ctx.send_after(t, ctx.self(), kIdle, Tick{id, s.idle_gen});
}

void Server::idle_timeout(Context& ctx, const Tick& t) {
  const auto it = sessions_.find(t.session);
  if (it == sessions_.end() || it->second.idle_gen != t.gen || it->second.busy) return;
  if (it->second.in_tx) return end(ctx, t.session, "idle_in_transaction_session_timeout", "25P03");
  end(ctx, t.session, "idle_session_timeout", "57P05");
}

// ---- its end -----------------------------------------------------------------------------

/// The client's connection process is gone: at once when its OS reset the connection (the
/// process died, or its node crashed and rst_on_node_crash), never when contact was lost
/// (a partition): keepalive tells then, or the client's OS once the path is back. A client
/// that died while its own connection was cut sent its FIN into the cut: its OS sends it again
/// on the retransmission timer (orphan_fin), and the session ends when one gets through.
void Server::down(Context& ctx, const Message& m) {
  for (auto& [id, s] : sessions_) {
    if (s.monitor != m.ref) continue;
    const bool lost_contact = m.reason == Reason::noconnection();
    if (!lost_contact && ctx.simulation().process_cut(s.client)) {
      s.monitor = Ref{};
      orphaned(ctx, id, s);
      return;
    }
    if (!lost_contact) {
      s.monitor = Ref{};
      return socket_end(ctx, id, m.reason.is_clean() ? "closed" : "reset");
    }
    if (c_.rst_on_node_crash && !ctx.node_up(s.node)) return socket_end(ctx, id, "reset");
    s.monitor = Ref{};
    ctx.send_after(kSecond, ctx.self(), kRewatch, id);
    return;
  }
}

/// While the path to a client is cut, look again each second; once it is back, watch the
/// client again: one that died meanwhile (its FIN or RST lost on the cut) ends the session at
/// once (its OS resends the FIN, or answers the next segment with RST).
void Server::rewatch(Context& ctx, std::int64_t id) {
  const auto it = sessions_.find(id);
  if (it == sessions_.end() || it->second.monitor) return;
  Session& s = it->second;
  if (path_open(ctx, s.node)) s.monitor = ctx.monitor(s.client);
  else ctx.send_after(kSecond, ctx.self(), kRewatch, id);
}

bool Server::path_open(Context& ctx, Atom node) {
  Simulation& sim = ctx.simulation();
  return ctx.node_up(node) && !sim.blocked(ctx.node(), node) && !sim.blocked(node, ctx.node());
}

bool Server::reachable(Context& ctx, const Session& s) {
  return path_open(ctx, s.node) && !ctx.simulation().process_cut(s.client);
}

/// The client died behind a cut: its FIN was lost, and its OS keeps the socket as an orphan.
/// Queries it had not got acknowledged go again on their own timer, where it stands, the FIN
/// behind them; with none, the FIN alone on a timer started now.
void Server::orphaned(Context& ctx, std::int64_t id, Session& s) {
  if (s.sent && !s.sent->segs.empty()) {
    s.fin = *s.sent;
    ++s.fin.gen;
    const Time due = s.fin.armed_at + linux_timer(s.fin.armed_at, s.fin.armed_for);
    ctx.send_after(std::max(due - ctx.now(), Duration::zero()), ctx.self(), kOrphanFin, Tick{id, s.fin.gen});
    return;
  }
  s.fin.arm(ctx.now());
  ctx.send_after(linux_timer(ctx.now(), s.fin.rto), ctx.self(), kOrphanFin, Tick{id, s.fin.gen});
}

/// The dead client's orphaned socket sends again: through, its queries arrive (and run), then
/// its FIN, and the session ends as a client that closed ends (the backend reads end of file,
/// after the statements: socket_end); still cut, again after twice as long, until
/// kOrphanRetries. Then the orphan is gone, and the session waits for its own keepalive (or an
/// answer sent again) to meet the client's OS, which resets it (keepalive(), retransmit()).
void Server::orphan_fin(Context& ctx, const Tick& t) {
  const auto it = sessions_.find(t.session);
  if (it == sessions_.end() || it->second.fin.gen != t.gen) return;
  Session& s = it->second;
  if (reachable(ctx, s)) {
    for (const Sql& q : std::vector<Sql>(s.fin.segs)) sql(ctx, q);
    return socket_end(ctx, t.session, "closed");
  }
  const std::optional<Duration> next = s.fin.fire(ctx.now(), Duration::zero(), kOrphanRetries);
  if (!next) {
    s.fin.armed = false;  // the orphan is gone: a probe now meets the client's OS, which resets it
    return;
  }
  ctx.send_after(linux_timer(ctx.now(), *next), ctx.self(), kOrphanFin, Tick{t.session, s.fin.gen});
}

/// The session ends: its locks go, what it waited for is forgotten. `bye`: what the server
/// tells the client (a FATAL's SQLSTATE, or empty for a reset); none when the client left.
void Server::end(Context& ctx, std::int64_t id, const char* why, std::optional<std::string> bye) {
  const auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  std::set<Key> waited;  // a waiter gone from the line lets those behind it go (ProcLockWakeup)
  for (const Waiter& w : waiters_)
    if (w.q.session == id) waited.insert(w.key);
  std::erase_if(waiters_, [id](const Waiter& w) { return w.q.session == id; });
  for (const Key& key : std::set<Key>(it->second.keys)) drop(ctx, id, key, -1, why);
  for (const Key& key : waited) grant_waiters(ctx, key);
  const Session s = sessions_.at(id);
  if (s.monitor) ctx.demonitor(s.monitor, true);
  sessions_.erase(id);
  if (bye) ctx.send(s.client, kBye, Bye{*bye});
  ctx.emit(ev::kSessionEnd, {{ev::kSessionKey, id}, {keys::kNode, s.node}, {keys::kWhy, Atom(why)}});
}

void Server::socket_end(Context& ctx, std::int64_t id, const char* why, std::optional<std::string> bye) {
  const auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  if (!it->second.busy) return end(ctx, id, why, std::move(bye));
  if (it->second.gone != nullptr) return;
  it->second.gone = why;
  it->second.gone_bye = std::move(bye);
  ++it->second.ka.gen;   // its timers have nothing left to watch
  ++it->second.out.gen;
  ++it->second.fin.gen;
}

/// pg_terminate_backend: the session `victim`, or (0) every other session from the asker's node.
/// As on PostgreSQL it only signals (SIGTERM) and returns: each backend ends a moment later
/// (backend_exit_latency, drawn) and holds its locks until then, so a lock tried right after the
/// answer can still be held. The sessions signalled (one signalled before is signalled again,
/// and still ends when it was going to).
std::vector<std::int64_t> Server::terminate_backends(Context& ctx, std::int64_t asker, const Session& s, std::int64_t victim) {
  std::vector<std::int64_t> ids;
  for (const auto& [id, other] : sessions_)
    if (victim != 0 ? id == victim : id != asker && other.node == s.node) ids.push_back(id);
  for (std::int64_t id : ids) {
    Session& v = sessions_.at(id);
    if (v.terminating) continue;
    v.terminating = true;
    if (!exit_rng_) exit_rng_ = ctx.rng().derive("backend exit");
    ctx.send_after(backend_exit_latency(*exit_rng_), ctx.self(), kBackendExit, id);
  }
  return ids;
}

Duration backend_exit_latency(Rng& rng) {
  // {quantile in millionths, latency in ns}: three backends in four are gone within 50 us of the
  // signal; the fourth waits for a core, up to a few milliseconds (two cores).
  static constexpr std::array<std::pair<std::uint64_t, std::int64_t>, 8> kQuantiles{{
      {0, 20'000}, {750'000, 50'000}, {800'000, 200'000}, {850'000, 300'000},
      {900'000, 1'000'000}, {950'000, 2'000'000}, {990'000, 2'800'000}, {1'000'000, 3'800'000}}};
  const std::uint64_t u = rng.uniform(1'000'000);
  for (std::size_t k = 1; k < kQuantiles.size(); ++k) {
    const auto [q1, ns1] = kQuantiles[k];
    if (u >= q1) continue;
    const auto [q0, ns0] = kQuantiles[k - 1];
    const auto along = static_cast<std::int64_t>(u - q0);
    return Duration{ns0 + (ns1 - ns0) * along / static_cast<std::int64_t>(q1 - q0)};
  }
  return Duration{kQuantiles.back().second};
}

/// A terminated backend is gone: its session ends (FATAL 57P01 to its client), its locks go.
void Server::backend_exit(Context& ctx, std::int64_t id) {
  const auto it = sessions_.find(id);
  if (it != sessions_.end() && it->second.terminating) end(ctx, id, "terminated", "57P01");
}

/// One turn of pg_wait_until_termination's loop (src/backend/storage/ipc/signalfuncs.c): true
/// when every backend signalled is gone; else wait min(100 ms, what is left) and look again while
/// time is left. It does not look after its last wait: a backend gone during it is still "did not
/// terminate" (false, with a WARNING).
void Server::termination_wait(Context& ctx, TerminateWait w) {
  const bool gone = std::none_of(w.victims.begin(), w.victims.end(), [&](std::int64_t id) { return sessions_.count(id) > 0; });
  if (gone) {
    Result r;
    r.value = true;
    return finish(ctx, w.q, r);
  }
  const Duration wait = std::min(kTerminationPoll, w.left);
  w.left = w.left - wait;
  ctx.send_after(wait, ctx.self(), kTerminateWait, std::move(w));
}

void Server::termination_looked(Context& ctx, const TerminateWait& w) {
  if (w.left > Duration::zero()) return termination_wait(ctx, w);
  Result r;
  r.value = false;
  for (std::int64_t id : w.victims)  // gone or not: it did not look again
    r.notices.push_back(fmt::format("backend with PID {} did not terminate within {} millisecond{}", id, w.q.q.duration.ns / 1'000'000,
                                    w.q.q.duration.ns == 1'000'000 ? "" : "s"));
  finish(ctx, w.q, r);
}

/// pg_ctl restart: every session ends (fast: a FATAL 57P01 first; immediate: no error
/// message); the data stays.
void Server::restart(Context& ctx, bool fast) {
  std::vector<std::int64_t> ids;
  // Every backend goes at once: none takes a lock another's end frees on the way (a waiter
  // granted mid-restart would answer and bump the token before its FATAL).
  for (auto& [id, s] : sessions_) {
    ids.push_back(id);
    s.terminating = true;
  }
  for (std::int64_t id : ids) end(ctx, id, "restart", fast ? "57P01" : "");
  // Then it refuses connections for its downtime (a shutdown checkpoint and a start; or crash
  // recovery): traced db_restart {mode, downtime}, and db_ready when it accepts again.
  const Duration down = fast ? c_.restart_downtime : c_.immediate_downtime;
  ctx.emit(ev::kRestart, {{Atom("mode"), Atom(fast ? "fast" : "immediate")}, {Atom("downtime_ns"), down.ns}});
  accepting_at_ = std::max(accepting_at_, ctx.now() + down);
  ctx.send_after(accepting_at_ - ctx.now(), ctx.self(), kReady, ++restarts_);
}

void Server::ready(Context& ctx, std::uint64_t restart) {
  if (restart == restarts_) ctx.emit(ev::kReady);
}

}  // namespace lic::scenarios::pg::detail
