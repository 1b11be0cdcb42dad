#include "sim/trace_keys.hpp"
#include "supervision/lifecycle.hpp"

#include "supervision/call_reply.hpp"
#include "supervision/supervisor.hpp"
#include "supervision/events.hpp"

#include <cassert>
#include <map>

namespace lic::supervision {
namespace {


using events::kServiceGaveUp;
using events::kServiceRetry;
const Atom kServiceKill("service_kill");
const Atom kServiceWaiting("service_waiting");
const Atom kRetryCancelled("service_retry_cancelled");
const Atom kSpecError("lifecycle_spec_error");

// Timers the supervisor sends itself; the payload names the service and the epoch it was armed
// in, so a timer that fires after its state was left is recognised as stale.
const Atom kStartTimeout("lifecycle_start_timeout");
const Atom kStopTimeout("lifecycle_stop_timeout");
const Atom kRetryTimer("lifecycle_retry");
struct TimerMsg {
  std::size_t service = 0;
  std::uint64_t epoch = 0;
};

const Atom kStartService("start_service");
const Atom kStopService("stop_service");
const Atom kWhichServices("which_services");
const Atom kManagement("management");

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

/// Starting or Stopping: terminate waits for these to resolve.
bool in_flux(ServiceState s) { return s == ServiceState::starting || s == ServiceState::stopping; }

bool active(ServiceState s) {
  return s == ServiceState::starting || s == ServiceState::running || s == ServiceState::stopping;
}

std::string names(const LifecycleSpec& spec, const std::vector<std::size_t>& path, const char* sep) {
  std::string out;
  for (std::size_t k = 0; k < path.size(); ++k) {
    if (k != 0) out += sep;
    out += spec.services[path[k]].name;
  }
  return out;
}

/// `i` and everything reachable from it along `edges` (dependencies or dependents).
std::vector<std::size_t> closure(const std::vector<std::vector<std::size_t>>& edges, std::size_t i) {
  std::vector<bool> seen(edges.size(), false);
  std::vector<std::size_t> out;
  std::vector<std::size_t> todo{i};
  while (!todo.empty()) {
    const std::size_t v = todo.back();
    todo.pop_back();
    if (seen[v]) continue;
    seen[v] = true;
    out.push_back(v);
    for (std::size_t w : edges[v]) todo.push_back(w);
  }
  return out;
}

}  // namespace

const char* to_string(ServiceState s) {
  switch (s) {
    case ServiceState::inactive: return "inactive";
    case ServiceState::starting: return "starting";
    case ServiceState::running: return "running";
    case ServiceState::stopping: return "stopping";
    case ServiceState::stopped: return "stopped";
    case ServiceState::failed: return "failed";
  }
  return "?";
}

bool allowed_transition(ServiceState from, ServiceState to) {
  using S = ServiceState;
  switch (from) {
    case S::inactive: return to == S::starting;
    case S::starting: return to == S::running || to == S::failed;
    case S::running: return to == S::stopping || to == S::failed;
    case S::stopping: return to == S::stopped;
    case S::failed: return to == S::starting;
    case S::stopped: return false;  // the end of a life ([*]); start_service begins a new one
  }
  return false;
}

bool TerminalErrors::matches(const Reason& r) const {
  if (clean_exits && r.is_clean()) return true;
  for (const Reason& t : reasons) {
    if (t == r) return true;
  }
  return false;
}

LifecyclePlan plan_lifecycle(const LifecycleSpec& spec) {
  LifecyclePlan p;
  const std::size_t n = spec.services.size();
  p.depends_on.resize(n);
  p.dependents.resize(n);
  auto bad = [&p](std::string term, std::string message) {
    p.error = Reason::error(Atom(term));
    p.message = std::move(message);
    return p;
  };
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < n; ++i) {
    const ServiceSpec& s = spec.services[i];
    if (!index.emplace(s.name, i).second) {
      return bad("{duplicate_service," + s.name + "}", "duplicate service name: " + s.name);
    }
    if (!s.start.behaviour && !s.start.body) {
      return bad("{no_start," + s.name + "}", "service " + s.name + " has no start function");
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (const std::string& d : spec.services[i].depends_on) {
      const auto it = index.find(d);
      if (it == index.end()) {
        const std::string& s = spec.services[i].name;
        return bad("{unknown_dependency," + s + "," + d + "}",
                   "service " + s + " depends on " + d + ", which is not a service here");
      }
      p.depends_on[i].push_back(it->second);
      p.dependents[it->second].push_back(i);
    }
  }
  p.order = order_by_dependencies(p.depends_on);
  if (!p.order.ok()) {
    return bad("{dependency_cycle,[" + names(spec, p.order.cycle, ",") + "]}",
               "dependency cycle: " + names(spec, p.order.cycle, " -> "));
  }
  return p;
}

LifecycleSupervisor::LifecycleSupervisor(LifecycleSpec spec) : plan_(plan_lifecycle(spec)) {
  for (ServiceSpec& s : spec.services) {
    Backoff backoff(s.restart, s.stable_threshold);
    services_.push_back(Service{std::move(s), ServiceState::inactive, {}, 0, backoff, Rng{}, false,
                                Retry::none, false, 0, {}});
  }
  if (plan_.ok()) {
    rank_.assign(services_.size(), 0);
    for (const auto& level : plan_.order.levels) {
      for (std::size_t i : level) {
        rank_[i] = at_rank_.size();
        at_rank_.push_back(i);
      }
    }
  }
}

void LifecycleSupervisor::Pass::mark(std::size_t key) {
  if (running && key <= cursor) {
    later.insert(key);  // the pass is past it: the next reconcile looks
  } else {
    todo.insert(key);
  }
}

bool LifecycleSupervisor::Pass::next(std::size_t& key) {
  running = true;
  if (todo.empty()) return false;
  key = *todo.begin();
  todo.erase(todo.begin());
  cursor = key;
  return true;
}

void LifecycleSupervisor::Pass::finish() {
  running = false;
  todo.merge(later);
  later.clear();
}

void LifecycleSupervisor::touched(std::size_t i) {
  if (i >= rank_.size()) return;  // a spec that cannot run never reconciles
  stops_.mark(services_.size() - 1 - rank_[i]);
  starts_.mark(rank_[i]);
}

void LifecycleSupervisor::state_changed(std::size_t i) {
  if (i >= rank_.size()) return;
  touched(i);
  // A start waits for its dependencies to be Running; a stop for its dependents to be inactive.
  for (std::size_t d : plan_.dependents[i]) starts_.mark(rank_[d]);
  for (std::size_t d : plan_.depends_on[i]) stops_.mark(services_.size() - 1 - rank_[d]);
}

void LifecycleSupervisor::set_pid(std::size_t i, Pid pid) {
  Service& s = services_[i];
  if (s.pid) by_pid_.erase(s.pid);
  s.pid = pid;
  if (pid) by_pid_[pid] = i;
}

std::vector<ServiceInfo> LifecycleSupervisor::services() const {
  std::vector<ServiceInfo> out;
  for (const Service& s : services_) {
    out.push_back({s.spec.name, s.state, s.pid, s.starts, s.backoff.attempts()});
  }
  return out;
}

// g++ 12 warns a false -Wmaybe-uninitialized inside std::variant's move constructor (the string
// alternative) when a vector of trace fields grows; nothing here is uninitialised.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

InitResult LifecycleSupervisor::init(Context& ctx) {
  ctx.trap_exit(true);
  if (!plan_.ok()) {
    // A spec that cannot run is an error at once, never a supervisor waiting for ever.
    ctx.emit(kSpecError, {{keys::kReason, Atom(to_string(plan_.error))}, {keys::kMessage, plan_.message}});
    return InitResult::stop(plan_.error);
  }
  for (Service& s : services_) {
    // Per service, derived by name: one service's retries never shift another's jitter.
    s.rng = ctx.rng().derive(s.spec.name);
    s.want_up = s.spec.auto_start;
    touched(static_cast<std::size_t>(&s - services_.data()));
    // The seed's [*] -> Inactive: registered, not started.
    ctx.emit(events::kServiceState, {{keys::kId, Atom(s.spec.name)}, {keys::kFrom, Atom("none")},
                             {keys::kTo, Atom(to_string(ServiceState::inactive))},
                             {keys::kStart, std::int64_t{0}}, {keys::kAttempt, std::int64_t{0}}});
  }
  reconcile(ctx);
  return InitResult::ok();
}

void LifecycleSupervisor::transition(Context& ctx, std::size_t i, ServiceState to, const Reason* reason) {
  Service& s = services_[i];
  assert(allowed_transition(s.state, to));
  std::vector<TraceField> fields{{keys::kId, Atom(s.spec.name)},
                                 {keys::kFrom, Atom(to_string(s.state))},
                                 {keys::kTo, Atom(to_string(to))},
                                 {keys::kStart, static_cast<std::int64_t>(s.starts)},
                                 {keys::kAttempt, static_cast<std::int64_t>(s.backoff.attempts())}};
  if (s.pid) fields.push_back({keys::kPid, s.pid});
  if (reason != nullptr) fields.push_back({keys::kReason, Atom(to_string(*reason))});
  disarm(ctx, i);
  ++s.epoch;
  busy_ -= in_flux(s.state) ? 1 : 0;
  busy_ += in_flux(to) ? 1 : 0;
  s.state = to;
  s.waiting_reported = false;
  if (!active(to)) set_pid(i, Pid{});
  state_changed(i);
  ctx.emit(events::kServiceState, std::move(fields));
}

void LifecycleSupervisor::renew(Context& ctx, std::size_t i) {
  // A Stopped service's life has ended; start_service registers it again ([*] -> Inactive) with
  // a fresh attempt counter.
  Service& s = services_[i];
  s.backoff = Backoff(s.spec.restart, s.spec.stable_threshold);
  s.state = ServiceState::inactive;
  ++s.epoch;
  state_changed(i);
  ctx.emit(events::kServiceState, {{keys::kId, Atom(s.spec.name)}, {keys::kFrom, Atom("none")},
                           {keys::kTo, Atom(to_string(ServiceState::inactive))},
                           {keys::kStart, static_cast<std::int64_t>(s.starts)},
                           {keys::kAttempt, std::int64_t{0}}});
}

void LifecycleSupervisor::arm(Context& ctx, std::size_t i, Duration delay, Atom tag) {
  Service& s = services_[i];
  s.timer = ctx.send_after(delay, ctx.self(), tag, TimerMsg{i, s.epoch});
}

void LifecycleSupervisor::disarm(Context& ctx, std::size_t i) {
  Service& s = services_[i];
  if (s.timer) ctx.cancel_timer(s.timer);
  s.timer = Ref{};
}

void LifecycleSupervisor::begin_start(Context& ctx, std::size_t i) {
  Service& s = services_[i];
  ++s.starts;
  s.retry = Retry::none;
  SpawnOptions o;
  o.link = true;
  o.label = Label{Atom(std::string(ctx.label().name.text()) + "/" + s.spec.name), s.starts};
  if (s.spec.start.behaviour) {
    o.ack_init = true;  // Starting until init acknowledges: the ack arrives as a message
    set_pid(i, ctx.spawn(s.spec.start.behaviour(), o));
    transition(ctx, i, ServiceState::starting, nullptr);
    arm(ctx, i, s.spec.start_timeout, kStartTimeout);
  } else {
    set_pid(i, ctx.spawn(s.spec.start.body, o));  // a free-form process has no init to wait for
    transition(ctx, i, ServiceState::starting, nullptr);
    transition(ctx, i, ServiceState::running, nullptr);
    s.backoff.started(ctx.now());
  }
}

void LifecycleSupervisor::begin_stop(Context& ctx, std::size_t i) {
  Service& s = services_[i];
  transition(ctx, i, ServiceState::stopping, nullptr);
  ctx.exit(s.pid, Reason::shutdown());
  arm(ctx, i, s.spec.stop_timeout, kStopTimeout);
}

void LifecycleSupervisor::kill(Context& ctx, std::size_t i, Atom why) {
  const Service& s = services_[i];
  ctx.emit(kServiceKill, {{keys::kId, Atom(s.spec.name)}, {keys::kPid, s.pid}, {keys::kReason, why}});
  ctx.exit(s.pid, Reason::kill());
}

void LifecycleSupervisor::fail(Context& ctx, std::size_t i, const Reason& reason, bool terminal) {
  Service& s = services_[i];
  // Decide first: the Failed event carries the attempt count the decision made.
  std::optional<Duration> delay;
  const char* gave_up = nullptr;
  if (!s.want_up) {
    // Failed while being stopped: nothing to retry, nothing given up.
  } else if (terminal || s.spec.terminal.matches(reason)) {
    gave_up = "terminal_error";
  } else {
    delay = s.backoff.failed(ctx.now(), s.rng);
    if (!delay) gave_up = "max_attempts";
  }
  transition(ctx, i, ServiceState::failed, &reason);
  const std::int64_t attempt = s.backoff.attempts();
  if (delay) {
    s.retry = Retry::pending;
    touched(i);
    arm(ctx, i, *delay, kRetryTimer);
    ctx.emit(kServiceRetry, {{keys::kId, Atom(s.spec.name)}, {keys::kAttempt, attempt}, {keys::kDelay, *delay}});
  } else if (gave_up != nullptr) {
    ctx.emit(kServiceGaveUp, {{keys::kId, Atom(s.spec.name)}, {keys::kWhy, Atom(gave_up)}, {keys::kAttempt, attempt}});
  }
}

bool LifecycleSupervisor::dependencies_running(std::size_t i, std::size_t& missing) const {
  for (std::size_t d : plan_.depends_on[i]) {
    if (services_[d].state != ServiceState::running) {
      missing = d;
      return false;
    }
  }
  return true;
}

bool LifecycleSupervisor::dependents_active(std::size_t i) const {
  for (std::size_t d : plan_.dependents[i]) {
    if (active(services_[d].state)) return true;
  }
  return false;
}

// Moves every service one step toward its target. Stops go first and dependents first (the
// reverse of the start levels): a service starts stopping once none of its dependents is
// Starting, Running or Stopping. Starts go dependencies first: a service starts once every one
// of its own dependencies is Running. So services of a level start at the same instant when
// their dependencies are ready together, and a slow or failing service holds back only what
// depends on it, not the whole next level.
void LifecycleSupervisor::reconcile(Context& ctx) {
  std::size_t key = 0;
  while (stops_.next(key)) stop_step(ctx, at_rank_[services_.size() - 1 - key]);
  stops_.finish();
  while (starts_.next(key)) start_step(ctx, at_rank_[key]);
  starts_.finish();
}

void LifecycleSupervisor::stop_step(Context& ctx, std::size_t i) {
  Service& s = services_[i];
  if (s.want_up) return;
  if (s.state == ServiceState::running && !dependents_active(i)) {
    begin_stop(ctx, i);
  } else if (s.state == ServiceState::failed && s.retry != Retry::none) {
    // Failed -> Stopped is no transition of the seed's: it stays Failed, without a retry.
    disarm(ctx, i);
    s.retry = Retry::none;
    touched(i);
    ctx.emit(kRetryCancelled, {{keys::kId, Atom(s.spec.name)}});
  }
  // Starting: its start resolves first (Running, then stopped here; or Failed, no retry).
}

void LifecycleSupervisor::start_step(Context& ctx, std::size_t i) {
  Service& s = services_[i];
  if (!s.want_up) return;
  if (s.state == ServiceState::stopped) renew(ctx, i);
  const bool ready = s.state == ServiceState::inactive ||
                     (s.state == ServiceState::failed && s.retry == Retry::due);
  if (!ready) return;
  std::size_t missing = kNone;
  if (dependencies_running(i, missing)) {
    begin_start(ctx, i);
  } else if (!s.waiting_reported) {
    s.waiting_reported = true;
    ctx.emit(kServiceWaiting, {{keys::kId, Atom(s.spec.name)}, {keys::kOn, Atom(services_[missing].spec.name)}});
  }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

std::size_t LifecycleSupervisor::find(const std::string& name) const {
  for (std::size_t i = 0; i < services_.size(); ++i) {
    if (services_[i].spec.name == name) return i;
  }
  return kNone;
}

std::size_t LifecycleSupervisor::find(Pid pid) const {
  // Only a current process matches: an EXIT or ack from a process already given up on (killed
  // at its start timeout, or ended after a failed init) finds nothing.
  const auto it = by_pid_.find(pid);
  return it == by_pid_.end() ? kNone : it->second;
}

void LifecycleSupervisor::dispatch(Context& ctx, const Message& m) {
  if (m.kind == MsgKind::exit) {
    const std::size_t i = find(m.from);
    if (i == kNone) return;
    if (services_[i].state == ServiceState::stopping) {
      transition(ctx, i, ServiceState::stopped, &m.reason);
    } else {
      fail(ctx, i, m.reason, false);  // a crash while Running, or a death before init's ack
    }
  } else if (m.kind == MsgKind::plain && m.tag == kInitAck) {
    const std::size_t i = find(m.from);
    const int* status = m.get<int>();
    if (i == kNone || status == nullptr || services_[i].state != ServiceState::starting) return;
    switch (static_cast<InitResult::Status>(*status)) {
      case InitResult::Status::ok:
        transition(ctx, i, ServiceState::running, nullptr);
        services_[i].backoff.started(ctx.now());
        break;
      case InitResult::Status::ignore:
        fail(ctx, i, m.reason, true);
        break;
      case InitResult::Status::stop:
        fail(ctx, i, m.reason, false);
        break;
    }
  } else if (m.kind == MsgKind::plain &&
             (m.tag == kStartTimeout || m.tag == kStopTimeout || m.tag == kRetryTimer)) {
    const TimerMsg* t = m.get<TimerMsg>();
    if (t == nullptr || t->service >= services_.size()) return;
    const std::size_t i = t->service;
    Service& s = services_[i];
    if (t->epoch != s.epoch) return;  // stale: the state it was armed for is gone
    s.timer = Ref{};
    if (m.tag == kStartTimeout && s.state == ServiceState::starting) {
      kill(ctx, i, Atom("start_timeout"));  // its EXIT then comes from a pid no longer the service's
      fail(ctx, i, Reason::other(Atom("start_timeout")), false);
    } else if (m.tag == kStopTimeout && s.state == ServiceState::stopping) {
      kill(ctx, i, Atom("stop_timeout"));  // Stopping ends with its EXIT (killed)
    } else if (m.tag == kRetryTimer && s.state == ServiceState::failed && s.retry == Retry::pending) {
      s.retry = Retry::due;  // starts in reconcile, once its dependencies are Running
      touched(i);
    }
  } else {
    return;
  }
  reconcile(ctx);
}

void LifecycleSupervisor::handle_info(Context& ctx, const Message& m) {
  if (m.tag == kSystemStop) {
    const Reason* why = m.get<Reason>();
    ctx.stop(why != nullptr ? *why : Reason::normal());
    return;
  }
  dispatch(ctx, m);
}

void LifecycleSupervisor::terminate(Context& ctx, const Reason&) {
  // The ordered stop, blocking: the supervisor ends only when every service has. Calls wait in
  // the mailbox; their callers see the supervisor's DOWN.
  for (std::size_t i = 0; i < services_.size(); ++i) {
    services_[i].want_up = false;
    touched(i);
  }
  reconcile(ctx);
  while (busy_ != 0) {
    MessagePtr m = ctx.receive([](const Message& x) {
      return x.kind == MsgKind::exit ||
             (x.kind == MsgKind::plain && (x.tag == kInitAck || x.tag == kStartTimeout ||
                                           x.tag == kStopTimeout || x.tag == kRetryTimer));
    });
    dispatch(ctx, *m);
  }
}

ServiceReply LifecycleSupervisor::manage(Context& ctx, const Message& m) {
  ServiceReply r;
  if (m.tag == kWhichServices) {
    r.ok = true;
    r.services = services();
    return r;
  }
  const std::string* name = m.get<std::string>();
  if (name == nullptr || (m.tag != kStartService && m.tag != kStopService)) {
    r.error = Reason::other(Atom("badarg"));
    return r;
  }
  const std::size_t i = find(*name);
  if (i == kNone) {
    r.error = Reason::other(Atom("not_found"));
    return r;
  }
  if (m.tag == kStartService) {
    const ServiceState st = services_[i].state;
    if (services_[i].want_up && (st == ServiceState::starting || st == ServiceState::running)) {
      r.error = Reason::other(Atom("already_started"));
      return r;
    }
    // The service and what it needs. An operator's start overrides the backoff: a Failed one
    // (waiting for a retry, or given up) starts again now with a fresh attempt counter.
    for (std::size_t j : closure(plan_.depends_on, i)) {
      Service& s = services_[j];
      s.want_up = true;
      touched(j);
      if (s.state == ServiceState::failed) {
        disarm(ctx, j);
        s.backoff = Backoff(s.spec.restart, s.spec.stable_threshold);
        s.retry = Retry::due;
      }
    }
  } else {
    for (std::size_t j : closure(plan_.dependents, i)) {
      services_[j].want_up = false;
      touched(j);
    }
  }
  reconcile(ctx);
  r.ok = true;
  r.services = {services()[i]};
  return r;
}

CallReply LifecycleSupervisor::handle_call(Context& ctx, const Message& m, From) {
  ServiceReply r = manage(ctx, m);
  ctx.emit(kManagement, {{keys::kCall, m.tag}, {keys::kResult, r.ok ? Atom("ok") : Atom(to_string(r.error))}});
  return CallReply::reply(m.tag, std::move(r));
}

std::vector<LifecycleSnapshot> lifecycle_snapshot(const Simulation& sim) {
  std::vector<LifecycleSnapshot> out;
  for (Pid pid : sim.processes()) {
    const auto* sup = dynamic_cast<const LifecycleSupervisor*>(sim.behaviour_of(pid));
    if (sup == nullptr) continue;
    out.push_back({pid, std::string(sim.info(pid)->label.name.text()), sup->services()});
  }
  return out;
}

namespace {
ServiceReply call(Context& ctx, Pid sup, Atom tag, Payload payload) {
  return call_reply<ServiceReply>(ctx, sup, tag, std::move(payload));
}
}  // namespace

ServiceReply start_service(Context& ctx, Pid sup, const std::string& name) {
  return call(ctx, sup, kStartService, name);
}
ServiceReply stop_service(Context& ctx, Pid sup, const std::string& name) {
  return call(ctx, sup, kStopService, name);
}
std::vector<ServiceInfo> which_services(Context& ctx, Pid sup) {
  return call(ctx, sup, kWhichServices, 0).services;
}

}  // namespace lic::supervision
