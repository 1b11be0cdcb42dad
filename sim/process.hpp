#pragma once
// What process code sees: a Context (self, send, receive, spawn, link, monitor, exit, ...),
// the Behaviour interface for GenServer-style processes, and spawn options.
//
// Processes ask, the kernel acts: every Context call is applied by the kernel at the point it is
// made, in program order, on the one thread that runs the simulation; calls that wait (receive,
// sleep, call) suspend the process until the kernel wakes it in virtual time.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <span>
#include <vector>

#include "sim/atom.hpp"
#include "sim/channel.hpp"
#include "sim/disk.hpp"
#include "sim/exit_reason.hpp"
#include "sim/message.hpp"
#include "sim/pid.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"
#include "sim/trace.hpp"

namespace lic {

class Simulation;
struct Process;

/// Thrown through a process's stack when it ends by an exit: a kill, an exit signal, or its own
/// exit(reason). Deliberately not a std::exception: `catch (const std::exception&)` in process
/// code cannot swallow it, and if `catch (...)` does, the next kernel call throws it again.
struct ProcessExit {
  Reason reason;
  bool self_requested = false;  ///< the process called exit(reason) itself (a gen_server then
                                ///< runs terminate, as OTP does for exit/1 in a callback)
};

/// A non-owning reference to a callable, for receive predicates (no allocation).
template <class Sig>
class FunctionRef;
template <class R, class... A>
class FunctionRef<R(A...)> {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef>>>
  FunctionRef(F&& f)  // NOLINT: implicit like std::function
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, A... a) -> R { return (*static_cast<std::remove_reference_t<F>*>(o))(a...); }) {}
  R operator()(A... a) const { return call_(obj_, a...); }

 private:
  void* obj_;
  R (*call_)(void*, A...);
};

using Match = FunctionRef<bool(const Message&)>;

/// Where a call came from, to reply to it later.
struct From {
  Pid pid;
  Ref ref;
};

/// The outcome of Context::call.
struct CallResult {
  enum class Status : std::uint8_t { ok, timeout, down };
  Status status = Status::ok;
  MessagePtr reply;  ///< when ok
  Reason reason;     ///< when down: the callee's exit reason (noproc if it did not exist)
  bool ok() const { return status == Status::ok; }
};

/// What init returns: ok, ignore (the process ends normally, supervisors keep no pid) or
/// stop(reason) (the process ends with reason; a supervisor sees a start error).
struct InitResult {
  enum class Status : std::uint8_t { ok, ignore, stop };
  Status status = Status::ok;
  Reason reason;
  static InitResult ok() { return {}; }
  static InitResult ignore() { return {Status::ignore, Reason::normal()}; }
  static InitResult stop(Reason r) { return {Status::stop, r}; }
};

/// What handle_call returns: a reply now, or none (reply later with Context::reply).
struct CallReply {
  bool has_reply = false;
  Atom tag;
  Payload payload;
  static CallReply noreply() { return {}; }
  static CallReply reply(Atom tag, Payload payload = {}) { return {true, tag, std::move(payload)}; }
};

class Context;

/// A GenServer-style process: state in the object, callbacks run by the kernel. An idle
/// behaviour process holds no fiber: its callbacks run on pooled fibers, and a fiber stays bound
/// to it only while a callback blocks (a nested call, a receive, a sleep).
class Behaviour {
 public:
  virtual ~Behaviour() = default;
  virtual InitResult init(Context&) { return InitResult::ok(); }
  virtual CallReply handle_call(Context&, const Message&, From) { return CallReply::noreply(); }
  virtual void handle_cast(Context&, const Message&) {}
  virtual void handle_info(Context&, const Message&) {}
  /// Runs when the process stops itself, crashes in a callback, or is stopped by its parent with
  /// an exit signal while trapping exits; never when killed or taken down by an untrapped signal.
  virtual void terminate(Context&, const Reason&) {}
};

using Body = std::function<void(Context&)>;

struct SpawnOptions {
  bool link = false;          ///< spawn_link
  bool monitor = false;       ///< spawn_monitor: the ref is returned through SpawnResult
  bool trap_exit = false;     ///< start already trapping exits
  Label label;                ///< who this process is in the system under test
  Atom node;                  ///< empty: the spawner's node (or the default node)
  std::size_t stack_bytes = 0;  ///< free-form processes: 0 = the simulation's default
  /// Behaviours: send the spawner an `$init_ack` message once init returns (see kInitAck), for a
  /// synchronous start like proc_lib:start_link.
  bool ack_init = false;
  /// A bounded mailbox: at most this many plain messages, casts and calls waiting (0: no bound).
  /// System messages (EXIT, DOWN, replies) are never refused.
  std::uint32_t mailbox_max = 0;
  /// When it is full: drop the message (traced `drop` with reason mailbox_full), or make a
  /// sender on the same node wait until there is room (backpressure; the world's sends and those
  /// from other nodes are dropped).
  bool mailbox_block = false;
};

