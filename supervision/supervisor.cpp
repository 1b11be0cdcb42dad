#include "sim/trace_keys.hpp"
#include "supervision/supervisor.hpp"

#include <algorithm>

#include "supervision/call_reply.hpp"

#include "supervision/restart_strategy.hpp"
#include "supervision/events.hpp"

namespace lic::supervision {
namespace {


bool is_exit_from(const Message& m, Pid pid) { return m.kind == MsgKind::exit && m.from == pid; }

}  // namespace

const Atom kTryAgain("try_again_restart");
const Atom kSystemStop("$system_stop");

Supervisor::Supervisor(SupervisorSpec spec)
    : Supervisor(std::make_shared<const SupervisorSpec>(std::move(spec))) {}

namespace {
// The first child (in start order) whose id an earlier child has: index n when none. Sorting
// indices by (id, index) puts each id's occurrences together in start order, so the second
// of each group is a duplicate and the smallest of those is the first; n log n, where checking
// every pair took hours for a million children.
std::size_t first_duplicate(const std::vector<Child>& children) {
  const std::size_t n = children.size();
  std::vector<std::uint32_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::uint32_t>(i);
  std::sort(order.begin(), order.end(), [&children](std::uint32_t a, std::uint32_t b) {
    const int c = children[a].spec.id.compare(children[b].spec.id);
    return c != 0 ? c < 0 : a < b;
  });
  std::size_t first = n;
  for (std::size_t k = 1; k < n; ++k) {
    if (children[order[k]].spec.id == children[order[k - 1]].spec.id) first = std::min<std::size_t>(first, order[k]);
  }
  return first;
}
}  // namespace

Supervisor::Supervisor(std::shared_ptr<const SupervisorSpec> spec)
    : flags_(spec->flags),
      inits_(spec->inits),
      report_start_(spec->report_start),
      intensity_(spec->flags.intensity, spec->flags.period, spec->flags.window) {
  // OTP's check_startspec: ids unique; significant only with auto_shutdown and not permanent;
  // simple_one_for_one has one template spec (none: Elixir's DynamicSupervisor).
  const std::vector<Child>& children = spec->children;
  const std::size_t duplicate = first_duplicate(children);
  for (std::size_t i = 0; i < children.size() && spec_error_.empty(); ++i) {
    const ChildSpec& c = children[i].spec;
    if (i == duplicate) spec_error_ = "{duplicate_child_name," + c.id + "}";
    if (c.significant && flags_.auto_shutdown == AutoShutdown::never) {
      spec_error_ = "{bad_combination,[{auto_shutdown,never},{significant,true}]}";
    } else if (c.significant && c.restart == RestartType::permanent) {
      spec_error_ = "{bad_combination,[{restart,permanent},{significant,true}]}";
    }
  }
  if (dynamic()) {
    if (children.size() > 1) spec_error_ = "bad_start_spec";  // init stops {bad_start_spec, ...}
    if (children.size() == 1) template_ = std::shared_ptr<const Child>(spec, &children.front());
    return;
  }
  slots_.reserve(children.size());
  // Each slot points into the shared spec (the aliasing constructor: no copy, no allocation).
  for (const Child& c : children) add_slot(std::shared_ptr<const Child>(spec, &c));
}

std::size_t Supervisor::add_slot(std::shared_ptr<const Child> child) {
  Slot s;
  s.child = std::move(child);
  s.key = next_key_++;
  slots_.push_back(std::move(s));
  return slots_.size() - 1;
}

void Supervisor::remove(std::size_t i) {
  if (slots_[i].removed) return;
  slots_[i].removed = true;
  ++removed_;
}

Child Supervisor::child(std::string id, SupervisorSpec spec, RestartType restart) {
  Child c;
  c.spec.id = std::move(id);
  c.spec.restart = restart;
  c.spec.type = ChildType::supervisor;
  c.spec.shutdown = Shutdown::infinity();
  auto shared = std::make_shared<const SupervisorSpec>(std::move(spec));
  c.start.behaviour = [shared] { return std::make_unique<Supervisor>(shared); };
  return c;
}

std::string Supervisor::path_of(const Context& ctx, std::size_t i) const {
  std::string path = std::string(ctx.label().name.text()) + "/" + slots_[i].child->spec.id;
  // A dynamic child's path names it among its siblings (which share the spec id).
  if (dynamic()) path += "." + std::to_string(slots_[i].key);
  return path;
}

// g++ 12 warns a false -Wmaybe-uninitialized inside std::variant's move constructor (the string
// alternative) when this vector grows; nothing here is uninitialised.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
void Supervisor::report(Context& ctx, Atom what, std::size_t i, const Reason* reason) {
  std::vector<TraceField> fields{{keys::kId, Atom(slots_[i].child->spec.id)}};
  if (slots_[i].pid) fields.push_back({keys::kPid, slots_[i].pid});
  if (reason != nullptr) fields.push_back({keys::kReason, Atom(to_string(*reason))});
  ctx.emit(what, std::move(fields));
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

Supervisor::Started Supervisor::start(Context& ctx, std::size_t i, Reason& error) {
  Slot& s = slots_[i];
  ++s.starts;
  SpawnOptions o;
  o.link = true;
  o.label = Label{Atom(path_of(ctx, i)), s.starts};
  o.node = s.child->spec.node;
  o.mailbox_max = s.child->spec.mailbox_max;
  o.mailbox_block = s.child->spec.mailbox_block;
  Pid pid;
  if (s.child->start.behaviour) {
    o.ack_init = true;
    pid = ctx.spawn(s.child->start.behaviour(), o);
    // Like proc_lib:start_link: wait for init's acknowledgement, or the child's death before it.
    MessagePtr m = ctx.receive([pid](const Message& x) {
      return (x.tag == kInitAck && x.from == pid) || is_exit_from(x, pid);
    });
    if (m->kind == MsgKind::exit) {
      error = m->reason;
      return Started::error;
    }
    const auto status = static_cast<InitResult::Status>(*m->get<int>());
    if (status == InitResult::Status::ignore) {
      // OTP reports nothing here; the trace records it so every start attempt has a result.
      ctx.emit(Atom("start_ignored"), {{keys::kId, Atom(s.child->spec.id)}, {keys::kStart, static_cast<std::int64_t>(s.starts)}});
      return Started::ignore;
    }
    if (status == InitResult::Status::stop) {
      error = m->reason;
      return Started::error;
    }
  } else {
    pid = ctx.spawn(s.child->start.body, o);
  }
  s.pid = pid;
  s.last = pid;
  s.restarting = false;
  // Not even built when nothing is traced: the id's atom would stay interned for the whole
  // OS process, ~50 bytes a child of a wide supervisor.
  if (ctx.simulation().trace().enabled()) {
    ctx.emit(events::kChildStarted, {{keys::kId, Atom(s.child->spec.id)},
                                      {keys::kPid, pid},
                                      {keys::kStart, static_cast<std::int64_t>(s.starts)}});
  }
  return Started::ok;
}

InitResult Supervisor::init(Context& ctx) {
  const InitResult r = init_tree(ctx);
  if (report_start_) {
    // What supervisor:start_link returns to the root's starter: {ok, Pid}, ignore or {error, R}.
    const std::string self = std::string(ctx.label().name.text()) + "#" + std::to_string(ctx.label().instance);
    const std::string value = r.status == InitResult::Status::ok       ? "{ok," + self + "}"
                              : r.status == InitResult::Status::ignore ? std::string("ignore")
                                                                       : "{error," + to_string(r.reason) + "}";
    const char* result = r.status == InitResult::Status::ok ? "ok" : r.status == InitResult::Status::ignore ? "ignore" : "error";
    ctx.emit(events::kRootStart, {{keys::kResult, Atom(result)}, {events::kValue, Atom(value)}});
  }
  return r;
}

InitResult Supervisor::init_tree(Context& ctx) {
  ctx.trap_exit(true);
  // OTP's supervisor:init/1: trap exits, then the module's init/1, then the flags and the
  // child specs are checked and the children start.
  if (!inits_.empty()) {
    const std::size_t k = std::max<std::size_t>(ctx.label().instance, 1);
    const InitResult own = inits_[std::min(k, inits_.size()) - 1];
    if (own.status != InitResult::Status::ok) return own;
  }
  if (spec_error_ == "bad_start_spec") return InitResult::stop(Reason::other(Atom("{bad_start_spec,[...]}")));
  if (!spec_error_.empty()) return InitResult::stop(Reason::other(Atom("{start_spec," + spec_error_ + "}")));
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    Reason error;
    switch (start(ctx, i, error)) {
      case Started::ok:
        break;
      case Started::ignore:
        // OTP keeps a non-temporary child's spec with pid undefined, and drops a temporary one.
        if (slots_[i].child->spec.restart == RestartType::temporary) remove(i);
        break;
      case Started::error: {
        report(ctx, events::kStartError, i, &error);
        shut_down_all(ctx);  // those already started, in reverse order; no later ones start
        return InitResult::stop(Reason::shutdown(Atom("{failed_to_start_child," +
                                                      slots_[i].child->spec.id + "," +
                                                      to_string(error) + "}")));
      }
    }
  }
  compact();
  return InitResult::ok();
}

namespace {
// OTP's shutdown/1: fine is `killed` after brutal_kill, `shutdown` otherwise, and for a
// non-permanent child also `normal`, `shutdown` or {shutdown, _} (it may have been on its way out
// anyway).
bool shutdown_fine(const ChildSpec& spec, const Reason& got) {
  if (spec.restart != RestartType::permanent && got.is_clean()) return true;
  return got == (spec.shutdown.kind == Shutdown::Kind::brutal_kill ? Reason::killed() : Reason::shutdown());
}
}  // namespace

void Supervisor::shut_down(Context& ctx, std::size_t i) {
  Slot& s = slots_[i];
  s.restarting = false;
  if (!s.pid) return;
  const Pid pid = s.pid;
  const Shutdown how = s.child->spec.shutdown;
  // OTP's monitor_child: monitor, unlink, and if the child already died (its EXIT is in the
  // mailbox) its shutdown reports that reason.
  const Ref ref = ctx.monitor(pid);
  ctx.unlink(pid);
  auto down = [ref](const Message& m) { return m.kind == MsgKind::down && m.ref == ref; };
  Reason got;
  if (MessagePtr early = ctx.receive([pid](const Message& m) { return is_exit_from(m, pid); },
                                     Duration::zero())) {
    ctx.receive(down);
    got = early->reason;
  } else if (how.kind == Shutdown::Kind::brutal_kill) {
    ctx.exit(pid, Reason::kill());
    got = ctx.receive(down)->reason;
  } else {
    ctx.exit(pid, Reason::shutdown());
    MessagePtr m = ctx.receive(down, how.kind == Shutdown::Kind::infinity ? Duration::max() : how.timeout);
    if (!m) {
      ctx.exit(pid, Reason::kill());  // the timeout ran out
      m = ctx.receive(down);
    }
    got = m->reason;
  }
  if (!shutdown_fine(s.child->spec, got)) report(ctx, events::kShutdownError, i, &got);
  s.pid = Pid{};
}

// OTP's terminate_dynamic_children: every child is asked at once (shutdown, or kill for
// brutal_kill), then the supervisor waits for them all; whoever is still alive when its timeout
// runs out is killed. With one template the timeouts are the same: one timer, as in OTP.
void Supervisor::shut_down_dynamic(Context& ctx) {
  struct Waiting {
    std::size_t i;
    Ref ref;
    Time deadline;  // Time::max(): infinity, or already killed
  };
  std::vector<Waiting> waiting;
  // OTP 25 (terminate_dynamic_children) logs one shutdown_error per distinct reason, once the
  // whole parallel shutdown is over, in term order: the first child that ended so stands for all.
  std::vector<std::pair<std::string, std::size_t>> errors;
  std::vector<Pid> error_pids;
  auto finish = [&](std::size_t i, const Reason& got) {
    const std::string why = to_string(got);
    const bool known = std::any_of(errors.begin(), errors.end(), [&why](const auto& e) { return e.first == why; });
    if (!shutdown_fine(slots_[i].child->spec, got) && !known) {
      errors.emplace_back(why, error_pids.size());
      error_pids.push_back(slots_[i].pid);
    }
    slots_[i].pid = Pid{};
    remove(i);
  };
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    s.restarting = false;
    if (!s.pid || s.removed) continue;
    const Pid pid = s.pid;
    const Ref ref = ctx.monitor(pid);
    ctx.unlink(pid);
    if (MessagePtr early = ctx.receive([pid](const Message& m) { return is_exit_from(m, pid); },
                                       Duration::zero())) {
      ctx.receive([ref](const Message& m) { return m.kind == MsgKind::down && m.ref == ref; });
      finish(i, early->reason);
      continue;
    }
    const Shutdown how = s.child->spec.shutdown;
    const bool brutal = how.kind == Shutdown::Kind::brutal_kill;
    ctx.exit(pid, brutal ? Reason::kill() : Reason::shutdown());
    waiting.push_back({i, ref, how.kind == Shutdown::Kind::timeout ? ctx.now() + how.timeout : Time::max()});
  }
  while (!waiting.empty()) {
    Time next = Time::max();
    for (const Waiting& w : waiting) next = std::min(next, w.deadline);
    MessagePtr m = ctx.receive(
        [&waiting](const Message& x) {
          if (x.kind != MsgKind::down) return false;
          for (const Waiting& w : waiting) {
            if (w.ref == x.ref) return true;
          }
          return false;
        },
        next == Time::max() ? Duration::max() : next - ctx.now());
    if (!m) {  // a timeout ran out: kill those whose time is up
      for (Waiting& w : waiting) {
        if (w.deadline <= ctx.now()) {
          ctx.exit(slots_[w.i].pid, Reason::kill());
          w.deadline = Time::max();
        }
      }
      continue;
    }
    for (std::size_t k = 0; k < waiting.size(); ++k) {
      if (waiting[k].ref != m->ref) continue;
      finish(waiting[k].i, m->reason);
      waiting.erase(waiting.begin() + static_cast<std::ptrdiff_t>(k));
      break;
    }
  }
  // Erlang's term order for the reasons we have: atoms before tuples, then by text.
  std::sort(errors.begin(), errors.end(), [](const auto& a, const auto& b) {
    const bool ta = !a.first.empty() && a.first.front() == '{';
    const bool tb = !b.first.empty() && b.first.front() == '{';
    return ta != tb ? tb : a.first < b.first;
  });
  const std::string id = template_ ? template_->spec.id : std::string("undefined");
  for (const auto& [why, k] : errors) {
    ctx.emit(events::kShutdownError, {{keys::kId, Atom(id)}, {keys::kPid, error_pids[k]}, {keys::kReason, Atom(why)}});
  }
}

