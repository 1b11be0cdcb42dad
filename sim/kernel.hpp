#pragma once
// Kernel-private state: the process record and the Simulation's implementation. Included only by
// sim/*.cpp.

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <set>
#include <span>
#include <string>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <vector>

#include "sim/arena.hpp"
#include "sim/disk.hpp"
#include "sim/simulation.hpp"

namespace lic {

/// Thrown through every fiber when the Simulation is destroyed, to unwind their stacks.
/// Not a std::exception, like ProcessExit.
struct FiberEnd {};

struct MonitorEntry {
  Ref ref;
  Pid pid;  ///< the other side: the watcher (in monitored_by) or the target (in monitoring)
};

/// A process's record. Laid out for a million of them touched in a random order: the first
/// cache line holds what a message delivery and a behaviour step read and write (a timer firing
/// touches only it and the second line, where the random stream is), so the kernel can fetch a
/// record ahead of its event in at most two lines (Impl::prefetch_timers).
struct alignas(64) Process {
  // ---- line 1: the delivery and step path --------------------------------------------------
  Pid pid;
  Message* mbox_head = nullptr;
  Message* mbox_tail = nullptr;
  FiberSystem::Fiber* fiber = nullptr;  // bound fiber: free-form always, behaviour while blocked
  std::unique_ptr<Behaviour> behaviour;
  std::uint32_t mbox_size = 0;
  std::uint32_t node_ix = 0;       // index into Impl::nodes
  std::uint32_t user_mail = 0;     // plain messages, casts and calls in the mailbox
  std::uint32_t mailbox_max = 0;   // plain messages, casts and calls waiting at most (0: no bound)
  bool is_behaviour = false;
  bool started = false;      // first Run done (init ran / body entered)
  bool run_pending = false;  // a Run event is queued
  bool waiting = false;      // blocked in wait()
  bool dead = false;         // terminated; record kept until its stack has unwound
  bool stop_requested = false;
  bool has_rng = false;        // rng is derived on first use (Context::rng)
  bool mailbox_block = false;  // a full mailbox makes local senders wait
  // ---- line 2 ------------------------------------------------------------------------------
  Rng rng;  // in the record itself: one cache miss less per random draw
  const Match* wait_match = nullptr;
  std::uint32_t wait_token = 0;  // bumped per wait; a timeout event carrying an older one is stale
  bool trap_exit = false;
  bool timed_out = false;
  bool dying = false;        // queued for termination
  bool ack_init = false;     // tell the parent init's result ($init_ack)
  bool is_main = false;      // its end ends the task on its node (Context::set_main)
  bool raw_net = false;      // its messages across nodes model their own transport (Context::raw_network)
  // ---- the rest ----------------------------------------------------------------------------
  Pid parent;
  Label label;
  Atom node;
  Atom registered;
  Reason stop_reason;
  Reason exit_reason;

  std::unique_ptr<Body> body;
  std::size_t stack_bytes = 0;

  std::vector<Pid> links;                  // in link order
  std::vector<MonitorEntry> monitored_by;  // watchers of this process, in monitor order
  std::vector<MonitorEntry> monitoring;    // monitors this process holds
  std::vector<Ref> abandoned_calls;        // calls that timed out: late replies are dropped

  Chan signal_chan;          // where SIGTERM goes (Context::notify_signals)
  // Waiting for room, first come first served: [blocked_head, end) (a vector, empty in nearly
  // every process, allocates nothing; a deque's constructor allocated 576 bytes for each).
  std::vector<Pid> blocked_senders;
  std::uint32_t blocked_head = 0;

  ~Process();
};


/// Pending timers (send_after). A ref names a slot and its generation, so cancelling and firing
/// are O(1) and a stale ref never matches a reused slot.
class TimerTable {
 public:
  ~TimerTable();
  /// Holds the message until the timer fires; returns {slot, generation}.
  std::pair<std::uint32_t, std::uint32_t> add(MessagePtr m, Pid to);
  /// Takes the message if the timer is still pending.
  MessagePtr take(std::uint32_t slot, std::uint32_t gen, Pid& to);
  bool cancel(std::uint32_t slot, std::uint32_t gen);
  /// Asks the memory for a slot, or for the message a pending slot holds (no effect on state).
  void prefetch_slot(std::uint32_t slot) const {
    if (slot < slots_.size()) __builtin_prefetch(&slots_[slot]);
  }
  /// Unconditional on the message: g++ 12 drops a prefetch guarded by `msg != nullptr` (the
  /// whole statement vanished from the binary), and a prefetch of null is harmless.
  void prefetch_message(std::uint32_t slot) const {
    if (slot < slots_.size()) __builtin_prefetch(slots_[slot].msg);
  }
  /// The receiver of a pending timer (none if it fired or was cancelled).
  Pid peek(std::uint32_t slot, std::uint32_t gen) const {
    return slot < slots_.size() && slots_[slot].gen == gen && slots_[slot].msg != nullptr
               ? slots_[slot].to
               : Pid{};
  }