/// Tag of the message a behaviour spawned with ack_init sends its spawner after init: `from` is
/// the new process, the int payload is the InitResult::Status, `reason` is normal (ok),
/// `ignore`, or the stop reason (a crash in init included). It always precedes the EXIT.
extern const Atom kInitAck;

struct SpawnResult {
  Pid pid;
  Ref monitor;
};

/// The handle process code uses to act. Cheap to copy; valid only inside its process.
class Context {
 public:
  Context(Simulation& sim, Process& self) : sim_(&sim), self_(&self) {}

  Pid self() const;
  /// This node's clock (its monotonic time): true virtual time, unless the node's clock drifts
  /// (Simulation::set_clock). Timers, sleeps and timeouts are measured on it too.
  Time now() const;
  Atom node() const;
  /// This node's wall clock: now() plus the node's clock skew (Simulation::set_clock).
  Time node_time() const;
  /// Whether `node` is up. A process cannot see another machine; use it only to model what a
  /// machine's network stack would tell (a connection reset by a crashed peer's OS).
  bool node_up(Atom node) const;
  /// This process's node's disk: files that outlive the process and the node's crashes.
  Disk& disk() const;
  /// A buggify point (sim/buggify.hpp): true when the run turned `name` on, the chaos phase
  /// runs, and the point's stream fires this time; traced as a `buggify` event {point} when true.
  bool buggify(std::string_view name, std::optional<Ratio> fire = std::nullopt);
  const Label& label() const;
  Simulation& simulation() const { return *sim_; }
  /// This process's own random stream, derived from the root seed and the process's label (its
  /// tree path and start attempt), not its pid: adding or removing another process never moves
  /// its draws. Processes that share a label take that label's streams in the order they first
  /// draw. A scenario can pin it to a seed of its own (`streams: {process PATH: SEED}`).
  Rng& rng();

  // Messages.
  void send(Pid to, Atom tag, Payload payload = {});
  void send(Atom registered_name, Atom tag, Payload payload = {});
  /// Delivers the message after `delay` (erlang:send_after); returns a timer ref to cancel.
  Ref send_after(Duration delay, Pid to, Atom tag, Payload payload = {});
  /// True if the timer was still pending.
  bool cancel_timer(Ref timer);
  /// Selective receive: the oldest message that matches, waiting up to `timeout` (Duration::max()
  /// waits forever, zero only looks). Null on timeout.
  MessagePtr receive(Match match, Duration timeout = Duration::max());
  /// The oldest message, waiting up to `timeout`.
  MessagePtr receive(Duration timeout = Duration::max());
  void sleep(Duration d);
  std::size_t mailbox_size() const;

  // Processes.
  Pid spawn(Body body, SpawnOptions opts = {});
  Pid spawn_link(Body body, SpawnOptions opts = {});
  Pid spawn(std::unique_ptr<Behaviour> behaviour, SpawnOptions opts = {});
  SpawnResult spawn_ex(Body body, SpawnOptions opts);
  SpawnResult spawn_ex(std::unique_ptr<Behaviour> behaviour, SpawnOptions opts);
  void link(Pid other);
  void unlink(Pid other);
  Ref monitor(Pid other);
  /// Removes the monitor; with flush, also drops a DOWN for it already in the mailbox.
  void demonitor(Ref ref, bool flush = false);
  void trap_exit(bool on);
  bool trapping_exits() const;
  /// This process's messages to and from other nodes are packets of a transport it models itself
  /// (the simulated PostgreSQL's TCP): under net ticks (docs/network.md) they cross as under
  /// instant detection, dropped on a blocked path (`partitioned`) and never held by a cut nor lost
  /// with a distribution connection. Exit signals, DOWNs, links and monitors keep distributed
  /// Erlang's rules. No effect under instant detection.
  void raw_network(bool on);
  /// Sends an exit signal with `reason` to `target` (OTP's exit/2).
  void exit(Pid target, Reason reason);
  /// Ends this process with `reason` (OTP's exit/1). Does not return.
  [[noreturn]] void exit(Reason reason);
  bool alive(Pid p) const;
  void register_name(Atom name);
  void unregister_name(Atom name);
  Pid whereis(Atom name) const;
  // OTP's `global` (docs/network.md, "global"; net ticks only, else std::logic_error): names
  // replicated on every node, each node answering from its own table.
  /// global:register_name(name, pid): waits for global's lock on every node this one knows (a
  /// node across an undetected cut holds it until the cut is seen or heals), then names `pid`
  /// on each; false (no) when this node's table already has the name, or the pid has one.
  /// When two nodes that both had the name connect again, the lower pid keeps it and the other
  /// is killed (random_exit_name).
  bool register_global(Atom name, Pid pid);
  bool register_global(Atom name) { return register_global(name, self()); }
  /// global:unregister_name, under the same lock.
  void unregister_global(Atom name);
  /// global:whereis_name, from this node's table: an empty Pid when it has no such name.
  Pid whereis_global(Atom name) const;
  /// global:send: sends to the pid this node's table names; false (nothing sent) when it names
  /// none (OTP exits the caller with badarg).
  bool send_global(Atom name, Atom tag, Payload payload = {});
  /// The node `p` runs on (Erlang's node/1), e.g. to reach the replica beside the process a
  /// leader election registered; an empty Atom once `p` has ended (the simulation keeps no
  /// record of a dead process's node).
  Atom node_of(Pid p) const;

