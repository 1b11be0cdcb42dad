#include "scenarios/behaviours/pg.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "properties/leader.hpp"
#include "scenarios/behaviours/table.hpp"
#include "scenarios/faults/fault.hpp"
#include "sim/simulation.hpp"
#include "sim/trace_keys.hpp"

namespace lic::scenarios::pg {

namespace ev = properties::leader;

namespace {

// The wire: client connection process <-> server. Data (queries, answers) is acknowledged by the
// other side's OS (pg_data_ack) and sent again until it is (TCP retransmission).
const Atom kConnect("pg_connect");    // call: Hello -> session id
const Atom kSql("pg_sql");            // client -> server: Sql (data)
const Atom kAnswer("pg_answer");      // server -> client: Answer (data)
const Atom kDataAck("pg_data_ack");   // either way: {session, qid} acknowledged by the OS
const Atom kProbe("pg_probe");        // server -> client: keepalive probe
const Atom kAck("pg_ack");            // client -> server: keepalive answer
const Atom kClientProbe("pg_cprobe"); // client -> server: the client's keepalive probe
const Atom kClientAck("pg_cack");     // server -> client: its answer
const Atom kBye("pg_bye");            // server -> client: the server ended the session: FATAL + FIN, or RST
const Atom kClose("pg_close");        // client -> server: {session} (Terminate + FIN)
const Atom kRst("pg_rst");            // client -> server: {session} the client's OS reset it
const Atom kExec("$exec");            // server -> itself: a query's latency is over
const Atom kKeepalive("$keepalive");  // server -> itself: a session's keepalive timer
const Atom kRto("$rto");              // a retransmission timer
const Atom kRewatch("$rewatch");      // server -> itself: look again at a client contact was lost with
const Atom kIdle("$idle");            // server -> itself: idle_session_timeout / idle_in_transaction_session_timeout
const Atom kLockWait("$lock_timeout");// server -> itself: a waiting lock's lock_timeout
const Atom kDeadlockCheck("$deadlock_timeout");  // server -> itself: a waiting lock looks for a deadlock
const Atom kSlept("$slept");          // server -> itself: pg_sleep is over
// The owner <-> its connection process.
const Atom kOpen("conn_open");
const Atom kQuery("conn_query");
const Atom kShut("conn_close");
const Atom kQueryTimeout("$query_timeout");
const Atom kRestart("restart");
const Atom kRestartImmediate("restart_immediate");

const char* const kNoConnection = "ConnectionDoesNotExistError";
const char* const kDefaultDb = "postgres";

struct Hello {
  Pid client;
  Atom node;
  std::string db;
  SessionSettings set;
};

struct Sql {
  std::int64_t session = 0;
  std::uint64_t qid = 0;
  Pid reply_to;
  Query q;
  std::uint64_t unacked_from = 0;  // the client's oldest unacknowledged answer... of its own queries: the server forgets older ids
};

struct Answer {
  std::uint64_t qid = 0;
  Result r;
};

struct Bye {
  std::string sqlstate;  // empty: a reset (no FATAL message)
};

struct Tick {  // a session's timer
  std::int64_t session = 0;
  std::uint64_t gen = 0;
};

struct Waiting {  // a statement waiting for its lock, or in pg_sleep
  std::int64_t session = 0;
  std::uint64_t qid = 0;
};

/// Keepalive, as Linux's tcp_keepalive_timer decides it: what to do when the timer fires.
struct Keepalive {
  Duration idle{}, interval{};
  std::int64_t count = 9;
  Duration user_timeout{};
  Time last_heard{};
  std::int64_t probes = 0;
  std::uint64_t gen = 0;  // a stale timer carries an older one

  enum class Do : std::uint8_t { wait, probe, dead };
  struct Step {
    Do what = Do::wait;
    Duration next{};
  };
  /// `unacked`: data is out, so keepalive waits ("alive without keepalive").
  Step step(Time now, bool unacked) {
    if (unacked) return {Do::wait, idle};
    const Duration elapsed = now - last_heard;
    if (elapsed < idle) return {Do::wait, idle - elapsed};
    const bool dead = user_timeout > Duration::zero() ? elapsed >= user_timeout && probes > 0 : probes >= count;
    if (dead) return {Do::dead, {}};
    ++probes;
    return {Do::probe, interval};
  }
  /// Something was heard: true when probes were out (the timer must look again, `idle` from now;
  /// otherwise the armed timer finds the silence shorter and waits what is left).
  bool heard(Time now) {
    last_heard = now;
    const bool probing = probes != 0;
    probes = 0;
    return probing;
  }
};

/// Data sent and not yet acknowledged, as Linux retransmits it (tcp_retransmit_timer).
template <class Segment>
struct Outbox {
  std::vector<Segment> segs;
  Time first{};  // when the oldest was first sent (retrans_stamp)
  Duration rto = kRtoInitial;
  std::int64_t retransmits = 0;
  std::uint64_t gen = 0;
  bool armed = false;

