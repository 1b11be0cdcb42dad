#pragma once
// The kernel: one event queue, one virtual clock, processes, exit signals, the trace.
//
// Execution model (docs/kernel.md has the long form). The event loop runs on a "runner" fiber.
// A behaviour callback runs directly on the runner's stack; if it blocks, the runner's fiber
// stays with that process and another pooled fiber becomes the runner, so an idle behaviour
// process owns no stack. A free-form process owns a fiber for its lifetime. The thread that
// calls run() waits on its own context while the loop runs.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sim/buggify.hpp"
#include "sim/disk.hpp"
#include "sim/event_queue.hpp"
#include "sim/fiber.hpp"
#include "sim/network.hpp"
#include "sim/process.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"
#include "sim/trace.hpp"

namespace lic {

struct SimOptions {
  std::uint64_t seed = 1;
  TieBreak tie_break = TieBreak::fifo;
  FiberBackend backend = FiberBackend::context;
  TraceMode trace = TraceMode::keep;
  std::size_t process_stack_bytes = 64 * 1024;  ///< free-form processes (virtual size)
  std::size_t runner_stack_bytes = 256 * 1024;  ///< fibers that run the loop and callbacks
  Atom default_node = Atom("node0");
  // Budgets (docs/robustness.md): a run over one ends with BudgetExceeded. 0: none.
  std::uint64_t max_events = 0;            ///< kernel events over the run
  std::uint64_t max_trace_bytes = 0;       ///< memory the kept trace may take
  /// Events at one virtual instant in a row: more is a livelock (time would never pass), an
  /// error naming the processes that ran last. (Off by default here: a benchmark spawning a
  /// million processes at t=0 is no livelock; scenario runs set it, run/runner.hpp's Budgets.)
  std::uint64_t max_events_at_instant = 0;
  /// Random streams pinned to a seed of their own, whatever `seed` is (a scenario's `streams:`;
  /// docs/scenario-format.md). A key names a stream: "process PATH" (every process labelled
  /// PATH), "link FROM TO", "fault NAME", "buggify NAME", "ticks NODE", "tie-break". A pinned stream draws as it
  /// would in a run whose seed is the pin: pinning a stream to the run's own seed changes nothing.
  std::map<std::string, std::uint64_t, std::less<>> pins{};
  /// Note every pinnable stream the run draws from (Simulation::streams_used): the shrinker asks
  /// which draws a failure needs.
  bool record_streams = false;
};

/// A run went over one of SimOptions' budgets; what() says which, at what time and event.
struct BudgetExceeded : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A snapshot of one process for tests and reports.
struct ProcessInfo {
  Pid pid;
  Atom node;
  Label label;
  bool behaviour = false;
  bool trap_exit = false;
  bool waiting = false;  ///< blocked in receive/sleep/call
  bool raw_network = false;  ///< its messages across nodes model their own transport (Context::raw_network)
  std::size_t mailbox = 0;
  std::vector<Pid> links;
  std::size_t monitors = 0;  ///< monitors held on others
};

class Simulation {
 public:
  explicit Simulation(SimOptions opts = {});
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  const SimOptions& options() const { return opts_; }
  Time now() const { return now_; }
  Trace& trace() { return trace_; }
  const Trace& trace() const { return trace_; }
  /// The root stream; derive named streams from it (rng().derive("faults")).
  const Rng& rng() const { return root_rng_; }
  /// The root the stream `key` derives from (SimOptions::pins names the keys): Rng(pin) when
  /// `key` is pinned, rng() otherwise. With record_streams on, `key` joins streams_used().
  Rng stream_root(std::string_view key);
  /// False when stream_root(key) is rng() for every key and records nothing: a caller may then
  /// skip building the key.
  bool streams_watched() const { return !opts_.pins.empty() || opts_.record_streams; }
  /// The streams the run drew from so far, by key (with record_streams on; empty otherwise).
  const std::set<std::string, std::less<>>& streams_used() const { return streams_used_; }

