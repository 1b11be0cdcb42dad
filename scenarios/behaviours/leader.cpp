#include "scenarios/behaviours/leader.hpp"

#include <optional>
#include <string>
#include <vector>

#include "properties/history.hpp"
#include "properties/leader.hpp"
#include "scenarios/behaviours/pg.hpp"
#include "scenarios/behaviours/table.hpp"

namespace lic::scenarios::leader {

namespace ev = properties::leader;

namespace {

const Atom kRun("$run");
const Atom kLost("$lost");

/// What the coordinator and its loops share (asyncio tasks of one object in the seed).
struct State {
  CoordinatorConfig c;
  bool is_leader = false;
  std::int64_t token = 0;   // fenced: the fencing token taken with the lock
  std::int64_t term = 0;    // the lock session it leads by (each write says it: db_write's term)
  Time lease_until{};       // lease: until when, as the database said
  std::optional<pg::Conn> lock_conn;
  bool sweep_node = true;  // fenced: end the node's leftover sessions before competing
  Pid main;
};

pg::Query write_query(const State& st, Atom table, Atom loop) {
  pg::Query q;
  q.op = pg::Query::Op::write;
  q.lock = st.c.lock_id;
  q.token = fences_writes(st.c.variant) ? st.token : 0;
  q.term = st.term;
  q.table = table;
  q.loop = loop;
  return q;
}

/// A write of `table`'s row for `loop`; with `history`, recorded as the client `hist`'s write of
/// `row` to NODE:TOKEN: ok when applied, fail when the server refused it (the fence, an SQL
/// error), info when no answer came or the connection went with it (it may have landed).
pg::Result recorded_write(Context& ctx, pg::Conn& conn, const State& st, Atom table, Atom loop, const std::string& row,
                          history::Client& hist) {
  std::optional<history::OpId> op;
  if (st.c.history) op = hist.invoke(ctx, "write", row, std::string(ctx.node().text()) + ":" + std::to_string(st.token));
  const pg::Result r = conn.query(ctx, write_query(st, table, loop), st.c.query_timeout);
  if (!op) return r;
  if (r.ok()) hist.ok(ctx, *op);
  else if (r.status == pg::Result::Status::refused || r.status == pg::Result::Status::sql_error) hist.fail(ctx, *op);
  else hist.info(ctx, *op);
  return r;
}

/// Whether this node may still act, checked at the top of each tick (fenced and lease only: the
/// seed's loops check `is_leader` alone).
bool still_leading(Context& ctx, State& st) {
  if (checks_lock(st.c.variant)) {
    pg::Query ping;
    return st.lock_conn && st.lock_conn->query(ctx, ping, st.c.heartbeat_timeout).ok();
  }
  if (st.c.variant == Variant::lease) return ctx.node_time() < st.lease_until;
  return true;
}

/// One of the four loops: while leader, a tick works on each workspace (`work`: asking its
/// runtime) and writes its row through the loop's
/// own connection; any error skips the tick (the seed's `except Exception`), and a dead
/// connection is replaced at the next one (the pool reconnects).
void loop(Context& ctx, std::shared_ptr<State> st, Atom name, Atom table, Duration period) {
  std::optional<pg::Conn> conn;
  history::Client hist;  // with `history`: this loop's writes, as a client's operations
  while (st->is_leader) {
    if (!still_leading(ctx, *st)) {
      ctx.send(st->main, kLost);
      return;
    }
    if (!conn) conn = pg::Conn::connect(ctx, st->c.db, st->c.query_timeout);
    for (std::int64_t w = 0; conn && w < st->c.workspaces && st->is_leader; ++w) {
      ctx.sleep(st->c.work);  // observe_and_update: the workspace's runtime is asked first
      // A workspace whose runtime answers slowly: the write lands a query timeout later.
      if (lic::buggify(ctx, "leader.slow_work")) ctx.sleep(st->c.query_timeout);
      const pg::Result r = recorded_write(ctx, *conn, *st, table, name, std::string(table.text()) + "/" + std::to_string(w), hist);
      if (r.status == pg::Result::Status::no_connection || r.status == pg::Result::Status::error) {
        conn.reset();  // ConnectionDoesNotExistError: the pool drops it
        break;
      }
      if (!r.ok()) break;  // a timeout or a refusal: skip the tick
    }
    ctx.sleep(period);
  }
}

/// Lease: renewed every renew_at of its ttl (a third by default) while leader.
void renewer(Context& ctx, std::shared_ptr<State> st) {
  __extension__ using Wide = unsigned __int128;
  const Duration every{static_cast<std::int64_t>(static_cast<Wide>(st->c.lease_ttl.ns) * st->c.renew_at.num / st->c.renew_at.den)};
  while (st->is_leader) {
    ctx.sleep(every);
    // A renewal that comes late (a GC pause, a busy event loop): two thirds of the ttl late.
    if (lic::buggify(ctx, "leader.late_renewal")) ctx.sleep(st->c.lease_ttl * 2 / 3);
    if (!st->is_leader || !st->lock_conn) return;
    pg::Query q;
    q.op = pg::Query::Op::lease;
    q.lock = st->c.lock_id;
    q.ttl = st->c.lease_ttl;
    const pg::Result r = st->lock_conn->query(ctx, q, st->c.query_timeout);
    if (r.ok() && r.value) st->lease_until = r.until;
    else if (r.ok() || r.status == pg::Result::Status::no_connection) return ctx.send(st->main, kLost);
  }
}

class Coordinator final : public Behaviour {
 public:
  explicit Coordinator(CoordinatorConfig c) : st_(std::make_shared<State>()) { st_->c = c; }

