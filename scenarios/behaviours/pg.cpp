#include "scenarios/behaviours/pg.hpp"

#include <map>
#include <set>
#include <vector>

#include "properties/leader.hpp"
#include "scenarios/behaviours/table.hpp"
#include "scenarios/faults/fault.hpp"
#include "sim/simulation.hpp"
#include "sim/trace_keys.hpp"

namespace lic::scenarios::pg {

namespace ev = properties::leader;

namespace {

// The wire: client connection process <-> server.
const Atom kConnect("pg_connect");    // call: {client pid, its node} -> session id
const Atom kSql("pg_sql");            // client -> server: Sql
const Atom kAnswer("pg_answer");      // server -> client: Answer
const Atom kProbe("pg_probe");        // server -> client: keepalive probe
const Atom kAck("pg_ack");            // client -> server: keepalive answer
const Atom kClose("pg_close");        // client -> server: {session}
const Atom kExec("$exec");            // server -> itself: a query's latency is over
const Atom kKeepalive("$keepalive");  // server -> itself: a session's keepalive timer
const Atom kRewatch("$rewatch");      // server -> itself: look again at a client contact was lost with
// The owner <-> its connection process.
const Atom kOpen("conn_open");
const Atom kQuery("conn_query");
const Atom kShut("conn_close");
const Atom kQueryTimeout("$query_timeout");
const Atom kRestart("restart");

const char* const kNoConnection = "ConnectionDoesNotExistError";

struct Sql {
  std::int64_t session = 0;
  std::uint64_t qid = 0;
  Pid reply_to;
  Query q;
};

struct Answer {
  std::uint64_t qid = 0;
  Result r;
};

struct Tick {  // a keepalive timer
  std::int64_t session = 0;
  std::uint64_t gen = 0;
};

/// What survives a restart: the data, the tokens, the sequences.
struct Durable {
  std::int64_t next_session = 0;
  std::int64_t write_seq = 0;
  std::map<std::int64_t, std::int64_t> tokens;  // lock -> the latest fencing token
  struct Lease {
    Atom holder;
    std::int64_t session = 0;
    Time until{};
  };
  std::map<std::int64_t, Lease> leases;  // lock -> its lease
};

struct Session {
  Pid client;
  Atom node;
  Ref monitor;
  Time last_heard{};
  std::int64_t probes = 0;
  std::uint64_t gen = 0;  // a stale keepalive timer carries an older one
  std::set<std::int64_t> locks;
};

class Server final : public Behaviour {
 public:
  explicit Server(ServerConfig c) : c_(c) {}

  InitResult init(Context& ctx) override {
    d_ = &ctx.disk().open<Durable>("pg/" + std::string(c_.name.text()));  // the data directory
    ctx.register_name(c_.name);
    ctx.emit(ev::kStart, {{ev::kKeepaliveIdle, c_.keepalive_idle.ns}, {ev::kKeepaliveInterval, c_.keepalive_interval.ns},
                          {ev::kKeepaliveCount, c_.keepalive_count}});
    return InitResult::ok();
  }

  CallReply handle_call(Context& ctx, const Message& m, From) override {
    if (m.tag != kConnect) return CallReply::reply(kAnswer);
    const auto& [client, node] = *m.payload.get<std::pair<Pid, Atom>>();
    const std::int64_t id = ++d_->next_session;
    Session& s = sessions_[id];
    s.client = client;
    s.node = node;
    s.monitor = ctx.monitor(client);
    s.last_heard = ctx.now();
    ctx.emit(ev::kSession, {{ev::kSessionKey, id}, {keys::kNode, s.node}, {keys::kPid, client}});
    arm(ctx, id, s);
    return CallReply::reply(kAnswer, id);
  }