 private:
  struct Slot {
    Message* msg = nullptr;
    Pid to;
    std::uint32_t gen = 1;
  };
  std::vector<Slot, HugePageAllocator<Slot>> slots_;
  std::vector<std::uint32_t> free_;
};

/// A node's state (network.cpp).
struct NodeState {
  Atom name;
  bool up = true;
  Time paused_until;  ///< paused while now < paused_until
  Duration skew{};    ///< the wall clock's offset (node_time = the local clock + skew)
  /// The local clock runs (1e6 + drift_ppm) / 1e6 as fast as true time: it read local_base at
  /// true time true_base (rebased whenever the drift changes).
  std::int64_t drift_ppm = 0;
  Time local_base{};
  Time true_base{};
  std::function<void()> boot;
  Disk disk;  ///< survives the node's crashes and restarts
  // Net ticks only: the node's ticker (net_kernel's) fires at tick_base + k * ticktime / 4.
  Time tick_base{};
  bool ticker_set = false;
  std::uint32_t boots = 0;  ///< restarts so far (each restart draws a new ticker phase)
  Time old_tick_base{};     ///< the previous incarnation's ticker (its ticks before up_since)
  bool old_ticker_set = false;
  /// Preemption (Simulation::set_preemption): a goroutine woken from a channel wait is, with
  /// this chance, left runnable for an exponential time of mean preempt_mean.
  Ratio preempt{};
  Duration preempt_mean{};
  Time pause_start{};       ///< when the current (or last) pause began
  Time down_since{};        ///< when the node last crashed
  Time up_since{};          ///< when it last (re)started
  bool hosted = false;      ///< a process ran on it (a node only named is no Erlang node: global ignores it)

