#pragma once
// The lifecycle supervisor of seed 003: services with auto_start, start and stop timeouts,
// depends_on (dependencies start first, dependents stop first), restarts with exponential
// backoff that resets after a stable run, terminal errors, and the seed's six states. The
// decisions come from the pure cores (backoff, dependency_order); this file only applies them.
//
// Unlike the OTP supervisor it never blocks on one service while running: starts are spawned
// with ack_init and their acknowledgements, EXITs and timers arrive as messages, so services of
// the same level start at the same virtual instant. Only terminate blocks (it must finish the
// ordered stop before the supervisor ends).
//
// Every state change is a trace event `service_state` {id, from, to, start, attempt[, pid]
// [, reason]}; with `service_retry` {id, attempt, delay}, `service_gave_up` {id, why, attempt},
// `service_kill` {id, pid, reason}, `service_waiting` {id, on} and `service_retry_cancelled` {id}
// the life of every service reads back from the trace.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "sim/process.hpp"
#include "sim/simulation.hpp"
#include "supervision/backoff.hpp"
#include "supervision/dependency_order.hpp"

namespace lic::supervision {

/// The seed's states. Inactive -> Starting -> Running -> Stopping -> Stopped, Running -> Failed,
/// Starting -> Failed, Failed -> Starting (retry).
enum class ServiceState : std::uint8_t { inactive, starting, running, stopping, stopped, failed };

/// "inactive", "starting", ...: the names the trace uses.
const char* to_string(ServiceState s);

/// True for exactly the transitions of the seed's state diagram.
bool allowed_transition(ServiceState from, ServiceState to);

/// How a service is started: a behaviour (Starting until its init acknowledges, like
/// proc_lib:start_link) or a free-form process (Running as soon as it is spawned).
struct ServiceStart {
  std::function<std::unique_ptr<Behaviour>()> behaviour;
  Body body;
};

/// The seed's terminal errors, which stop retrying: a cancelled context and an explicit request
/// to end are a service ending `shutdown`, `{shutdown, _}` or `normal` on its own (clean_exits);
/// errors marked non-retryable are listed in `reasons` (matched exactly). `init` returning
/// ignore is always terminal: the service asked not to run.
struct TerminalErrors {
  bool clean_exits = true;
  std::vector<Reason> reasons;
  bool matches(const Reason& r) const;
};

/// One service: the seed's lifecycle block, with the seed's defaults.
struct ServiceSpec {
  std::string name;
  ServiceStart start;
  bool auto_start = false;                ///< the seed's default (its example sets true)
  Duration start_timeout = kSecond * 10;  ///< no ack by then: killed, and counted as a failure
  Duration stop_timeout = kSecond * 10;   ///< after `shutdown`, then `kill`
  Duration stable_threshold = kSecond * 5;  ///< a longer run resets the attempt counter
  std::vector<std::string> depends_on;    ///< names of services that must be Running first
  BackoffPolicy restart;                  ///< 1 s, 90 s cap, x2, +/-10 %, 0 = retry for ever
  TerminalErrors terminal;
};

struct LifecycleSpec {
  std::vector<ServiceSpec> services;
};

/// The checked spec: dependencies as indices and the start levels, or why the spec is unusable
/// (duplicate name, unknown dependency, dependency cycle) as a reason naming the culprit and
/// one sentence.
struct LifecyclePlan {
  std::vector<std::vector<std::size_t>> depends_on;
  std::vector<std::vector<std::size_t>> dependents;
  DependencyOrder order;
  Reason error;         ///< e.g. {error,{dependency_cycle,[a,b,a]}}
  std::string message;  ///< e.g. "dependency cycle: a -> b -> a"
  bool ok() const { return message.empty(); }
};
LifecyclePlan plan_lifecycle(const LifecycleSpec& spec);

/// One service as which_services and the snapshot show it.
struct ServiceInfo {
  std::string name;
  ServiceState state = ServiceState::inactive;
  Pid pid;                    ///< Pid{} unless Starting, Running or Stopping
  std::uint32_t starts = 0;   ///< start attempts so far: the label's instance
  std::uint32_t attempts = 0; ///< consecutive failures counted by the backoff
};

/// The reply to the management calls: ok, or an error (not_found, already_started, badarg,
/// stopping), and for which_services every service in declaration order.
struct ServiceReply {
  bool ok = false;
  Reason error;
  std::vector<ServiceInfo> services;
};

class LifecycleSupervisor final : public Behaviour {
 public:
  explicit LifecycleSupervisor(LifecycleSpec spec);