  void handle_info(Context& ctx, const Message& m) override {
    if (m.kind == MsgKind::down) return down(ctx, m);
    if (m.tag == kSql) return sql(ctx, *m.payload.get<Sql>());
    if (m.tag == kExec) return exec(ctx, *m.payload.get<Sql>());
    if (m.tag == kAck) return heard(ctx, *m.payload.get<std::int64_t>());
    if (m.tag == kClose) return end(ctx, *m.payload.get<std::int64_t>(), "closed");
    if (m.tag == kKeepalive) return keepalive(ctx, *m.payload.get<Tick>());
    if (m.tag == kRewatch) return rewatch(ctx, *m.payload.get<std::int64_t>());
    if (m.tag == faults::kDegrade) {
      const auto* d = m.payload.get<faults::Degrade>();
      if (d != nullptr && d->on && d->mode == kRestart) restart(ctx);
    }
  }

 private:
  /// The session's keepalive timer, from the last it heard of the client.
  void arm(Context& ctx, std::int64_t id, Session& s) {
    ++s.gen;
    const Duration wait = s.probes == 0 ? c_.keepalive_idle - (ctx.now() - s.last_heard) : c_.keepalive_interval;
    ctx.send_after(std::max(wait, Duration::zero()), ctx.self(), kKeepalive, Tick{id, s.gen});
  }

  void heard(Context& ctx, std::int64_t id) {
    const auto it = sessions_.find(id);
    if (it == sessions_.end()) return;
    it->second.last_heard = ctx.now();
    if (it->second.probes != 0) {
      it->second.probes = 0;
      arm(ctx, id, it->second);
    }
  }

  void keepalive(Context& ctx, const Tick& t) {
    const auto it = sessions_.find(t.session);
    if (it == sessions_.end() || it->second.gen != t.gen) return;
    Session& s = it->second;
    if (s.probes == 0 && ctx.now() - s.last_heard < c_.keepalive_idle) return arm(ctx, t.session, s);  // it spoke
    if (s.probes >= c_.keepalive_count) return end(ctx, t.session, "keepalive");
    // The client's OS answers a probe for a socket it no longer has with a reset.
    if (!ctx.alive(s.client) && ctx.node_up(s.node) && ctx.simulation().connected(ctx.node(), s.node))
      return end(ctx, t.session, "reset");
    ++s.probes;
    ctx.send(s.client, kProbe, t.session);
    arm(ctx, t.session, s);
  }

  /// The client's connection process is gone: at once when its OS reset the connection (the
  /// process died, or its node crashed and rst_on_node_crash), never when contact was lost
  /// (a partition): keepalive tells then, or the client's OS once the path is back.
  void down(Context& ctx, const Message& m) {
    for (auto& [id, s] : sessions_) {
      if (s.monitor != m.ref) continue;
      const bool lost_contact = m.reason == Reason::noconnection();
      if (!lost_contact) return end(ctx, id, m.reason.is_clean() ? "closed" : "reset");
      if (c_.rst_on_node_crash && !ctx.node_up(s.node)) return end(ctx, id, "reset");
      s.monitor = Ref{};
      ctx.send_after(kSecond, ctx.self(), kRewatch, id);
      return;
    }
  }

  /// While the path to a client is cut, look again each second; once it is back, watch the
  /// client again: one that died meanwhile (its FIN or RST lost on the cut) ends the session at
  /// once (its OS resends the FIN, or answers the next segment with RST).
  void rewatch(Context& ctx, std::int64_t id) {
    const auto it = sessions_.find(id);
    if (it == sessions_.end() || it->second.monitor) return;
    Session& s = it->second;
    if (ctx.node_up(s.node) && ctx.simulation().connected(ctx.node(), s.node)) s.monitor = ctx.monitor(s.client);
    else ctx.send_after(kSecond, ctx.self(), kRewatch, id);
  }

  void sql(Context& ctx, const Sql& q) {
    if (!sessions_.contains(q.session)) return reply(ctx, q, refused_connection());  // the OS resets it
    heard(ctx, q.session);
    ctx.send_after(c_.query_latency, ctx.self(), kExec, q);
  }