  /// A new segment; true when the timer must be armed (`rto` from now).
  bool add(Time now, Segment seg) {
    segs.push_back(std::move(seg));
    if (armed) return false;
    first = now;
    rto = kRtoInitial;
    retransmits = 0;
    armed = true;
    ++gen;
    return true;
  }
  /// The other side acknowledged `qid`; true when the timer must be armed again (`rto` from now).
  bool acked(Time now, std::uint64_t qid) {
    std::erase_if(segs, [qid](const Segment& s) { return s.qid == qid; });
    ++gen;
    armed = !segs.empty();
    first = now;
    rto = kRtoInitial;
    retransmits = 0;
    return armed;
  }
  /// The timer fired: dead (nullopt), or send everything again and look after the result. The
  /// clock starts at the first retransmission (Linux's retrans_stamp is the segment's timestamp,
  /// which its first retransmission sets).
  std::optional<Duration> fire(Time now, Duration user_timeout, std::int64_t retries2) {
    if (retransmits == 0) first = now;
    const Duration elapsed = now - first;
    const Duration limit = user_timeout > Duration::zero() ? user_timeout : retransmission_timeout(retries2);
    if (retransmits > 0 && elapsed >= limit) return std::nullopt;
    ++retransmits;
    rto = std::min(rto * 2, kRtoMax);
    Duration next = rto;
    if (user_timeout > Duration::zero()) next = std::max(std::min(next, limit - elapsed), kMillisecond);  // tcp_clamp_rto_to_user_timeout
    ++gen;
    return next;
  }
};

/// How long a Linux timer armed now for `d` really takes: whole jiffies (HZ=250, 4 ms, Debian's
/// kernels), and beyond the wheel's first level the expiry rounded up to the level's granule
/// (kernel/time/timer.c, calc_wheel_index: 32 ms for timers of 0.25-2 s, 256 ms up to 16 s,
/// 2 s up to 2 min, ...). TCP's keepalive and retransmission timers are such timers.
Duration linux_timer(Time now, Duration d) {
  constexpr std::int64_t kJiffy = 4'000'000;
  const std::int64_t clk = now.ns / kJiffy;
  const std::int64_t delta = (std::max(d.ns, std::int64_t{0}) + kJiffy - 1) / kJiffy;
  std::int64_t expires = clk + delta;
  int lvl = 0;
  while (lvl < 8 && delta >= (std::int64_t{63} << (3 * lvl))) ++lvl;
  if (lvl > 0) expires = ((expires >> (3 * lvl)) + 1) << (3 * lvl);
  return Duration{std::max(expires * kJiffy - now.ns, d.ns)};
}

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

/// An advisory lock's key: the database, the key space (1: one bigint, 2: two int4), the key.
using Key = std::tuple<std::string, int, std::int64_t, std::int64_t>;

/// One session's holds on one key: [0] session level, [1] transaction level.
struct Hold {
  std::int64_t excl[2] = {0, 0};
  std::int64_t shared[2] = {0, 0};
  std::int64_t exclusive() const { return excl[0] + excl[1]; }
  bool empty() const { return exclusive() + shared[0] + shared[1] == 0; }
};

struct Session {
  Pid client;
  Atom node;
  Ref monitor;
  std::string db;
  Keepalive ka;
  Duration idle_timeout{}, idle_tx_timeout{}, lock_timeout{}, deadlock_timeout{};
  Outbox<Answer> out;
  std::set<std::uint64_t> seen;  // query ids received (the client sends again until acknowledged)
  std::set<Key> keys;            // keys it holds or waits for
  bool in_tx = false;
  bool tx_failed = false;        // a statement failed in the transaction: the rest fail until it ends
  bool busy = false;             // a statement runs, waits for a lock, or sleeps
  std::uint64_t idle_gen = 0;
};

struct Waiter {
  Sql q;
  Key key;
  std::uint64_t gen = 0;
};

Key key_of(const std::string& db, const Query& q) {
  return q.lock2 ? Key{db, 2, q.lock, *q.lock2} : Key{db, 1, q.lock, 0};
}

bool default_space(const Key& k) { return std::get<0>(k) == kDefaultDb && std::get<1>(k) == 1; }

Result sql_error(const char* sqlstate, std::string text) {
  Result r;
  r.status = Result::Status::sql_error;
  r.sqlstate = sqlstate;
  r.error = std::move(text);
  return r;
}

Result refused_connection(std::string sqlstate = {}) {
  Result r;
  r.status = Result::Status::no_connection;
  r.error = kNoConnection;
  r.sqlstate = std::move(sqlstate);
  return r;
}

class Server final : public Behaviour {
 public:
  explicit Server(ServerConfig c) : c_(c) {}

  InitResult init(Context& ctx) override {
    d_ = &ctx.disk().open<Durable>("pg/" + std::string(c_.name.text()));  // the data directory
    ctx.register_name(c_.name);
    ctx.emit(ev::kStart, {{ev::kKeepaliveIdle, c_.keepalive_idle.ns}, {ev::kKeepaliveInterval, c_.keepalive_interval.ns},
                          {ev::kKeepaliveCount, c_.keepalive_count}, {Atom("tcp_user_timeout"), c_.tcp_user_timeout.ns},
                          {Atom("tcp_retries2"), c_.tcp_retries2}});
    return InitResult::ok();
  }