  /// Every service in declaration order, read directly.
  std::vector<ServiceInfo> services() const;

  InitResult init(Context& ctx) override;
  CallReply handle_call(Context& ctx, const Message& m, From from) override;
  void handle_info(Context& ctx, const Message& m) override;
  void terminate(Context& ctx, const Reason& reason) override;

 private:
  enum class Retry : std::uint8_t { none, pending, due };
  struct Service {
    ServiceSpec spec;
    ServiceState state = ServiceState::inactive;
    Pid pid;
    std::uint32_t starts = 0;
    Backoff backoff;
    Rng rng;                   // jitter: a stream derived from the supervisor's by name
    bool want_up = false;      // the target: started (auto_start, start_service) or stopped
    Retry retry = Retry::none; // while Failed
    bool waiting_reported = false;
    std::uint64_t epoch = 0;   // bumped at every transition; a timer from an older epoch is stale
    Ref timer;                 // the one armed timer: start timeout, stop timeout or retry
  };

  /// The services one pass of reconcile() has still to look at, by their place in its order. A
  /// service is looked at again only after something it reads changed (its own state, target
  /// or retry; a dependency's or dependent's state), so an event costs what it touches, not
  /// one look at every service. One marked at or before the pass's cursor waits for the next
  /// reconcile, as the full scan this replaced would have left it.
  struct Pass {
    std::set<std::size_t> todo;
    std::set<std::size_t> later;
    bool running = false;
    std::size_t cursor = 0;
    void mark(std::size_t key);
    bool next(std::size_t& key);
    void finish();
  };

  void reconcile(Context& ctx);
  void stop_step(Context& ctx, std::size_t i);
  void start_step(Context& ctx, std::size_t i);
  void touched(std::size_t i);        // i's want_up or retry changed: look at i again
  void state_changed(std::size_t i);  // and its dependents' starts and dependencies' stops
  void set_pid(std::size_t i, Pid pid);
  void dispatch(Context& ctx, const Message& m);
  void begin_start(Context& ctx, std::size_t i);
  void begin_stop(Context& ctx, std::size_t i);
  void kill(Context& ctx, std::size_t i, Atom why);
  void fail(Context& ctx, std::size_t i, const Reason& reason, bool terminal);
  void transition(Context& ctx, std::size_t i, ServiceState to, const Reason* reason);
  void arm(Context& ctx, std::size_t i, Duration delay, Atom tag);
  void disarm(Context& ctx, std::size_t i);
  void renew(Context& ctx, std::size_t i);
  bool dependencies_running(std::size_t i, std::size_t& missing) const;
  bool dependents_active(std::size_t i) const;
  std::size_t find(const std::string& name) const;
  std::size_t find(Pid pid) const;
  ServiceReply manage(Context& ctx, const Message& m);

  std::vector<Service> services_;  // declaration order
  LifecyclePlan plan_;
  std::vector<std::size_t> rank_;  // place in the start order: levels in order, each in declaration order
  std::vector<std::size_t> at_rank_;
  Pass stops_;                     // keys: services_.size() - 1 - rank (the start order reversed)
  Pass starts_;                    // keys: rank
  std::map<Pid, std::size_t> by_pid_;  // each Starting, Running or Stopping service's process
  std::size_t busy_ = 0;               // services Starting or Stopping
};

/// One lifecycle supervisor in a snapshot.
struct LifecycleSnapshot {
  Pid pid;
  std::string path;  ///< its label's name
  std::vector<ServiceInfo> services;
};

/// Every live lifecycle supervisor's services, in pid order, read between runs (no call, no
/// trace event).
std::vector<LifecycleSnapshot> lifecycle_snapshot(const Simulation& sim);

// Management calls from another process. Both reply at once, when the request is applied: the
// states that follow show in which_services and the trace.
/// Starts `name` and whatever it needs: the service and each of its (transitive) dependencies
/// that is not running is started now (Inactive), again (Failed: the backoff is reset) or in a
/// new life (Stopped). already_started when `name` is Starting or Running.
ServiceReply start_service(Context& ctx, Pid sup, const std::string& name);
/// Stops `name` and, first, every service that (transitively) depends on it. ok if already
/// stopped.
ServiceReply stop_service(Context& ctx, Pid sup, const std::string& name);
std::vector<ServiceInfo> which_services(Context& ctx, Pid sup);

}  // namespace lic::supervision
