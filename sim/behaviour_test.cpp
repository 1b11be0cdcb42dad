// Behaviour (GenServer-style) processes: callbacks, calls with replies and timeouts, terminate
// rules, and the no-fiber-while-idle property.

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "sim/simulation.hpp"
#include "sim/test_support.hpp"

using namespace lic;
using namespace lic::literals;
using lic::testing::as_int;
using lic::testing::exit_reason;

namespace {
const Atom kAdd("add");
const Atom kGet("get");
const Atom kSlow("slow");
const Atom kTick("tick");
const Atom kCrash("crash");
const Atom kStop("stop");

struct Log {
  std::vector<std::string> lines;
};

/// A counter server: add (cast), get (call), slow (call answered after 2 s), crash, stop.
class Counter : public Behaviour {
 public:
  explicit Counter(Log* log) : log_(log) {}
  InitResult init(Context&) override {
    log_->lines.push_back("init");
    return InitResult::ok();
  }
  CallReply handle_call(Context& ctx, const Message& m, From from) override {
    if (m.tag == kGet) return CallReply::reply(kGet, n_);
    if (m.tag == kSlow) {
      ctx.send_after(2_s, ctx.self(), kTick, 0);
      pending_ = from;
      return CallReply::noreply();
    }
    if (m.tag == kCrash) throw std::runtime_error("counter_crashed");
    if (m.tag == kStop) {
      ctx.stop(Reason::shutdown());
      return CallReply::reply(kStop);
    }
    return CallReply::noreply();
  }
  void handle_cast(Context&, const Message& m) override { n_ += as_int(m); }
  void handle_info(Context& ctx, const Message& m) override {
    if (m.tag == kTick) ctx.reply(pending_, kSlow, n_);
  }
  void terminate(Context&, const Reason& r) override {
    log_->lines.push_back("terminate " + to_string(r));
  }

 private:
  Log* log_;
  int n_ = 0;
  From pending_;
};
}  // namespace

TEST_CASE("behaviour: casts change state - calls reply - in message order", "[behaviour]") {
  Simulation sim;
  Log log;
  const Pid c = sim.spawn(std::make_unique<Counter>(&log));
  int seen = -1;
  sim.spawn([&](Context& ctx) {
    ctx.cast(c, kAdd, 2);
    ctx.cast(c, kAdd, 3);
    CallResult r = ctx.call(c, kGet);
    REQUIRE(r.ok());
    seen = as_int(*r.reply);
  });
  sim.run();
  CHECK(seen == 5);
  CHECK(log.lines == std::vector<std::string>{"init"});
}

TEST_CASE("behaviour: a reply sent later with reply() reaches the caller", "[behaviour]") {
  Simulation sim;
  Log log;
  const Pid c = sim.spawn(std::make_unique<Counter>(&log));
  Time answered{};
  sim.spawn([&](Context& ctx) {
    CallResult r = ctx.call(c, kSlow, {}, 5_s);
    REQUIRE(r.ok());
    answered = ctx.now();
  });
  sim.run();
  CHECK(answered == Time{0} + 2_s);
}

TEST_CASE("behaviour: a call times out in virtual time and the late reply is dropped", "[behaviour]") {
  Simulation sim;
  Log log;
  const Pid c = sim.spawn(std::make_unique<Counter>(&log));
  CallResult::Status status{};
  std::size_t mailbox = 99;
  sim.spawn([&](Context& ctx) {
    CallResult r = ctx.call(c, kSlow, {}, 1_s);
    status = r.status;
    CHECK(ctx.now() == Time{0} + 1_s);
    ctx.sleep(5_s);
    mailbox = ctx.mailbox_size();  // the reply at 2 s never lands here
  });
  sim.run();
  CHECK(status == CallResult::Status::timeout);
  CHECK(mailbox == 0);
}

TEST_CASE("behaviour: calling a dead process returns down with noproc", "[behaviour]") {
  Simulation sim;
  const Pid gone = sim.spawn([](Context&) {});
  sim.run();
  CallResult r;
  sim.spawn([&](Context& ctx) { r = ctx.call(gone, kGet); });
  sim.run();
  CHECK(r.status == CallResult::Status::down);
  CHECK(r.reason == Reason::noproc());
}

TEST_CASE("behaviour: a crash in a callback runs terminate and exits error(what)", "[behaviour]") {
  Simulation sim;
  Log log;
  const Pid c = sim.spawn(std::make_unique<Counter>(&log));
  CallResult r;
  sim.spawn([&](Context& ctx) { r = ctx.call(c, kCrash); });
  sim.run();
  CHECK(r.status == CallResult::Status::down);
  CHECK(r.reason == Reason::error(Atom("counter_crashed")));
  CHECK(log.lines.back() == "terminate {error,counter_crashed}");
  CHECK(exit_reason(sim.trace(), c) == Reason::error(Atom("counter_crashed")));
}