void Supervisor::shut_down_all(Context& ctx) {
  if (dynamic()) {
    shut_down_dynamic(ctx);
    return;
  }
  for (std::size_t i = slots_.size(); i-- > 0;) {
    if (!slots_[i].removed) shut_down(ctx, i);
  }
}

void Supervisor::give_up(Context& ctx) {
  shut_down_all(ctx);
  ctx.stop(Reason::shutdown());
}

bool Supervisor::restart(Context& ctx, std::size_t failed) {
  // OTP's add_restart comes first: the restart that would exceed the intensity is not made.
  if (!intensity_.add(ctx.now())) {
    report(ctx, events::kReachedMax, failed, nullptr);
    // OTP's del_child: the failed child ends for good (a temporary one is dropped).
    slots_[failed].pid = Pid{};
    slots_[failed].restarting = false;
    if (dynamic() || slots_[failed].child->spec.restart == RestartType::temporary) {
      remove(failed);
    }
    return false;
  }
  // The plan works on the children still present, in start order. A one_for_one or dynamic
  // child restarts alone: its plan needs no other child (no pass over a wide supervisor's
  // million slots for each restart).
  std::vector<std::size_t> index;
  std::vector<ChildState> states;
  std::size_t failed_pos = 0;
  const bool alone = dynamic() || flags_.strategy == Strategy::one_for_one;
  for (std::size_t i = alone ? failed : 0; i < (alone ? failed + 1 : slots_.size()); ++i) {
    if (slots_[i].removed) continue;
    if (i == failed) failed_pos = index.size();
    index.push_back(i);
    states.push_back({slots_[i].child->spec.restart, static_cast<bool>(slots_[i].pid)});
  }
  const RestartPlan plan = plan_restart(flags_.strategy, states, failed_pos);
  for (std::size_t p : plan.terminate) shut_down(ctx, index[p]);
  for (std::size_t p : plan.remove) remove(index[p]);
  for (std::size_t p : plan.restart) slots_[index[p]].restarting = false;
  for (std::size_t p : plan.restart) {
    const std::size_t i = index[p];
    Reason error;
    const Started r = start(ctx, i, error);
    if (r == Started::ignore &&
        (dynamic() || slots_[i].child->spec.restart == RestartType::temporary)) {
      // A dynamic child whose restart returns ignore is dropped: OTP 25 kept it with pid
      // undefined and crashed at shutdown (erlang/otp#8215); later releases drop it.
      remove(i);
    } else if (r == Started::error) {
      // OTP: report, mark the child `restarting`, and cast try_again_restart to itself, so
      // other messages (a shutdown, a management call) are handled before the retry. The retry
      // counts as a restart. one_for_all retries the whole group, rest_for_one this child and
      // those after it, one_for_one this child.
      report(ctx, events::kStartError, i, &error);
      slots_[i].restarting = true;
      ctx.send(ctx.self(), kTryAgain, slots_[i].key);
      break;
    }
  }
  return true;
}

