// The stock workers a file can name (behaviours/table.hpp): the configurable StockWorker of
// supervision/stock_worker.hpp under one name per way of behaving.

#include "scenarios/behaviours/table.hpp"
#include "supervision/stock_worker.hpp"

namespace lic::scenarios {

namespace {

using supervision::SelfCrash;
using supervision::StockWorker;
using supervision::StopStyle;
using supervision::WorkerConfig;

const char* const kReasonHelp = "the exit reason: normal, shutdown, {shutdown,T} or shutdown:T, "
                                "{error,W} or error:W, kill, or an atom";

/// Every stock worker's own arguments, then the two they share. (So there is no separate
/// `init_results` behaviour: `idle` with `init: [ok, error, ignore]` is that.)
std::vector<ArgInfo> stock_args(std::vector<ArgInfo> own) {
  own.push_back({"init", "init results", "ok",
                 "init's result per start attempt: the k-th start takes the k-th entry, the last "
                 "repeats; each ok, ignore, error ({error,init_failed}), error:What or "
                 "stop:Reason; one result or a list"});
  own.push_back({"init_delay", "duration", "0", "init takes this long before it returns (a slow start)"});
  return own;
}

WorkerConfig stock(Args& a) {
  WorkerConfig w;
  w.inits = a.init_results("init");
  w.init_delay = a.duration("init_delay");
  return w;
}

BehaviourFactory of(WorkerConfig w) {
  return [w = std::move(w)](const std::string&) { return std::make_unique<StockWorker>(w); };
}

BehaviourFactory build_trap_exit(Args& a) {
  WorkerConfig w = stock(a);
  w.stop = StopStyle::delay;
  w.stop_delay = a.duration("shutdown_delay");
  return of(w);
}

BehaviourFactory build_stall(Args& a) {
  WorkerConfig w = stock(a);
  w.stop = StopStyle::stall;
  return of(w);
}

BehaviourFactory build_crash_after(Args& a) {
  WorkerConfig w = stock(a);
  w.crash = SelfCrash{SelfCrash::Kind::after, a.duration("after"), a.reason("reason")};
  return of(w);
}

BehaviourFactory build_flaky(Args& a) {
  WorkerConfig w = stock(a);
  w.crash = SelfCrash{SelfCrash::Kind::exponential, a.positive("mtbf"), a.reason("reason")};
  return of(w);
}

BehaviourFactory build_echo(Args& a) {
  WorkerConfig w = stock(a);
  w.echo = true;
  return of(w);
}

BehaviourFactory build_ticker(Args& a) {
  WorkerConfig w = stock(a);
  w.tick = a.positive("interval");
  const std::int64_t ticks = a.integer("ticks");
  if (ticks < 0) a.invalid("ticks", "must be 0 (for ever) or more");
  w.ticks_max = static_cast<std::uint64_t>(std::max<std::int64_t>(ticks, 0));
  return of(w);
}

}  // namespace

std::vector<BehaviourInfo> stock_behaviours() {
  std::vector<BehaviourInfo> r;
  r.push_back(BehaviourInfo{"idle", "does nothing; stops at once when asked", stock_args({}),
                      [](Args& a) { return of(stock(a)); }});
  r.push_back(BehaviourInfo{"trap_exit", "traps exits; an exit signal from its parent (shutdown, any other reason, an orphan's killed) makes it take shutdown_delay to stop",
                      stock_args({{"shutdown_delay", "duration", "0", "how long its stop takes"}}), build_trap_exit});
  r.push_back(BehaviourInfo{"stall",
                      "traps exits and never stops when asked: its supervisor kills it after the child's "
                      "shutdown timeout (never, with shutdown: infinity)",
                      stock_args({}), build_stall});
  r.push_back(BehaviourInfo{"crash_after", "crashes with reason, after each successful init (every incarnation)",
                      stock_args({{"after", "duration", "", "how long after init it crashes"},
                                  {"reason", "reason", "{error,crash}", kReasonHelp}}),
                      build_crash_after});
  r.push_back(BehaviourInfo{"flaky",
                      "crashes with reason after an exponentially distributed time with mean mtbf from each "
                      "successful init, drawn from the process's own random stream",
                      stock_args({{"mtbf", "duration", "", "the mean time to its crash (more than 0)"},
                                  {"reason", "reason", "{error,crash}", kReasonHelp}}),
                      build_flaky});
  r.push_back(BehaviourInfo{"echo",
                      "answers each call with the call's own tag and payload; sends each plain message "
                      "from another process back to it",
                      stock_args({}), build_echo});
  r.push_back(BehaviourInfo{"ticker", "sends itself a tick every interval from init and traces each as a `tick {n}` event",
                      stock_args({pacing({"interval", "duration", "1s", "the time between ticks (more than 0)"}),
                                  {"ticks", "int", "0", "ends normal after this many ticks; 0: never"}}),
                      build_ticker});
  return r;
}

}  // namespace lic::scenarios
