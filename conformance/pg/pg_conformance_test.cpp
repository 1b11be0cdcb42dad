// The simulated PostgreSQL (scenarios/behaviours/pg.hpp and pg/) against recordings of a real PostgreSQL 15
// (docs/conformance-pg.md, "The simulated side"). Reads cases.yaml (its header defines the steps,
// the recording format and the comparison) and recordings/<id>.jsonl, runs each case's steps on
// the simulated database through its public API (pg::Conn, pg::Query), and compares: value and
// error_class exactly, a `timed: true` step's elapsed_ms within max(5 %, 50 ms), a race's winners
// exactly. What the simulation deliberately leaves out is listed in expected.txt (a case, or one
// step `case:i`, and the reason); those differences are reported, not failed. A missing
// recording fails.
//
// The world: the server on node `db`; each session's owner process on a node of its own, `n_<s>`
// (a kill kills that process, a pause suspends it, and a cut drops its connection's segments); the
// steps run from a driver process on node `ctl`, which also holds the control session for
// pg_terminate_backend (never cut). Links are loopback-like: 20 us each way.

#include <algorithm>
#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <set>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "scenarios/behaviours/pg.hpp"
#include "scenarios/faults/fault.hpp"
#include "sim/simulation.hpp"

namespace {

using namespace lic;
using namespace lic::literals;
namespace pg = lic::scenarios::pg;
using json = nlohmann::json;

const std::filesystem::path kDir = LIC_PG_CONFORMANCE_DIR;
const Atom kDb("db");
const Atom kCtl("ctl");
const Atom kPostgres("Postgres");
const Atom kRun("run");
const Atom kDone("done");
const Atom kCloseCmd("close");
const Atom kClosed("closed");
const Atom kReady("ready");
const Duration kForever = 3600_s;  // "no client-side timeout": longer than any case
const Duration kPace = 100_us;     // the recorder's steps follow each other about this far apart

// ---- reading the cases ------------------------------------------------------------------------

/// "500ms", "2s", "1.5s", "10ms", or a bare number of seconds (tcp_keepalives_idle: 2).
Duration duration_of(const std::string& text) {
  std::size_t n = 0;
  const double v = std::stod(text, &n);
  const std::string unit = text.substr(n);
  const double ns = unit == "ms" ? v * 1e6 : unit == "us" ? v * 1e3 : unit == "min" ? v * 60e9 : v * 1e9;
  if (!(unit.empty() || unit == "s" || unit == "ms" || unit == "us" || unit == "min"))
    throw std::runtime_error("cases.yaml: not a duration: " + text);
  return Duration{static_cast<std::int64_t>(std::llround(ns))};
}

/// A PostgreSQL setting: a bare number is in the setting's own unit (seconds for keepalives,
/// milliseconds for tcp_user_timeout and the timeouts), as postgresql.conf reads it.
Duration setting_of(const std::string& name, const std::string& text) {
  const bool bare = text.find_first_not_of("0123456789.") == std::string::npos;
  if (!bare) return duration_of(text);
  const bool seconds = name.rfind("tcp_keepalives_", 0) == 0;
  return duration_of(text + (seconds ? "s" : "ms"));
}

void apply(pg::SessionSettings& s, const std::string& name, const std::string& v) {
  if (name == "tcp_keepalives_idle") s.tcp_keepalives_idle = setting_of(name, v);
  else if (name == "tcp_keepalives_interval") s.tcp_keepalives_interval = setting_of(name, v);
  else if (name == "tcp_keepalives_count") s.tcp_keepalives_count = std::stoll(v);
  else if (name == "tcp_user_timeout") s.tcp_user_timeout = setting_of(name, v);
  else if (name == "idle_session_timeout") s.idle_session_timeout = setting_of(name, v);
  else if (name == "idle_in_transaction_session_timeout") s.idle_in_transaction_session_timeout = setting_of(name, v);
  else if (name == "lock_timeout") s.lock_timeout = setting_of(name, v);
  else if (name == "deadlock_timeout") s.deadlock_timeout = setting_of(name, v);
  else throw std::runtime_error("cases.yaml: a setting the comparator does not know: " + name);
}

pg::ClientOptions options_of(const YAML::Node& n) {
  pg::ClientOptions o;
  if (n["db"]) o.database = n["db"].as<std::string>();
  for (const auto& kv : n["set"]) apply(o.set, kv.first.as<std::string>(), kv.second.as<std::string>());
  for (const auto& kv : n["client"]) {
    const std::string k = kv.first.as<std::string>();
    const std::string v = kv.second.as<std::string>();
    if (k == "keepalives") o.keepalives = v != "0";
    else if (k == "keepalives_idle") o.keepalives_idle = duration_of(v + "s");
    else if (k == "keepalives_interval") o.keepalives_interval = duration_of(v + "s");
    else if (k == "keepalives_count") o.keepalives_count = std::stoll(v);
    else if (k == "tcp_user_timeout") o.tcp_user_timeout = duration_of(v + "ms");
    else throw std::runtime_error("cases.yaml: a client option the comparator does not know: " + k);
  }
  return o;
}

pg::ServerConfig server_of(const YAML::Node& n) {
  pg::ServerConfig c;
  c.query_latency = 10_us;
  for (const auto& kv : n) {
    const std::string k = kv.first.as<std::string>();
    const std::string v = kv.second.as<std::string>();
    if (k == "tcp_retries2") {
      c.tcp_retries2 = std::stoll(v);
      continue;
    }
    if (k.starts_with("log_")) continue;  // what the server log says: nothing the model does
    pg::SessionSettings s;
    apply(s, k, v);
    c.keepalive_idle = s.tcp_keepalives_idle.value_or(c.keepalive_idle);
    c.keepalive_interval = s.tcp_keepalives_interval.value_or(c.keepalive_interval);
    c.keepalive_count = s.tcp_keepalives_count.value_or(c.keepalive_count);
    c.tcp_user_timeout = s.tcp_user_timeout.value_or(c.tcp_user_timeout);
    c.idle_session_timeout = s.idle_session_timeout.value_or(c.idle_session_timeout);
    c.idle_in_transaction_session_timeout = s.idle_in_transaction_session_timeout.value_or(c.idle_in_transaction_session_timeout);
    c.lock_timeout = s.lock_timeout.value_or(c.lock_timeout);
    c.deadlock_timeout = s.deadlock_timeout.value_or(c.deadlock_timeout);
  }
  return c;
}

// ---- the SQL the cases use, as queries ---------------------------------------------------------

/// What the first column of the first row reads as.
/// What a statement's answer looks like: t/f, void, no row, 1; a fencing token (lic_acquire: the
/// token, or NULL when the lock was not free); a fenced write (lic_fenced_write: t, or f when the
/// fence refused it).
enum class Shape : std::uint8_t { boolean, void_, no_row, one, token, fenced };

struct Statement {
  pg::Query q;
  Shape shape = Shape::boolean;
};

/// The key arguments: one bigint, or two int4. Nothing when out of range (the real server then
/// finds no such function: 42883); expected.txt says why the model cannot say that.
/// A key is a literal, or a quoted one cast to bigint ('1'::bigint); anything else is not one the
/// recogniser knows (nothing, as for any other statement).
bool keys_of(const std::string& args, pg::Query& q) {
  const std::regex two(R"(^\s*(-?\d+)\s*,\s*(-?\d+)\s*$)");
  const std::regex one(R"(^\s*(?:'(-?\d+)'::bigint|(-?\d+))\s*$)");
  std::smatch m;
  try {
    if (std::regex_match(args, m, two)) {
      const long long a = std::stoll(m[1]), b = std::stoll(m[2]);
      if (a < INT32_MIN || a > INT32_MAX || b < INT32_MIN || b > INT32_MAX) return false;
      q.lock = a;
      q.lock2 = static_cast<std::int32_t>(b);
      return true;
    }
    if (!std::regex_match(args, m, one)) return false;
    q.lock = std::stoll(m[1].matched ? m[1].str() : m[2].str());
    return true;
  } catch (const std::out_of_range&) {
    return false;
  }
}

/// Exactly the statements cases.yaml uses; nothing for anything else.
std::optional<Statement> recognise(const std::string& sql) {
  static const std::regex lock(R"(^SELECT pg_(try_)?advisory_(xact_)?lock(_shared)?\((.*)\)$)");
  static const std::regex unlock(R"(^SELECT pg_advisory_unlock(_shared)?\((.*)\)$)");
  static const std::regex sleep(R"(^SELECT pg_sleep\(([0-9.]+)\)$)");
  static const std::regex acquire(R"(^SELECT lic_acquire\((\d+)\)$)");
  static const std::regex fenced(R"(^SELECT lic_fenced_write\((\d+), ([1-9]\d{0,17})\)$)");  // token 0 is no token
  std::smatch m;
  Statement s;
  using Op = pg::Query::Op;
  if (sql == "BEGIN" || sql == "COMMIT" || sql == "ROLLBACK") {
    s.q.op = sql == "BEGIN" ? Op::begin : sql == "COMMIT" ? Op::commit : Op::rollback;
    s.shape = Shape::no_row;
  } else if (sql == "SELECT 1") {
    s.q.op = Op::ping;
    s.shape = Shape::one;
  } else if (sql == "SELECT pg_advisory_unlock_all()") {
    s.q.op = Op::unlock_all;
    s.shape = Shape::void_;
  } else if (std::regex_match(sql, m, acquire)) {
    // record.py's FENCE_SQL: the advisory lock, and the epoch bumped (pg.server's take()).
    s.q.op = Op::try_lock;
    if (!keys_of(m[1], s.q)) return std::nullopt;
    s.shape = Shape::token;
  } else if (std::regex_match(sql, m, fenced)) {
    s.q.op = Op::write;  // pg.server's `fence: strict`
    if (!keys_of(m[1], s.q)) return std::nullopt;
    s.q.token = std::stoll(m[2]);
    s.shape = Shape::fenced;
  } else if (std::regex_match(sql, m, sleep)) {
    s.q.op = Op::sleep;
    s.q.duration = duration_of(std::string(m[1]) + "s");
    s.shape = Shape::void_;
  } else if (std::regex_match(sql, m, unlock)) {
    s.q.op = Op::unlock;
    s.q.shared = m[1].matched;
    if (!keys_of(m[2], s.q)) return std::nullopt;
  } else if (std::regex_match(sql, m, lock)) {
    s.q.op = m[1].matched ? Op::try_lock : Op::lock;
    s.q.xact = m[2].matched;
    s.q.shared = m[3].matched;
    s.shape = m[1].matched ? Shape::boolean : Shape::void_;
    if (!keys_of(m[4], s.q)) return std::nullopt;
  } else {
    return std::nullopt;
  }
  return s;
}

// ---- one step's outcome, as the recording has it ---------------------------------------------

struct Outcome {
  json value;        // text, "" (void) or null (no row)
  json error_class;  // null or a class
  std::optional<double> elapsed_ms;
  json winners;      // a race's winners per round
  json held;         // a terminate_then_try's rounds whose first try found the lock held
  json rounds;       // ... of how many
  json free_ms;      // ... and its 10th, 50th, 90th percentile and largest time to the lock
  std::string note;  // what the simulation could not run
};

Outcome outcome_of(const pg::Result& r, Shape shape) {
  Outcome o;
  const std::string cls = pg::error_class(r);
  if (!cls.empty()) {
    o.error_class = cls;
    return o;
  }
  switch (shape) {
    case Shape::boolean: o.value = r.value ? "t" : "f"; break;
    case Shape::void_: o.value = ""; break;
    case Shape::no_row: break;
    case Shape::one: o.value = "1"; break;
    case Shape::token:
      if (r.value) o.value = std::to_string(r.token);
      break;
    case Shape::fenced: o.value = r.status == pg::Result::Status::ok && r.value ? "t" : "f"; break;
  }
  return o;
}

double ms(Duration d) { return static_cast<double>(d.ns) / 1e6; }

// ---- the processes -----------------------------------------------------------------------------

struct Command {
  Statement st;
};

struct Done {
  Outcome o;
};

/// A session's owner: connects, then runs what the driver sends, one statement at a time.
Body owner(Pid driver, pg::ClientOptions opts) {
  return [driver, opts](Context& ctx) {
    const auto c = pg::Conn::connect(ctx, kPostgres, 10_s, opts);
    ctx.send(driver, kReady, c ? c->session() : std::int64_t{0});
    if (!c) return;
    for (;;) {
      MessagePtr m = ctx.receive();
      if (m->tag == kCloseCmd) {
        c->close(ctx);
        ctx.send(driver, kClosed);
        ctx.sleep(kForever);
        return;
      }
      if (m->tag != kRun) continue;
      const Statement& st = m->get<Command>()->st;
      ctx.send(driver, kDone, Done{outcome_of(c->query(ctx, st.q, kForever), st.shape)});
    }
  };
}

struct Case {
  std::string id;
  YAML::Node node;
};

/// What a run of one case produced: one outcome per step, in order.
using Outcomes = std::vector<Outcome>;

class Driver {
 public:
  Driver(Simulation& sim, const Case& c, Outcomes& out) : sim_(sim), c_(c), out_(out) {}