  CallReply handle_call(Context& ctx, const Message& m, From) override {
    if (m.tag != kConnect) return CallReply::reply(kAnswer);
    const Hello& h = *m.payload.get<Hello>();
    const std::int64_t id = ++d_->next_session;
    Session& s = sessions_[id];
    s.client = h.client;
    s.node = h.node;
    s.db = h.db;
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

  void handle_info(Context& ctx, const Message& m) override {
    if (m.kind == MsgKind::down) return down(ctx, m);
    if (m.tag == kSql) return sql(ctx, *m.payload.get<Sql>());
    if (m.tag == kExec) return exec(ctx, *m.payload.get<Sql>());
    if (m.tag == kAck) {
      heard(ctx, *m.payload.get<std::int64_t>());
      return;
    }
    if (m.tag == kDataAck) return data_acked(ctx, *m.payload.get<std::pair<std::int64_t, std::uint64_t>>());
    if (m.tag == kClientProbe) return client_probe(ctx, *m.payload.get<std::pair<std::int64_t, Pid>>());
    if (m.tag == kClose) return end(ctx, *m.payload.get<std::int64_t>(), "closed");
    if (m.tag == kRst) return end(ctx, *m.payload.get<std::int64_t>(), "reset");
    if (m.tag == kKeepalive) return keepalive(ctx, *m.payload.get<Tick>());
    if (m.tag == kRto) return retransmit(ctx, *m.payload.get<Tick>());
    if (m.tag == kIdle) return idle_timeout(ctx, *m.payload.get<Tick>());
    if (m.tag == kLockWait) return lock_timeout(ctx, *m.payload.get<Waiting>());
    if (m.tag == kDeadlockCheck) return deadlock_check(ctx, *m.payload.get<Waiting>());
    if (m.tag == kSlept) return slept(ctx, *m.payload.get<Sql>());
    if (m.tag == kRewatch) return rewatch(ctx, *m.payload.get<std::int64_t>());
    if (m.tag == faults::kDegrade) {
      const auto* d = m.payload.get<faults::Degrade>();
      if (d != nullptr && d->on && (d->mode == kRestart || d->mode == kRestartImmediate)) restart(ctx, d->mode == kRestart);
    }
  }

 private:
  /// The session's keepalive timer, `wait` from now.
  void arm(Context& ctx, std::int64_t id, Session& s, Duration wait) {
    ++s.ka.gen;
    ctx.send_after(linux_timer(ctx.now(), wait), ctx.self(), kKeepalive, Tick{id, s.ka.gen});
  }

  /// Anything from the client: keepalive starts again from now.
  Session* heard(Context& ctx, std::int64_t id) {
    const auto it = sessions_.find(id);
    if (it == sessions_.end()) return nullptr;
    Session& s = it->second;
    if (s.ka.heard(ctx.now())) arm(ctx, id, s, s.ka.idle);
    return &s;
  }

  void keepalive(Context& ctx, const Tick& t) {
    const auto it = sessions_.find(t.session);
    if (it == sessions_.end() || it->second.ka.gen != t.gen) return;
    Session& s = it->second;
    const Keepalive::Step step = s.ka.step(ctx.now(), !s.out.segs.empty());
    if (step.what == Keepalive::Do::dead) return end(ctx, t.session, "keepalive", std::string());  // with a reset
    if (step.what == Keepalive::Do::probe) {
      // The client's OS answers a probe for a socket it no longer has with a reset.
      if (!ctx.alive(s.client) && ctx.node_up(s.node) && ctx.simulation().connected(ctx.node(), s.node))
        return end(ctx, t.session, "reset");
      ctx.send(s.client, kProbe, t.session);
    }
    arm(ctx, t.session, s, step.next);
  }

  void data_acked(Context& ctx, const std::pair<std::int64_t, std::uint64_t>& a) {
    Session* s = heard(ctx, a.first);
    if (s != nullptr && s->out.acked(ctx.now(), a.second))
      ctx.send_after(linux_timer(ctx.now(), s->out.rto), ctx.self(), kRto, Tick{a.first, s->out.gen});
  }

  /// The client's keepalive probe: the server's OS answers it, or resets a socket it no longer has.
  void client_probe(Context& ctx, const std::pair<std::int64_t, Pid>& p) {
    if (heard(ctx, p.first) != nullptr) ctx.send(p.second, kClientAck, p.first);
    else ctx.send(p.second, kBye, Bye{});
  }

  /// The retransmission timer of a session's answers.
  void retransmit(Context& ctx, const Tick& t) {
    const auto it = sessions_.find(t.session);
    if (it == sessions_.end() || it->second.out.gen != t.gen || it->second.out.segs.empty()) return;
    Session& s = it->second;
    const std::optional<Duration> next = s.out.fire(ctx.now(), s.ka.user_timeout, c_.tcp_retries2);
    if (!next) return end(ctx, t.session, "retransmit");  // the OS gives up without a reset
    for (const Answer& a : s.out.segs) ctx.send(s.client, kAnswer, a);
    ctx.send_after(linux_timer(ctx.now(), *next), ctx.self(), kRto, Tick{t.session, s.out.gen});
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

  /// A query arrives: its OS acknowledges it; a copy sent again is not run twice.
  void sql(Context& ctx, const Sql& q) {
    Session* s = heard(ctx, q.session);
    if (s == nullptr) return reply(ctx, q, refused_connection());  // the OS resets it
    ctx.send(q.reply_to, kDataAck, std::pair<std::int64_t, std::uint64_t>{q.session, q.qid});
    s->seen.erase(s->seen.begin(), s->seen.lower_bound(q.unacked_from));
    if (!s->seen.insert(q.qid).second) return;
    s->busy = true;
    ++s->idle_gen;
    ctx.send_after(c_.query_latency, ctx.self(), kExec, q);
  }

  void exec(Context& ctx, const Sql& q) {
    const auto it = sessions_.find(q.session);
    if (it == sessions_.end()) return;
    Session& s = it->second;
    const bool ends_block = q.q.op == Query::Op::commit || q.q.op == Query::Op::rollback;
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
      case Query::Op::terminate: r.value = terminate_backends(ctx, q.session, s, q.q.session); break;
    }
    finish(ctx, q, r);
  }

  /// A statement is over: its answer goes out, a transaction-level lock taken outside a
  /// transaction ends with it, and the session is idle. An error inside a transaction aborts it:
  /// its transaction-level locks go at once, and it stays failed until COMMIT or ROLLBACK.
  void finish(Context& ctx, const Sql& q, const Result& r) {
    const auto it = sessions_.find(q.session);
    if (it == sessions_.end()) return;
    Session& s = it->second;
    s.busy = false;
    if (s.in_tx && r.status == Result::Status::sql_error) s.tx_failed = true;
    if (!s.in_tx || s.tx_failed) release_level(ctx, q.session, s, 1);
    reply(ctx, q, r);
    idle(ctx, q.session, s);
  }

  void reply(Context& ctx, const Sql& q, const Result& r) {
    const auto it = sessions_.find(q.session);
    if (it == sessions_.end()) return ctx.send(q.reply_to, kAnswer, Answer{q.qid, r});  // a reset: not data
    Session& s = it->second;
    const Answer a{q.qid, r};
    ctx.send(s.client, kAnswer, a);
    if (s.out.add(ctx.now(), a)) ctx.send_after(linux_timer(ctx.now(), s.out.rto), ctx.self(), kRto, Tick{q.session, s.out.gen});
  }

  /// idle_session_timeout, or idle_in_transaction_session_timeout inside a transaction.
  void idle(Context& ctx, std::int64_t id, Session& s) {
    ++s.idle_gen;
    const Duration t = s.in_tx ? s.idle_tx_timeout : s.idle_timeout;
    if (t > Duration::zero()) ctx.send_after(t, ctx.self(), kIdle, Tick{id, s.idle_gen});
  }

  void idle_timeout(Context& ctx, const Tick& t) {
    const auto it = sessions_.find(t.session);
    if (it == sessions_.end() || it->second.idle_gen != t.gen || it->second.busy) return;
    if (it->second.in_tx) return end(ctx, t.session, "idle_in_transaction_session_timeout", "25P03");
    end(ctx, t.session, "idle_session_timeout", "57P05");
  }

  void slept(Context& ctx, const Sql& q) {
    Result r;
    finish(ctx, q, r);
  }

  // ---- advisory locks ---------------------------------------------------------------------
  // As PostgreSQL's lock manager does it (lock.c LockAcquireExtended, proc.c ProcSleep and
  // ProcLockWakeup, deadlock.c): two modes, ShareLock and ExclusiveLock; exclusive conflicts
  // with both, shared with exclusive only.

  static constexpr unsigned kShareMode = 1, kExclMode = 2;
  static unsigned mode_of(bool shared) { return shared ? kShareMode : kExclMode; }
  /// Whether `mode` conflicts with any mode in `mask` (the conflict table).
  static bool conflict(unsigned mode, unsigned mask) { return mode == kExclMode ? mask != 0 : (mask & kExclMode) != 0; }

  /// The modes session `id` holds on `key`, at either level.
  unsigned held(const Key& key, std::int64_t id) const {
    const auto it = locks_.find(key);
    if (it == locks_.end()) return 0;
    const auto h = it->second.find(id);
    if (h == it->second.end()) return 0;
    return modes(h->second);
  }

  static unsigned modes(const Hold& x) {
    return (x.exclusive() > 0 ? kExclMode : 0) | (x.shared[0] + x.shared[1] > 0 ? kShareMode : 0);
  }

  /// Whether another session's hold on `key` conflicts with `mode` (LockCheckConflicts: a
  /// session never conflicts with itself).
  bool conflicts(const Key& key, std::int64_t id, unsigned mode) const {
    const auto it = locks_.find(key);
    if (it == locks_.end()) return false;
    for (const auto& [other, h] : it->second)
      if (other != id && conflict(mode, modes(h))) return true;
    return false;
  }

  /// The modes waited for on `key` (the lock's waitMask).
  unsigned wait_mask(const Key& key) const {
    unsigned m = 0;
    for (const Waiter& w : waiters_)
      if (w.key == key) m |= mode_of(w.q.q.shared);
    return m;
  }

  /// LockAcquire's first steps: a mode the session holds already is granted at once (its local
  /// lock table); otherwise a request that conflicts with a waiter's, or with another session's
  /// hold, must wait.
  bool grantable(const Key& key, std::int64_t id, unsigned mode) const {
    if ((held(key, id) & mode) != 0) return true;
    return !conflict(mode, wait_mask(key)) && !conflicts(key, id, mode);
  }

  /// Takes `key` for session `id`; the fencing token of the default database's exclusive
  /// bigint locks (0 for others).
  std::int64_t take(Context& ctx, std::int64_t id, Session& s, const Key& key, bool shared, bool xact) {
    Hold& h = locks_[key][id];
    s.keys.insert(key);
    const bool first = h.exclusive() == 0;
    (shared ? h.shared : h.excl)[xact ? 1 : 0] += 1;
    if (shared || !default_space(key)) return 0;
    const std::int64_t lock = std::get<2>(key);
    if (!first) return d_->tokens[lock];  // re-entrant: the same session takes it again
    const std::int64_t token = ++d_->tokens[lock];
    ctx.emit(ev::kLock, {{ev::kLockKey, lock}, {ev::kSessionKey, id}, {keys::kNode, s.node}, {ev::kToken, token}});
    return token;
  }

  /// Drops holds of session `id` on `key` (`level` 0 session, 1 transaction; -1 both) and
  /// grants what waited for them.
  void drop(Context& ctx, std::int64_t id, const Key& key, int level, const char* why) {
    const auto it = locks_.find(key);
    if (it == locks_.end() || !it->second.contains(id)) return;
    Hold& h = it->second[id];
    const bool had = h.exclusive() > 0;
    for (int l = 0; l < 2; ++l)
      if (level < 0 || level == l) h.excl[l] = h.shared[l] = 0;
    released(ctx, id, key, had && h.exclusive() == 0, why);
  }

  /// After a hold went down: the unlock event, the key forgotten when nobody holds it, waiters.
  void released(Context& ctx, std::int64_t id, const Key& key, bool exclusive_gone, const char* why) {
    auto& holds = locks_[key];
    const auto s = sessions_.find(id);
    if (exclusive_gone && default_space(key))
      ctx.emit(ev::kUnlock, {{ev::kLockKey, std::get<2>(key)}, {ev::kSessionKey, id},
                             {keys::kNode, s != sessions_.end() ? s->second.node : Atom()}, {keys::kWhy, Atom(why)}});
    if (holds[id].empty()) {
      holds.erase(id);
      if (s != sessions_.end() && !waits_on(id, key)) s->second.keys.erase(key);
    }
    if (holds.empty()) locks_.erase(key);
    grant_waiters(ctx, key);
  }

  bool waits_on(std::int64_t id, const Key& key) const {
    for (const Waiter& w : waiters_)
      if (w.q.session == id && w.key == key) return true;
    return false;
  }

  Result try_lock(Context& ctx, std::int64_t id, Session& s, const Query& q) {
    Result r;
    const Key key = key_of(s.db, q);
    if (!grantable(key, id, mode_of(q.shared))) return r;
    r.value = true;
    r.token = take(ctx, id, s, key, q.shared, q.xact);
    return r;
  }

  /// pg_advisory_lock: granted now, or it waits (at most lock_timeout) in line. A session that
  /// holds a mode a waiter needs goes ahead of that waiter, and is granted at once when nothing
  /// ahead of it stands in the way; if it must also wait for that waiter, that is a deadlock,
  /// found at once (ProcSleep). Otherwise it joins the end of the line.
  void lock(Context& ctx, const Sql& q, Session& s) {
    const Key key = key_of(s.db, q.q);
    const unsigned mode = mode_of(q.q.shared);
    if (grantable(key, q.session, mode)) return granted(ctx, q, s, key);
    auto at = waiters_.end();
    if (const unsigned mine = held(key, q.session); mine != 0) {
      unsigned ahead = 0;
      for (auto w = waiters_.begin(); w != waiters_.end(); ++w) {
        if (w->key != key) continue;
        if (conflict(mode_of(w->q.q.shared), mine)) {
          if (conflict(mode, held(key, w->q.session))) return finish(ctx, q, deadlock());
          if (!conflict(mode, ahead) && !conflicts(key, q.session, mode)) return granted(ctx, q, s, key);
          at = w;
          break;
        }
        ahead |= mode_of(w->q.q.shared);
      }
    }
    waiters_.insert(at, Waiter{q, key, ++waiter_gen_});
    s.keys.insert(key);
    if (s.lock_timeout > Duration::zero())
      ctx.send_after(s.lock_timeout, ctx.self(), kLockWait, Waiting{q.session, q.qid});
    if (s.deadlock_timeout > Duration::zero())
      ctx.send_after(s.deadlock_timeout, ctx.self(), kDeadlockCheck, Waiting{q.session, q.qid});
  }

  void granted(Context& ctx, const Sql& q, Session& s, const Key& key) {
    Result r;
    r.token = take(ctx, q.session, s, key, q.q.shared, q.q.xact);
    finish(ctx, q, r);
  }

  static Result deadlock() { return sql_error("40P01", "deadlock detected"); }

  /// ProcLockWakeup: in line order, every waiter on `key` that neither a hold nor a waiter
  /// ahead of it stands in the way of. A grant ends a statement, which may release locks and
  /// wake waiters in turn, so the walk starts again after each.
  void grant_waiters(Context& ctx, const Key& key) {
    for (bool again = true; again;) {
      again = false;
      unsigned ahead = 0;
      for (std::size_t i = 0; i < waiters_.size(); ++i) {
        const Waiter w = waiters_[i];
        if (w.key != key) continue;
        const unsigned mode = mode_of(w.q.q.shared);
        if (conflict(mode, ahead) || conflicts(key, w.q.session, mode)) {
          ahead |= mode;
          continue;
        }
        waiters_.erase(waiters_.begin() + static_cast<std::ptrdiff_t>(i));
        granted(ctx, w.q, sessions_.at(w.q.session), key);
        again = true;
        break;
      }
    }
  }

  /// A waiting statement gives up (lock_timeout: 55P03; a deadlock: 40P01).
  bool give_up(Context& ctx, const Waiting& w, const Result& why) {
    for (std::size_t i = 0; i < waiters_.size(); ++i) {
      if (waiters_[i].q.session != w.session || waiters_[i].q.qid != w.qid) continue;
      const Waiter gone = waiters_[i];
      waiters_.erase(waiters_.begin() + static_cast<std::ptrdiff_t>(i));
      finish(ctx, gone.q, why);
      grant_waiters(ctx, gone.key);  // a shared waiter behind it may go now
      return true;
    }
    return false;
  }

  void lock_timeout(Context& ctx, const Waiting& w) {
    give_up(ctx, w, sql_error("55P03", "canceling statement due to lock timeout"));
  }

  /// deadlock_timeout after a statement began to wait, it looks once for a cycle of sessions
  /// each waiting for a lock another holds in a conflicting mode (CheckDeadLock); one through
  /// it fails its statement (40P01). Queue-order ("soft") cycles, which PostgreSQL breaks by
  /// reordering the line, are not modelled: only cycles of holds.
  void deadlock_check(Context& ctx, const Waiting& w) {
    if (waiting(w.session) == nullptr || waiting(w.session)->q.qid != w.qid) return;
    std::set<std::int64_t> seen;
    if (waits_for(w.session, w.session, seen)) give_up(ctx, w, deadlock());
  }

  const Waiter* waiting(std::int64_t id) const {
    for (const Waiter& x : waiters_)
      if (x.q.session == id) return &x;
    return nullptr;
  }

  /// Whether session `from` waits, through holders that wait in turn, for session `target`.
  bool waits_for(std::int64_t from, std::int64_t target, std::set<std::int64_t>& seen) const {
    const Waiter* w = waiting(from);
    if (w == nullptr || !seen.insert(from).second) return false;
    const auto it = locks_.find(w->key);
    if (it == locks_.end()) return false;
    for (const auto& [holder, h] : it->second) {
      if (holder == from || !conflict(mode_of(w->q.q.shared), modes(h))) continue;
      if (holder == target || waits_for(holder, target, seen)) return true;
    }
    return false;
  }

  /// pg_advisory_unlock(_shared): one session-level hold less, or false and a WARNING.
  Result unlock_one(Context& ctx, std::int64_t id, const Session& s, const Query& q) {
    Result r;
    const Key key = key_of(s.db, q);
    const auto it = locks_.find(key);
    Hold* h = it != locks_.end() && it->second.contains(id) ? &it->second[id] : nullptr;
    std::int64_t* count = h == nullptr ? nullptr : q.shared ? &h->shared[0] : &h->excl[0];
    if (count == nullptr || *count == 0) {
      r.notices.push_back(std::string("you don't own a lock of type ") + (q.shared ? "ShareLock" : "ExclusiveLock"));
      return r;
    }
    --*count;
    r.value = true;
    released(ctx, id, key, !q.shared && h->exclusive() == 0, "unlock");
    return r;
  }

  void release_level(Context& ctx, std::int64_t id, const Session& s, int level) {
    for (const Key& key : std::set<Key>(s.keys)) drop(ctx, id, key, level, "unlock");
  }

  void unlock_all(Context& ctx, std::int64_t id, const Session& s) { release_level(ctx, id, s, 0); }

  void end_transaction(Context& ctx, std::int64_t id, Session& s) {
    s.in_tx = false;
    s.tx_failed = false;
    release_level(ctx, id, s, 1);
  }

  /// A write; one with a fencing token is refused unless the token is the lock's latest and a
  /// session holds the lock now (in SQL: the row's WHERE compares the token with the epoch
  /// table's, and finds the epoch's session in pg_locks).
  Result write(Context& ctx, std::int64_t id, const Session& s, const Query& q) {
    Result r;
    const std::int64_t latest = d_->tokens[q.lock];
    const bool held = locks_.contains(Key{kDefaultDb, 1, q.lock, 0});
    const char* stale = q.token == 0 ? nullptr : q.token != latest ? "stale_token" : !held ? "lock_free" : nullptr;
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

  /// The session ends: its locks go, what it waited for is forgotten. `bye`: what the server
  /// tells the client (a FATAL's SQLSTATE, or empty for a reset); none when the client left.
  void end(Context& ctx, std::int64_t id, const char* why, std::optional<std::string> bye = std::nullopt) {
    const auto it = sessions_.find(id);
    if (it == sessions_.end()) return;
    std::erase_if(waiters_, [id](const Waiter& w) { return w.q.session == id; });
    for (const Key& key : std::set<Key>(it->second.keys)) drop(ctx, id, key, -1, why);
    const Session s = sessions_.at(id);
    if (s.monitor) ctx.demonitor(s.monitor, true);
    sessions_.erase(id);
    if (bye) ctx.send(s.client, kBye, Bye{*bye});
    ctx.emit(ev::kSessionEnd, {{ev::kSessionKey, id}, {keys::kNode, s.node}, {keys::kWhy, Atom(why)}});
  }

  /// pg_terminate_backend: the session `victim`, or (0) every other session from the asker's node.
  bool terminate_backends(Context& ctx, std::int64_t asker, const Session& s, std::int64_t victim) {
    std::vector<std::int64_t> ids;
    for (const auto& [id, other] : sessions_)
      if (victim != 0 ? id == victim : id != asker && other.node == s.node) ids.push_back(id);
    for (std::int64_t id : ids) end(ctx, id, "terminated", "57P01");
    return !ids.empty();
  }

  /// pg_ctl restart: every session ends (fast: a FATAL 57P01 first; immediate: no error
  /// message); the data stays.
  void restart(Context& ctx, bool fast) {
    std::vector<std::int64_t> ids;
    for (const auto& [id, s] : sessions_) ids.push_back(id);
    for (std::int64_t id : ids) end(ctx, id, "restart", fast ? "57P01" : "");
  }

  ServerConfig c_;
  Durable* d_ = nullptr;  // on the node's disk
  std::map<std::int64_t, Session> sessions_;
  std::map<Key, std::map<std::int64_t, Hold>> locks_;
  std::vector<Waiter> waiters_;  // in line order
  std::uint64_t waiter_gen_ = 0;
};

// ---- the client side ------------------------------------------------------------------------

/// The driver's connection: a process on the client's node that owns the session (the socket
/// and the client's OS), forwards its owner's queries, answers keepalive probes at any time,
/// sends unacknowledged queries again, probes an idle connection with libpq's keepalives, and
/// gives up on a query after its command timeout.
class ConnProc final : public Behaviour {
 public:
  ConnProc(Atom server, Pid owner, ClientOptions o) : server_(server), owner_(owner), o_(std::move(o)) {}

  /// The socket is the owner's: an abnormal end takes it down through the link (the OS resets
  /// it); a normal one is seen here, and the OS closes it (FIN).
  InitResult init(Context& ctx) override {
    ctx.monitor(owner_);
    ka_.idle = o_.keepalives_idle > Duration::zero() ? o_.keepalives_idle : kSecond * 7200;
    ka_.interval = o_.keepalives_interval > Duration::zero() ? o_.keepalives_interval : kSecond * 75;
    ka_.count = o_.keepalives_count > 0 ? o_.keepalives_count : 9;
    ka_.user_timeout = o_.tcp_user_timeout;
    return InitResult::ok();
  }

  CallReply handle_call(Context& ctx, const Message& m, From from) override {
    if (m.tag == kOpen) return open(ctx);
    if (m.tag == kShut) {
      if (session_ != 0 && !dead_) ctx.send(server_, kClose, session_);
      ctx.stop(Reason::normal());
      return CallReply::reply(kShut);
    }
    if (m.tag != kQuery) return CallReply::noreply();
    const auto& [q, timeout] = *m.payload.get<std::pair<Query, Duration>>();
    if (dead_) return CallReply::reply(kAnswer, gone());  // the socket is closed
    const std::uint64_t qid = ++next_qid_;
    pending_[qid] = from;
    const Sql sql{session_, qid, ctx.self(), q, out_.segs.empty() ? qid : out_.segs.front().qid};
    ctx.send(server_, kSql, sql);
    if (out_.add(ctx.now(), sql)) ctx.send_after(linux_timer(ctx.now(), out_.rto), ctx.self(), kRto, Tick{0, out_.gen});
    ctx.send_after(timeout, ctx.self(), kQueryTimeout, qid);
    return CallReply::noreply();
  }

  void handle_info(Context& ctx, const Message& m) override {
    if (m.kind == MsgKind::down) {  // the owner ended without closing
      if (session_ != 0 && !dead_) ctx.send(server_, kClose, session_);
      ctx.stop(Reason::normal());
      return;
    }
    if (m.tag == kQueryTimeout) return timed_out(ctx, *m.payload.get<std::uint64_t>());
    if (m.tag == kRto) return retransmit(ctx, *m.payload.get<Tick>());
    if (m.tag == kKeepalive) return keepalive(ctx, *m.payload.get<Tick>());
    if (dead_) return;  // the socket is closed: nothing more arrives
    heard(ctx);
    if (m.tag == kProbe) {
      ctx.send(server_, kAck, session_);
    } else if (m.tag == kAnswer) {
      const Answer& a = *m.payload.get<Answer>();
      ctx.send(server_, kDataAck, std::pair<std::int64_t, std::uint64_t>{session_, a.qid});
      if (a.r.status == Result::Status::no_connection) return lost(ctx, a.r.sqlstate);  // a reset
      answer(ctx, a.qid, a.r);
    } else if (m.tag == kDataAck) {
      if (out_.acked(ctx.now(), m.payload.get<std::pair<std::int64_t, std::uint64_t>>()->second))
        ctx.send_after(linux_timer(ctx.now(), out_.rto), ctx.self(), kRto, Tick{0, out_.gen});
    } else if (m.tag == kBye) {
      lost(ctx, m.payload.get<Bye>()->sqlstate);
    }
  }

 private:
  CallReply open(Context& ctx) {
    const Hello h{ctx.self(), ctx.node(), o_.database, o_.set};
    const CallResult r = ctx.call(server_, kConnect, h, kSecond * 10);
    if (!r.ok() || r.reply->payload.get<std::int64_t>() == nullptr) {
      ctx.stop(Reason::normal());
      return CallReply::reply(kOpen, std::int64_t{0});
    }
    session_ = *r.reply->payload.get<std::int64_t>();
    heard(ctx);
    return CallReply::reply(kOpen, session_);
  }

  /// Anything from the server: the client's keepalive starts again.
  void heard(Context& ctx) {
    const bool first = ka_.gen == 0;
    if ((ka_.heard(ctx.now()) || first) && o_.keepalives) arm(ctx, ka_.idle);
  }

  void arm(Context& ctx, Duration wait) {
    ++ka_.gen;
    ctx.send_after(linux_timer(ctx.now(), wait), ctx.self(), kKeepalive, Tick{0, ka_.gen});
  }

  void keepalive(Context& ctx, const Tick& t) {
    if (dead_ || t.gen != ka_.gen) return;
    const Keepalive::Step step = ka_.step(ctx.now(), !out_.segs.empty());
    if (step.what == Keepalive::Do::dead) {
      ctx.send(server_, kRst, session_);  // the client's OS resets it (lost if the path is cut)
      return lost(ctx, {});
    }
    if (step.what == Keepalive::Do::probe) ctx.send(server_, kClientProbe, std::pair<std::int64_t, Pid>{session_, ctx.self()});
    arm(ctx, step.next);
  }

  void retransmit(Context& ctx, const Tick& t) {
    if (dead_ || t.gen != out_.gen || out_.segs.empty()) return;
    const std::optional<Duration> next = out_.fire(ctx.now(), o_.tcp_user_timeout, o_.tcp_retries2);
    if (!next) return lost(ctx, {});  // ETIMEDOUT
    for (const Sql& q : out_.segs) ctx.send(server_, kSql, q);
    ctx.send_after(linux_timer(ctx.now(), *next), ctx.self(), kRto, Tick{0, out_.gen});
  }

  /// The connection is gone (`fatal`: the SQLSTATE of the FATAL the server sent first, if any):
  /// every query waiting fails, and every later one at once. libpq does not surface the FATAL's
  /// SQLSTATE (the result has none: connection_lost); its text comes first in the message.
  void lost(Context& ctx, const std::string& fatal) {
    dead_ = fatal;
    out_.segs.clear();
    ++out_.gen;
    for (const auto& [qid, from] : std::map<std::uint64_t, From>(pending_)) answer(ctx, qid, gone());
  }

  Result gone() const {
    Result r = refused_connection();
    if (dead_ && !dead_->empty()) r.notices.push_back("FATAL " + *dead_);
    return r;
  }

  void timed_out(Context& ctx, std::uint64_t qid) {
    Result r;
    r.status = Result::Status::timeout;
    r.error = "TimeoutError";
    answer(ctx, qid, r);
  }

  void answer(Context& ctx, std::uint64_t qid, const Result& r) {
    const auto it = pending_.find(qid);
    if (it == pending_.end()) return;  // answered already (late, or after its timeout)
    ctx.reply(it->second, kAnswer, r);
    pending_.erase(it);
  }

  Atom server_;
  Pid owner_;
  ClientOptions o_;
  std::int64_t session_ = 0;
  std::uint64_t next_qid_ = 0;
  std::map<std::uint64_t, From> pending_;
  Keepalive ka_;
  Outbox<Sql> out_;
  std::optional<std::string> dead_;  // the connection is gone (the FATAL's SQLSTATE, or empty)
};

}  // namespace

Duration retransmission_timeout(std::int64_t retries2) {
  // tcp_model_timeout: RTO doubling from TCP_RTO_MIN, then TCP_RTO_MAX for each retry beyond.
  std::int64_t thresh = 0;
  while ((std::int64_t{2} << thresh) * kRtoMin.ns <= kRtoMax.ns) ++thresh;  // ilog2(RTO_MAX / RTO_MIN)
  if (retries2 <= thresh) return kRtoMin * ((std::int64_t{2} << retries2) - 1);
  return kRtoMin * ((std::int64_t{2} << thresh) - 1) + kRtoMax * (retries2 - thresh);
}

std::string error_class(const Result& r) {
  switch (r.status) {
    case Result::Status::ok:
    case Result::Status::refused: return {};
    case Result::Status::timeout: return "no_answer";
    case Result::Status::sql_error: return r.sqlstate;
    case Result::Status::no_connection:
    case Result::Status::error: return r.sqlstate.empty() ? "connection_lost" : r.sqlstate;
  }
  return {};
}

std::optional<Conn> Conn::connect(Context& ctx, Atom server, Duration timeout, const ClientOptions& opts) {
  SpawnOptions o;
  o.link = true;  // the socket goes with its owner (a normal end: ConnProc's monitor)
  o.label = Label{Atom(std::string(ctx.label().name.text()) + "/conn"), 1};
  const Pid p = ctx.spawn(std::make_unique<ConnProc>(server, ctx.self(), opts), o);
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
      "a simulated PostgreSQL: sessions over the network, advisory locks (session and transaction level, shared, "
      "blocking with lock_timeout), tables; a session ends at once on a close or a reset, after TCP keepalive or "
      "retransmission on a partition or a pause, or on its idle timeouts (docs/leader-election.md); degrade modes restart "
      "(pg_ctl restart -m fast) and restart_immediate",
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
       {"rst_on_node_crash", "bool", "true", "a client node's crash resets its connections at once (its OS does)"}},
      [](Args& a) -> BehaviourFactory {
        pg::ServerConfig c;
        c.name = a.atom("name");
        c.keepalive_idle = a.positive("tcp_keepalives_idle");
        c.keepalive_interval = a.positive("tcp_keepalives_interval");
        c.keepalive_count = a.integer("tcp_keepalives_count");
        if (c.keepalive_count < 1) a.invalid("tcp_keepalives_count", "must be 1 or more");
        c.tcp_user_timeout = a.duration("tcp_user_timeout");
        c.tcp_retries2 = a.integer("tcp_retries2");
        if (c.tcp_retries2 < 1 || c.tcp_retries2 > 255) a.invalid("tcp_retries2", "must be 1 to 255");
        c.idle_session_timeout = a.duration("idle_session_timeout");
        c.idle_in_transaction_session_timeout = a.duration("idle_in_transaction_session_timeout");
        c.lock_timeout = a.duration("lock_timeout");
        c.deadlock_timeout = a.duration("deadlock_timeout");
        c.query_latency = a.duration("query_latency");
        c.rst_on_node_crash = a.flag("rst_on_node_crash");
        return [c](const std::string&) { return pg::server(c); };
      }}};
}

}  // namespace lic::scenarios
