#pragma once
// The pg.server behaviour's own parts (not an API: pg.hpp is): the Server class, what it keeps
// (the durable data on its node's disk, its sessions, the lock table, the line of waiters) and
// the messages it sends itself. Its member functions are defined room by room: server.cpp (its
// start, where each message goes, the tables), wire.cpp (its end of each connection: TCP),
// session.cpp (a session from pg_connect to its end) and locks.cpp (advisory locks).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "scenarios/behaviours/pg.hpp"
#include "scenarios/behaviours/pg/tcp.hpp"
#include "scenarios/behaviours/pg/wire.hpp"

namespace lic::scenarios::pg::detail {

// The server's messages to itself.
inline const Atom kExec("$exec");            // server -> itself: a query's latency is over
inline const Atom kRewatch("$rewatch");      // server -> itself: look again at a client contact was lost with
inline const Atom kOrphanFin("$orphan_fin");  // server -> itself: the dead client's OS sends its FIN again (a Tick)
inline const Atom kIdle("$idle");            // server -> itself: idle_session_timeout / idle_in_transaction_session_timeout
inline const Atom kLockWait("$lock_timeout");// server -> itself: a waiting lock's lock_timeout
inline const Atom kDeadlockCheck("$deadlock_timeout");  // server -> itself: a waiting lock looks for a deadlock
inline const Atom kSlept("$slept");          // server -> itself: pg_sleep is over
inline const Atom kBackendExit("$backend_exit");        // server -> itself: a terminated backend is gone
inline const Atom kTerminateWait("$terminate_wait");    // server -> itself: pg_terminate_backend's wait looks again
inline const Atom kReady("$ready");          // server -> itself: a restart is over, it accepts connections again

inline const char* const kDefaultDb = "postgres";

/// pg_wait_until_termination's step: it looks whether the backend is gone every 100 ms.
inline constexpr Duration kTerminationPoll = Duration{100'000'000};

/// How long a backend sent SIGTERM by pg_terminate_backend takes to be gone (its locks released),
/// drawn from `rng`: quantiles fitted to PostgreSQL 15.18 on this project's recording machine
/// (conformance/pg, case terminate_returns_before_exit: a lock tried the moment the answer was
/// back was still held in 14 % to 34 % of 300 rounds on an idle machine, and got within 0.26 to
/// 1 ms in 90 %, 2.3 to 3.8 ms at most). A busy machine holds it longer (52 % to 88 % of rounds
/// while a build ran): the table is the idle machine's. Piecewise linear between the quantiles
/// (session.cpp).
Duration backend_exit_latency(Rng& rng);

/// pg_terminate_backend(pid, timeout) waiting for its backends to be gone, as
/// pg_wait_until_termination does: look, wait min(100 ms, what is left), and again while time is left.
struct TerminateWait {
  Sql q;                               // the asker's statement
  std::vector<std::int64_t> victims;   // the sessions signalled
  Duration left{};                     // of the timeout
};

struct Waiting {  // a statement waiting for its lock, or in pg_sleep
  std::int64_t session = 0;
  std::uint64_t qid = 0;
};

/// What survives a restart: the data, the tokens, the sequences.
struct Durable {
  std::int64_t next_session = 0;
  std::int64_t write_seq = 0;
  std::map<std::int64_t, std::int64_t> tokens;  // lock -> the latest fencing token
  std::map<std::int64_t, Atom> token_node;      // lock -> the node that took the latest token
  std::map<std::int64_t, std::int64_t> written;  // lock -> the highest token a write went through with
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
  /// The client OS's send buffer (Hello::sent).
  std::shared_ptr<const Outbox<Sql>> sent;
  /// The client died behind a cut of its connection: its OS keeps the socket as an orphan and
  /// sends what it had not got acknowledged (these queries, on their own timer) and its FIN
  /// again on the retransmission timer (tcp_orphan_retries) until they get through.
  Outbox<Sql> fin;
  std::set<std::uint64_t> seen;  // query ids received (the client sends again until acknowledged)
  std::set<Key> keys;            // keys it holds or waits for
  bool in_tx = false;
  bool tx_failed = false;        // a statement failed in the transaction: the rest fail until it ends
  bool busy = false;             // a statement runs, waits for a lock, or sleeps
  bool terminating = false;      // signalled by pg_terminate_backend: it ends at kBackendExit
  /// The connection ended (the client's close or reset, keepalive or retransmission gave up)
  /// while a statement ran: the backend reads or writes its socket only when the statement is
  /// over, and ends then (finish), holding its locks until then (client_connection_check_interval
  /// is 0, PostgreSQL's default). Why, and what the server then tells the client.
  const char* gone = nullptr;
  std::optional<std::string> gone_bye;
  Time state_change{};           // pg_stat_activity.state_change: when it last went active or idle
  std::uint64_t idle_gen = 0;
};

struct Waiter {
  Sql q;
  Key key;
  std::uint64_t gen = 0;
};

inline Result sql_error(const char* sqlstate, std::string text) {
  Result r;
  r.status = Result::Status::sql_error;
  r.sqlstate = sqlstate;
  r.error = std::move(text);
  return r;
}

class Server final : public Behaviour {
 public:
  explicit Server(ServerConfig c) : c_(c) {}