  // gen_server.
  CallResult call(Pid to, Atom tag, Payload payload = {}, Duration timeout = kSecond * 5);
  /// A call to the process registered as `name` (gen_server:call(Name, ...)); nothing registered:
  /// down with reason noproc, at once.
  CallResult call(Atom name, Atom tag, Payload payload = {}, Duration timeout = kSecond * 5);
  void cast(Pid to, Atom tag, Payload payload = {});
  void reply(From from, Atom tag, Payload payload = {});
  /// Inside a Behaviour callback: stop after this callback returns (terminate runs first).
  void stop(Reason reason);

  /// Records an event of the system under test (a supervisor report, a pipeline stage's work).
  void emit(Atom name, std::vector<TraceField> fields = {});

  // Channels (sim/channel.hpp: Go's rules).
  /// A channel of `capacity` (0: a rendezvous) named `name` in the trace, on this node.
  Chan make_chan(std::size_t capacity, Atom name);
  /// Sends `value`, waiting while the channel is full; crashes on a closed channel.
  void chan_send(Chan c, Payload value);
  /// Receives, waiting while the channel is empty and open; ok = false once closed and drained.
  ChanRecv chan_recv(Chan c);
  /// Closes the channel; crashes when it is closed already.
  void chan_close(Chan c);
  std::size_t chan_len(Chan c) const;
  std::size_t chan_cap(Chan c) const;
  bool chan_closed(Chan c) const;
  /// Waits until one of `cases` can proceed, does it and returns its index; -1 when `timeout`
  /// passes first (Duration::zero(): do one that is ready now, else -1 at once, Go's default).
  int select(std::span<SelectCase> cases, Duration timeout = Duration::max());
  // OS signals (Simulation::signal_node): a process asks for SIGTERM as Go's signal.Notify does.
  /// SIGTERM to this node is sent on `c` (dropped if it is full), as the atom `sigterm`.
  void notify_signals(Chan c);
  /// This process is its node's main: when it ends, the task ends (task_exit) and every process
  /// left on the node is killed, as goroutines are when main returns.
  void set_main();

  /// A context with cancel (its done channel, named `name`).
  CancelContext make_context(Atom name);
  /// A context whose done channel closes `timeout` from now (context.WithTimeout), unless cancel
  /// comes first. A timer goroutine on this node, labelled `NAME.timer`, closes it, and ends at
  /// once when cancel comes first (Go stops the timer). A timeout of zero or less: closed already.
  CancelContext make_context_with_timeout(Atom name, Duration timeout);
  /// Cancels it: closes its done channel unless closed already.
  void cancel(const CancelContext& c);
  /// Go's ctx.Err(): empty while done is open, then "context canceled" or "context deadline
  /// exceeded", whichever closed it first.
  std::string_view context_err(const CancelContext& c) const;

  /// A WaitGroup named `name` in the trace, on this node, at zero.
  WaitGroup make_waitgroup(Atom name);
  /// wg.Add(delta): a count below zero crashes the process ("sync: negative WaitGroup counter",
  /// as Go panics); coming to zero wakes every waiter.
  void wg_add(WaitGroup wg, std::int64_t delta);
  /// wg.Done(): wg_add(wg, -1).
  void wg_done(WaitGroup wg) { wg_add(wg, -1); }
  /// wg.Wait(): returns at once at zero, else waits until the count comes to zero.
  void wg_wait(WaitGroup wg);

 private:
  Simulation* sim_;
  Process* self_;
};

/// A buggify point in a system's code: `if (lic::buggify(ctx, "s3.slow_reply")) delay *= 10;`
/// (Context::buggify, sim/buggify.hpp).
/// `fire`: this call's chance when the point is on (default 25 %), for points asked very often.
inline bool buggify(Context& ctx, std::string_view name, std::optional<Ratio> fire = std::nullopt) {
  return ctx.buggify(name, fire);
}

}  // namespace lic