TEST_CASE("behaviour: stop() replies first - then terminate runs and the process exits", "[behaviour]") {
  Simulation sim;
  Log log;
  const Pid c = sim.spawn(std::make_unique<Counter>(&log));
  bool replied = false;
  sim.spawn([&](Context& ctx) { replied = ctx.call(c, kStop).ok(); });
  sim.run();
  CHECK(replied);
  CHECK(log.lines.back() == "terminate shutdown");
  CHECK(exit_reason(sim.trace(), c) == Reason::shutdown());
}

TEST_CASE("behaviour: a killed process runs no terminate callback", "[behaviour][exit]") {
  Simulation sim;
  Log log;
  SpawnOptions trap;
  trap.trap_exit = true;
  const Pid c = sim.spawn(std::make_unique<Counter>(&log), trap);
  sim.run();
  sim.exit(c, Reason::kill());
  sim.run();
  CHECK(log.lines == std::vector<std::string>{"init"});
  CHECK(exit_reason(sim.trace(), c) == Reason::killed());
}

TEST_CASE("behaviour: stopped by its parent with shutdown while trapping exits - terminate runs", "[behaviour][exit]") {
  Simulation sim;
  Log log;
  Pid child;
  sim.spawn([&](Context& ctx) {
    SpawnOptions o;
    o.link = true;
    o.trap_exit = true;
    child = ctx.spawn(std::make_unique<Counter>(&log), o);
    ctx.trap_exit(true);
    ctx.sleep(1_ms);
    ctx.exit(child, Reason::shutdown());
    ctx.receive();  // the child's EXIT
  });
  sim.run();
  CHECK(log.lines == std::vector<std::string>{"init", "terminate shutdown"});
  CHECK(exit_reason(sim.trace(), child) == Reason::shutdown());
}

TEST_CASE("behaviour: not trapping - a shutdown signal kills it without terminate", "[behaviour][exit]") {
  Simulation sim;
  Log log;
  const Pid c = sim.spawn(std::make_unique<Counter>(&log));
  sim.run();
  sim.exit(c, Reason::shutdown());
  sim.run();
  CHECK(log.lines == std::vector<std::string>{"init"});
  CHECK(exit_reason(sim.trace(), c) == Reason::shutdown());
}

TEST_CASE("behaviour: init returning ignore or stop ends the process", "[behaviour]") {
  struct Refuses : Behaviour {
    InitResult r;
    explicit Refuses(InitResult x) : r(x) {}
    InitResult init(Context&) override { return r; }
  };
  Simulation sim;
  const Pid a = sim.spawn(std::make_unique<Refuses>(InitResult::ignore()));
  const Pid b = sim.spawn(std::make_unique<Refuses>(InitResult::stop(Reason::error(Atom("no_db")))));
  sim.run();
  CHECK(exit_reason(sim.trace(), a) == Reason::normal());
  CHECK(exit_reason(sim.trace(), b) == Reason::error(Atom("no_db")));
}

TEST_CASE("behaviour: idle behaviour processes hold no fiber - a blocked callback holds one until it returns", "[behaviour]") {
  Simulation sim;
  Log log;
  std::vector<Pid> counters;
  for (int i = 0; i < 1000; ++i) counters.push_back(sim.spawn(std::make_unique<Counter>(&log)));
  sim.run();
  CHECK(sim.process_count() == 1000);
  CHECK(sim.fibers() <= 1);  // just the runner
  // A behaviour whose callback makes a nested call blocks on the runner's stack: the loop moves
  // to another fiber, and the first is returned to the pool once the callback finishes.
  struct Asker : Behaviour {
    Pid target;
    int got = -1;
    explicit Asker(Pid t) : target(t) {}
    void handle_info(Context& ctx, const Message&) override {
      CallResult r = ctx.call(target, kSlow, {}, 10_s);
      got = r.ok() ? as_int(*r.reply) : -2;
    }
  };
  auto asker = std::make_unique<Asker>(counters[0]);
  Asker* raw = asker.get();
  const Pid a = sim.spawn(std::move(asker));
  sim.send(a, kTick, 0);
  sim.run_until(sim.now() + 1_s);
  CHECK(sim.fibers() == 2);  // one bound to the blocked callback, one running the loop
  sim.run();
  CHECK(raw->got == 0);
  CHECK(sim.fibers() == 2);  // both pooled now, none bound
  CHECK(sim.info(a)->waiting == false);
}