void Supervisor::try_again(Context& ctx, std::uint32_t key) {
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].key != key || slots_[i].removed) continue;
    // Only while still waiting: a terminate_child in between cancels the retry.
    if (slots_[i].restarting && !restart(ctx, i)) give_up(ctx);
    return;
  }
}

bool Supervisor::auto_shutdown_due(const Slot& ended) const {
  if (flags_.auto_shutdown == AutoShutdown::never || !ended.child->spec.significant) return false;
  if (flags_.auto_shutdown == AutoShutdown::any_significant) return true;
  // all_significant: no other significant child still has a process (or a pending restart).
  for (const Slot& s : slots_) {
    if (&s == &ended || s.removed) continue;
    if (dynamic() ? true : (s.child->spec.significant && (s.pid || s.restarting))) return false;
  }
  return true;
}

void Supervisor::child_exited(Context& ctx, std::size_t i, const Reason& reason) {
  Slot& s = slots_[i];
  const RestartType type = s.child->spec.restart;
  // OTP reports a permanent child's end whatever the reason, others only when abnormal.
  if (type == RestartType::permanent || !reason.is_clean()) report(ctx, events::kChildTerminated, i, &reason);
  s.pid = Pid{};
  if (!restart_wanted(type, reason)) {
    // OTP's del_child: a temporary (or any dynamic) child is dropped, a transient one keeps its
    // spec with pid undefined. Only a child that is not restarted can trigger auto_shutdown.
    if (type == RestartType::temporary || dynamic()) remove(i);
    if (auto_shutdown_due(s)) {
      ctx.emit(events::kAutoShutdown, {{keys::kId, Atom(s.child->spec.id)}});
      give_up(ctx);
    }
    return;
  }
  if (!restart(ctx, i)) give_up(ctx);
}