  InitResult init(Context& ctx) override {
    st_->main = ctx.self();
    const CoordinatorConfig& c = st_->c;
    ctx.emit(ev::kCoordinator, {{ev::kLockKey, c.lock_id}, {ev::kVariant, Atom(variant_name(c.variant))}, {ev::kRetry, c.retry.ns},
                                {ev::kQueryTimeout, c.query_timeout.ns}, {ev::kHeartbeatTimeout, c.heartbeat_timeout.ns}});
    ctx.send(ctx.self(), kRun);
    return InitResult::ok();
  }

  /// The seed's main loop.
  void handle_info(Context& ctx, const Message& m) override {
    if (m.tag != kRun) return;
    for (;;) {
      if (try_become_leader(ctx)) {
        belief(ctx, true);
        run_as_leader(ctx);
        belief(ctx, false);
      } else {
        ctx.sleep(st_->c.retry);
      }
    }
  }

 private:
  /// Traced; with `leader_name`, the name follows the latest leader (global:re_register_name),
  /// so a fault can aim at node_of(NAME).
  void belief(Context& ctx, bool on) {
    ctx.emit(ev::kBelief, {{ev::kLockKey, st_->c.lock_id}, {ev::kOn, std::int64_t{on ? 1 : 0}}});
    const Atom name = st_->c.leader_name;
    if (name.empty()) return;
    const Pid holder = ctx.whereis(name);
    if (on && holder != ctx.self()) {
      if (holder) ctx.unregister_name(name);
      ctx.register_name(name);
    } else if (!on && holder == ctx.self()) {
      ctx.unregister_name(name);
    }
  }

  bool try_become_leader(Context& ctx) {
    State& st = *st_;
    if (!st.lock_conn) st.lock_conn = pg::Conn::connect(ctx, st.c.db, st.c.query_timeout);
    if (!st.lock_conn) return false;  // "Lock acquisition failed"
    if (fenced_family(st.c.variant) && st.sweep_node) {
      // A session this node gave up, or its previous incarnation left, may still hold the lock
      // (its close was lost on a cut, or it died while cut off): end them first, or nobody leads
      // until the server's keepalive ends them. SELECT pg_terminate_backend(pid) FROM
      // pg_stat_activity WHERE client_addr = <this node> AND pid <> pg_backend_pid().
      pg::Query t;
      t.op = pg::Query::Op::terminate;
      if (st.lock_conn->query(ctx, t, st.c.query_timeout).ok()) st.sweep_node = false;
    }
    pg::Query q;
    q.op = st.c.variant == Variant::lease ? pg::Query::Op::lease : pg::Query::Op::try_lock;
    q.lock = st.c.lock_id;
    q.ttl = st.c.lease_ttl;
    pg::Result r = st.lock_conn->query(ctx, q, st.c.query_timeout);
    if (r.ok() && !r.value && st.c.takeover_after > Duration::zero() && st.c.variant != Variant::lease) r = take_over(ctx, q);
    if (r.ok() && r.value) {
      st.is_leader = true;
      st.token = r.token;
      st.term = st.c.variant == Variant::lease ? 0 : st.lock_conn->session();  // a lease is judged by its node
      st.lease_until = r.until;
      // The seed's monitoring row: INSERT INTO system_locks ... ON CONFLICT DO UPDATE (its
      // failure is logged, not fatal).
      recorded_write(ctx, *st.lock_conn, st, Atom("system_locks"), Atom("Coordinator"), "system_locks", hist_);
      return true;
    }
    if (st.c.variant != Variant::lease || !r.ok()) drop_lock_conn(ctx);  // the seed closes it and reconnects next time
    return false;
  }