  void operator()(Context& ctx) {
    for (const auto& kv : c_.node["sessions"]) {
      const std::string name = kv.first.as<std::string>();
      SpawnOptions o;
      o.node = kCtl;  // the recorder's host: every client process beside the driver
      o.label = Label{Atom("/client/" + name), 1};
      pg::ClientOptions opts = options_of(kv.second);
      // tcp_retries2 is a sysctl of the recorder's namespace: the clients' kernels have it too.
      if (c_.node["server"] && c_.node["server"]["tcp_retries2"]) opts.tcp_retries2 = c_.node["server"]["tcp_retries2"].as<std::int64_t>();
      pids_[name] = ctx.spawn(owner(ctx.self(), opts), o);
      MessagePtr r = ctx.receive([](const Message& m) { return m.tag == kReady; }, 10_s);
      sessions_[name] = r ? *r->get<std::int64_t>() : 0;
    }
    control_ = pg::Conn::connect(ctx, kPostgres, 10_s);
    for (const YAML::Node& step : c_.node["steps"]) {
      // A step the comparator itself cannot run (a value cases.yaml writes in a form it does not
      // read) is that step's difference, named, not a driver gone and "fewer steps" after it.
      try {
        out_.push_back(run(ctx, step));
      } catch (const std::exception& e) {
        Outcome o;
        o.note = std::string("the comparator could not run this step: ") + e.what();
        out_.push_back(std::move(o));
      }
      ctx.sleep(kPace);
    }
  }