  Time local(Time now) const {
    if (drift_ppm == 0) return local_base + (now - true_base);
    __extension__ using Wide = __int128;
    const Wide elapsed = (now - true_base).ns;
    return local_base + Duration{clamped(elapsed * (1'000'000 + drift_ppm) / 1'000'000)};
  }
  /// How long `d` of this node's clock lasts in true time (a clock at half speed doubles it:
  /// held to Duration::max(), which means never).
  Duration to_true(Duration d) const {
    if (drift_ppm == 0 || d == Duration::max()) return d;
    __extension__ using Wide = __int128;
    return Duration{clamped(static_cast<Wide>(d.ns) * 1'000'000 / (1'000'000 + drift_ppm))};
  }
  /// How long `d` of true time lasts on this node's clock (to_true's inverse): a CPU's delay
  /// is true time, and a wait reads its timeout on the node's clock.
  Duration from_true(Duration d) const {
    if (drift_ppm == 0 || d == Duration::max()) return d;
    __extension__ using Wide = __int128;
    return Duration{clamped(static_cast<Wide>(d.ns) * (1'000'000 + drift_ppm) / 1'000'000)};
  }
  /// A 128-bit product held to 64 bits (a drift of -50 % doubles a duration).
  __extension__ using Wide128 = __int128;
  static std::int64_t clamped(Wide128 ns) {
    return static_cast<std::int64_t>(std::clamp<Wide128>(ns, INT64_MIN, INT64_MAX));
  }
};

/// Removes the first `p` of a link list (a pid is in one at most once).
inline void erase_pid(std::vector<Pid>& v, Pid p) {
  auto it = std::find(v.begin(), v.end(), p);
  if (it != v.end()) v.erase(it);
}

/// Removes the monitor `r` from a monitor list.
inline void erase_ref(std::vector<MonitorEntry>& v, Ref r) {
  auto it = std::find_if(v.begin(), v.end(), [r](const MonitorEntry& e) { return e.ref == r; });
  if (it != v.end()) v.erase(it);
}

/// One directed path between two nodes: its own random stream and its FIFO order. When the two
/// nodes lose contact, what is in flight on it is taken off at once (lose_contact), so nothing
/// that lands was sent before the loss.
struct Channel {
  std::uint32_t from = 0;
  std::uint32_t to = 0;
  Rng rng;
  Time last_arrival;
  std::deque<std::uint32_t> fifo;  // in-flight slots in send order (the ones that keep order)
  bool has_params = false;
  LinkParams params;
  std::uint32_t raw_of = UINT32_MAX;  ///< a raw path (net ticks): the path whose parameters it takes
  // Net ticks only (net_ticks.cpp): the path's part in a cut of the two nodes' connection.
  Time episode = Time::max();     ///< when the cut began (either way blocked); max: none
  Time stop = Time::max();        ///< from here on nothing new lands (blocked, or starved of ACKs)
  Time first_send = Time::max();  ///< the first message sent since the cut began
  Time second_send = Time::max(); ///< and the second
  Time resume = Time::max();      ///< after the heal: when what was held lands
  Time last_land{std::numeric_limits<std::int64_t>::min()};  ///< when something from this path last landed (a read)
  Time last_write{std::numeric_limits<std::int64_t>::min()};  ///< when something was last sent on it
  Time prev_write{std::numeric_limits<std::int64_t>::min()};  ///< and the time before
};

/// Distributed Erlang's connection between two nodes as each side sees it, under net ticks
/// (net_ticks.cpp, docs/network.md). A pair without one is connected both ways.
struct Conn {
  struct Fire {
    Pid from;
    Pid to;
    Ref ref;  // a monitor's DOWN; empty: a link's exit signal
  };
  bool up[2] = {true, true};        ///< [0]: the side of the node with the lower index
  bool check[2] = {false, false};   ///< a detection check is pending for the side
  std::uint32_t token[2] = {1, 1};  ///< a side's pending events carry it; going down bumps it
  Time down_at[2];                  ///< when the side last went down
  std::vector<Fire> pending[2];     ///< what the side fires when it sees the connection go
  /// A link (empty ref) or monitor asked for while the connection is being set up.
  struct Waiter {
    Pid p;
    Pid other;
    Ref ref;
  };
  std::vector<Waiter> waiting;      ///< set up when the attempt gets through, failed if it does not
  bool attempt = false;             ///< a connection is being set up (a way is blocked)
  Time up_at{std::numeric_limits<std::int64_t>::min()};  ///< when the connection was set up (none: from before the run)
  std::uint32_t attempt_from = 0;   ///< the node that started it
  std::uint32_t attempt_token = 0;  ///< its timeout event carries it
  Time attempt_start;               ///< when it started
};

/// OTP's `global` on one node (global.cpp, docs/network.md "global"): its replica of the name
/// table, global's lock, and what prevent_overlapping_partitions keeps.
struct GlobalNode {
  struct Name {
    Pid pid;
    std::uint32_t node = 0;  ///< the pid's node (a dead pid's node is no longer known otherwise)
  };
  std::map<std::string, Name, std::less<>> names;
  std::uint64_t lock = 0;               ///< the registration holding global's lock here (0: free)
  std::set<std::uint32_t> removing;     ///< nodes told to disconnect whose nodedown is still to come
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> lost_seen;  ///< lost_connection (A, B): the last report handled
  std::deque<std::uint64_t> ops;        ///< the registrar's queue: the first one runs
};

/// One global:register_name or unregister_name, run by its node's registrar (global.cpp):
/// global's lock on the boss, then on every known node, then the change on each, then unlock.
struct GlobalOp {
  Pid caller;
  std::uint32_t node = 0;
  std::string name;
  Pid pid;            ///< register: the pid named
  std::uint32_t pid_node = 0;
  bool reg = true;
  int times = 0;      ///< tries so far (random_sleep's argument)
  int phase = 0;      ///< 1: the boss's lock; 2: every node's; 3: the change; 4: unlock
  std::uint64_t round = 0;  ///< bumped at each phase: a late reply of an earlier one is ignored
  std::vector<std::uint32_t> known;  ///< the known nodes when this try began
  std::vector<std::uint32_t> nodes;  ///< this node and them
  int outstanding = 0;
  bool denied = false;
  bool result = false;
};

struct ChanWaiter;

/// A channel (channel.cpp): its buffer, and who waits on it, first come first served.
struct ChanState {
  Atom name;
  std::size_t cap = 0;
  std::uint32_t node = 0;
  bool closed = false;
  const char* ctx_err = nullptr;  // a context's done channel, closed: why (Go's ctx.Err() text)
  std::deque<Payload> buf;
  std::uint64_t sent = 0;  // values ever sent on it (SelectCase::seq)
  std::deque<std::pair<ChanWaiter*, std::size_t>> sendq;  // a waiter and the index of its case
  std::deque<std::pair<ChanWaiter*, std::size_t>> recvq;
};

/// A WaitGroup (channel.cpp): its count, and the channel its waiters receive on (none while
/// nobody waits), closed when the count comes to zero.
struct WaitGroupState {
  Atom name;
  std::uint32_t node = 0;
  std::int64_t count = 0;
  Chan zero;
};

/// A process blocked in a channel operation or a select; lives on its stack while it waits, and
/// is taken off every queue when it is done, times out or dies.
struct ChanWaiter {
  Process* p = nullptr;
  std::span<SelectCase> cases;
  int chosen = -1;
  bool done = false;
  bool closed = false;  // the chosen case is a send woken by close: it crashes
  Pid by;               // who completed it
};

/// Something crossing the network: a message, or an exit signal (which is not a message until a
/// trapping receiver turns it into one).
struct Flight {
  Message* msg = nullptr;  // owned while in flight; null for an exit signal
  Pid from;
  Pid to;
  Reason reason;           // exit signals
  bool via_link = false;   // exit signals: from a link (else exit/2)
  bool fifo = true;
  bool held = false;       // net ticks: waits in TCP for the cut to heal (no pending event)
  bool queued = false;     // net ticks: held for a connection being set up (an attempt)
  bool live = false;
  std::uint32_t channel = 0;
  std::uint32_t gen = 1;
  std::uint64_t order = 0;  // send order across the whole network
  Time arrival;
};

struct Simulation::Impl {
  enum EvType : std::uint32_t { kRun = 1, kTimeout, kTimer, kCallback, kNet, kResume, kTickCheck, kConnClose, kConnAttempt, kConnRetry, kResumeProc };