  /// The lock is held: when its holder's session has been idle longer than takeover_after,
  /// terminate it and try the lock again at once; the second try's result (the first's when no
  /// takeover happened).
  pg::Result take_over(Context& ctx, const pg::Query& try_lock) {
    State& st = *st_;
    pg::Result none;
    none.value = false;
    pg::Query who;
    who.op = pg::Query::Op::holder;
    who.lock = st.c.lock_id;
    const pg::Result h = st.lock_conn->query(ctx, who, st.c.query_timeout);
    if (!h.ok() || !h.value || h.idle < st.c.takeover_after) return none;
    pg::Query kill;  // SELECT pg_terminate_backend(pid[, timeout])
    kill.op = pg::Query::Op::terminate;
    kill.session = h.holder;
    kill.duration = st.c.takeover_wait;
    const pg::Result k = st.lock_conn->query(ctx, kill, st.c.query_timeout + st.c.takeover_wait);
    if (!k.ok()) return none;
    const pg::Result r = st.lock_conn->query(ctx, try_lock, st.c.query_timeout);
    if (k.value)  // a backend was signalled (not one already gone)
      ctx.emit(ev::kTakeover, {{ev::kLockKey, st.c.lock_id}, {ev::kVictim, h.holder}, {ev::kIdle, h.idle.ns},
                               {ev::kTaken, std::int64_t{r.ok() && r.value ? 1 : 0}}});
    return r;
  }

  void drop_lock_conn(Context& ctx) {
    if (st_->lock_conn) st_->lock_conn->close(ctx);
    st_->lock_conn.reset();
  }

  /// asyncio.gather of the four loops (and, for a lease, its renewal), until they end: never for
  /// the seed's code, once a check finds the leadership gone for the others.
  void run_as_leader(Context& ctx) {
    State& st = *st_;
    std::vector<Pid> loops;
    const auto go = [&](const char* name, Atom table, Duration period) {
      SpawnOptions o;
      o.link = true;
      o.label = Label{Atom(std::string(ctx.label().name.text()) + "/" + name), 1};
      loops.push_back(ctx.spawn([s = st_, name, table, period](Context& c) { loop(c, s, Atom(name), table, period); }, o));
    };
    go("HealthMonitor", Atom("workspaces.observed_status"), st.c.health);
    go("StateReconciler", Atom("workspaces.operation"), st.c.reconcile);
    go("TTLManager", Atom("workspaces.desired_state"), st.c.ttl);
    go("ArchiveGC", Atom("archives"), st.c.gc);
    if (st.c.variant == Variant::lease) {
      SpawnOptions o;
      o.link = true;
      o.label = Label{Atom(std::string(ctx.label().name.text()) + "/renewer"), 1};
      loops.push_back(ctx.spawn([s = st_](Context& c) { renewer(c, s); }, o));
    }
    const auto lost = [](const Message& x) { return x.tag == kLost; };
    ctx.receive(lost);  // the seed's code never gets it
    st.is_leader = false;
    for (Pid p : loops) {
      ctx.unlink(p);
      ctx.exit(p, Reason::shutdown());
    }
    while (ctx.receive(lost, Duration::zero())) {
    }  // the other loops' word of the same loss
    st.sweep_node = true;
    drop_lock_conn(ctx);
  }

  std::shared_ptr<State> st_;
  history::Client hist_;  // with `history`: the monitoring row written on taking the lead
};

}  // namespace

const char* variant_name(Variant v) {
  switch (v) {
    case Variant::naive: return "naive";
    case Variant::fenced: return "fenced";
    case Variant::lease: return "lease";
    case Variant::check_only: return "check_only";
    case Variant::fence_only: return "fence_only";
  }
  return "?";
}

bool parse_variant(std::string_view text, Variant& out) {
  if (text == "naive") out = Variant::naive;
  else if (text == "fenced") out = Variant::fenced;
  else if (text == "lease") out = Variant::lease;
  else if (text == "check_only") out = Variant::check_only;
  else if (text == "fence_only") out = Variant::fence_only;
  else return false;
  return true;
}

std::unique_ptr<Behaviour> coordinator(const CoordinatorConfig& c) { return std::make_unique<Coordinator>(c); }

}  // namespace lic::scenarios::leader

// ---- what a file can name ----------------------------------------------------------------------