  // The world acting from outside any process (tests, fault injectors). Such actions come from
  // no pid (Pid{}), like a signal from the runtime.
  Pid spawn(Body body, SpawnOptions opts = {});
  Pid spawn(std::unique_ptr<Behaviour> behaviour, SpawnOptions opts = {});
  void send(Pid to, Atom tag, Payload payload = {});
  /// An exit signal from outside (kill is untrappable; other reasons follow OTP's rules).
  void exit(Pid target, Reason reason);
  /// The process ends now with `reason`, as if its code had raised it (the `crash` fault): no
  /// trap, no terminate callback; its links and monitors see `reason`.
  void crash(Pid target, Reason reason);
  /// Records an event from the world (a fault injector, a phase change): no pid, no node.
  void emit(Atom name, std::vector<TraceField> fields = {});
  /// The next process spawned with the label name `label` starts `d` late: its init (or body)
  /// runs `d` after the spawn, so its supervisor waits that long (the `slow_start` fault).
  /// Zero drops a delay not yet used.
  void delay_next_start(Atom label, Duration d);
  /// A channel (sim/channel.hpp) made by the world on `node` (empty: the default node), for the
  /// processes there to share (tests, and systems set up from outside).
  Chan make_chan(std::size_t capacity, Atom name, Atom node = {});
  /// Runs `fn` in the kernel at time `at` (not before now); returns an id for cancel().
  std::uint64_t schedule(Time at, std::function<void()> fn);
  void cancel(std::uint64_t id);

  // ---- nodes and the network (sim/network.cpp, docs/network.md) ----------------------------
  // Nodes are named by atoms and come into being when first named (a spawn on them, or any call
  // below). Processes on one node exchange messages at once and in order; between nodes every
  // message and signal crosses a directed path with the LinkParams of that path.

  /// The parameters of every path without its own (the default: 1 ms, nothing lost).
  void set_default_link(const LinkParams& p);
  /// The parameters of the directed path from -> to.
  void set_link(Atom from, Atom to, const LinkParams& p);
  /// The path's parameters with every active effect applied.
  LinkParams link_params(Atom from, Atom to);
  /// Starts a temporary change (a fault window); returns an id for remove_link_effect.
  std::uint64_t add_link_effect(const LinkEffect& e);
  void remove_link_effect(std::uint64_t id);
  /// Blocks the directed path from -> to (a one-way partition; call it both ways for a
  /// symmetric one). When two nodes lose contact (either way blocked), every link and monitor
  /// between their processes fires `noconnection` once, and what is in flight between them is
  /// lost (messages dropped with reason `noconnection`). Blocked messages are dropped with
  /// reason `partitioned`.
  void block(Atom from, Atom to);
  void unblock(Atom from, Atom to);
  /// Unblocks every path.
  void heal_all();
  bool blocked(Atom from, Atom to);
  /// Instant detection: both nodes up and neither way blocked. Under net ticks: both up and
  /// `a` has not (yet) declared `b` down.
  bool connected(Atom a, Atom b);
  /// How lost contact is noticed (sim/network.hpp NetTicks): set before the run. A zero
  /// ticktime (the default) is instant detection.
  void set_net_ticks(const NetTicks& t);
  const NetTicks& net_ticks() const;
  /// Kills every process on the node at once (reason `killed`, no cleanup); processes elsewhere
  /// linked to or monitoring them get `noconnection`. The node stays down until restart_node.
  void crash_node(Atom node);
  /// Brings a crashed node back and runs its boot function (its root tree).
  void restart_node(Atom node);
  /// What restart_node runs on `node` (world code, like a scheduled callback).
  void set_node_boot(Atom node, std::function<void()> boot);
  bool node_up(Atom node);
  /// The node's disk: what survives its processes and its crashes (sim/disk.hpp). Open a file
  /// and keep what open() returns, not the Disk reference (a node added later may move it).
  Disk& disk(Atom node);
  /// The run's buggify points (sim/buggify.hpp): which are on, and how often each was asked.
  Buggify& buggify() { return buggify_; }
  const Buggify& buggify() const { return buggify_; }
  /// The node runs nothing for `d` (a GC pause): its processes do not run, their timers and
  /// timeouts fire late, and messages to them wait at the node. Pauses extend, never shorten.
  void pause_node(Atom node, Duration d);
  bool node_paused(Atom node);
  /// One process runs nothing for `d` (SIGSTOP, then SIGCONT `d` later): its code does not run
  /// and a receive's timeout fires when it resumes, but messages and its timers' messages still
  /// reach its mailbox, and exit signals still act (a kill still kills). Its node and every
  /// other process on it run on: a process modelling the node's OS (pg::Conn's socket) keeps
  /// answering. Suspensions extend, never shorten. Traced as `process_suspend` (msg: until) and
  /// `process_resume`.
  void suspend_process(Pid p, Duration d);
  /// SIGCONT before the suspension's end: what came due meanwhile runs now.
  void resume_process(Pid p);
  bool process_suspended(Pid p) const;
  /// From now on every message `p` sends to or gets from another node is dropped (reason
  /// `partitioned`), as a firewall rule on one socket drops its segments; exit signals and
  /// monitors' DOWNs still cross. Meant for processes that model their own transport
  /// (Context::raw_network: one TCP connection each); nodes keep their contact. Traced as
  /// `process_cut`; heal_process ends it (`process_heal`).
  void cut_process(Pid p);
  void heal_process(Pid p);
  bool process_cut(Pid p) const;
  /// Preemption on `node` (docs/kernel.md, "Preemption"): a process woken from a channel wait (a
  /// receive, a select, a send that waited, a select's timeout: Go's timer channel) stays
  /// runnable but not running, with `chance`, for an exponential time of mean `mean` before its
  /// next statement, as a goroutine does when the CPU is busy. Other processes run meanwhile: a
  /// goroutine caught between a receive and its next select sees what they did. Drawn from the
  /// process's own stream (pinned with it); traced as `goroutine_preempt`. A chance of zero (the
  /// default) draws nothing. Throws std::invalid_argument for a chance outside [0, 1], or a mean
  /// of zero or less with a chance above zero.
  void set_preemption(Atom node, Ratio chance, Duration mean);
  /// An OS signal to the node's processes (the node as a container or a VM). `sigterm`: given to
  /// every process that asked for it (Context::notify_signals); when none did, the runtime stops
  /// each root process on the node with exit signal `shutdown`, as OTP's init:stop does.
  /// `sigkill`: everything on the node ends at once, killed, no cleanup (crash_node). Traced as
  /// `signal`.
  void signal_node(Atom node, Atom sig);
  /// The node's wall clock reads its local clock + skew (Context::node_time); set before the run
  /// (no trace event).
  void set_clock_skew(Atom node, Duration skew);
  /// From now on the node's wall clock is off by `skew` and its clock drifts `drift_ppm` parts
  /// per million (+100 runs 0.01 % fast): what its processes read as now, and how long their
  /// timers last. Traced as `clock_change` (msg: the skew in ns, as a signed number; other: the
  /// drift in ppm, as a signed number). A drift beyond ±kMaxDriftPpm (a clock at half speed, or
  /// half again as fast) throws std::invalid_argument.
  void set_clock(Atom node, Duration skew, std::int64_t drift_ppm);
  static constexpr std::int64_t kMaxDriftPpm = 500'000;
  /// The node's wall clock now.
  Time node_time(Atom node);
  Duration clock_skew(Atom node);
  std::int64_t clock_drift_ppm(Atom node);
  /// Nodes known so far, in the order they were first named.
  std::vector<Atom> nodes() const;