  Simulation& sim;
  EventQueue queue;
  RecordArena process_memory{sizeof(Process), alignof(Process)};
  // Indexed by pid; null once a process is gone.
  std::vector<Process*, HugePageAllocator<Process*>> procs{nullptr};
  std::map<std::uint32_t, Pid> registry;  // atom index -> pid (lookups only, never iterated)
  // (label name's atom index, pid) of every live labelled process, so Simulation::find_labelled
  // takes a label's lowest pid in one lookup (lookups only, never iterated).
  std::set<std::pair<std::uint32_t, std::uint64_t>> labelled;
  // (label name's atom index, instance) -> how many processes with that label have drawn a
  // random stream so far: the next such process's stream index (lookups only, never iterated).
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> stream_draws;
  std::uint64_t next_ref = 1;
  std::uint64_t next_msg = 1;
  Process* current = nullptr;  // whose code runs now; null in the loop itself

  FiberSystem::Fiber* runner = nullptr;
  std::vector<FiberSystem::Fiber*> runner_pool;
  std::vector<FiberSystem::Fiber*> process_pool;
  std::vector<Process*> unwind;  // dead processes whose fibers still hold their stacks
  std::deque<std::pair<Process*, Reason>> deaths;
  bool draining = false;
  bool tearing_down = false;

  Time deadline = Time::max();
  std::uint64_t budget = 0;  // events left in this run() call

  TimerTable timers;