void Supervisor::compact() {
  if (removed_ == 0) return;
  removed_ = 0;
  std::erase_if(slots_, [](const Slot& s) { return s.removed; });
}

void Supervisor::handle_info(Context& ctx, const Message& m) {
  if (m.tag == kSystemStop) {
    const Reason* why = m.get<Reason>();
    ctx.stop(why != nullptr ? *why : Reason::normal());
  } else if (m.tag == kTryAgain && m.from == ctx.self()) {
    if (const auto* key = m.get<std::uint32_t>()) try_again(ctx, *key);
  } else if (m.kind == MsgKind::exit) {
    // A child has a live pid: an EXIT from anything else (the world's Pid{} included) is not a
    // child's, and OTP ignores it (e.g. an ignored start's normal exit).
    const std::size_t i = find_pid(m.from);
    if (i != slots_.size()) child_exited(ctx, i, m.reason);
  } else {
    // OTP logs "Supervisor received unexpected message"; the trace keeps it.
    ctx.emit(Atom("unexpected_message"), {{keys::kTag, m.tag}, {keys::kPid, m.from}});
  }
  compact();
}

void Supervisor::terminate(Context& ctx, const Reason&) { shut_down_all(ctx); }

std::size_t Supervisor::find_pid(Pid pid) const {
  std::size_t i = 0;
  while (i < slots_.size() && !(slots_[i].pid && slots_[i].pid == pid && !slots_[i].removed)) ++i;
  return i;
}