  void exec(Context& ctx, const Sql& q) {
    const auto it = sessions_.find(q.session);
    if (it == sessions_.end()) return reply(ctx, q, refused_connection());
    Result r;
    switch (q.q.op) {
      case Query::Op::ping: r.value = true; break;
      case Query::Op::try_lock: r = try_lock(ctx, q.session, it->second, q.q.lock); break;
      case Query::Op::unlock: r.value = unlock(ctx, q.session, it->second, q.q.lock, "unlock"); break;
      case Query::Op::write: r = write(ctx, q.session, it->second, q.q); break;
      case Query::Op::lease: r = lease(ctx, q.session, it->second, q.q); break;
      case Query::Op::terminate: r.value = terminate_backends(ctx, q.session, it->second, q.q.session); break;
    }
    reply(ctx, q, r);
  }

  static Result refused_connection() {
    Result r;
    r.status = Result::Status::no_connection;
    r.error = kNoConnection;
    return r;
  }

  void reply(Context& ctx, const Sql& q, const Result& r) { ctx.send(q.reply_to, kAnswer, Answer{q.qid, r}); }

  Result try_lock(Context& ctx, std::int64_t id, Session& s, std::int64_t lock) {
    Result r;
    const auto held = holder_.find(lock);
    if (held != holder_.end() && held->second != id) return r;  // another session holds it
    r.value = true;
    if (held != holder_.end()) {
      r.token = d_->tokens[lock];  // re-entrant: the same session takes it again
      return r;
    }
    holder_[lock] = id;
    s.locks.insert(lock);
    r.token = ++d_->tokens[lock];
    ctx.emit(ev::kLock, {{ev::kLockKey, lock}, {ev::kSessionKey, id}, {keys::kNode, s.node}, {ev::kToken, r.token}});
    return r;
  }

  bool unlock(Context& ctx, std::int64_t id, Session& s, std::int64_t lock, const char* why) {
    const auto held = holder_.find(lock);
    if (held == holder_.end() || held->second != id) return false;
    holder_.erase(held);
    s.locks.erase(lock);
    ctx.emit(ev::kUnlock, {{ev::kLockKey, lock}, {ev::kSessionKey, id}, {keys::kNode, s.node}, {keys::kWhy, Atom(why)}});
    return true;
  }

  /// A write; one with a fencing token is refused unless the token is the lock's latest and a
  /// session holds the lock now (in SQL: the row's WHERE compares the token with the epoch
  /// table's, and finds the epoch's session in pg_locks).
  Result write(Context& ctx, std::int64_t id, const Session& s, const Query& q) {
    Result r;
    const std::int64_t latest = d_->tokens[q.lock];
    const char* stale = q.token == 0 ? nullptr : q.token != latest ? "stale_token" : !holder_.contains(q.lock) ? "lock_free" : nullptr;
    if (stale != nullptr) {
      r.status = Result::Status::refused;
      r.error = stale;
      ctx.emit(ev::kWriteRefused, {{ev::kSessionKey, id}, {keys::kNode, s.node}, {ev::kLockKey, q.lock}, {ev::kToken, q.token},
                                   {ev::kLatest, latest}, {ev::kLoop, q.loop}, {keys::kWhy, Atom(stale)}});
      return r;
    }
    ctx.emit(ev::kWrite, {{ev::kSeq, ++d_->write_seq}, {ev::kSessionKey, id}, {keys::kNode, s.node}, {ev::kLockKey, q.lock},
                          {ev::kToken, q.token}, {ev::kTable, q.table}, {ev::kLoop, q.loop}});
    r.value = true;
    return r;
  }

