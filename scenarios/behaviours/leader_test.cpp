// Seed 001's leader election (docs/leader-election.md), piece by piece: the simulated PostgreSQL
// (sessions, advisory locks and their fencing tokens, how a session ends, restarts that keep the
// data), the pure trace properties (safety, beliefs, failovers), the Coordinator's naive and
// fenced variants through the runner, and what validate says of a leader-election file.

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/held_event.hpp"
#include "properties/history.hpp"
#include "properties/leader.hpp"
#include "scenarios/behaviours/pg.hpp"
#include "scenarios/behaviours/pg/server.hpp"  // backend_exit_latency, kTerminationPoll
#include "scenarios/behaviours/pg/tcp.hpp"  // Outbox and linux_timer, as the server runs them
#include "scenarios/faults/fault.hpp"
#include "scenarios/file/read.hpp"
#include "scenarios/run/runner.hpp"
#include "scenarios/testing/run_text.hpp"
#include "scenarios/testing/support.hpp"
#include "sim/simulation.hpp"
#include "sim/trace_keys.hpp"

namespace {

using namespace lic;
using namespace lic::literals;
using namespace lic::scenarios;
using lic::scenarios::testing::check_named;
using lic::scenarios::testing::field;
using lic::scenarios::testing::run_text;
using lic::scenarios::testing::system_events;
namespace pl = lic::properties;
namespace ev = lic::properties::leader;

const Atom kDb("db");
const Atom kC1("c1");
const Atom kC2("c2");
const Atom kPostgres("Postgres");
const std::int64_t kLock = 7;

Time at(Duration d) { return Time{} + d; }

// (No Catch::StringMaker for Time here: other test files of this executable compare times too,
// and a specialisation in one file alone would make the printed form depend on the linker.)
std::string show(const properties::Intervals& iv) {
  std::string s;
  for (const properties::Interval& i : iv) s += "[" + format_time(i.from) + ", " + format_time(i.to) + ") ";
  return s;
}

/// Keepalive 60 s idle, then 3 probes 10 s apart: a session cut off ends 90 s after the last
/// word from its client.
pg::ServerConfig keepalive_60_10_3() {
  pg::ServerConfig c;
  c.keepalive_idle = 60_s;
  c.keepalive_interval = 10_s;
  c.keepalive_count = 3;
  return c;
}

/// A simulation with the server on node `db`, booted again when that node restarts, and
/// clients on other nodes. The network is the default one: 1 ms each way.
struct World {
  Simulation sim;
  pg::ServerConfig cfg;