std::size_t Supervisor::find(const std::string& id) const {
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (!slots_[i].removed && slots_[i].child->spec.id == id) return i;
  }
  return slots_.size();
}

namespace {
const Atom kStartChild("start_child");
const Atom kTerminateChild("terminate_child");
const Atom kRestartChild("restart_child");
const Atom kDeleteChild("delete_child");
const Atom kWhichChildren("which_children");
const Atom kCountChildren("count_children");
const Atom kManagement("management");

ManagementReply failure(const char* why) {
  ManagementReply r;
  r.error = Reason::other(Atom(why));
  return r;
}
}  // namespace

CallReply Supervisor::handle_call(Context& ctx, const Message& m, From) {
  ManagementReply r;
  if (m.tag == kWhichChildren || m.tag == kCountChildren) {
    r.children = children();
    r.counts = counts();
    r.ok = true;
  } else {
    r = dynamic() ? manage_dynamic(ctx, m) : manage(ctx, m);
  }
  ctx.emit(kManagement, {{keys::kCall, m.tag}, {keys::kResult, r.ok ? Atom("ok") : Atom(to_string(r.error))}});
  compact();
  return CallReply::reply(m.tag, std::move(r));
}

std::vector<ChildInfo> Supervisor::children() const {
  std::vector<ChildInfo> out;
  auto row = [&out](const Slot& s) {
    if (!s.removed) {
      out.push_back({s.child->spec.id, s.pid, s.restarting, s.child->spec.type, s.child->spec.restart});
    }
  };
  if (dynamic()) {
    // By pid, oldest first, as OTP 25 lists a dynamic supervisor's children (its map of pids):
    // a restarted child has a new, higher pid and moves after the others. A child waiting for a
    // restart retry stands at its last pid.
    std::vector<const Slot*> by_pid;
    for (const Slot& s : slots_) by_pid.push_back(&s);
    std::stable_sort(by_pid.begin(), by_pid.end(), [](const Slot* a, const Slot* b) {
      return (a->pid ? a->pid : a->last) < (b->pid ? b->pid : b->last);
    });
    for (const Slot* s : by_pid) row(*s);
  } else {
    // Newest first: start_child appends to the start order, which_children lists it first.
    for (std::size_t i = slots_.size(); i-- > 0;) row(slots_[i]);
  }
  return out;
}