  bool alive(Pid p) const;
  Pid whereis(Atom name) const;
  /// What `node`'s table of OTP's `global` names `name` (docs/network.md, "global"); an empty
  /// Pid when none. Net ticks only.
  Pid whereis_global(Atom node, Atom name) const;
  std::optional<ProcessInfo> info(Pid p) const;
  /// The behaviour object of a live behaviour process (null otherwise), for observers that
  /// read its state between runs (the supervision snapshot). Never call it from process code.
  const Behaviour* behaviour_of(Pid p) const;
  /// Live processes in pid order.
  std::vector<Pid> processes() const;
  /// The live process whose label's name is `path` (the lowest pid when several are), or none.
  /// An index lookup: fault injection resolves a path at every fault, and a scan of every pid
  /// ever spawned made a crash loop under `every: 1ns` quadratic (docs/robustness.md).
  Pid find_labelled(std::string_view path) const;
  std::size_t process_count() const { return live_processes_; }

  /// Runs one event; false when none is left.
  bool step();
  /// Runs until no event is left.
  void run();
  /// Runs every event up to and including `t`, then sets the clock to `t`.
  void run_until(Time t);
  void advance(Duration d) { run_until(now_ + d); }
  std::uint64_t events_processed() const { return events_; }
  /// Timers cancelled before they fired: work no event shows, which --max-events counts too.
  std::uint64_t timers_cancelled() const;
  /// Fibers in existence (bound, pooled or running): the memory the model actually uses.
  std::size_t fibers() const { return fibers_.live(); }

 private:
  friend class Context;
  friend struct Kernel;
  struct Impl;

  SimOptions opts_;
  Trace trace_;
  Rng root_rng_;
  std::set<std::string, std::less<>> streams_used_;
  Time now_;
  std::uint64_t events_ = 0;
  std::size_t live_processes_ = 0;
  FiberSystem fibers_;
  Buggify buggify_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lic