  InitResult init(Context& ctx) override;
  /// pg_connect: a session starts (session.cpp).
  CallReply handle_call(Context& ctx, const Message& m, From) override;
  void handle_info(Context& ctx, const Message& m) override;

 private:
  // wire.cpp: the server's end of each connection.
  void arm(Context& ctx, std::int64_t id, Session& s, Duration wait);
  Session* heard(Context& ctx, std::int64_t id);
  void keepalive(Context& ctx, const Tick& t);
  void data_acked(Context& ctx, const std::pair<std::int64_t, std::uint64_t>& a);
  void client_probe(Context& ctx, const std::pair<std::int64_t, Pid>& p);
  void retransmit(Context& ctx, const Tick& t);
  void sql(Context& ctx, const Sql& q);
  void reply(Context& ctx, const Sql& q, const Result& r);

  // session.cpp: a session's statements, its idle timeouts, its ends.
  void exec(Context& ctx, const Sql& q);
  void finish(Context& ctx, const Sql& q, const Result& r);
  void slept(Context& ctx, const Sql& q);
  void end_transaction(Context& ctx, std::int64_t id, Session& s);
  void idle(Context& ctx, std::int64_t id, Session& s);
  void idle_timeout(Context& ctx, const Tick& t);
  void down(Context& ctx, const Message& m);
  void rewatch(Context& ctx, std::int64_t id);
  void orphaned(Context& ctx, std::int64_t id, Session& s);
  void orphan_fin(Context& ctx, const Tick& t);
  /// The path to this session's client: its node's (path_open) and its own connection's (a cut
  /// of one process, Simulation::cut_process).
  static bool reachable(Context& ctx, const Session& s);
  /// The path to a client's node carries both ways (TCP's view: a probe gets there and its answer
  /// back), whatever distributed Erlang has noticed (under net ticks a cut goes unseen a while).
  static bool path_open(Context& ctx, Atom node);
  void end(Context& ctx, std::int64_t id, const char* why, std::optional<std::string> bye = std::nullopt);
  /// The connection ended under the backend (end's arguments): at once when it is idle, when its
  /// statement is over when one runs (Session::gone).
  void socket_end(Context& ctx, std::int64_t id, const char* why, std::optional<std::string> bye = std::nullopt);
  std::vector<std::int64_t> terminate_backends(Context& ctx, std::int64_t asker, const Session& s, std::int64_t victim);
  void backend_exit(Context& ctx, std::int64_t id);
  void termination_wait(Context& ctx, TerminateWait w);
  void termination_looked(Context& ctx, const TerminateWait& w);
  void restart(Context& ctx, bool fast);
  void ready(Context& ctx, std::uint64_t restart);

  // locks.cpp: advisory locks.
  unsigned held(const Key& key, std::int64_t id) const;
  bool conflicts(const Key& key, std::int64_t id, unsigned mode) const;
  unsigned wait_mask(const Key& key) const;
  bool grantable(const Key& key, std::int64_t id, unsigned mode) const;
  std::int64_t take(Context& ctx, std::int64_t id, Session& s, const Key& key, bool shared, bool xact);
  void drop(Context& ctx, std::int64_t id, const Key& key, int level, const char* why);
  void released(Context& ctx, std::int64_t id, const Key& key, bool exclusive_gone, const char* why);
  bool waits_on(std::int64_t id, const Key& key) const;
  Result try_lock(Context& ctx, std::int64_t id, Session& s, const Query& q);
  Result holder(Context& ctx, std::int64_t id, const Session& s, const Query& q) const;
  void lock(Context& ctx, const Sql& q, Session& s);
  void granted(Context& ctx, const Sql& q, Session& s, const Key& key);
  void grant_waiters(Context& ctx, const Key& key);
  bool give_up(Context& ctx, const Waiting& w, const Result& why);
  void lock_timeout(Context& ctx, const Waiting& w);
  void deadlock_check(Context& ctx, const Waiting& w);
  const Waiter* waiting(std::int64_t id) const;
  bool waits_for(std::int64_t from, std::int64_t target, std::set<std::int64_t>& seen) const;
  Result unlock_one(Context& ctx, std::int64_t id, const Session& s, const Query& q);
  void release_level(Context& ctx, std::int64_t id, const Session& s, int level);
  void unlock_all(Context& ctx, std::int64_t id, const Session& s);

  // server.cpp: the tables.
  Result write(Context& ctx, std::int64_t id, const Session& s, const Query& q);
  Result lease(Context& ctx, std::int64_t id, const Session& s, const Query& q);

  ServerConfig c_;
  Durable* d_ = nullptr;  // on the node's disk
  std::map<std::int64_t, Session> sessions_;
  std::map<Key, std::map<std::int64_t, Hold>> locks_;
  std::vector<Waiter> waiters_;  // in line order
  std::uint64_t waiter_gen_ = 0;
  /// The draws of terminated backends' exit latencies (backend_exit_latency), made on the first
  /// pg_terminate_backend: a server never asked draws nothing, and a file never needs it pinned.
  std::optional<Rng> exit_rng_;
  Time accepting_at_{};        // a restart refuses connections until then
  std::uint64_t restarts_ = 0;  // the latest restart's number (its kReady says which)
};

}  // namespace lic::scenarios::pg::detail