ChildCounts Supervisor::counts() const {
  ChildCounts c;
  for (const Slot& s : slots_) {
    if (s.removed) continue;
    ++c.specs;
    if (s.pid) ++c.active;
    ++(s.child->spec.type == ChildType::supervisor ? c.supervisors : c.workers);
  }
  // simple_one_for_one counts its one spec (OTP); without a template (DynamicSupervisor) every
  // child is a spec of its own.
  if (dynamic() && template_) c.specs = 1;
  return c;
}

std::vector<SupervisorSnapshot> snapshot(const Simulation& sim) {
  std::vector<SupervisorSnapshot> out;
  for (Pid pid : sim.processes()) {
    const auto* sup = dynamic_cast<const Supervisor*>(sim.behaviour_of(pid));
    if (sup == nullptr) continue;
    out.push_back({pid, std::string(sim.info(pid)->label.name.text()), sup->flags().strategy,
                   sup->children(), sup->counts()});
  }
  return out;
}

ManagementReply Supervisor::start_new(Context& ctx, std::shared_ptr<const Child> child) {
  ManagementReply r;
  const RestartType type = child->spec.restart;
  const std::size_t i = add_slot(std::move(child));
  Reason error;
  switch (start(ctx, i, error)) {
    case Started::ok:
      r.ok = true;
      r.pid = slots_[i].pid;
      break;
    case Started::ignore:  // ok with pid undefined; only a static non-temporary spec is kept
      if (dynamic() || type == RestartType::temporary) remove(i);
      r.ok = true;
      break;
    case Started::error:  // no retry; the spec is not added
      remove(i);
      r.error = error;
      // OTP wraps a static start_child's failure with the child: {error, {Reason, Child}}.
      if (!dynamic()) r.failed_child = slots_[i].child->spec.id;
      break;
  }
  return r;
}