 private:
  Outcome run(Context& ctx, const YAML::Node& s) {
    if (s["sql"]) {
      if (Outcome o; !send(ctx, s["s"].as<std::string>(), s["sql"].as<std::string>(), o)) return o;
      return wait(ctx, s["s"].as<std::string>(), s["within"] ? duration_of(s["within"].as<std::string>()) : 10_s);
    }
    if (s["send"]) {
      Outcome o;
      send(ctx, s["s"].as<std::string>(), s["send"].as<std::string>(), o);
      return o;
    }
    if (s["wait"]) return wait(ctx, s["wait"].as<std::string>(), duration_of(s["within"].as<std::string>()));
    if (s["sleep"]) ctx.sleep(duration_of(s["sleep"].as<std::string>()));
    if (s["close"]) close(ctx, s["close"].as<std::string>());
    if (s["kill"]) ctx.exit(pids_.at(s["kill"].as<std::string>()), Reason::kill());
    // pause/resume: SIGSTOP of the owner alone; its connection process, the client's OS, goes
    // on answering probes.
    if (s["pause"]) sim_.suspend_process(pids_.at(s["pause"].as<std::string>()), kForever);
    if (s["resume"]) sim_.resume_process(pids_.at(s["resume"].as<std::string>()));
    if (s["cut"]) cut(s["cut"].as<std::string>(), true);
    if (s["heal"]) cut(s["heal"].as<std::string>(), false);
    if (s["terminate"]) return terminate(ctx, s);
    if (s["wait_free"]) return wait_free(ctx, s);
    if (s["restart"]) restart(ctx, s["restart"].as<std::string>());
    if (s["race"]) return race(ctx, s);
    if (s["terminate_then_try"]) return terminate_then_try(ctx, s);
    return {};
  }