namespace lic::scenarios {

namespace {

BehaviourFactory build_coordinator(Args& a) {
  leader::CoordinatorConfig c;
  const std::string variant = a.choice("variant");
  if (!variant.empty()) leader::parse_variant(variant, c.variant);
  c.lock_id = a.integer("lock_id");
  c.retry = a.positive("retry");
  c.query_timeout = a.positive("query_timeout");
  c.heartbeat_timeout = a.positive("heartbeat_timeout");
  c.takeover_after = a.duration("takeover_after");
  c.takeover_wait = a.duration("takeover_wait");
  if (c.variant == leader::Variant::lease && c.takeover_after > Duration::zero())
    a.invalid("takeover_after", "is for the lock variants: a lease has no backend to terminate");
  if (c.takeover_wait > Duration::zero() && c.takeover_after == Duration::zero())
    a.invalid("takeover_wait", "is for a takeover: give takeover_after too");
  c.lease_ttl = a.positive("lease_ttl");
  const bool before = a.failed();
  c.renew_at = a.ratio("renew_at");
  if (c.renew_at.num == 0 && a.failed() == before) a.invalid("renew_at", "must be more than 0: a share of lease_ttl, such as 1/3 or 50%");
  __extension__ using Wide = unsigned __int128;
  if (c.renew_at.num != 0 && static_cast<Wide>(c.lease_ttl.ns) * c.renew_at.num / c.renew_at.den < static_cast<Wide>(kMillisecond.ns))
    a.invalid("renew_at", "renews more often than once a millisecond: make it, or lease_ttl, larger");
  c.health = a.positive("health_every");
  c.reconcile = a.positive("reconcile_every");
  c.ttl = a.positive("ttl_every");
  c.gc = a.positive("gc_every");
  c.workspaces = a.integer("workspaces");
  c.work = a.duration("work");
  if (c.workspaces < 1) a.invalid("workspaces", "must be 1 or more");
  c.db = a.atom("db");
  c.leader_name = a.optional_atom("leader_name");
  c.history = a.flag("history");
  return [c](const std::string&) { return leader::coordinator(c); };
}

}  // namespace

std::vector<BehaviourInfo> leader_behaviours() {
  return {BehaviourInfo{
      "leader.coordinator",
      "seed 001's Coordinator: leader by a PostgreSQL advisory lock (naive: the seed's code; fenced: a lock heartbeat and "
      "a fencing token) or a lease; as leader it runs four periodic loops that write to the database",
      {{"variant", "naive|fenced|lease|check_only|fence_only", "naive",
        "naive (the seed's code), fenced (a lock check before each tick and a fencing token on each write), lease, "
        "check_only or fence_only (fenced with one of its two defences)"},
       {"lock_id", "int", "12345", "the advisory lock's id (COORDINATOR_LOCK_ID), a bigint", false, true},
       {"retry", "duration", "5s", "between attempts to become leader (COORDINATOR_RETRY_INTERVAL)"},
       {"query_timeout", "duration", "10s", "the driver's command timeout"},
       {"heartbeat_timeout", "duration", "2s", "fenced, check_only: the lock session's check before each tick"},
       {"takeover_after", "duration", "0",
        "0: never; else a standby terminates the lock holder's backend when its session has been idle this long, then takes the lock at once"},
       {"takeover_wait", "duration", "0", "with takeover_after: pg_terminate_backend waits this long for the backend's exit (0: it only signals)"},
       {"lease_ttl", "duration", "15s", "lease: how long a lease lasts (renewed every renew_at of it)"},
       {"renew_at", "ratio", "1/3", "lease: the share of lease_ttl after which the leader renews (1: as it runs out)"},
       {"health_every", "duration", "30s", "HealthMonitor's period"},
       {"reconcile_every", "duration", "10s", "StateReconciler's period"},
       {"ttl_every", "duration", "1m", "TTL Manager's period"},
       {"gc_every", "duration", "1h", "Archive GC's period"},
       {"workspaces", "int", "3", "rows each tick writes"},
       {"work", "duration", "200ms", "each workspace's work before its write (observe_and_update asks its runtime)"},
       refers_to({"db", "string", "Postgres", "the database's registered name"}),
       registered_as({"leader_name", "string", "-", "a name the leader registers while it leads, for faults aimed at node_of(NAME)"}),
       {"history", "bool", "false",
        "record each write as an operation (write TABLE/w NODE:TOKEN; ok, fail when refused, info on a timeout): "
        "a lane of them per loop on the timeline"}},
      build_coordinator,
      {{"leader.late_renewal", "lease: a renewal comes two thirds of the ttl late (a pause, a busy loop)"},
       {"leader.slow_work", "a leader loop's workspace answers a query timeout late, so its write lands late"}}}};
}

}  // namespace lic::scenarios