  explicit World(pg::ServerConfig c = keepalive_60_10_3(), SimOptions o = {}) : sim(o), cfg(c) {
    boot();
    sim.set_node_boot(kDb, [this] { boot(); });
  }
  void boot() {
    SpawnOptions o;
    o.node = kDb;
    o.label = Label{Atom("/pg/postgres"), 1};
    sim.spawn(pg::server(cfg), o);
  }
  Pid client(Atom node, Body body) {
    SpawnOptions o;
    o.node = node;
    o.label = Label{Atom("/client/" + std::string(node.text())), 1};
    return sim.spawn(std::move(body), o);
  }
  void run_to(Duration d) { sim.run_until(at(d)); }
  void cut(Atom a, Atom b) {
    sim.block(a, b);
    sim.block(b, a);
  }
  void heal(Atom a, Atom b) {
    sim.unblock(a, b);
    sim.unblock(b, a);
  }
  std::vector<HeldEvent> events(const char* name) const { return system_events(sim.trace(), name); }
  /// The db_session_end of `session` (null when it has not ended).
  std::optional<TraceEvent> session_end(std::int64_t session) const {
    for (const HeldEvent& e : events("db_session_end"))
      if (*field<std::int64_t>(*e, "session") == session) return *e;
    return std::nullopt;
  }
};

/// A World as the conformance comparator runs a real server's loopback, at `seed`: links of
/// 20 us each way and a 10 us query, so that a statement lands about as soon after another's
/// answer as on the recording machine.
struct LoopbackWorld : World {
  static pg::ServerConfig config() {
    pg::ServerConfig c = keepalive_60_10_3();
    c.query_latency = 10_us;
    return c;
  }
  static SimOptions seeded(std::uint64_t seed) {
    SimOptions o;
    o.seed = seed;
    return o;
  }
  explicit LoopbackWorld(std::uint64_t seed) : World(config(), seeded(seed)) {
    LinkParams loopback;
    loopback.latency_min = 20_us;
    loopback.latency_mean = 20_us;
    sim.set_default_link(loopback);
  }
};

std::string why(const TraceEvent& e) { return std::string(field<Atom>(e, "why")->text()); }

pg::Query query(pg::Query::Op op, std::int64_t token = 0) {
  pg::Query q;
  q.op = op;
  q.lock = kLock;
  q.token = token;
  q.table = Atom("workspaces");
  q.loop = Atom("test");
  return q;
}
const pg::Query kTryLock = query(pg::Query::Op::try_lock);
const pg::Query kUnlock = query(pg::Query::Op::unlock);
const pg::Query kPing = query(pg::Query::Op::ping);
pg::Query write_with(std::int64_t token) { return query(pg::Query::Op::write, token); }

/// pg_terminate_backend(session[, timeout]).
pg::Query terminate(std::int64_t session, Duration timeout = {}) {
  pg::Query q;
  q.op = pg::Query::Op::terminate;
  q.session = session;
  q.duration = timeout;
  return q;
}

/// Connects to the server, waiting 1 s at most.
std::optional<pg::Conn> connect(Context& ctx) { return pg::Conn::connect(ctx, kPostgres, 1_s); }

/// A client that connects, takes the lock, records its session and result, then idles.
Body holder(std::int64_t& session, pg::Result& got) {
  return [&session, &got](Context& ctx) {
    const auto c = connect(ctx);
    if (!c) return;
    session = c->session();
    got = c->query(ctx, kTryLock, 1_s);
    ctx.sleep(10'000_s);
  };
}

}  // namespace

// ---- the server: locks and tokens -------------------------------------------------------------

TEST_CASE("pg: a second session cannot take a held lock - once the first closes it gets it with the next token", "[leader][pg]") {
  World w;
  pg::Result a1, a_again, b1, b2, b_unlock_free;
  std::int64_t a_session = 0;
  w.client(kC1, [&](Context& ctx) {
    const auto c = connect(ctx);
    if (!c) return;
    a_session = c->session();
    a1 = c->query(ctx, kTryLock, 1_s);
    ctx.sleep(1_s);
    a_again = c->query(ctx, kTryLock, 1_s);  // re-entrant: the same session, the same token
    c->close(ctx);
  });
  w.client(kC2, [&](Context& ctx) {
    ctx.sleep(100_ms);
    const auto c = connect(ctx);
    if (!c) return;
    b1 = c->query(ctx, kTryLock, 1_s);
    b_unlock_free = c->query(ctx, kUnlock, 1_s);  // not its lock: nothing to release
    ctx.sleep(2_s);
    b2 = c->query(ctx, kTryLock, 1_s);
    ctx.sleep(100_s);  // an owner that returns closes its connections
  });
  w.run_to(5_s);
  CHECK((a1.ok() && a1.value && a1.token == 1));
  CHECK((a_again.ok() && a_again.value && a_again.token == 1));
  CHECK(b1.ok());
  CHECK_FALSE(b1.value);
  CHECK_FALSE(b_unlock_free.value);
  CHECK((b2.ok() && b2.value && b2.token == 2));
  const auto locks = w.events("db_lock");
  REQUIRE(locks.size() == 2);  // a re-entrant take is no new acquisition
  CHECK(*field<std::int64_t>(*locks[1], "token") == 2);
  const auto unlocks = w.events("db_unlock");
  REQUIRE(unlocks.size() == 1);
  CHECK(*field<std::int64_t>(*unlocks[0], "session") == a_session);
  CHECK(why(*unlocks[0]) == "closed");
  CHECK(unlocks[0]->time > at(1_s));
  CHECK(unlocks[0]->time < locks[1]->time);
}

TEST_CASE("pg: a fenced write is refused with a stale token or while the lock is free - one without a token always goes through", "[leader][pg]") {
  World w;
  pg::Result a_lock, a_ok, a_free, a_plain, a_stale, b_ok;
  w.client(kC1, [&](Context& ctx) {
    const auto c = connect(ctx);
    if (!c) return;
    a_lock = c->query(ctx, kTryLock, 1_s);
    a_ok = c->query(ctx, write_with(a_lock.token), 1_s);
    c->query(ctx, kUnlock, 1_s);
    a_free = c->query(ctx, write_with(a_lock.token), 1_s);  // the latest token, but nobody holds the lock
    a_plain = c->query(ctx, write_with(0), 1_s);
    ctx.sleep(1_s);
    a_stale = c->query(ctx, write_with(a_lock.token), 1_s);  // c2 took the lock meanwhile
  });
  w.client(kC2, [&](Context& ctx) {
    ctx.sleep(500_ms);
    const auto c = connect(ctx);
    if (!c) return;
    const pg::Result l = c->query(ctx, kTryLock, 1_s);
    b_ok = c->query(ctx, write_with(l.token), 1_s);
  });
  w.run_to(3_s);
  CHECK(a_lock.token == 1);
  CHECK((a_ok.ok() && a_ok.value));
  CHECK(a_free.status == pg::Result::Status::refused);
  CHECK(a_free.error == "lock_free");
  CHECK((a_plain.ok() && a_plain.value));
  CHECK(a_stale.status == pg::Result::Status::refused);
  CHECK(a_stale.error == "stale_token");
  CHECK((b_ok.ok() && b_ok.value));
  const auto refused = w.events("db_write_refused");
  REQUIRE(refused.size() == 2);
  CHECK(why(*refused[0]) == "lock_free");
  CHECK(*field<std::int64_t>(*refused[0], "latest") == 1);
  CHECK(why(*refused[1]) == "stale_token");
  CHECK(*field<std::int64_t>(*refused[1], "token") == 1);
  CHECK(*field<std::int64_t>(*refused[1], "latest") == 2);
  const auto writes = w.events("db_write");
  REQUIRE(writes.size() == 3);  // a_ok, a_plain, b_ok, numbered in the database's order
  for (std::size_t i = 0; i < writes.size(); ++i) CHECK(*field<std::int64_t>(*writes[i], "seq") == static_cast<std::int64_t>(i + 1));
  CHECK(*field<std::int64_t>(*writes[1], "token") == 0);
}

TEST_CASE("pg: fence rules - at_least lets a stale token through until a higher one is written, off never refuses - epoch new_node keeps a node's token", "[leader][pg][fence]") {
  // c1 takes the lock (token 1), lets it go; c2 takes it (token 2); c1 writes with its old token
  // before and after c2's first write; then c2 lets go and takes it again.
  const auto run = [](pg::ServerConfig cfg) {
    World w(cfg);
    struct Got {
      pg::Result stale_before, stale_after;
      std::int64_t b_first = 0, b_again = 0;
    } g;
    w.client(kC1, [&g](Context& ctx) {
      const auto c = connect(ctx);
      if (!c) return;
      const pg::Result l = c->query(ctx, kTryLock, 1_s);
      c->query(ctx, kUnlock, 1_s);
      ctx.sleep(1_s);  // c2 has the lock, and has not written yet
      g.stale_before = c->query(ctx, write_with(l.token), 1_s);
      ctx.sleep(1_s);  // c2 has written with its token
      g.stale_after = c->query(ctx, write_with(l.token), 1_s);
    });
    w.client(kC2, [&g](Context& ctx) {
      ctx.sleep(500_ms);
      const auto c = connect(ctx);
      if (!c) return;
      g.b_first = c->query(ctx, kTryLock, 1_s).token;
      ctx.sleep(1_s);
      c->query(ctx, write_with(g.b_first), 1_s);
      ctx.sleep(1_s);
      c->query(ctx, kUnlock, 1_s);
      g.b_again = c->query(ctx, kTryLock, 1_s).token;
    });
    w.run_to(5_s);
    return g;
  };
  pg::ServerConfig cfg = keepalive_60_10_3();
  const auto strict = run(cfg);
  CHECK(strict.stale_before.status == pg::Result::Status::refused);
  CHECK(strict.stale_after.status == pg::Result::Status::refused);
  CHECK(strict.b_first == 2);
  CHECK(strict.b_again == 3);  // every acquisition takes the next token
  cfg.fence = pg::ServerConfig::Fence::at_least;
  const auto at_least = run(cfg);
  CHECK((at_least.stale_before.ok() && at_least.stale_before.value));  // no write with token 2 yet
  CHECK(at_least.stale_after.status == pg::Result::Status::refused);
  CHECK(at_least.stale_after.error == "stale_token");
  cfg.fence = pg::ServerConfig::Fence::off;
  const auto off = run(cfg);
  CHECK(off.stale_before.ok());
  CHECK(off.stale_after.ok());
  cfg.fence = pg::ServerConfig::Fence::strict;
  cfg.epoch_every_acquisition = false;
  const auto new_node = run(cfg);
  CHECK(new_node.b_first == 2);  // another node: the next token
  CHECK(new_node.b_again == 2);  // the same node again: the same token
}

// ---- the server: how a session ends -----------------------------------------------------------

TEST_CASE("pg: the client's node crashing or its process dying ends the session at once (reset) and frees the lock", "[leader][pg]") {
  World w;
  std::int64_t session = 0;
  pg::Result got;
  const Pid owner = w.client(kC1, holder(session, got));
  w.run_to(10_s);
  REQUIRE(got.value);
  SECTION("the node crashes") {
    w.sim.crash_node(kC1);
    CHECK_FALSE(w.sim.node_up(kC1));
  }
  SECTION("the process crashes") {
    w.sim.crash(owner, Reason::error(Atom("boom")));
    CHECK(w.sim.node_up(kC1));
  }
  pg::Result b;
  w.client(kC2, [&](Context& ctx) {
    ctx.sleep(100_ms);
    if (const auto c = connect(ctx)) b = c->query(ctx, kTryLock, 1_s);
    ctx.sleep(100_s);  // an owner that returns closes its connections
  });
  w.run_to(11_s);
  const std::optional<TraceEvent> end = w.session_end(session);
  REQUIRE(end.has_value());
  INFO("the session ended at t=" << format_time(end->time) << " (" << why(*end) << ")");
  CHECK(why(*end) == "reset");
  CHECK(end->time >= at(10_s));
  CHECK(end->time <= at(10_s) + 5_ms);  // the reset crosses the network: no keepalive wait
  const auto unlocks = w.events("db_unlock");
  REQUIRE(unlocks.size() == 1);
  CHECK(why(*unlocks[0]) == "reset");
  CHECK((b.value && b.token == 2));
}

TEST_CASE("pg: a client cut off from the database loses its session only when keepalive gives up - idle + interval x count after its last word", "[leader][pg]") {
  World w;  // 60 s + 3 x 10 s
  std::int64_t session = 0;
  Time last_sent{}, last_answered{};
  w.client(kC1, [&](Context& ctx) {
    const auto c = connect(ctx);
    if (!c) return;
    session = c->session();
    c->query(ctx, kTryLock, 1_s);
    for (;;) {
      ctx.sleep(5_s);
      const Time sent = ctx.now();
      if (!c->query(ctx, kPing, 1_s).ok()) continue;
      last_sent = sent;
      last_answered = ctx.now();
    }
  });
  w.run_to(21_s);
  w.cut(kC1, kDb);
  w.run_to(21_s + 59_s);
  CHECK(!w.session_end(session).has_value());  // the idle time since the last word has not passed
  w.run_to(200_s);
  const std::optional<TraceEvent> end = w.session_end(session);
  REQUIRE(end.has_value());
  INFO("the session ended at t=" << format_time(end->time) << "; the last ping went at t=" << format_time(last_sent)
                                 << " and was answered at t=" << format_time(last_answered));
  CHECK(why(*end) == "keepalive");
  CHECK(last_sent > at(19_s));
  CHECK(last_answered < at(21_s));
  // The server last heard of the client between that ping's send and the client's OS
  // acknowledging its answer (one hop, 1 ms, after the answer arrived). Linux's timer wheel
  // fires the 60 s timer up to 2.048 s late and each 10 s one up to 256 ms late.
  CHECK(end->time >= last_sent + 90_s);
  CHECK(end->time <= last_answered + 1_ms + 90_s + 2048_ms + 256_ms * 3);
  const auto unlocks = w.events("db_unlock");
  REQUIRE(unlocks.size() == 1);
  CHECK(why(*unlocks[0]) == "keepalive");
  CHECK(unlocks[0]->time == end->time);
}

TEST_CASE("pg: Linux's retransmission timeout - RTO doubling from 200 ms to 120 s for tcp_retries2 retransmissions", "[leader][pg]") {
  CHECK(pg::retransmission_timeout(5) == 12'600_ms);
  CHECK(pg::retransmission_timeout(8) == 102'200_ms);
  CHECK(pg::retransmission_timeout(15) == 924'600_ms);
}

TEST_CASE("pg: an answer caught by a cut is retransmitted - keepalive waits and tcp_user_timeout from the first retransmission ends the session", "[leader][pg]") {
  pg::ServerConfig cfg = keepalive_60_10_3();
  cfg.tcp_user_timeout = 3_s;
  World w(cfg);
  std::int64_t session = 0;
  Time sent{};
  w.client(kC1, [&](Context& ctx) {
    const auto c = connect(ctx);
    if (!c) return;
    session = c->session();
    c->query(ctx, kTryLock, 1_s);
    pg::Query nap = kPing;
    nap.op = pg::Query::Op::sleep;
    nap.duration = 1_s;
    ctx.sleep(10_s);
    sent = ctx.now();
    c->query(ctx, nap, 100_s);  // its answer leaves 1 s later, into the cut
    ctx.sleep(1000_s);
  });
  w.run_to(10_s + 500_ms);
  REQUIRE(sent > at(10_s));
  w.cut(kC1, kDb);  // the query is at the server, its answer not yet
  w.run_to(200_s);
  const std::optional<TraceEvent> end = w.session_end(session);
  REQUIRE(end.has_value());
  INFO("the session ended at t=" << format_time(end->time) << "; the query went at t=" << format_time(sent));
  CHECK(why(*end) == "retransmit");
  // answer at sent + 1 s (+ query latency), first retransmission 204 ms later, then 3 s.
  CHECK(end->time >= sent + 1_s + 204_ms + 3_s);
  CHECK(end->time <= sent + 1_s + 204_ms + 3_s + 10_ms);
}

TEST_CASE("pg: a cut shorter than the keepalive leaves the session and its lock intact", "[leader][pg]") {
  World w;
  std::int64_t session = 0;
  pg::Result mine_after, other;
  w.client(kC1, [&](Context& ctx) {
    const auto c = connect(ctx);
    if (!c) return;
    session = c->session();
    c->query(ctx, kTryLock, 1_s);
    ctx.sleep(150_s);
    mine_after = c->query(ctx, kTryLock, 1_s);
    ctx.sleep(1000_s);  // an owner that returns closes its connections
  });
  w.client(kC2, [&](Context& ctx) {
    ctx.sleep(160_s);
    if (const auto c = connect(ctx)) other = c->query(ctx, kTryLock, 1_s);
  });
  w.run_to(21_s);
  w.cut(kC1, kDb);
  w.run_to(71_s);  // 50 s: the probes 60 s and 70 s after the last word are lost, the one at 80 s is answered
  w.heal(kC1, kDb);
  w.run_to(300_s);
  CHECK(!w.session_end(session).has_value());
  CHECK(w.events("db_unlock").empty());
  CHECK((mine_after.ok() && mine_after.value && mine_after.token == 1));
  CHECK(other.ok());
  CHECK_FALSE(other.value);
}

TEST_CASE("pg: a query on a session the server ended gets ConnectionDoesNotExistError at once - one while cut off a TimeoutError after its timeout", "[leader][pg]") {
  World w;
  pg::Result cut_off, ended;
  Duration cut_off_took{}, ended_took{};
  std::int64_t session = 0;
  w.client(kC1, [&](Context& ctx) {
    const auto c = connect(ctx);
    if (!c) return;
    session = c->session();
    ctx.sleep(2_s);
    Time t0 = ctx.now();
    cut_off = c->query(ctx, kPing, 3_s);
    cut_off_took = ctx.now() - t0;
    ctx.sleep(200_s);
    t0 = ctx.now();
    ended = c->query(ctx, kPing, 3_s);
    ended_took = ctx.now() - t0;
  });
  w.run_to(1_s);
  w.cut(kC1, kDb);
  w.run_to(150_s);  // keepalive ended the session at about 90 s
  w.heal(kC1, kDb);
  w.run_to(300_s);
  CHECK(cut_off.status == pg::Result::Status::timeout);
  CHECK(cut_off.error == "TimeoutError");
  CHECK(cut_off_took == 3_s);
  REQUIRE(w.session_end(session).has_value());
  CHECK(ended.status == pg::Result::Status::no_connection);
  CHECK(ended.error == "ConnectionDoesNotExistError");
  CHECK(ended_took <= 5_ms);  // the server's OS answers at once: a round trip
}

TEST_CASE("pg: a terminated backend is gone 20 us to 3.8 ms after the signal - three in four within 50 us", "[leader][pg]") {
  Rng rng(7);
  constexpr int kDraws = 100'000;
  int quick = 0;
  Duration least = Duration{1'000'000'000}, most{};
  for (int k = 0; k < kDraws; ++k) {
    const Duration d = pg::detail::backend_exit_latency(rng);
    least = std::min(least, d);
    most = std::max(most, d);
    quick += d <= 50_us ? 1 : 0;
  }
  CHECK(least >= 20_us);
  CHECK(most <= 3'800_us);
  CHECK(most > 3'000_us);  // the tail is drawn
  CHECK(quick > kDraws * 74 / 100);
  CHECK(quick < kDraws * 76 / 100);
}

TEST_CASE("pg: pg_terminate_backend only signals - a try right after its answer can find the lock still held, and the session ends a moment later", "[leader][pg]") {
  // The try lands 50 us after the signal, about as soon as the recorder's does on a real server
  // (conformance/pg, terminate_returns_before_exit).
  int held = 0;
  constexpr int kSeeds = 60;
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    LoopbackWorld w(seed);
    std::int64_t victim = 0;
    pg::Result got;
    w.client(kC1, holder(victim, got));
    pg::Result terminated, tried, later;
    Time answered{};
    w.client(kC2, [&](Context& ctx) {
      const auto c = connect(ctx);
      if (!c) return;
      ctx.sleep(1_s);
      terminated = c->query(ctx, terminate(victim), 1_s);
      answered = ctx.now();
      tried = c->query(ctx, kTryLock, 1_s);
      ctx.sleep(10_ms);
      later = c->query(ctx, kTryLock, 1_s);
    });
    w.run_to(5_s);
    INFO("seed " << seed);
    REQUIRE(got.value);
    CHECK(terminated.value);
    CHECK(later.value);  // gone within 3.8 ms: the lock is free 10 ms on
    held += tried.value ? 0 : 1;
    const std::optional<TraceEvent> end = w.session_end(victim);
    REQUIRE(end.has_value());
    CHECK(why(*end) == "terminated");
    CHECK(end->time <= answered + 3'800_us);
  }
  // About a quarter (the recordings: 20 % to 34 %); the old model ended the session before the
  // answer, and never showed it held.
  CHECK(held >= kSeeds / 10);
  CHECK(held <= kSeeds / 2);
}

TEST_CASE("pg: a backend sent SIGTERM answers nothing more - a lock let go while it waits is not granted to it, and terminating oneself gets no result", "[leader][pg]") {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    LoopbackWorld w(seed);
    std::int64_t waiter = 0;
    pg::Result waited;
    w.client(kC2, [&](Context& ctx) {
      const auto c = connect(ctx);
      if (!c) return;
      waiter = c->session();
      ctx.sleep(500_ms);
      waited = c->query(ctx, query(pg::Query::Op::lock), 5_s);  // pg_advisory_lock: waits behind the holder
    });
    pg::Result own;
    w.client(kC1, [&](Context& ctx) {
      const auto holder = connect(ctx);
      const auto control = connect(ctx);
      if (!holder || !control) return;
      holder->query(ctx, kTryLock, 1_s);
      ctx.sleep(1_s);
      control->query(ctx, terminate(waiter), 1_s);
      holder->query(ctx, kUnlock, 1_s);  // lands while the waiter may not be gone yet
      own = control->query(ctx, terminate(control->session()), 1_s);
    });
    w.run_to(5_s);
    INFO("seed " << seed);
    CHECK(waited.status == pg::Result::Status::no_connection);
    for (const HeldEvent& e : w.events("db_lock")) CHECK(*field<std::int64_t>(*e, "session") != waiter);
    CHECK(own.status == pg::Result::Status::no_connection);  // FATAL, no row (was: true, then the end)
  }
}

TEST_CASE("pg: pg_terminate_backend with a timeout looks every 100 ms and not after its last wait - 2 s gives true after 100 ms, 1 ms false with a WARNING", "[leader][pg]") {
  for (const auto& [timeout, value, took] : {std::tuple{2'000_ms, true, pg::detail::kTerminationPoll}, std::tuple{1_ms, false, 1_ms}}) {
    World w;
    std::int64_t victim = 0;
    pg::Result got;
    w.client(kC1, holder(victim, got));
    pg::Result terminated;
    Duration elapsed{};
    w.client(kC2, [&, timeout = timeout](Context& ctx) {
      const auto c = connect(ctx);
      if (!c) return;
      ctx.sleep(1_s);
      const Time t0 = ctx.now();
      terminated = c->query(ctx, terminate(victim, timeout), 5_s);
      elapsed = ctx.now() - t0;
    });
    w.run_to(5_s);
    INFO("timeout " << format_duration(timeout));
    REQUIRE(terminated.ok());
    CHECK(terminated.value == value);
    // The query's way there and back (1 ms each way) and its latency (2 ms), plus the waits.
    CHECK(elapsed == 1_ms + 2_ms + took + 1_ms);
    CHECK(terminated.notices == (value ? std::vector<std::string>{}
                                       : std::vector<std::string>{fmt::format("backend with PID {} did not terminate within 1 millisecond", victim)}));
    REQUIRE(w.session_end(victim).has_value());  // gone anyway
  }
}

TEST_CASE("pg: a restart (degrade mode restart, or the db node crashing) ends every session - tokens, sessions and write numbers go on from the disk", "[leader][pg]") {
  World w;
  std::vector<pg::Result> locks, pings;
  std::vector<std::int64_t> sessions;
  const auto take = [&](Context& ctx) {  // connect again, take the lock, write
    const auto c = connect(ctx);
    if (!c) return;
    sessions.push_back(c->session());
    locks.push_back(c->query(ctx, kTryLock, 1_s));
    c->query(ctx, write_with(0), 1_s);
    ctx.sleep(3_s);
    pings.push_back(c->query(ctx, kPing, 1_s));  // after the restart
  };
  w.client(kC1, [&](Context& ctx) {
    for (int i = 0; i < 3; ++i) take(ctx);
  });
  std::int64_t other = 0;
  w.client(kC2, [&](Context& ctx) {
    if (const auto c = connect(ctx)) other = c->session();
    ctx.sleep(10'000_s);
  });
  w.run_to(1_s);
  w.sim.send(w.sim.whereis(kPostgres), faults::kDegrade, faults::Degrade{Atom("restart"), true});
  w.run_to(4_s + 500_ms);
  w.sim.crash_node(kDb);
  w.run_to(5_s);
  w.sim.restart_node(kDb);
  w.run_to(20_s);
  REQUIRE(locks.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) CHECK((locks[i].value && locks[i].token == static_cast<std::int64_t>(i + 1)));
  REQUIRE(pings.size() == 3);
  CHECK(pings[0].status == pg::Result::Status::no_connection);  // the degrade restart
  CHECK(pings[1].status == pg::Result::Status::no_connection);  // the node's crash and restart
  CHECK(pings[2].ok());
  CHECK(sessions[1] > other);  // session ids are never reused
  CHECK(sessions[2] > sessions[1]);
  REQUIRE(w.session_end(other).has_value());
  CHECK(why(*w.session_end(other)) == "restart");
  CHECK(why(*w.session_end(sessions[0])) == "restart");
  const auto writes = w.events("db_write");
  REQUIRE(writes.size() == 3);
  CHECK(*field<std::int64_t>(*writes[2], "seq") == 3);
}

// ---- the server: an owner that ends, a client that dies after a cut ---------------------------

TEST_CASE("pg: a client that ends normally without closing its connection loses its session - the socket goes with its owner", "[leader][pg]") {
  // A link carries no normal exit: the connection process also monitors its owner and closes
  // the session when the owner returns (found by review: the session and its lock used to live
  // for ever, answering every keepalive probe).
  World w;
  std::int64_t session = 0;
  w.client(kC1, [&](Context& ctx) {
    const auto c = connect(ctx);
    if (!c) return;
    session = c->session();
    c->query(ctx, kTryLock, 1_s);
  });  // returns: the owner is gone
  pg::Result other;
  w.client(kC2, [&](Context& ctx) {
    ctx.sleep(1_s);
    if (const auto c = connect(ctx)) other = c->query(ctx, kTryLock, 1_s);
  });
  w.run_to(500_s);
  const std::optional<TraceEvent> end = w.session_end(session);
  CHECK(end.has_value());
  if (end.has_value()) {
    INFO("the session ended at t=" << format_time(end->time));
    CHECK(end->time <= at(10_ms));
  }
  CHECK(other.value);
}

TEST_CASE("pg: a client process that dies after a healed cut resets its session at once", "[leader][pg]") {
  // The cut fires the server's monitor of the connection process with noconnection (down()
  // then waits for keepalive); once the path is back the server watches the client again, so a
  // later death (its OS resets the connection) ends the session at once. Found by review: it
  // used to wait for the next keepalive probe (two hours with Linux's defaults).
  World w;
  std::int64_t session = 0;
  pg::Result got;
  const Pid owner = w.client(kC1, holder(session, got));
  w.run_to(1_s);
  w.cut(kC1, kDb);
  w.run_to(11_s);
  w.heal(kC1, kDb);
  w.run_to(20_s);
  w.sim.crash(owner, Reason::error(Atom("boom")));
  w.run_to(200_s);
  const std::optional<TraceEvent> end = w.session_end(session);
  REQUIRE(end.has_value());
  INFO("the session ended at t=" << format_time(end->time) << " (" << why(*end) << ")");
  CHECK(why(*end) == "reset");
  CHECK(end->time <= at(20_s) + 5_ms);
}

// ---- the properties, on hand-built traces -------------------------------------------------------

namespace {

/// A trace written by hand, event by event.
struct Events {
  Trace trace;
  Pid db{5};

  void sys(Duration t, Atom node, Pid pid, const char* name, std::vector<TraceField> fields) {
    TraceEvent e;
    e.time = at(t);
    e.kind = EventKind::system;
    e.name = Atom(name);
    e.node = node;
    e.pid = pid;
    trace.append(e, std::move(fields));
  }
  void kernel(Duration t, EventKind kind, Atom node, Pid pid = {}, Atom tag = {}) {
    TraceEvent e;
    e.time = at(t);
    e.kind = kind;
    e.node = node;
    e.pid = pid;
    e.tag = tag;
    trace.append(e);
  }
  void db_start(Duration t) {
    sys(t, kDb, db, "db_start",
        {{ev::kKeepaliveIdle, (60_s).ns}, {ev::kKeepaliveInterval, (10_s).ns}, {ev::kKeepaliveCount, std::int64_t{3}}});
  }
  void coordinator(Atom node, Pid pid) {
    sys(0_s, node, pid, "coordinator_start",
        {{ev::kLockKey, kLock}, {ev::kRetry, (5_s).ns}, {ev::kQueryTimeout, (10_s).ns}, {ev::kHeartbeatTimeout, (2_s).ns}});
  }
  void lock(Duration t, Atom node, std::int64_t session, std::int64_t token) {
    sys(t, kDb, db, "db_lock", {{ev::kLockKey, kLock}, {ev::kSessionKey, session}, {keys::kNode, node}, {ev::kToken, token}});
  }
  void unlock(Duration t, Atom node, std::int64_t session, const char* why) {
    sys(t, kDb, db, "db_unlock", {{ev::kLockKey, kLock}, {ev::kSessionKey, session}, {keys::kNode, node}, {keys::kWhy, Atom(why)}});
  }
  void write(Duration t, Atom node, std::int64_t seq, std::int64_t session, std::int64_t term = 0) {
    std::vector<TraceField> f{{ev::kSeq, seq}, {ev::kSessionKey, session}, {keys::kNode, node}, {ev::kLockKey, kLock},
                              {ev::kToken, std::int64_t{0}}, {ev::kTable, Atom("workspaces")}, {ev::kLoop, Atom("HealthMonitor")}};
    if (term != 0) f.push_back({ev::kTerm, term});
    sys(t, kDb, db, "db_write", std::move(f));
  }
  void belief(Duration t, Atom node, Pid pid, bool on) {
    sys(t, node, pid, "leader_belief", {{ev::kLockKey, kLock}, {ev::kOn, std::int64_t{on ? 1 : 0}}});
  }
  const EventLog& log() const { return trace.events(); }
};

}  // namespace

TEST_CASE("properties: leader_safety names a write from a node that does not hold the lock - its writer, the holder and its seq", "[leader][properties]") {
  Events t;
  t.db_start(0_s);
  t.lock(1_s, kC1, 1, 1);
  t.write(2_s, kC1, 1, 2);  // the holder's: safe
  t.write(3_s, kC2, 2, 3);  // c2 while c1 holds it
  t.unlock(4_s, kC1, 1, "keepalive");
  t.write(5_s, kC1, 3, 2);  // c1 after its lock went: nobody holds it
  t.lock(6_s, kC2, 9, 2);
  t.write(7_s, kC2, 4, 9);  // the new holder's: safe
  t.kernel(8_s, EventKind::exit, kDb, t.db);  // the database's process ends: its locks go with it
  t.write(9_s, kC2, 5, 9);
  const pl::LeaderSafety s = pl::check_leader_safety(t.log());
  CHECK(s.writes == 5);
  CHECK_FALSE(s.ok());
  REQUIRE(s.unsafe.size() == 3);
  CHECK(s.unsafe[0].at == at(3_s));
  CHECK(s.unsafe[0].seq == 2);
  CHECK(s.unsafe[0].node == "c2");
  CHECK(s.unsafe[0].session == 3);
  CHECK(s.unsafe[0].holder == "c1");
  CHECK(s.unsafe[0].loop == "HealthMonitor");
  CHECK(s.unsafe[1].node == "c1");
  CHECK(s.unsafe[1].holder.empty());
  CHECK(s.unsafe[2].seq == 5);
  CHECK(s.unsafe[2].holder.empty());
  CHECK(s.overlap_from == at(3_s));
  CHECK(s.overlap_to == at(9_s));  // the first unsafe writer's (c2's) last unsafe write
  CHECK_THAT(pl::describe(s), Catch::Contains("c2 wrote while c1 held the leadership") && Catch::Contains("write 2 (HealthMonitor)"));
  SECTION("a write that says its term is judged by the lock session - one from a node's lost term is stale though the node leads again") {
    Events t2;
    t2.db_start(0_s);
    t2.lock(1_s, kC1, 1, 1);
    t2.write(2_s, kC1, 1, 5, 1);  // term 1: session 1 holds it
    t2.unlock(3_s, kC1, 1, "keepalive");
    t2.lock(4_s, kC1, 7, 2);      // c1 again, on session 7
    t2.write(5_s, kC1, 2, 5, 7);  // its new term: safe
    t2.write(6_s, kC1, 3, 6, 1);  // a loop still on term 1
    const pl::LeaderSafety s2 = pl::check_leader_safety(t2.log());
    REQUIRE(s2.unsafe.size() == 1);
    CHECK(s2.unsafe[0].seq == 3);
    CHECK(s2.unsafe[0].term == 1);
    CHECK(s2.unsafe[0].held_by == 7);
    CHECK(s2.unsafe[0].holder == "c1");
    CHECK_THAT(pl::describe(s2), Catch::Contains("c1 wrote under lock session 1 while its lock session 7 held the leadership"));
  }
  SECTION("the holder's writes alone are safe") {
    Events ok;
    ok.db_start(0_s);
    ok.lock(1_s, kC1, 1, 1);
    ok.write(2_s, kC1, 1, 2);
    ok.write(3_s, kC1, 2, 1);
    const pl::LeaderSafety good = pl::check_leader_safety(ok.log());
    CHECK(good.ok());
    CHECK(good.writes == 2);
  }
}

namespace {

pl::Intervals believed(const pl::Beliefs& b, const std::string& node) {
  for (const auto& [n, iv] : b.by_node)
    if (n == node) return iv;
  return {};
}

}  // namespace

TEST_CASE("properties: leader_beliefs - when each node believed, the longest overlap, who believes at the end", "[leader][properties]") {
  Events t;
  t.belief(10_s, kC1, Pid{6}, true);
  t.belief(30_s, kC2, Pid{7}, true);
  t.belief(60_s, kC2, Pid{7}, false);
  t.kernel(100_s, EventKind::exit, kC1, Pid{6});  // c1's coordinator ends: so does its belief
  t.belief(120_s, Atom("c3"), Pid{8}, true);
  const pl::Beliefs b = pl::leader_beliefs(t.log(), at(200_s));
  REQUIRE(b.by_node.size() == 3);
  INFO("c1: " << show(believed(b, "c1")) << "c2: " << show(believed(b, "c2")) << "c3: " << show(believed(b, "c3")));
  INFO("longest overlap " << format_duration(b.longest_overlap) << " from t=" << format_time(b.overlap_at));
  CHECK(believed(b, "c1") == pl::Intervals{{at(10_s), at(100_s)}});
  CHECK(believed(b, "c2") == pl::Intervals{{at(30_s), at(60_s)}});
  CHECK(believed(b, "c3") == pl::Intervals{{at(120_s), at(200_s)}});
  CHECK(b.longest_overlap == 30_s);
  CHECK(b.overlap_at == at(30_s));
  CHECK(b.overlap_nodes == std::vector<std::string>{"c1", "c2"});
  CHECK(b.at_end == std::vector<std::string>{"c3"});
}

TEST_CASE("properties: leader_beliefs lists the nodes in the order they first believed", "[leader][properties]") {
  // by_node is "in the order nodes first believed" (the timeline's lane order): c2, which began
  // after c1 but stopped first, comes second (found by review: it used to come first).
  Events t;
  t.belief(10_s, kC1, Pid{6}, true);
  t.belief(30_s, kC2, Pid{7}, true);
  t.belief(60_s, kC2, Pid{7}, false);
  t.belief(100_s, kC1, Pid{6}, false);
  const pl::Beliefs b = pl::leader_beliefs(t.log(), at(200_s));
  REQUIRE(b.by_node.size() == 2);
  CHECK(b.by_node[0].first == "c1");
  CHECK(b.by_node[1].first == "c2");
}

TEST_CASE("properties: leader_beliefs - two nodes believing together for 100 s is an overlap of 100 s, whoever else comes and goes", "[leader][properties]") {
  // The overlap runs from the instant a second node joins to the instant fewer than two are
  // left: a third node believing for 10 s in the middle does not cut c1 and c2's 100 s into
  // 50 + 10 + 40 (found by review: it used to).
  Events t;
  t.belief(0_s, kC1, Pid{6}, true);
  t.belief(0_s, kC2, Pid{7}, true);
  t.belief(50_s, Atom("c3"), Pid{8}, true);
  t.belief(60_s, Atom("c3"), Pid{8}, false);
  t.belief(100_s, kC1, Pid{6}, false);
  t.belief(100_s, kC2, Pid{7}, false);
  const pl::Beliefs b = pl::leader_beliefs(t.log(), at(200_s));
  INFO("longest overlap " << format_duration(b.longest_overlap) << " from t=" << format_time(b.overlap_at));
  CHECK(b.longest_overlap == 100_s);
  CHECK(b.overlap_at == at(0_s));
}

TEST_CASE("properties: leadership - the leader's node going down, then another's lock and write, is one failover", "[leader][properties]") {
  Events t;
  t.db_start(0_s);
  t.coordinator(kC1, Pid{6});
  t.coordinator(kC2, Pid{7});
  t.lock(1_s, kC1, 1, 1);
  t.write(2_s, kC1, 1, 2);
  t.kernel(10_s, EventKind::node_down, kC1);
  t.unlock(10_s + 1_ms, kC1, 1, "reset");
  t.lock(15_s, kC2, 9, 2);
  t.write(15_s + 500_ms, kC2, 2, 10);
  t.write(20_s, kC2, 3, 10);
  const pl::Leadership l = pl::leadership(t.log(), at(100_s));
  REQUIRE(l.failovers.size() == 1);
  const pl::Failover& f = l.failovers[0];
  INFO("lost t=" << format_time(f.lost) << ", resumed t=" << format_time(f.resumed) << ", blocked " << format_duration(f.blocked)
                 << "; acting " << show(l.acting));
  CHECK(f.from == "c1");
  CHECK(f.to == "c2");
  CHECK(f.cause == "node_down");
  CHECK(f.lost == at(10_s));
  CHECK(f.resumed == at(15_s + 500_ms));
  CHECK(f.took() == 5_s + 500_ms);
  CHECK(f.blocked == Duration::zero());  // c2 could reach the database all along
  CHECK(l.stalls.empty());
  CHECK(l.first_write == at(2_s));
  CHECK(l.acting == pl::Intervals{{at(2_s), at(10_s)}, {at(15_s + 500_ms), at(100_s)}});
  CHECK(l.keepalive == 90_s);
  CHECK(l.bound(f) == 90_s + 5_s + 20_s);
  const std::vector<pl::Holding> h = pl::holdings(t.log(), at(100_s));
  REQUIRE(h.size() == 2);
  CHECK((h[0].node == "c1" && h[0].from == at(1_s) && h[0].to == at(10_s + 1_ms)));
  CHECK((h[1].node == "c2" && h[1].from == at(15_s) && h[1].to == at(100_s)));
}

TEST_CASE("properties: leadership - a pause the leader rides out (its lock survives) is a stall, not a failover", "[leader][properties]") {
  Events t;
  t.db_start(0_s);
  t.coordinator(kC1, Pid{6});  // the only candidate: nobody can reach the database while it sleeps
  t.lock(1_s, kC1, 1, 1);
  t.write(2_s, kC1, 1, 2);
  t.kernel(10_s, EventKind::node_pause, kC1);
  t.kernel(40_s, EventKind::node_resume, kC1);
  t.write(41_s, kC1, 2, 2);
  const pl::Leadership l = pl::leadership(t.log(), at(100_s));
  CHECK(l.failovers.empty());
  REQUIRE(l.stalls.size() == 1);
  const pl::Failover& s = l.stalls[0];
  INFO("lost t=" << format_time(s.lost) << ", resumed t=" << format_time(s.resumed) << ", blocked " << format_duration(s.blocked)
                 << "; reachable " << show(l.reachable) << "; acting " << show(l.acting));
  CHECK(s.from == "c1");
  CHECK(s.to == "c1");
  CHECK(s.cause == "pause");
  CHECK(s.lost == at(10_s));
  CHECK(s.resumed == at(40_s));  // able to act again when the pause ended
  CHECK(s.blocked == 30_s);
  CHECK(l.reachable == pl::Intervals{{at(0_s), at(10_s)}, {at(40_s), at(100_s)}});
  CHECK(l.acting == pl::Intervals{{at(2_s), at(10_s)}, {at(40_s), at(100_s)}});
}

// ---- the Coordinator, through the runner ------------------------------------------------------

namespace {

/// Three coordinators of `variant` and the database (keepalive 60/10/3); the leader is cut from
/// the database at 1 m for 3 m.
std::string election(const std::string& variant, const std::string& checks, const std::string& extra = "",
                     const std::string& fault = "{name: cut, at: 1m, partition: [node_of(leader)], to: [db], duration: 3m}") {
  std::string s =
      "scenario: t\nphases: {chaos: 5m, quiet: 1m}\nnodes: [c1, c2, c3, db]\ntrees:\n"
      "  - id: pg\n    node: db\n    supervisor: {strategy: one_for_one}\n    children:\n"
      "      - {id: postgres, behaviour: pg.server, args: {tcp_keepalives_idle: 60s, tcp_keepalives_interval: 10s, "
      "tcp_keepalives_count: 3}}\n";
  for (const char* n : {"c1", "c2", "c3"}) {
    s += std::string("  - id: ") + n + "\n    node: " + n + "\n    supervisor: {strategy: one_for_one}\n    children:\n" +
         "      - {id: coordinator, behaviour: leader.coordinator, args: {variant: " + variant + ", leader_name: leader" + extra + "}}\n";
  }
  return s + "faults:\n  - " + fault + "\nchecks:\n" + checks;
}

const std::string kChecks =
    "  - leader_safety\n  - {failover: {min: 1}}\n  - {single_leader: {max: 0s}}\n  - leader_at_end\n"
    "  - {leader_availability: {min: 50%}}\n";

}  // namespace

TEST_CASE("coordinator: fenced under net ticks - the database's keepalive, not distributed Erlang's view, ends the cut-off leader's session", "[leader][coordinator][pg]") {
  // The old leader's connection processes die soon after the cut (it stops believing); the
  // server's keepalive probes cross no cut, so no reset comes back: the session ends by the
  // keepalive, 60 s + 3 x 10 s after it last heard the client, as under instant detection. (The
  // server once asked whether distributed Erlang still counted the client's node connected,
  // which under net ticks it does for up to 75 s into the cut: a probe then "reached" the dead
  // socket and ended the session with a reset 30 s early.)
  std::string text = election("fenced", kChecks);
  text.replace(text.find("trees:"), 6, "network: {detection: ticks}\ntrees:");
  const RunResult r = run_text(text);
  const pl::Leadership l = pl::leadership(r.sim->trace().events(), r.end);
  REQUIRE(l.failovers.size() == 1);
  const pl::Failover& f = l.failovers[0];
  INFO(f.from << " -> " << f.to << " (" << f.cause << ") lost t=" << format_time(f.lost) << ", took " << format_duration(f.took()));
  CHECK(f.took() > 80_s);
  bool keepalive = false;
  for (const TraceEvent& e : r.sim->trace().events())
    if (e.kind == EventKind::system && e.name == Atom("db_unlock") && e.text(Atom("why")) == "keepalive") keepalive = true;
  CHECK(keepalive);
  CHECK(check_named(r, "leader_safety").passed);
}

TEST_CASE("coordinator: naive - the leader cut off from the database goes on writing after another took the lock", "[leader][coordinator]") {
  const RunResult r = run_text(election("naive", kChecks));
  const CheckResult& safety = check_named(r, "leader_safety");
  INFO(safety.detail);
  CHECK_FALSE(safety.passed);
  CHECK_THAT(safety.detail, Catch::Contains("c1 wrote while c2 held the leadership"));
  CHECK_FALSE(check_named(r, "single_leader").passed);  // c1 never stops believing
  CHECK_FALSE(check_named(r, "leader_at_end").passed);
  CHECK_THAT(check_named(r, "leader_at_end").detail, Catch::Contains("2 nodes believe they lead at the end"));
  CHECK_FALSE(r.passed);
  const pl::Beliefs b = pl::leader_beliefs(r.sim->trace().events(), r.end);
  CHECK(b.at_end == std::vector<std::string>{"c1", "c2"});
}

TEST_CASE("coordinator: fenced - the same cut gives one failover and no write from a node without the lock", "[leader][coordinator]") {
  const RunResult r = run_text(election("fenced", kChecks + "  - {failover: {within: 10s}}\n"));
  for (const CheckResult& c : r.checks) UNSCOPED_INFO(c.name << ": " << c.detail);
  CHECK(check_named(r, "leader_safety").passed);
  CHECK(check_named(r, "single_leader").passed);  // c1 stopped believing before c2 began
  CHECK(check_named(r, "leader_at_end").passed);
  CHECK_THAT(check_named(r, "leader_at_end").detail, Catch::StartsWith("c2 leads at the end"));
  CHECK(check_named(r, "leader_availability").passed);
  const pl::Leadership l = pl::leadership(r.sim->trace().events(), r.end);
  REQUIRE(l.failovers.size() == 1);
  const pl::Failover& f = l.failovers[0];
  INFO(f.from << " -> " << f.to << " (" << f.cause << ") lost t=" << format_time(f.lost) << ", took " << format_duration(f.took()));
  CHECK((f.from == "c1" && f.to == "c2" && f.cause == "partition"));
  CHECK(f.lost == at(60_s));
  CHECK(f.took() > 60_s);  // the old lock session must end first: the keepalive, from its last ping
  CHECK(f.took() <= l.bound(f));
  // `within: 10s` is shorter than that: the same failover is too slow for it.
  const auto within = std::find_if(r.checks.begin(), r.checks.end(), [](const CheckResult& c) {
    return c.name.rfind("failover", 0) == 0 && c.detail.find("too slow") != std::string::npos;
  });
  CHECK(within != r.checks.end());
  const auto fs = r.metrics.find("failover_s");
  REQUIRE(fs != r.metrics.end());
  REQUIRE(fs->second.values.size() == 1);
  CHECK(fs->second.values[0] == Approx(static_cast<double>(f.took().ns) / 1e9));
  CHECK(r.metrics.at("leader_losses").values == std::vector<double>{1.0});
  CHECK(r.metrics.at("leader_overlap_s").values == std::vector<double>{0.0});
  for (const HeldEvent& e : system_events(r.sim->trace(), "db_write_refused")) CHECK(e->text(Atom("node")) == "c1");
  // leader_name follows the leader: registered by c2's coordinator at the end.
  const Pid leader = r.sim->whereis(Atom("leader"));
  REQUIRE(leader);
  CHECK(r.sim->info(leader)->node == kC2);
}

TEST_CASE("coordinator: naive - a SIGSTOP of the leader's process past the keepalive is ridden out (its OS answers the probes), where a pause of its node splits", "[leader][coordinator][suspend]") {
  // c1 leads at 1 m (the tests above). 3 m is past the server's keepalive (60 s + 3 x 10 s).
  const std::string checks = "  - leader_safety\n  - leader_at_end\n";
  const RunResult stopped = run_text(election("naive", checks, "", "{name: stop, at: 1m, suspend: /c1/coordinator, duration: 3m}"));
  for (const CheckResult& c : stopped.checks) UNSCOPED_INFO(c.name << ": " << c.detail);
  CHECK(stopped.passed);
  CHECK(pl::leadership(stopped.sim->trace().events(), stopped.end).failovers.empty());
  // The coordinator and its four loops stopped; their five connection processes (the OS) did not.
  std::size_t suspended = 0, of_conns = 0;
  for (const TraceEvent& e : stopped.sim->trace().events()) {
    if (e.kind != EventKind::process_suspend) continue;
    ++suspended;
    if (std::string_view(e.label.name.text()).ends_with("/conn")) ++of_conns;
  }
  CHECK(suspended == 5);
  CHECK(of_conns == 0);
  const RunResult paused = run_text(election("naive", checks, "", "{name: stop, at: 1m, pause: c1, duration: 3m}"));
  CHECK_FALSE(check_named(paused, "leader_safety").passed);
}

TEST_CASE("coordinator: a cut of the lock's connection alone - its loops' connections untouched - splits the naive brain - fenced steps down and takes the lock again on a new connection", "[leader][coordinator][cut_connection]") {
  const std::string fault = "{name: lock_cut, at: 1m, cut_connection: /c1/coordinator/conn, duration: 3m}";
  const RunResult naive = run_text(election("naive", kChecks, "", fault));
  const CheckResult& safety = check_named(naive, "leader_safety");
  INFO(safety.detail);
  CHECK_FALSE(safety.passed);
  CHECK_THAT(safety.detail, Catch::Contains("c1 wrote while"));
  // Nodes kept their contact: no partition, only the connection's segments dropped.
  const auto count = [&naive](EventKind k) {
    const auto& ev = naive.sim->trace().events();
    return std::count_if(ev.begin(), ev.end(), [k](const TraceEvent& e) { return e.kind == k; });
  };
  CHECK(count(EventKind::partition) == 0);
  CHECK(count(EventKind::process_cut) == 1);
  const RunResult fenced = run_text(election("fenced", kChecks, "", fault));
  for (const CheckResult& c : fenced.checks) UNSCOPED_INFO(c.name << ": " << c.detail);
  CHECK(fenced.passed);
  const pl::Leadership l = pl::leadership(fenced.sim->trace().events(), fenced.end);
  REQUIRE(l.failovers.size() == 1);
  INFO(l.failovers[0].from << " -> " << l.failovers[0].to << " (" << l.failovers[0].cause << ")");
  // Its lock check timed out on the cut socket; the rule is on that socket alone, so its next
  // connection works and takes the lock once the server has ended the old session.
  CHECK((l.failovers[0].from == "c1" && l.failovers[0].to == "c1"));
}

TEST_CASE("faults: cut_connection at a process that does not model its own connection is skipped, saying why", "[leader][cut_connection]") {
  const RunResult r = run_text(election("naive", "  - leader_at_end\n", "", "{name: lock_cut, at: 1m, cut_connection: /c1/coordinator, duration: 3m}"));
  const auto skipped = system_events(r.sim->trace(), "fault_skipped");
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0]->text(Atom("why")) == "/c1/coordinator does not model its own connection (Context::raw_network): cut its node with a partition");
}

TEST_CASE("coordinator: each defence alone - check_only steps down with no token, fence_only's stale writes are refused while it goes on believing", "[leader][coordinator][fence]") {
  const std::string checks = "  - leader_safety\n  - leader_at_end\n";
  const RunResult check = run_text(election("check_only", checks));
  for (const CheckResult& c : check.checks) UNSCOPED_INFO("check_only " << c.name << ": " << c.detail);
  CHECK(check.passed);
  CHECK(system_events(check.sim->trace(), "db_write_refused").empty());  // nothing carries a token
  for (const HeldEvent& e : system_events(check.sim->trace(), "db_write")) CHECK(*field<std::int64_t>(*e, "token") == 0);
  const RunResult fence = run_text(election("fence_only", checks));
  for (const CheckResult& c : fence.checks) UNSCOPED_INFO("fence_only " << c.name << ": " << c.detail);
  CHECK(check_named(fence, "leader_safety").passed);
  const auto refused = system_events(fence.sim->trace(), "db_write_refused");
  CHECK(!refused.empty());  // the fence acted: c1's loops wrote on with the old token
  for (const HeldEvent& e : refused) CHECK(e->text(Atom("node")) == "c1");
  CHECK_FALSE(check_named(fence, "leader_at_end").passed);  // nothing told c1 it lost
}

TEST_CASE("coordinator: history - each loop's writes are operations, ok as the database applied them and fail as the fence refused them, none without it", "[leader][coordinator]") {
  const RunResult plain = run_text(election("fenced", kChecks));
  CHECK(system_events(plain.sim->trace(), "op_invoke").empty());  // the leader files' traces stay as they were
  const RunResult r = run_text(election("fenced", kChecks + "  - {linearizable: {model: kv}}\n", ", history: true"));
  const history::Recorded h = history::read_history(r.sim->trace().events());
  CHECK(h.mistake.empty());
  REQUIRE(!h.ops.empty());
  std::map<std::string, int> ok, fail, info, applied, refused;
  for (const HeldEvent& e : system_events(r.sim->trace(), "op_ok")) ++ok[std::string(e->node.text())];
  for (const HeldEvent& e : system_events(r.sim->trace(), "op_fail")) ++fail[std::string(e->node.text())];
  for (const HeldEvent& e : system_events(r.sim->trace(), "op_info")) ++info[std::string(e->node.text())];
  for (const HeldEvent& e : system_events(r.sim->trace(), "db_write")) ++applied[e->text(Atom("node"))];
  for (const HeldEvent& e : system_events(r.sim->trace(), "db_write_refused")) ++refused[e->text(Atom("node"))];
  // c2 took over and was never cut: each write the database applied is one it saw ok, and back.
  CHECK(applied["c2"] > 0);
  CHECK(ok["c2"] == applied["c2"]);
  CHECK(fail["c2"] == 0);
  // c1, cut off at 1 m: an ok is a write applied; a write applied whose answer the cut held is
  // unknown to it (info); what the fence refused and c1 heard back is a fail.
  CHECK(applied["c1"] > 0);
  CHECK(ok["c1"] <= applied["c1"]);
  CHECK(ok["c1"] + info["c1"] >= applied["c1"]);
  CHECK(fail["c1"] <= refused["c1"]);
  CHECK(ok["c3"] + fail["c3"] + info["c3"] == 0);  // never led
  // Blind writes only: the history holds as a kv by construction; leader_safety judges them.
  CHECK(check_named(r, "linearizable").passed);
  CHECK(check_named(r, "leader_safety").passed);
}

// ---- validate --------------------------------------------------------------------------------------

namespace {

std::vector<Diagnostic> errors_of(const std::string& text) { return parse_scenario(text, "t.yaml").errors; }

std::string all(const std::vector<Diagnostic>& ds) {
  std::string s;
  for (const Diagnostic& d : ds) s += format_diagnostic("t.yaml", d) + "\n";
  return s;
}

/// A database on db and one coordinator on c1 with `pg_args` and `coord_args`, then `rest`.
std::string one_coordinator(const std::string& pg_args, const std::string& coord_args, const std::string& rest) {
  return "scenario: t\nphases: {chaos: 10m, quiet: 1m}\nnodes: [c1, db]\ntrees:\n"      // lines 1-4
         "  - id: pg\n    node: db\n    supervisor: {strategy: one_for_one}\n    children:\n"  // 5-8
         "      - {id: postgres, behaviour: pg.server, args: {" + pg_args + "}}\n"            // 9
         "  - id: c1\n    node: c1\n    supervisor: {strategy: one_for_one}\n    children:\n"  // 10-13
         "      - {id: coordinator, behaviour: leader.coordinator, args: {" + coord_args + "}}\n" + rest;  // 14
}

}  // namespace

TEST_CASE("validate: a leader check without a leader.coordinator in the file is an error at the check", "[leader][validate]") {
  const std::string text =
      "scenario: t\nphases: {chaos: 10m, quiet: 1m}\nnodes: [db]\ntrees:\n"
      "  - id: pg\n    node: db\n    supervisor: {strategy: one_for_one}\n    children:\n"
      "      - {id: postgres, behaviour: pg.server}\n"
      "checks:\n  - leader_safety\n";  // line 11
  const auto es = errors_of(text);
  INFO(all(es));
  REQUIRE(es.size() == 1);
  CHECK(es[0].mark.line == 11);
  CHECK(es[0].mark.col == 5);
  CHECK_THAT(es[0].message, Catch::Contains("check 'leader_safety' judges what leader.coordinator does") &&
                                Catch::Contains("nothing in the file runs a leader.coordinator"));
  CHECK(errors_of(one_coordinator("", "", "checks:\n  - leader_safety\n")).empty());
}

TEST_CASE("validate: a bad variant, a negative keepalive, a lock id outside int64 - each at its argument", "[leader][validate]") {
  SECTION("variant: bogus") {
    const auto es = errors_of(one_coordinator("", "variant: bogus", ""));
    INFO(all(es));
    REQUIRE(es.size() == 1);
    CHECK(es[0].mark.line == 14);
    CHECK(es[0].mark.col == 74);  // the value's column
    CHECK_THAT(es[0].message, Catch::Contains("argument 'variant' of 'leader.coordinator'") && Catch::Contains("'bogus' is not one of naive, fenced, lease"));
  }
  SECTION("tcp_keepalives_idle: -60s") {
    const auto es = errors_of(one_coordinator("tcp_keepalives_idle: -60s", "", ""));
    INFO(all(es));
    REQUIRE(es.size() == 1);
    CHECK(es[0].mark.line == 9);
    CHECK(es[0].mark.col == 74);
    CHECK_THAT(es[0].message, Catch::Contains("tcp_keepalives_idle") && Catch::Contains("cannot be negative"));
  }
  SECTION("lock_id: 99999999999999999999") {
    const auto es = errors_of(one_coordinator("", "lock_id: 99999999999999999999", ""));
    INFO(all(es));
    REQUIRE(es.size() == 1);
    CHECK(es[0].mark.line == 14);
    CHECK_THAT(es[0].message, Catch::Contains("lock_id") && Catch::Contains("outside a 64-bit integer"));
  }
}

TEST_CASE("validate: renew_at 0, a tcp_user_timeout past Linux's and a drift past 50 % - each at its value", "[leader][validate]") {
  SECTION("renew_at: 0") {
    const auto es = errors_of(one_coordinator("", "variant: lease, renew_at: 0", ""));
    INFO(all(es));
    REQUIRE(es.size() == 1);
    CHECK(es[0].mark.line == 14);
    CHECK_THAT(es[0].message, Catch::Contains("renew_at") && Catch::Contains("must be more than 0"));
  }
  SECTION("renew_at: 150%") {
    const auto es = errors_of(one_coordinator("", "variant: lease, renew_at: 150%", ""));
    INFO(all(es));
    REQUIRE(es.size() == 1);
    CHECK_THAT(es[0].message, Catch::Contains("renew_at") && Catch::Contains("more than 100%"));
  }
  SECTION("tcp_user_timeout past Linux's int of milliseconds") {
    const auto es = errors_of(one_coordinator("tcp_user_timeout: 2147484s", "", ""));
    INFO(all(es));
    REQUIRE(es.size() == 1);
    CHECK(es[0].mark.line == 9);
    CHECK_THAT(es[0].message, Catch::Contains("at most 2147483647ms"));
  }
  SECTION("drift: -500001ppm") {
    const auto es = errors_of(one_coordinator("", "variant: lease", "faults:\n  - {at: 1s, clock: c1, drift: -500001ppm}\n"));
    INFO(all(es));
    REQUIRE(es.size() == 1);
    CHECK(es[0].mark.line == 16);
    CHECK_THAT(es[0].message, Catch::Contains("from -500000ppm to 500000ppm"));
    CHECK(errors_of(one_coordinator("", "variant: lease", "faults:\n  - {at: 1s, clock: c1, drift: -500000ppm}\n")).empty());
  }
}

TEST_CASE("validate: a fault may aim at node_of(leader) - a node nobody declared is an error", "[leader][validate]") {
  CHECK(errors_of(one_coordinator("", "leader_name: leader", "faults:\n  - {at: 5m, pause: node_of(leader), duration: 1m}\n")).empty());
  const auto es = errors_of(one_coordinator("", "leader_name: leader", "faults:\n  - {at: 5m, pause: nowhere, duration: 1m}\n"));
  INFO(all(es));
  REQUIRE(es.size() == 1);
  CHECK(es[0].mark.line == 16);
  CHECK_THAT(es[0].message, Catch::Contains("unknown node 'nowhere'"));
}

TEST_CASE("pg: when an end gives up on unacknowledged data - never later than retransmission_give_up, from any instant", "[leader][pg]") {
  // The failover check's bound (issue 33): the first RTO and the timer wheel's lateness were left
  // out, and correct failovers down the whole retransmission path were flagged as too slow. Here Outbox and
  // linux_timer, as the server runs them, from many start instants.
  struct Seg {
    std::uint64_t qid = 0;
  };
  for (const auto& [retries2, user] : std::vector<std::pair<std::int64_t, Duration>>{{15, {}}, {8, {}}, {5, {}}, {3, {}}, {15, 3_s}, {15, 10_s}, {15, 100'001_ms}}) {
    INFO("tcp_retries2 " << retries2 << ", tcp_user_timeout " << format_duration(user));
    const Duration bound = pg::retransmission_give_up(retries2, user);
    const Duration limit = user > Duration::zero() ? user : pg::retransmission_timeout(retries2);
    CHECK(bound > limit + pg::kRtoInitial);
    Duration latest{};
    for (std::int64_t k = 0; k < 2000; ++k) {
      const Time sent = Time{} + Duration{k * 1'234'567'891 % (3'600 * 1'000'000'000LL)};  // instants over an hour
      pg::detail::Outbox<Seg> out;
      Time now = sent;
      REQUIRE(out.add(now, Seg{1}));
      now = now + pg::detail::linux_timer(now, out.rto);
      for (std::optional<Duration> next; (next = out.fire(now, user, retries2));) now = now + pg::detail::linux_timer(now, *next);
      CHECK(now - sent <= bound);
      CHECK(now - sent - pg::kRtoInitial >= limit);  // it never gives up before the limit
      latest = std::max(latest, now - sent);
    }
    // The bound is what the wheel does, not a granule-per-timer guess (which was 8.5 s over for
    // tcp_retries2 15): within a few jiffies of the latest instant seen.
    INFO("bound " << format_duration(bound) << ", latest seen " << format_duration(latest));
    CHECK(bound - latest <= 100_ms);
  }
  CHECK(pg::retransmission_give_up(15, {}) > 938_s);  // 939.5 s: the first RTO, and the wheel's lateness
}

TEST_CASE("failover: the default bound holds a failover that waited out the retransmission path - the first RTO, the wheel's lateness and a slow clock counted", "[leader][pg]") {
  // The rare failover bug's minimal case, cut long (no tcp_user_timeout): the answer in flight at
  // 27 ms is retransmitted until tcp_retries2 15 gives up, and only then does the database end
  // c1's session and c2 take over. A correct failover.
  const auto text = [](const std::string& db, const std::string& run, const std::string& cut) {
    return "scenario: failover_after_retransmission\nseed: 1228\nduration: " + run + "\nnodes: [c1, c2, " + db + "]\n"
           "network:\n  default: {latency: 2ms, latency_min: 1ms}\ntrees:\n"
           "  - id: pg\n    node: db\n    supervisor: {strategy: one_for_one}\n    children:\n"
           "      - {id: postgres, behaviour: pg.server, args: {tcp_keepalives_idle: 60s, tcp_keepalives_interval: 10s, tcp_keepalives_count: 3}}\n"
           "      - {id: c2, node: c2, behaviour: leader.coordinator, args: {variant: fenced, leader_name: leader, workspaces: 1, retry: 1s, query_timeout: 2s}}\n"
           "  - id: c1\n    node: c1\n    supervisor: {strategy: one_for_one, intensity: 10, period: 1m}\n    children:\n"
           "      - {id: coordinator, behaviour: leader.coordinator, args: {variant: fenced, leader_name: leader, workspaces: 1, retry: 1s, query_timeout: 2s}}\n"
           "faults:\n  - {name: leader_cut, at: 27ms, partition: [c1], to: [db], duration: " + cut + "}\n"
           "checks:\n  - failover\n";
  };
  SECTION("true clocks: 938.3 s, where the bound was 924.6 s + retry 1 s + 2 x query timeout 2 s = 929.6 s") {
    const RunResult r = run_text(text("db", "1300s", "1250s"));
    const CheckResult& c = check_named(r, "failover");
    INFO(c.detail);
    CHECK(c.passed);
    CHECK(c.detail.find("the longest 938.") != std::string::npos);  // past 929.6 s: the retransmission path
    CHECK(c.detail.find("TCP retransmission 939528ms") != std::string::npos);
  }
  SECTION("the database's clock 10 % slow: its timers last 11 % longer, 1042.6 s, past 944.5 s") {
    const RunResult r = run_text(text("{name: db, drift: -100000ppm}", "1500s", "1400s"));
    const CheckResult& c = check_named(r, "failover");
    INFO(c.detail);
    CHECK(c.passed);
    CHECK(c.detail.find("the longest 1042.") != std::string::npos);
    CHECK(c.detail.find("all x 1.111 for a clock that ran slow") != std::string::npos);
  }
}

TEST_CASE("lease: renew_at and a clock at half speed - renewals late in true time leave two leaders, a third or a 30 % slow clock does not", "[leader][pg]") {
  // Two lease coordinators; 10 s in, the leader's clock starts to run at half speed. Renewing at
  // 60 % of a 15 s lease by that clock is 18 s of true time: the lease lapses, the other node
  // takes it, and the first goes on believing it leads until its late renewal fails.
  const auto text = [](const std::string& renew_at, const std::string& drift) {
    return "scenario: lease_drift\nseed: 1\nduration: 2m\nnodes: [c1, c2, db]\n"
           "network:\n  default: {latency: 2ms, latency_min: 1ms}\ntrees:\n"
           "  - {id: pg, node: db, supervisor: {strategy: one_for_one}, children: [{id: postgres, behaviour: pg.server}]}\n"
           "  - {id: c1, node: c1, supervisor: {strategy: one_for_one}, children: [{id: coordinator, behaviour: leader.coordinator, "
           "args: {variant: lease, leader_name: leader, workspaces: 1, retry: 1s, renew_at: " + renew_at + "}}]}\n"
           "  - {id: c2, node: c2, supervisor: {strategy: one_for_one}, children: [{id: coordinator, behaviour: leader.coordinator, "
           "args: {variant: lease, leader_name: leader, workspaces: 1, retry: 1s, renew_at: " + renew_at + "}}]}\n"
           "faults:\n  - {at: 10s, clock: node_of(leader), drift: " + drift + "}\n"
           "checks: [leader_safety, single_leader]\n";
  };
  const CheckResult split = check_named(run_text(text("60%", "-500000ppm")), "single_leader");
  INFO(split.detail);
  CHECK_FALSE(split.passed);
  CHECK(split.kind == "two_leaders");
  CHECK(check_named(run_text(text("60%", "-300000ppm")), "single_leader").passed);  // 60 % / 0.7: 86 % of the ttl
  CHECK(check_named(run_text(text("1/3", "-500000ppm")), "single_leader").passed);  // the default: 67 %
}

TEST_CASE("takeover: pg_terminate_backend only signals - the lock try right after it finds the lock still held now and then - with takeover_wait never", "[leader][pg][takeover]") {
  // Two fenced coordinators with a takeover after 15 s idle (longer than their ticks' 10 s, so a
  // live leader is never taken over), on a loopback-like network; the leader is SIGSTOPped at
  // 10 s for 30 s (its kernel answers the probes: it keeps the lock). The
  // standby terminates its lock session and tries the lock at once: the backend exits a moment
  // after the signal (backend_exit_latency), so the try sometimes finds the lock still held and
  // the standby waits for its next retry. Waiting for the exit (takeover_wait) closes the race.
  const auto text = [](const std::string& wait, std::uint64_t seed) {
    const std::string args = "{variant: fenced, leader_name: leader, workspaces: 1, retry: 1s, takeover_after: 15s" +
                             (wait.empty() ? std::string() : ", takeover_wait: " + wait) + "}";
    return "scenario: takeover_race\nseed: " + std::to_string(seed) + "\nduration: 60s\nnodes: [c1, c2, db]\n"
           "network:\n  default: {latency: 100us}\ntrees:\n"
           "  - {id: pg, node: db, supervisor: {strategy: one_for_one}, children: [{id: postgres, behaviour: pg.server}]}\n"
           "  - {id: c1, node: c1, supervisor: {strategy: one_for_one}, children: [{id: coordinator, behaviour: leader.coordinator, args: " + args + "}]}\n"
           "  - {id: c2, node: c2, supervisor: {strategy: one_for_one}, children: [{id: coordinator, behaviour: leader.coordinator, args: " + args + "}]}\n"
           "faults:\n  - {at: 10s, suspend: leader, duration: 30s}\n"
           "checks: [leader_safety]\n";
  };
  const Atom kTakeover("coordinator_takeover");
  const auto tally = [&](const std::string& wait) {
    std::pair<int, int> taken_missed{0, 0};
    for (std::uint64_t seed = 1; seed <= 200; ++seed) {
      const RunResult r = run_text(text(wait, seed));
      INFO("takeover_wait '" << wait << "', seed " << seed);
      CHECK(check_named(r, "leader_safety").passed);
      for (const TraceEvent& e : r.sim->trace().events()) {
        if (e.kind != EventKind::system || e.name != kTakeover) continue;
        (*e.field<std::int64_t>(Atom("taken")) == 1 ? taken_missed.first : taken_missed.second) += 1;
      }
    }
    return taken_missed;
  };
  const auto [taken, missed] = tally("");
  INFO("no wait: " << taken << " takeovers got the lock at once, " << missed << " found it still held");
  CHECK(taken > 0);
  CHECK(missed > 0);
  const auto [taken_w, missed_w] = tally("1s");
  INFO("takeover_wait 1s: " << taken_w << " got it at once, " << missed_w << " found it still held");
  CHECK(taken_w > 0);
  CHECK(missed_w == 0);
}

TEST_CASE("pg: a restart refuses connections for its downtime - fast and immediate each their own - traced db_restart and db_ready", "[leader][pg][restart]") {
  const auto downtime_of = [](bool fast) {
    pg::ServerConfig cfg = keepalive_60_10_3();
    cfg.restart_downtime = 300_ms;
    cfg.immediate_downtime = 3_s;  // crash recovery replaying WAL
    World w(cfg);
    w.run_to(1_s);
    faults::Degrade d;
    d.mode = Atom(fast ? "restart" : "restart_immediate");
    w.sim.send(w.sim.whereis(kPostgres), faults::kDegrade, d);
    std::optional<Time> accepted;
    int refused = 0;
    w.client(kC1, [&](Context& ctx) {
      for (;;) {
        if (auto c = connect(ctx)) {
          accepted = ctx.now();
          c->close(ctx);
          return;
        }
        ++refused;
        ctx.sleep(10_ms);
      }
    });
    w.run_to(10_s);
    const auto restarts = w.events("db_restart");
    const auto ready = w.events("db_ready");
    REQUIRE(restarts.size() == 1);
    REQUIRE(ready.size() == 1);
    CHECK(ready[0]->time - restarts[0]->time == (fast ? 300_ms : 3_s));
    CHECK(refused > 0);
    REQUIRE(accepted);
    return *accepted - at(1_s);
  };
  const Duration fast = downtime_of(true);
  const Duration immediate = downtime_of(false);
  INFO("fast: accepted " << format_duration(fast) << " after the restart; immediate: " << format_duration(immediate));
  CHECK(fast >= 300_ms);
  CHECK(fast < 300_ms + 20_ms);  // the next try after it, and a connect's round trip
  CHECK(immediate >= 3_s);
  CHECK(immediate < 3_s + 20_ms);
}