  /// Sends `sql` to session `name`'s owner; false (with `o` saying why) when the statement is
  /// not one the recogniser knows.
  bool send(Context& ctx, const std::string& name, const std::string& sql, Outcome& o) {
    const std::optional<Statement> st = recognise(sql);
    if (!st) {
      o.note = "the simulated database has no statement for: " + sql;
      return false;
    }
    sent_at_[name] = ctx.now();
    ctx.send(pids_.at(name), kRun, Command{*st});
    return true;
  }

  Outcome wait(Context& ctx, const std::string& name, Duration within) {
    const Pid from = pids_.at(name);
    MessagePtr m = ctx.receive([from](const Message& x) { return x.tag == kDone && x.from == from; }, within);
    if (!m) {
      Outcome o;
      o.error_class = "no_answer";
      return o;
    }
    Outcome o = m->get<Done>()->o;
    o.elapsed_ms = ms(ctx.now() - sent_at_[name]);
    return o;
  }

  void close(Context& ctx, const std::string& name) {
    const Pid p = pids_.at(name);
    ctx.send(p, kCloseCmd);
    ctx.receive([p](const Message& x) { return x.tag == kClosed && x.from == p; }, 10_s);
  }

  /// The recorder's nftables rule drops the session's port both ways: the connection process's
  /// segments (Simulation::cut_process), nothing else.
  void cut(const std::string& name, bool on) {
    const Pid conn = sim_.find_labelled("/client/" + name + "/conn");
    if (on) {
      if (conn) cut_[name] = conn;
      if (conn) sim_.cut_process(conn);
    } else if (const auto it = cut_.find(name); it != cut_.end()) {
      sim_.heal_process(it->second);
      cut_.erase(it);
    }
  }