  // network.cpp: nodes, paths, what is in flight.
  std::vector<NodeState> nodes;
  std::map<std::uint32_t, std::uint32_t> node_index;  // atom index -> nodes[] (lookups only)
  std::vector<Channel> channels;
  std::map<std::uint64_t, std::uint32_t> channel_index;  // from << 32 | to -> channels[]
  std::set<std::pair<std::uint32_t, std::uint32_t>> blocked_paths;
  LinkParams default_link;
  std::map<std::uint64_t, LinkEffect> link_effects;  // by id, in the order they were added
  std::uint64_t next_effect = 1;
  std::vector<Flight> flights;
  std::vector<std::uint32_t> free_flights;
  std::uint64_t next_flight_order = 1;
  std::map<std::uint32_t, Duration> start_delays;  // label atom index -> delay (slow_start)
  std::size_t paused_nodes = 0;  // nodes with a pause pending (a fast check in dispatch)
  // One process suspended (SIGSTOP) until a time, and processes cut off from other nodes (one
  // socket's firewall rule); empty in nearly every run, so dispatch and net_send test emptiness.
  struct Suspension {
    Time until;
    std::vector<EventQueue::Item> deferred;  // its runs and timeouts, in the order they came due
  };
  std::map<std::uint64_t, Suspension> suspended;  // by pid
  std::set<std::uint64_t> cut_procs;        // pids
  // Preemption: each goroutine's own stream of its draws (by pid), made at its first wake on a
  // node that preempts; a label's streams go in the order its processes first wake, as rng()'s.
  bool any_preempt = false;
  std::map<std::uint64_t, Rng> preempt_rngs;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> preempt_streams;  // label -> streams made
  /// `p`, just woken from a channel wait on `chan` (a timeout: empty), may stay runnable a
  /// while first (Simulation::set_preemption).
  void preempt(Process* p, Atom chan);
  std::map<std::uint64_t, std::function<void()>> callbacks;
  std::exception_ptr failure;  // thrown by a scheduled callback; run() rethrows it
  Time instant{};                // budgets: the instant of the last event, and how many ran at it
  std::uint64_t at_instant = 0;
  // The last processes run, oldest first from recent_next (a livelock names them); kept only
  // while the livelock budget is on.
  std::array<Pid, 8> recent{};
  std::uint64_t recent_next = 0;
  bool budgets_on = false;  // any SimOptions budget set: the loop calls over_budget
  /// An exception when the event about to run at `t` goes over a budget (SimOptions).
  std::exception_ptr over_budget(Time t);
  /// The memory budget's part of over_budget (also checked between kernel events).
  std::exception_ptr over_memory(const std::function<std::string()>& where);
  // Trace events recorded since the last kernel event ran: a process looping in its own code
  // records without end and runs no event. Checked every kTraceCheckEvery of them (Trace's
  // checkpoint), against the livelock and memory budgets; over one, the budget waits in
  // pending_budget for a safe place to stop: the process's next kernel call (check(), emit),
  // or the loop's next event. The checkpoint itself may fire in the middle of a kernel
  // operation (a death that records its exit, its DOWNs), where nothing may be left half done.
  static constexpr std::uint64_t kTraceCheckEvery = 4096;
  std::uint64_t trace_at_pop = 0;
  std::exception_ptr pending_budget;
  static void trace_checkpoint(void* impl);
  void between_events();
  /// Stops the run for pending_budget from process code: its fiber is resumed only by the
  /// teardown, to unwind.
  [[noreturn]] void stop_for_budget();
  std::deque<ChanState> chans = std::deque<ChanState>(1);  // channel.cpp; index 0 is no channel (a deque: never moves them)
  std::deque<WaitGroupState> wgs = std::deque<WaitGroupState>(1);  // channel.cpp; index 0 is no group

  explicit Impl(Simulation& s);
  ~Impl();

  /// A timer event's `a`: its TimerTable slot and, in the high half, the receiver's pid when it
  /// fits (else 0), so the loop can fetch the receiver's record before it reads the slot.
  static std::uint64_t timer_event(std::uint32_t slot, Pid to) {
    return slot | (to.id >> 32 == 0 ? to.id << 32 : 0);
  }
  /// Fetches what the next timers to fire will touch (simulation.cpp).
  void prefetch_timers();

  Process* find(Pid p) const {
    return p.id < procs.size() ? procs[p.id] : nullptr;
  }

  // simulation.cpp: the loop, fibers, waiting.
  void loop();
  void dispatch(const EventQueue::Entry& e);
  void resume(Process* p);
  void start_free_form(Process* p);
  void behaviour_step(Process* p);
  void run_callback(Process* p, Message* m);
  void run_init(Process* p, Context& ctx);
  void finish_behaviour(Process* p, Reason r, bool run_terminate);
  void block(Process* p);
  void park_runner(FiberSystem::Fiber* self);
  void drain_unwind();
  FiberSystem::Fiber* take_runner();
  void check(Process* p);
  MessagePtr wait(Process* p, Match match, Duration timeout);
  /// Blocks p until unpark(p) or `timeout` (mail does not wake it); true when unparked.
  bool park(Process* p, Duration timeout);
  void unpark(Process* p);
  void schedule_run(Process* p);
  void teardown();
  static FiberSystem::Fiber* runner_main(void* arg);
  static FiberSystem::Fiber* process_main(void* arg);