  /// A lease on the DB's clock: granted when free, expired, or the asker's own.
  Result lease(Context& ctx, std::int64_t id, const Session& s, const Query& q) {
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

  void end(Context& ctx, std::int64_t id, const char* why) {
    const auto it = sessions_.find(id);
    if (it == sessions_.end()) return;
    Session s = it->second;
    for (std::int64_t lock : std::set<std::int64_t>(s.locks)) unlock(ctx, id, it->second, lock, why);
    if (s.monitor) ctx.demonitor(s.monitor, true);
    sessions_.erase(it);
    ctx.emit(ev::kSessionEnd, {{ev::kSessionKey, id}, {keys::kNode, s.node}, {keys::kWhy, Atom(why)}});
  }

  /// pg_terminate_backend: the session `victim`, or (0) every other session from the asker's node.
  bool terminate_backends(Context& ctx, std::int64_t asker, const Session& s, std::int64_t victim) {
    std::vector<std::int64_t> ids;
    for (const auto& [id, other] : sessions_)
      if (victim != 0 ? id == victim : id != asker && other.node == s.node) ids.push_back(id);
    for (std::int64_t id : ids) end(ctx, id, "terminated");
    return !ids.empty();
  }

  /// pg_ctl restart -m fast: every session ends; the data stays.
  void restart(Context& ctx) {
    std::vector<std::int64_t> ids;
    for (const auto& [id, s] : sessions_) ids.push_back(id);
    for (std::int64_t id : ids) end(ctx, id, "restart");
  }

  ServerConfig c_;
  Durable* d_ = nullptr;  // on the node's disk
  std::map<std::int64_t, Session> sessions_;
  std::map<std::int64_t, std::int64_t> holder_;  // lock -> the session holding it
};

// ---- the client side ------------------------------------------------------------------------

/// The driver's connection: a process on the client's node that owns the session, forwards its
/// owner's queries, answers keepalive probes at any time, and gives up on a query after its
/// command timeout.
class ConnProc final : public Behaviour {
 public:
  ConnProc(Atom server, Pid owner) : server_(server), owner_(owner) {}

  /// The socket is the owner's: an abnormal end takes it down through the link (the OS resets
  /// it); a normal one is seen here, and the OS closes it (FIN).
  InitResult init(Context& ctx) override {
    ctx.monitor(owner_);
    return InitResult::ok();
  }

  CallReply handle_call(Context& ctx, const Message& m, From from) override {
    if (m.tag == kOpen) return open(ctx);
    if (m.tag == kShut) {
      if (session_ != 0) ctx.send(server_, kClose, session_);
      ctx.stop(Reason::normal());
      return CallReply::reply(kShut);
    }
    if (m.tag != kQuery) return CallReply::noreply();
    const auto& [q, timeout] = *m.payload.get<std::pair<Query, Duration>>();
    const std::uint64_t qid = ++next_qid_;
    pending_[qid] = from;
    ctx.send(server_, kSql, Sql{session_, qid, ctx.self(), q});
    ctx.send_after(timeout, ctx.self(), kQueryTimeout, qid);
    return CallReply::noreply();
  }

  void handle_info(Context& ctx, const Message& m) override {
    if (m.kind == MsgKind::down) {  // the owner ended without closing
      if (session_ != 0) ctx.send(server_, kClose, session_);
      ctx.stop(Reason::normal());
    } else if (m.tag == kProbe) {
      ctx.send(server_, kAck, session_);
    } else if (m.tag == kAnswer) {
      const Answer& a = *m.payload.get<Answer>();
      answer(ctx, a.qid, a.r);
    } else if (m.tag == kQueryTimeout) {
      Result r;
      r.status = Result::Status::timeout;
      r.error = "TimeoutError";
      answer(ctx, *m.payload.get<std::uint64_t>(), r);
    }
  }

 private:
  CallReply open(Context& ctx) {
    const CallResult r = ctx.call(server_, kConnect, std::pair<Pid, Atom>{ctx.self(), ctx.node()}, kSecond * 10);
    if (!r.ok() || r.reply->payload.get<std::int64_t>() == nullptr) {
      ctx.stop(Reason::normal());
      return CallReply::reply(kOpen, std::int64_t{0});
    }
    session_ = *r.reply->payload.get<std::int64_t>();
    return CallReply::reply(kOpen, session_);
  }