  Outcome terminate(Context& ctx, const YAML::Node& s) {
    pg::Query q;
    q.op = pg::Query::Op::terminate;
    q.session = sessions_.at(s["terminate"].as<std::string>());
    if (s["timeout_ms"]) q.duration = duration_of(s["timeout_ms"].as<std::string>() + "ms");
    const Time t0 = ctx.now();
    Outcome o = outcome_of(control_->query(ctx, q, 10_s), Shape::boolean);
    o.elapsed_ms = ms(ctx.now() - t0);
    return o;
  }

  Outcome wait_free(Context& ctx, const YAML::Node& s) {
    const std::string by = s["by"].as<std::string>();
    const std::string lock = s["wait_free"].as<std::string>();
    const Duration within = duration_of(s["within"].as<std::string>());
    const Duration every = duration_of(s["every"].as<std::string>());
    const Time t0 = ctx.now();
    while (ctx.now() - t0 < within) {
      Outcome o;
      if (!send(ctx, by, "SELECT pg_try_advisory_lock(" + lock + ")", o)) return o;
      o = wait(ctx, by, 10_s);
      if (o.value == "t") {
        o.elapsed_ms = ms(ctx.now() - t0);
        return o;
      }
      ctx.sleep(every);
    }
    Outcome o;
    o.error_class = "not_free";
    return o;
  }

  void restart(Context& ctx, const std::string& mode) {
    faults::Degrade d;
    d.mode = Atom(mode == "fast" ? "restart" : "restart_immediate");
    ctx.send(ctx.whereis(kPostgres), faults::kDegrade, d);
    // pg_ctl returns once the server accepts again (its downtime: restart_downtime or
    // immediate_downtime): a connection every 5 ms until one is taken.
    for (int tries = 0; tries < 2000; ++tries) {
      ctx.sleep(5_ms);
      if (auto c = pg::Conn::connect(ctx, kPostgres, 1_s)) {
        c->close(ctx);
        return;
      }
    }
    throw std::runtime_error("the simulated server did not accept a connection within 10 s of the restart");
  }

  Outcome race(Context& ctx, const YAML::Node& s) {
    const std::string lock = s["lock"].as<std::string>();
    Outcome out;
    out.winners = json::array();
    for (int round = 0; round < s["rounds"].as<int>(); ++round) {
      std::vector<std::string> won;
      Outcome o;
      for (const YAML::Node& n : s["race"]) send(ctx, n.as<std::string>(), "SELECT pg_try_advisory_lock(" + lock + ")", o);
      for (const YAML::Node& n : s["race"])
        if (wait(ctx, n.as<std::string>(), 10_s).value == "t") won.push_back(n.as<std::string>());
      for (const std::string& w : won) {
        send(ctx, w, "SELECT pg_advisory_unlock(" + lock + ")", o);
        wait(ctx, w, 10_s);
      }
      out.winners.push_back(won.size());
    }
    return out;
  }