  // network.cpp.
  std::uint32_t node_of(Atom name);
  bool path_blocked(std::uint32_t a, std::uint32_t b) const {
    return !blocked_paths.empty() && blocked_paths.count({a, b}) != 0;
  }
  /// Whether `a` counts itself connected to `b`: instant detection, both up and neither way
  /// blocked; under net ticks, both up and a's side of their connection up (a cut is not
  /// noticed until the ticks say so).
  bool connected(std::uint32_t a, std::uint32_t b) const {
    if (a == b) return true;
    if (!nodes[a].up || !nodes[b].up) return false;
    if (ticks()) return side_up(a, b);
    return !path_blocked(a, b) && !path_blocked(b, a);
  }
  /// connected(), or under net ticks a new connection set up on demand (as distributed Erlang
  /// connects on a send, link or monitor) when both ways are open.
  bool reach(std::uint32_t a, std::uint32_t b);
  /// Net ticks: a connection from `a` to `b` is being set up (messages sent meanwhile wait).
  bool attempting(std::uint32_t a, std::uint32_t b) const {
    auto it = conns.find(pair_key(a, b));
    return it != conns.end() && it->second.attempt;
  }

  // net_ticks.cpp: detection by net ticks (docs/network.md).
  NetTicks net;
  std::map<std::uint64_t, Conn> conns;  // min << 32 | max -> the pair's connection (lookups only)
  bool ticks() const { return net.ticktime != Duration::zero(); }
  static std::uint64_t pair_key(std::uint32_t a, std::uint32_t b) {
    return a < b ? (std::uint64_t{a} << 32 | b) : (std::uint64_t{b} << 32 | a);
  }
  static int side_of(std::uint32_t s, std::uint32_t o) { return s < o ? 0 : 1; }
  bool side_up(std::uint32_t s, std::uint32_t o) const {
    auto it = conns.find(pair_key(s, o));
    return it == conns.end() || it->second.up[side_of(s, o)];
  }
  Conn& conn(std::uint32_t a, std::uint32_t b) { return conns[pair_key(a, b)]; }
  Duration tick_interval() const { return Duration{net.ticktime.ns / 4}; }
  Time tick_base(std::uint32_t n);
  Time next_tick(std::uint32_t n, Time t);  ///< the node's first tick at or after t
  Time last_tick(std::uint32_t n, Time t);  ///< its last tick at or before t (none: the lowest Time)
  Duration rto(Channel& c);
  /// When `s` last read anything from `o` as of `t` (a landing, or o's tick).
  Time last_read(std::uint32_t o, std::uint32_t s, Time t);
  bool reads_stopped(std::uint32_t o, std::uint32_t s, Time t);
  void ensure_check(std::uint32_t s, std::uint32_t o);
  void tick_check(std::uint32_t s, std::uint32_t o, std::uint32_t token);
  void close_later(std::uint32_t s, std::uint32_t o, Time at);
  void hold_in_flight(Channel& c);
  bool holding(const Channel& c, std::uint32_t to) const;
  void note_send(Channel& c);
  void tick_block(std::uint32_t a, std::uint32_t b);
  void tick_heal(std::uint32_t a, std::uint32_t b);
  /// When the first retransmission on `c` (from node x) after a heal at `heal` goes out.
  Time first_retransmission(Channel& c, std::uint32_t x, Time heal);
  void tick_pause(std::uint32_t n);
  void tick_crash(std::uint32_t n);
  /// Side `s` sees its connection to `o` go (`why`: net_tick_timeout, connection_closed).
  void lose_side(std::uint32_t s, std::uint32_t o, Atom why);
  void release_held(Channel& c, Time at);
  void connect_now(std::uint32_t a, std::uint32_t b);
  void attempt_failed(std::uint32_t a, std::uint32_t b, std::uint32_t token);
  /// Ends the attempt under way between a and b: what waited for it is dropped or fails.
  void fail_attempt(std::uint32_t a, std::uint32_t b);
  /// unlink / demonitor under net ticks: a link or monitor end still to fire (a peer's side went
  /// down first) or waiting for a connection is cancelled too. `ref` empty: the link p-other.
  void forget_pending(Pid p, Pid other, Ref ref);
  /// Whether p's link to `other` is still to fire noconnection on p's side (linked, as far as p knows).
  bool link_pending(Pid p, Pid other) const;
  std::map<std::uint64_t, Conn::Waiter> lone_waiting;  ///< waiters without an attempt, by callback id