  void answer(Context& ctx, std::uint64_t qid, const Result& r) {
    const auto it = pending_.find(qid);
    if (it == pending_.end()) return;  // answered already (late, or after its timeout)
    ctx.reply(it->second, kAnswer, r);
    pending_.erase(it);
  }

  Atom server_;
  Pid owner_;
  std::int64_t session_ = 0;
  std::uint64_t next_qid_ = 0;
  std::map<std::uint64_t, From> pending_;
};

}  // namespace

std::optional<Conn> Conn::connect(Context& ctx, Atom server, Duration timeout) {
  SpawnOptions o;
  o.link = true;  // the socket goes with its owner (a normal end: ConnProc's monitor)
  o.label = Label{Atom(std::string(ctx.label().name.text()) + "/conn"), 1};
  const Pid p = ctx.spawn(std::make_unique<ConnProc>(server, ctx.self()), o);
  const CallResult r = ctx.call(p, kOpen, {}, timeout);
  const std::int64_t* id = r.ok() ? r.reply->payload.get<std::int64_t>() : nullptr;
  if (id == nullptr || *id == 0) {
    if (ctx.alive(p)) {
      ctx.unlink(p);
      ctx.exit(p, Reason::kill());
    }
    return std::nullopt;
  }
  Conn c;
  c.pid_ = p;
  c.session_ = *id;
  return c;
}

Result Conn::query(Context& ctx, const Query& q, Duration timeout) const {
  const CallResult r = ctx.call(pid_, kQuery, std::pair<Query, Duration>{q, timeout}, timeout + kSecond);
  if (r.ok() && r.reply->payload.get<Result>() != nullptr) return *r.reply->payload.get<Result>();
  Result out;
  out.status = Result::Status::error;
  out.error = "the connection is gone";
  return out;
}

void Conn::close(Context& ctx) const {
  if (!ctx.alive(pid_)) return;
  ctx.call(pid_, kShut, {}, kSecond);
  ctx.unlink(pid_);
}

std::unique_ptr<Behaviour> server(const ServerConfig& c) { return std::make_unique<Server>(c); }

}  // namespace lic::scenarios::pg

// ---- what a file can name ----------------------------------------------------------------------

namespace lic::scenarios {

std::vector<BehaviourInfo> pg_behaviours() {
  return {BehaviourInfo{
      "pg.server",
      "a simulated PostgreSQL: sessions over the network, session-level advisory locks, tables; a session ends at once on "
      "a close or a reset, after TCP keepalive on a partition or a pause (docs/leader-election.md); degrade mode restart",
      {{"name", "string", "Postgres", "the name it registers"},
       {"tcp_keepalives_idle", "duration", "7200s", "silence before the first keepalive probe (Linux's default)"},
       {"tcp_keepalives_interval", "duration", "75s", "between probes"},
       {"tcp_keepalives_count", "int", "9", "unanswered probes before the session ends"},
       {"query_latency", "duration", "2ms", "how long a query takes at the server"},
       {"rst_on_node_crash", "bool", "true", "a client node's crash resets its connections at once (its OS does)"}},
      [](Args& a) -> BehaviourFactory {
        pg::ServerConfig c;
        c.name = a.atom("name");
        c.keepalive_idle = a.positive("tcp_keepalives_idle");
        c.keepalive_interval = a.positive("tcp_keepalives_interval");
        c.keepalive_count = a.integer("tcp_keepalives_count");
        if (c.keepalive_count < 1) a.invalid("tcp_keepalives_count", "must be 1 or more");
        c.query_latency = a.duration("query_latency");
        c.rst_on_node_crash = a.flag("rst_on_node_crash");
        return [c](const std::string&) { return pg::server(c); };
      }}};
}

}  // namespace lic::scenarios