  /// Each round: a victim on a node of its own takes the lock; the control session terminates
  /// it; the prober, on the driver's node as the recorder's is in its process, tries the lock the
  /// moment the answer is back, then back to back until it gets it, and unlocks.
  Outcome terminate_then_try(Context& ctx, const YAML::Node& s) {
    pg::Query take;
    take.op = pg::Query::Op::try_lock;
    take.lock = s["terminate_then_try"].as<std::int64_t>();
    pg::Query give = take;
    give.op = pg::Query::Op::unlock;
    const int rounds = s["rounds"].as<int>();
    if (!prober_) prober_ = pg::Conn::connect(ctx, kPostgres, 10_s);
    Outcome out;
    std::vector<double> free;
    int held = 0;
    for (int k = 0; k < rounds && prober_; ++k) {
      SpawnOptions o;
      o.node = Atom("n_victim");
      o.label = Label{Atom("/client/victim"), static_cast<std::uint32_t>(k + 1)};
      const Pid v = ctx.spawn(owner(ctx.self(), pg::ClientOptions{}), o);
      MessagePtr r = ctx.receive([v](const Message& m) { return m.tag == kReady && m.from == v; }, 10_s);
      if (!r || *r->get<std::int64_t>() == 0) {  // session 0 would mean every other session of the node
        out.note = "terminate_then_try: the victim could not connect";
        return out;
      }
      pg::Query end;
      end.op = pg::Query::Op::terminate;
      end.session = *r->get<std::int64_t>();
      ctx.send(v, kRun, Command{Statement{take, Shape::boolean}});
      MessagePtr took = ctx.receive([v](const Message& m) { return m.tag == kDone && m.from == v; }, 10_s);
      if (!took || took->get<Done>()->o.value != "t") {
        out.note = "terminate_then_try: the victim could not take the lock";
        return out;
      }
      control_->query(ctx, end, 10_s);
      const Time t0 = ctx.now();
      int tries = 0;
      while (!prober_->query(ctx, take, 10_s).value) {
        ++tries;
        if (ctx.now() - t0 > 5_s) {
          out.note = "terminate_then_try: the lock not free 5 s after the answer";
          return out;
        }
      }
      free.push_back(ms(ctx.now() - t0));
      held += tries > 0 ? 1 : 0;
      prober_->query(ctx, give, 10_s);
      ctx.exit(v, Reason::kill());
    }
    std::sort(free.begin(), free.end());
    const auto at = [&free](double p) { return free.empty() ? 0.0 : free[static_cast<std::size_t>(p * static_cast<double>(free.size() - 1))]; };
    out.held = held;
    out.rounds = rounds;
    out.free_ms = json::array({at(0.1), at(0.5), at(0.9), at(1.0)});
    return out;
  }

  Simulation& sim_;
  const Case& c_;
  Outcomes& out_;
  std::map<std::string, Pid> pids_;
  std::map<std::string, Pid> cut_;  // sessions whose connection is cut, by name
  std::map<std::string, std::int64_t> sessions_;
  std::map<std::string, Time> sent_at_;
  std::optional<pg::Conn> control_;
  std::optional<pg::Conn> prober_;  // terminate_then_try's
};

/// cases.yaml, or a failure that names it.
YAML::Node load_cases() {
  const std::filesystem::path p = kDir / "cases.yaml";
  try {
    return YAML::LoadFile(p.string());
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(p.string() + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                             ": cannot be read: " + e.msg);
  }
}

Outcomes simulate(const Case& c, const YAML::Node& defaults) {
  Simulation sim;
  LinkParams loopback;
  loopback.latency_min = 20_us;
  loopback.latency_mean = 20_us;
  sim.set_default_link(loopback);
  YAML::Node server = YAML::Clone(defaults["server"]);
  for (const auto& kv : c.node["server"]) server[kv.first.as<std::string>()] = kv.second;
  const pg::ServerConfig cfg = server_of(server);
  auto boot = [&sim, cfg] {
    SpawnOptions o;
    o.node = kDb;
    o.label = Label{Atom("/pg/postgres"), 1};
    sim.spawn(pg::server(cfg), o);
  };
  boot();
  Outcomes out;
  SpawnOptions o;
  o.node = kCtl;
  o.label = Label{Atom("/driver"), 1};
  // std::regex's matcher (the recogniser) recurses once a character, and under AddressSanitizer
  // its frames are large: the default 64 KiB overflowed on the longer statements.
  o.stack_bytes = std::size_t{1} << 20;
  Driver d(sim, c, out);
  sim.spawn([&d](Context& ctx) { d(ctx); }, o);
  sim.run_until(Time{} + 1800_s);
  return out;
}

// ---- comparing ---------------------------------------------------------------------------------

/// expected.txt: `case` or `case:step` then the reason; # comments.
std::map<std::string, std::string> read_expected() {
  std::map<std::string, std::string> out;
  std::ifstream in(kDir / "expected.txt");
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::size_t sp = line.find(' ');
    out[line.substr(0, sp)] = sp == std::string::npos ? "" : line.substr(sp + 1);
  }
  return out;
}

std::string show(const json& j) { return j.is_null() ? "null" : j.dump(); }