TEST_CASE("behaviour: with ack_init the spawner hears init's result before any EXIT - and a crash in init runs no terminate", "[behaviour]") {
  struct Init : Behaviour {
    int mode;
    std::vector<std::string>* log;
    Init(int m, std::vector<std::string>* l) : mode(m), log(l) {}
    InitResult init(Context&) override {
      if (mode == 1) return InitResult::ignore();
      if (mode == 2) return InitResult::stop(Reason::error(Atom("no_config")));
      if (mode == 3) throw std::runtime_error("init_crashed");
      return InitResult::ok();
    }
    void terminate(Context&, const Reason&) override { log->push_back("terminate"); }
  };
  std::vector<std::string> log;
  std::vector<std::string> seen;
  Simulation sim;
  sim.spawn([&](Context& ctx) {
    ctx.trap_exit(true);
    for (int mode = 0; mode < 4; ++mode) {
      SpawnOptions o;
      o.link = true;
      o.ack_init = true;
      const Pid child = ctx.spawn(std::make_unique<Init>(mode, &log), o);
      MessagePtr first = ctx.receive([child](const Message& m) { return m.from == child; });
      REQUIRE(first->tag == kInitAck);
      seen.push_back(to_string(first->reason));
    }
  });
  sim.run();
  CHECK(seen == std::vector<std::string>{"normal", "ignore", "{error,no_config}", "{error,init_crashed}"});
  CHECK(log.empty());
}

TEST_CASE("behaviour: after a callback that blocked returns - the process still wakes for later messages (regression)", "[behaviour]") {
  // A callback sleeps (its fiber stays with it, the loop moves on), then arms a timer to itself.
  // The loop once kept naming the process as `current` after that, and the timer's message was
  // enqueued with no wake-up.
  struct B : Behaviour {
    int* handled;
    explicit B(int* h) : handled(h) {}
    void handle_info(Context& ctx, const Message& m) override {
      if (m.tag == Atom("a")) {
        ctx.sleep(1_s);
        ctx.send_after(1_s, ctx.self(), Atom("b"));
      } else {
        ++*handled;
      }
    }
  };
  int handled = 0;
  Simulation sim;
  const Pid p = sim.spawn(std::make_unique<B>(&handled));
  sim.send(p, Atom("a"));
  sim.run();
  CHECK(handled == 1);
  CHECK(sim.info(p)->mailbox == 0);
  CHECK(sim.now() == Time{0} + 2_s);
}

TEST_CASE("behaviour: a behaviour blocked in a callback and killed from outside unwinds and is freed (regression)", "[behaviour][exit]") {
  int destroyed = 0;
  struct Guard {
    int* n;
    ~Guard() { ++*n; }
  };
  struct Sleeper : Behaviour {
    int* destroyed;
    explicit Sleeper(int* d) : destroyed(d) {}
    ~Sleeper() override { ++*destroyed; }
    void handle_info(Context& ctx, const Message&) override {
      Guard g{destroyed};
      ctx.sleep(100_s);
    }
  };
  Simulation sim;
  const Pid p = sim.spawn(std::make_unique<Sleeper>(&destroyed));
  sim.send(p, Atom("go"));
  sim.run_until(Time{0} + 1_s);
  sim.exit(p, Reason::kill());
  sim.run_until(Time{0} + 2_s);
  CHECK(destroyed == 2);  // the guard on its stack, then the behaviour object
  CHECK_FALSE(sim.alive(p));
  CHECK(sim.fibers() <= 2);  // nothing still bound
}

TEST_CASE("behaviour: after a call times out the caller keeps no trace of it once the callee answers late or dies", "[behaviour]") {
  Simulation sim;
  Log log;
  const Pid slow = sim.spawn(std::make_unique<Counter>(&log));
  const Pid silent = sim.spawn([](Context& ctx) { ctx.receive(); ctx.sleep(3_s); });
  const Pid caller = sim.spawn([&](Context& ctx) {
    CHECK(ctx.call(slow, kSlow, {}, 1_s).status == CallResult::Status::timeout);    // replies at 2 s
    CHECK(ctx.call(silent, kGet, {}, 1_s).status == CallResult::Status::timeout);  // dies at 4 s
    ctx.sleep(10_s);
  });
  sim.run_until(Time{0} + 3_s);
  CHECK(sim.info(caller)->monitors == 1);  // the late reply ended one; the silent callee lives
  CHECK(sim.info(caller)->mailbox == 0);
  sim.run_until(Time{0} + 5_s);
  CHECK(sim.info(caller)->monitors == 0);  // its DOWN ended the other
  CHECK(sim.info(caller)->mailbox == 0);
  sim.run();
  CHECK(sim.info(caller) == std::nullopt);  // it ended normally...
  std::size_t drops = 0;
  for (const TraceEvent& e : sim.trace().events()) {
    if (e.kind == EventKind::drop && e.pid == caller) ++drops;
  }
  CHECK(drops == 2);  // ...having dropped the late reply and the silent callee's DOWN
}