  // global.cpp: OTP's `global` under net ticks (names, its lock, prevent_overlapping_partitions).
  std::vector<GlobalNode> gnodes;           ///< per node, grown on first use
  std::map<std::uint64_t, GlobalOp> gops;   ///< registrations under way, by id
  std::map<std::uint64_t, bool> gresults;   ///< finished ones, until their caller reads them
  struct GlobalWait {
    std::uint64_t op;
    std::uint64_t round;
    std::uint32_t from, to;
  };
  std::vector<GlobalWait> gwaits;            ///< requests waiting for the connection to say
  struct GlobalHeld {
    std::uint32_t from, to;
    std::uint32_t token;  ///< the receiving side's token when sent: a new connection loses it
    std::function<void()> fn;
  };
  std::vector<GlobalHeld> gheld;             ///< global's messages sent into a cut (TCP holds them)
  std::uint64_t next_gop = 1;
  bool gused = false;                        ///< a name was registered: tables to keep up
  std::uint64_t lost_ops = 0;                ///< lost_connection reports sent (OTP's OpId)
  GlobalNode& gnode(std::uint32_t n);
  /// Runs `fn` at `at` (a kernel callback).
  void later(Time at, std::function<void()> fn);
  void require_global(const char* what) const;
  /// j counts as known to n: connected as n's side sees it, and not being removed.
  bool g_known(std::uint32_t n, std::uint32_t j);
  std::vector<std::uint32_t> g_known_list(std::uint32_t n);
  std::uint64_t global_start(Process* caller, std::string name, Pid pid, bool reg);
  void g_try(std::uint64_t id);
  void g_phase(std::uint64_t id, int phase, std::vector<std::uint32_t> to);
  void g_rpc(std::uint64_t id, std::uint64_t round, std::uint32_t j);
  void g_arrive(std::uint64_t id, std::uint32_t j);
  void g_reply(std::uint64_t id, std::uint64_t round);
  void g_done(std::uint64_t id);
  void g_finish(std::uint64_t id);
  void g_release(std::uint64_t id);
  void g_retry_later(std::uint64_t id);
  /// A request from `from` to `to` waiting on their connection: re-tried (connected) or failed.
  void g_wake(std::uint32_t from, std::uint32_t to, bool fail);
  void g_wake_pair(std::uint32_t a, std::uint32_t b, bool fail);
  /// The waits from `from` to `to` fail: at this instant, but after the caller is done (a
  /// nodedown inside a connect must not connect again from inside it).
  void g_fail_later(std::uint32_t from, std::uint32_t to);
  /// A cut between a and b healed and their connection survived: what global sent into it lands,
  /// and the DOWNs of names' processes that ended meanwhile with it.
  void global_healed(std::uint32_t a, std::uint32_t b);
  /// global's message from one server to another ([noconnect]: dropped unless connected).
  void g_send(std::uint32_t from, std::uint32_t to, std::function<void()> fn);
  void g_sync(std::uint32_t a, std::uint32_t b, Time up_at);
  void g_forget_node(std::uint32_t n, std::uint32_t o);
  /// Side s saw o go: names of o's processes leave s's replica, o's locks here go, requests
  /// waiting on o fail, and (prevent_overlapping_partitions) s tells its other peers.
  void global_nodedown(std::uint32_t s, std::uint32_t o);
  void g_lost_connection(std::uint32_t c, std::uint32_t a, std::uint64_t opid, std::uint32_t b);
  void g_remove_connection(std::uint32_t x, std::uint32_t c);
  /// A process ended: its names leave each replica when that node hears of it.
  void global_exit(const Process* p);
  void global_crash(std::uint32_t n);
  void global_connected(std::uint32_t a, std::uint32_t b);
  /// Traces a global_name event (`why`: registered, unregistered, conflict).
  void note_global(std::uint32_t node, Pid pid, Pid other, const std::string& name, Atom why);
  void attempt_retry(std::uint32_t a, std::uint32_t b, std::uint32_t token);
  /// A link (empty ref) or monitor from p to `other` across a connection not up: it waits for
  /// the attempt under way, or fails after net_setuptime.
  void wait_for_connection(Process* p, Pid other, Ref ref);
  /// Sets up (up) or fails (noconnection, or noproc for a target gone) what waited.
  void settle(const Conn::Waiter& w, bool up);
  /// Under net ticks: notes a send on the path; true when the flight waits (held).
  bool ticks_hold(Channel& c, std::uint32_t to, Flight& f, bool queued = false);
  /// Runs `fn` net_setuptime from now (a link, monitor or call to a node it cannot reach).
  void after_setup_time(std::function<void()> fn);
  bool paused(std::uint32_t n) const { return paused_nodes != 0 && sim.now_ < nodes[n].paused_until; }
  /// An event for a suspended process waits for its SIGCONT: true when `item` was kept.
  bool defer_if_suspended(Pid p, const EventQueue::Item& item) {
    if (suspended.empty()) return false;
    const auto it = suspended.find(p.id);
    if (it == suspended.end()) return false;
    it->second.deferred.push_back(item);
    return true;
  }
  /// SIGCONT: what came due meanwhile runs now, in order.
  void resume_suspended(std::uint64_t pid);
  bool cut_off(Pid p) const { return !cut_procs.empty() && cut_procs.count(p.id) != 0; }
  Channel& channel(std::uint32_t from, std::uint32_t to);
  /// The path's index in `channels` (channel() may grow it: taken after the call returns).
  std::uint32_t channel_ix(std::uint32_t from, std::uint32_t to, bool raw = false) {
    Channel& c = raw ? raw_channel(from, to) : channel(from, to);
    return static_cast<std::uint32_t>(&c - channels.data());
  }
  /// Under net ticks, the path of messages that model their own transport (Context::raw_network):
  /// its own order and draws, the same parameters.
  Channel& raw_channel(std::uint32_t from, std::uint32_t to);
  LinkParams effective(Channel& c);
  /// Sends a message or an exit signal across the network; false if it could not be sent
  /// (the caller then treats the nodes as disconnected).
  void net_send(Process* from, Process* to, MessagePtr m);
  void net_exit(Pid from, Process* from_proc, Process* to, Reason reason, bool via_link);
  std::uint32_t new_flight(Flight f);
  /// Frees the slot and returns what it held; the slot's pending event becomes stale.
  Flight take_flight(std::uint32_t slot);
  /// Takes what `which` picks off the network, untraced (a demonitor, an unlink).
  void cancel_flights(FunctionRef<bool(const Flight&)> which);
  void schedule_flight(std::uint32_t slot);
  void land(std::uint32_t slot, std::uint32_t gen);
  void deliver_flight(Flight& f);
  void lose_contact(std::uint32_t a, std::uint32_t b);
  void deliver_down(Process* watcher, Pid target, Ref ref, const Reason& reason);
  void note_node(EventKind kind, std::uint32_t node, Atom other = {}, std::uint64_t msg = 0);