/// The differences between a recorded step and the simulated one (empty: the same).
/// `share_within` < 0: the step has no held share to compare.
std::string differ(const json& rec, const Outcome& sim, bool timed, double share_within) {
  std::ostringstream d;
  if (!sim.note.empty()) return sim.note;
  const json rv = rec.value("value", json());
  const json rc = rec.value("error_class", json());
  if (rv != sim.value) d << "value " << show(rv) << " recorded, " << show(sim.value) << " simulated; ";
  if (rc != sim.error_class) d << "error_class " << show(rc) << " recorded, " << show(sim.error_class) << " simulated; ";
  const json rw = rec.value("winners", json());
  if (!rw.is_null() && rw != sim.winners) d << "winners differ; ";
  if (share_within >= 0 && rec.value("rounds", json()).is_number() && sim.rounds.is_number()) {
    const double r = rec["held"].get<double>() / rec["rounds"].get<double>();
    const double m = sim.held.get<double>() / sim.rounds.get<double>();
    if (std::abs(m - r) > share_within)
      d << "held share " << r << " recorded, " << m << " simulated (tolerance " << share_within << "); ";
  }
  if (timed && rec.contains("elapsed_ms") && rec["elapsed_ms"].is_number()) {
    const double r = rec["elapsed_ms"].get<double>();
    const double tol = std::max(0.05 * r, 50.0);
    if (!sim.elapsed_ms || std::abs(*sim.elapsed_ms - r) > tol)
      d << "elapsed " << r << " ms recorded, " << (sim.elapsed_ms ? std::to_string(*sim.elapsed_ms) : "none")
        << " ms simulated (tolerance " << tol << " ms); ";
  }
  return d.str();
}

std::vector<json> read_recording(const std::filesystem::path& p) {
  std::vector<json> steps;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    json j = json::parse(line);
    if (j.contains("i")) steps.push_back(std::move(j));
  }
  return steps;
}

struct Report {
  std::vector<std::string> failures;  // unexpected differences
  std::vector<std::string> expected;  // differences expected.txt explains
  std::vector<std::string> rows;      // every compared step, real against simulated (a table)
  int steps = 0;
};

std::string cell(const json& value, const json& error_class, std::optional<double> elapsed) {
  std::ostringstream o;
  o << (error_class.is_null() ? show(value) : error_class.get<std::string>());
  if (elapsed) o << " " << std::llround(*elapsed) << " ms";
  return o.str();
}

std::string row(const std::string& id, const json& r, const Outcome& sim, bool timed) {
  std::optional<double> real;
  if (timed && r["elapsed_ms"].is_number()) real = r["elapsed_ms"].get<double>();
  const json winners = r.value("winners", json());
  const std::string rs = winners.is_null() ? cell(r.value("value", json()), r.value("error_class", json()), real) : "winners " + winners.dump();
  const std::string ss = sim.winners.is_null() ? cell(sim.value, sim.error_class, timed ? sim.elapsed_ms : std::nullopt) : "winners " + sim.winners.dump();
  if (r.value("rounds", json()).is_number() && sim.rounds.is_number()) {
    const auto held = [](const json& h, const json& n, const json& f) {
      return "held " + h.dump() + " of " + n.dump() + ", free within " + f.dump() + " ms (p10, p50, p90, max)";
    };
    return "| " + id + " | " + std::to_string(r["i"].get<int>()) + " " + r.value("step", "") + " | " +
           held(r["held"], r["rounds"], r.value("free_ms", json())) + " | " + held(sim.held, sim.rounds, sim.free_ms) + " |";
  }
  return "| " + id + " | " + std::to_string(r["i"].get<int>()) + " " + r.value("step", "") + " | " + rs + " | " + ss + " |";
}

void compare_case(const Case& c, const YAML::Node& defaults, const std::map<std::string, std::string>& exp, Report& rep) {
  const std::filesystem::path rec = kDir / "recordings" / (c.id + ".jsonl");
  if (!std::filesystem::exists(rec)) {
    rep.failures.push_back(c.id + ": no recording " + rec.string() + " (record it with the pg-live recorder)");
    return;
  }
  const std::vector<json> recorded = read_recording(rec);
  const Outcomes sim = simulate(c, defaults);
  const YAML::Node steps = c.node["steps"];
  for (const json& r : recorded) {
    const auto i = r["i"].get<std::size_t>();
    ++rep.steps;
    if (i >= sim.size()) {
      rep.failures.push_back(c.id + ":" + std::to_string(i) + ": the simulation ran fewer steps");
      continue;
    }
    const bool timed = steps[i]["timed"] && steps[i]["timed"].as<bool>();
    const double share_within = steps[i]["share_within"] ? steps[i]["share_within"].as<double>() : -1.0;
    const std::string d = differ(r, sim[i], timed, share_within);
    static const std::set<std::string> silent{"sleep", "send", "cut", "heal", "pause", "resume", "kill", "close", "restart"};
    if (!silent.contains(r.value("step", ""))) rep.rows.push_back(row(c.id, r, sim[i], timed));
    if (d.empty()) continue;
    const std::string where = c.id + ":" + std::to_string(i);
    const auto e = exp.find(where) != exp.end() ? exp.find(where) : exp.find(c.id);
    (e != exp.end() ? rep.expected : rep.failures).push_back(where + " (" + r.value("step", "") + "): " + d);
  }
}

}  // namespace