ManagementReply Supervisor::manage(Context& ctx, const Message& m) {
  ManagementReply r;
  if (m.tag == kStartChild) {
    const Child* c = m.get<Child>();
    if (c == nullptr) return failure("badarg");
    if (c->spec.significant && (flags_.auto_shutdown == AutoShutdown::never ||
                                c->spec.restart == RestartType::permanent)) {
      return failure("bad_combination");
    }
    const std::size_t existing = find(c->spec.id);
    if (existing != slots_.size()) {
      if (slots_[existing].pid) {
        r.pid = slots_[existing].pid;
        r.error = Reason::other(Atom("already_started"));
        return r;
      }
      return failure("already_present");
    }
    return start_new(ctx, std::make_shared<const Child>(*c));
  }
  const std::string* id = m.get<std::string>();
  if (id == nullptr) return failure(m.get<Pid>() != nullptr ? "not_found" : "badarg");
  const std::size_t i = find(*id);
  if (i == slots_.size()) return failure("not_found");
  Slot& s = slots_[i];
  if (m.tag == kTerminateChild) {
    shut_down(ctx, i);  // also cancels a pending retry
    if (s.child->spec.restart == RestartType::temporary) remove(i);
    r.ok = true;
  } else if (m.tag == kRestartChild || m.tag == kDeleteChild) {
    if (s.restarting) return failure("restarting");
    if (s.pid) return failure("running");
    if (m.tag == kDeleteChild) {
      remove(i);
      r.ok = true;
      return r;
    }
    Reason error;
    const Started st = start(ctx, i, error);
    r.ok = st != Started::error;  // a failure is returned, not retried; the child stays undefined
    r.pid = s.pid;
    if (!r.ok) r.error = error;
  } else {
    return failure("unknown_call");
  }
  return r;
}

// simple_one_for_one / DynamicSupervisor: children by pid, started from the template with an
// argument or from their own spec; restart_child and delete_child do not apply.
ManagementReply Supervisor::manage_dynamic(Context& ctx, const Message& m) {
  ManagementReply r;
  if (m.tag == kStartChild) {
    const std::size_t live = slots_.size() - removed_;
    if (flags_.max_children && live >= *flags_.max_children) return failure("max_children");
    if (const Child* c = m.get<Child>()) {
      if (template_) return failure("badarg");  // OTP's simple_one_for_one takes arguments
      return start_new(ctx, std::make_shared<const Child>(*c));
    }
    const DynamicArg* a = m.get<DynamicArg>();
    if (a == nullptr || !template_) return failure("badarg");
    if (!template_->start.behaviour_with_arg) return start_new(ctx, template_);  // shares the template
    auto c = std::make_shared<Child>();
    c->spec = template_->spec;
    c->start.behaviour = [f = template_->start.behaviour_with_arg, arg = a->arg] { return f(arg); };
    return start_new(ctx, std::move(c));
  }
  if (m.tag == kRestartChild || m.tag == kDeleteChild) return failure("simple_one_for_one");
  if (m.tag == kTerminateChild) {
    const Pid* pid = m.get<Pid>();
    if (pid == nullptr) return failure("simple_one_for_one");  // OTP: an id is not accepted
    // OTP's find_child: the pid, or a child restarting since that pid ended; a pid that is no
    // child and no longer alive is fine (already gone).
    std::size_t i = find_pid(*pid);
    for (std::size_t k = 0; i == slots_.size() && k < slots_.size(); ++k) {
      if (slots_[k].restarting && slots_[k].last == *pid && !slots_[k].removed) i = k;
    }
    if (i == slots_.size()) {
      if (ctx.alive(*pid)) return failure("not_found");
      r.ok = true;
      return r;
    }
    shut_down(ctx, i);
    remove(i);
    r.ok = true;
    return r;
  }
  return failure("unknown_call");
}

namespace {
ManagementReply call(Context& ctx, Pid sup, Atom tag, Payload payload) {
  return call_reply<ManagementReply>(ctx, sup, tag, std::move(payload));
}
}  // namespace

ManagementReply start_child(Context& ctx, Pid sup, Child child) {
  return call(ctx, sup, kStartChild, std::move(child));
}
ManagementReply start_child(Context& ctx, Pid sup, DynamicArg arg) {
  return call(ctx, sup, kStartChild, std::move(arg));
}
ManagementReply terminate_child(Context& ctx, Pid sup, const std::string& id) {
  return call(ctx, sup, kTerminateChild, id);
}
ManagementReply terminate_child(Context& ctx, Pid sup, Pid child) {
  return call(ctx, sup, kTerminateChild, child);
}
ManagementReply restart_child(Context& ctx, Pid sup, const std::string& id) {
  return call(ctx, sup, kRestartChild, id);
}
ManagementReply delete_child(Context& ctx, Pid sup, const std::string& id) {
  return call(ctx, sup, kDeleteChild, id);
}
std::vector<ChildInfo> which_children(Context& ctx, Pid sup) {
  return call(ctx, sup, kWhichChildren, 0).children;
}
ChildCounts count_children(Context& ctx, Pid sup) { return call(ctx, sup, kCountChildren, 0).counts; }

}  // namespace lic::supervision