  // signals.cpp: spawning, messages, links, monitors, exit signals, termination.
  SpawnResult spawn(Process* parent, std::unique_ptr<Behaviour> b, std::unique_ptr<Body> body,
                    const SpawnOptions& opts);
  void send(Pid from, Process* from_proc, Pid to, MessagePtr m);
  void enqueue(Process* p, MessagePtr m);
  /// Whether the mailbox takes `m` (a bounded one is full for plain messages, casts and calls).
  bool mailbox_refuses(const Process* p, const Message& m) const {
    return p->mailbox_max != 0 && counts_toward_bound(m) && p->user_mail >= p->mailbox_max;
  }
  static bool counts_toward_bound(const Message& m) {
    return m.kind == MsgKind::plain || m.kind == MsgKind::cast || m.kind == MsgKind::call;
  }
  /// A message left the mailbox: a sender waiting for room may go on.
  void mailbox_took(Process* p, const Message& m);
  /// A local sender waits while `to`'s bounded, blocking mailbox is full.
  void wait_for_room(Process* sender, Pid to);
  void end_task(Process* main, const Reason& reason);
  MessagePtr take_match(Process* p, const Match& match);
  void link(Process* p, Pid other);
  void unlink(Process* p, Pid other);
  Ref monitor(Process* p, Pid other);
  void demonitor(Process* p, Ref ref, bool flush);
  void exit_signal(Pid from, Process* from_proc, Process* target, Reason reason, bool via_link);
  void end_process(Process* p, Reason reason);
  void drain_deaths();
  void finish(Process* p, const Reason& reason);
  void dispose(Process* p);
  void destroy(Process* p);
  /// Records a kernel event (a no-op, inlined, when tracing is off).
  void note(EventKind kind, const Process* p, Pid pid, Pid other = {}, Reason reason = {},
            Atom tag = {}, std::uint64_t msg = 0) {
    if (sim.trace_.enabled()) record(kind, p, pid, other, reason, tag, msg);
  }
  void record(EventKind kind, const Process* p, Pid pid, Pid other, Reason reason, Atom tag,
              std::uint64_t msg);
};

/// The kernel behind a Simulation, for the sim/*.cpp files that implement Context's calls.
struct Kernel {
  using Impl = Simulation::Impl;
  static Impl& of(Simulation& s) { return *s.impl_; }
};

}  // namespace lic