TEST_CASE("postgresql: every case of cases.yaml on the simulated database matches its real PostgreSQL 15 recording", "[conformance][pg]") {
  const YAML::Node file = load_cases();
  const std::map<std::string, std::string> exp = read_expected();
  Report rep;
  int cases = 0;
  for (const YAML::Node& n : file["cases"]) {
    ++cases;
    compare_case(Case{n["id"].as<std::string>(), n}, file["defaults"], exp, rep);
  }
  for (const std::string& e : rep.expected) WARN("expected (expected.txt): " << e);
  if (std::getenv("LIC_PG_CONFORMANCE_TABLE") != nullptr)  // the table of docs/conformance-pg.md
    for (const std::string& r : rep.rows) std::cout << r << "\n";
  for (const std::string& f : rep.failures) FAIL_CHECK(f);
  INFO(cases << " cases, " << rep.steps << " recorded steps compared, " << rep.expected.size() << " expected differences");
  CHECK(cases >= 20);
  CHECK(rep.failures.empty());
  // A listed difference the simulation no longer shows is stale: take it out of expected.txt.
  for (const auto& entry : exp) {
    const std::string prefix = entry.first + (entry.first.find(':') == std::string::npos ? ":" : " ");
    const bool seen = std::any_of(rep.expected.begin(), rep.expected.end(),
                                  [&prefix](const std::string& e) { return e.starts_with(prefix); });
    INFO("expected.txt lists " << entry.first << " but the simulation matches it now");
    CHECK(seen);
  }
}

TEST_CASE("postgresql: expected.txt names only cases of cases.yaml, each with its reason", "[conformance][pg]") {
  const YAML::Node file = load_cases();
  std::set<std::string> ids;
  for (const YAML::Node& n : file["cases"]) ids.insert(n["id"].as<std::string>());
  const std::map<std::string, std::string> exp = read_expected();
  for (const auto& [where, why] : exp) {
    INFO(where);
    CHECK(ids.contains(where.substr(0, where.find(':'))));
    CHECK(why.size() > 10);
  }
}

TEST_CASE("postgresql: the recogniser knows exactly the statements of cases.yaml", "[conformance][pg]") {
  CHECK(recognise("SELECT pg_try_advisory_lock(1)")->q.op == pg::Query::Op::try_lock);
  CHECK(recognise("SELECT pg_try_advisory_xact_lock(1)")->q.xact);
  CHECK(recognise("SELECT pg_try_advisory_lock_shared(1)")->q.shared);
  CHECK(recognise("SELECT pg_advisory_lock(1)")->shape == Shape::void_);
  CHECK(*recognise("SELECT pg_try_advisory_lock(0, 1)")->q.lock2 == 1);
  CHECK(recognise("SELECT pg_try_advisory_lock(9223372036854775807)")->q.lock == INT64_MAX);
  CHECK_FALSE(recognise("SELECT pg_try_advisory_lock(9223372036854775808)"));
  CHECK_FALSE(recognise("SELECT pg_try_advisory_lock(2147483648, 1)"));
  CHECK(recognise("SELECT pg_try_advisory_lock('5'::bigint)")->q.lock == 5);
  CHECK_FALSE(recognise("SELECT pg_try_advisory_lock('9223372036854775808'::bigint)"));  // 22003 on the server
  CHECK_FALSE(recognise("SELECT pg_try_advisory_lock('x')"));  // was an uncaught std::invalid_argument
  CHECK_FALSE(recognise("SELECT now()"));
  CHECK(recognise("SELECT lic_acquire(1)")->shape == Shape::token);
  CHECK(recognise("SELECT lic_fenced_write(1, 2)")->q.token == 2);
  CHECK(recognise("SELECT lic_fenced_write(1, 2)")->q.op == pg::Query::Op::write);
  CHECK_FALSE(recognise("SELECT lic_fenced_write(1, 99999999999999999999)"));  // no std::out_of_range
  CHECK_FALSE(recognise("SELECT lic_fenced_write(1, 0)"));  // 0: the simulated server's "no token"
  CHECK(recognise("SELECT pg_sleep(1)")->q.duration == 1_s);
}
