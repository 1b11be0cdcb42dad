#include "supervision/supervisor.hpp"

#include "supervision/restart_strategy.hpp"

namespace lic::supervision {
namespace {

const Atom kId("id");
const Atom kPid("pid");
const Atom kStart("start");
const Atom kReasonKey("reason");

bool is_exit_from(const Message& m, Pid pid) { return m.kind == MsgKind::exit && m.from == pid; }

}  // namespace

Supervisor::Supervisor(SupervisorSpec spec)
    : flags_(spec.flags), intensity_(spec.flags.intensity, spec.flags.period, spec.flags.window) {
  for (Child& c : spec.children) slots_.push_back(Slot{std::move(c), {}, 0, false});
}

Child Supervisor::child(std::string id, SupervisorSpec spec, RestartType restart) {
  Child c;
  c.spec.id = std::move(id);
  c.spec.restart = restart;
  c.spec.type = ChildType::supervisor;
  c.spec.shutdown = Shutdown::infinity();
  auto shared = std::make_shared<SupervisorSpec>(std::move(spec));
  c.start.behaviour = [shared] { return std::make_unique<Supervisor>(*shared); };
  return c;
}

std::string Supervisor::path_of(const Context& ctx, std::size_t i) const {
  return std::string(ctx.label().name.text()) + "/" + slots_[i].child.spec.id;
}

// g++ 12 warns a false -Wmaybe-uninitialized inside std::variant's move constructor (the string
// alternative) when this vector grows; nothing here is uninitialised.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
void Supervisor::report(Context& ctx, const char* what, std::size_t i, const Reason* reason) {
  std::vector<TraceField> fields{{kId, Atom(slots_[i].child.spec.id)}};
  if (slots_[i].pid) fields.push_back({kPid, slots_[i].pid});
  if (reason != nullptr) fields.push_back({kReasonKey, Atom(to_string(*reason))});
  ctx.emit(Atom(what), std::move(fields));
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
  Pid pid;
  if (s.child.start.behaviour) {
    o.ack_init = true;
    pid = ctx.spawn(s.child.start.behaviour(), o);
    // Like proc_lib:start_link: wait for init's acknowledgement, or the child's death before it.
    MessagePtr m = ctx.receive([pid](const Message& x) {
      return (x.tag == kInitAck && x.from == pid) || is_exit_from(x, pid);
    });
    if (m->kind == MsgKind::exit) {
      error = m->reason;
      return Started::error;
    }
    const auto status = static_cast<InitResult::Status>(*m->get<int>());
    if (status == InitResult::Status::ignore) return Started::ignore;
    if (status == InitResult::Status::stop) {
      error = m->reason;
      return Started::error;
    }
  } else {
    pid = ctx.spawn(s.child.start.body, o);
  }
  s.pid = pid;
  ctx.emit(Atom("child_started"), {{kId, Atom(s.child.spec.id)},
                                    {kPid, pid},
                                    {kStart, static_cast<std::int64_t>(s.starts)}});
  return Started::ok;
}

InitResult Supervisor::init(Context& ctx) {
  ctx.trap_exit(true);
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    Reason error;
    switch (start(ctx, i, error)) {
      case Started::ok:
        break;
      case Started::ignore:
        // OTP keeps a non-temporary child's spec with pid undefined, and drops a temporary one.
        if (slots_[i].child.spec.restart == RestartType::temporary) slots_[i].removed = true;
        break;
      case Started::error: {
        report(ctx, "start_error", i, &error);
        shut_down_all(ctx);  // those already started, in reverse order; no later ones start
        return InitResult::stop(Reason::shutdown(Atom("{failed_to_start_child," +
                                                      slots_[i].child.spec.id + "," +
                                                      to_string(error) + "}")));
      }
    }
  }
  return InitResult::ok();
}

void Supervisor::shut_down(Context& ctx, std::size_t i) {
  Slot& s = slots_[i];
  if (!s.pid) return;
  const Pid pid = s.pid;
  const Shutdown how = s.child.spec.shutdown;
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
  // OTP's shutdown/1: fine is `killed` after brutal_kill, `shutdown` otherwise, and for a
  // non-permanent child also `normal` or `shutdown` (it may have been on its way out anyway).
  const Reason expected = how.kind == Shutdown::Kind::brutal_kill ? Reason::killed() : Reason::shutdown();
  const bool fine = got == expected ||
                    (s.child.spec.restart != RestartType::permanent &&
                     (got == Reason::normal() || got == Reason::shutdown()));
  if (!fine) report(ctx, "shutdown_error", i, &got);
  s.pid = Pid{};
}

void Supervisor::shut_down_all(Context& ctx) {
  for (std::size_t i = slots_.size(); i-- > 0;) {
    if (!slots_[i].removed) shut_down(ctx, i);
  }
}

bool Supervisor::restart(Context& ctx, std::size_t failed) {
  for (;;) {
    if (!intensity_.add(ctx.now())) {
      report(ctx, "reached_max_restart_intensity", failed, nullptr);
      return false;
    }
    // The plan works on the children still present, in start order.
    std::vector<std::size_t> index;
    std::vector<ChildState> states;
    std::size_t failed_pos = 0;
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].removed) continue;
      if (i == failed) failed_pos = index.size();
      index.push_back(i);
      states.push_back({slots_[i].child.spec.restart, static_cast<bool>(slots_[i].pid)});
    }
    const RestartPlan plan = plan_restart(flags_.strategy, states, failed_pos);
    for (std::size_t p : plan.terminate) shut_down(ctx, index[p]);
    for (std::size_t p : plan.remove) slots_[index[p]].removed = true;
    bool retry = false;
    for (std::size_t p : plan.restart) {
      const std::size_t i = index[p];
      Reason error;
      const Started r = start(ctx, i, error);
      if (r == Started::ignore && slots_[i].child.spec.restart == RestartType::temporary) {
        slots_[i].removed = true;
      } else if (r == Started::error) {
        // OTP retries at once, and the retry counts: one_for_all retries the whole group,
        // rest_for_one this child and those after it.
        report(ctx, "start_error", i, &error);
        failed = i;
        retry = true;
        break;
      }
    }
    if (!retry) return true;
  }
}

void Supervisor::handle_info(Context& ctx, const Message& m) {
  if (m.kind != MsgKind::exit) return;
  std::size_t i = 0;
  // A child has a live pid: an EXIT from anything else (the world's Pid{} included) is not a
  // child's, and OTP ignores it.
  while (i < slots_.size() && !(slots_[i].pid && slots_[i].pid == m.from && !slots_[i].removed)) ++i;
  if (i == slots_.size()) return;  // not a child (e.g. an ignored start's normal exit)
  const RestartType type = slots_[i].child.spec.restart;
  // OTP reports a permanent child's end whatever the reason, others only when abnormal.
  if (type == RestartType::permanent || !m.reason.is_clean()) {
    report(ctx, "child_terminated", i, &m.reason);
  }
  slots_[i].pid = Pid{};
  if (!restart_wanted(type, m.reason)) {
    if (type == RestartType::temporary) slots_[i].removed = true;
    return;
  }
  if (!restart(ctx, i)) {
    shut_down_all(ctx);
    ctx.stop(Reason::shutdown());
  }
}

void Supervisor::terminate(Context& ctx, const Reason&) { shut_down_all(ctx); }

std::size_t Supervisor::find(const std::string& id) const {
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (!slots_[i].removed && slots_[i].child.spec.id == id) return i;
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
const Atom kCall("call");
const Atom kResult("result");

ManagementReply failure(const char* why) {
  ManagementReply r;
  r.error = Reason::other(Atom(why));
  return r;
}
}  // namespace

CallReply Supervisor::handle_call(Context& ctx, const Message& m, From) {
  ManagementReply r = manage(ctx, m);
  ctx.emit(kManagement, {{kCall, m.tag}, {kResult, r.ok ? Atom("ok") : Atom(to_string(r.error))}});
  return CallReply::reply(m.tag, std::move(r));
}

std::vector<ChildInfo> Supervisor::children() const {
  // Newest first: start_child appends to the start order, which_children lists it first.
  std::vector<ChildInfo> out;
  for (std::size_t i = slots_.size(); i-- > 0;) {
    const Slot& s = slots_[i];
    if (!s.removed) out.push_back({s.child.spec.id, s.pid, s.child.spec.type, s.child.spec.restart});
  }
  return out;
}

ChildCounts Supervisor::counts() const {
  ChildCounts c;
  for (const Slot& s : slots_) {
    if (s.removed) continue;
    ++c.specs;
    if (s.pid) ++c.active;
    ++(s.child.spec.type == ChildType::supervisor ? c.supervisors : c.workers);
  }
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

ManagementReply Supervisor::manage(Context& ctx, const Message& m) {
  ManagementReply r;
  if (m.tag == kWhichChildren || m.tag == kCountChildren) {
    r.children = children();
    r.counts = counts();
    r.ok = true;
    return r;
  }
  if (m.tag == kStartChild) {
    const Child* c = m.get<Child>();
    if (c == nullptr) return failure("badarg");
    const std::size_t existing = find(c->spec.id);
    if (existing != slots_.size()) {
      if (slots_[existing].pid) {
        r.pid = slots_[existing].pid;
        r.error = Reason::other(Atom("already_started"));
        return r;
      }
      return failure("already_present");
    }
    slots_.push_back(Slot{*c, {}, 0, false});
    const std::size_t i = slots_.size() - 1;
    Reason error;
    switch (start(ctx, i, error)) {
      case Started::ok:
        r.ok = true;
        r.pid = slots_[i].pid;
        return r;
      case Started::ignore:  // ok with pid undefined; a temporary child's spec is not kept
        if (c->spec.restart == RestartType::temporary) slots_[i].removed = true;
        r.ok = true;
        return r;
      case Started::error:  // no retry; the spec is not added
        slots_[i].removed = true;
        r.error = error;
        return r;
    }
  }
  const std::string* id = m.get<std::string>();
  if (id == nullptr) return failure("badarg");
  const std::size_t i = find(*id);
  if (i == slots_.size()) return failure("not_found");
  Slot& s = slots_[i];
  if (m.tag == kTerminateChild) {
    shut_down(ctx, i);
    if (s.child.spec.restart == RestartType::temporary) s.removed = true;
    r.ok = true;
  } else if (m.tag == kRestartChild) {
    if (s.pid) return failure("running");
    Reason error;
    const Started st = start(ctx, i, error);
    r.ok = st != Started::error;  // a failure is returned, not retried; the child stays undefined
    r.pid = s.pid;
    if (!r.ok) r.error = error;
  } else if (m.tag == kDeleteChild) {
    if (s.pid) return failure("running");
    s.removed = true;
    r.ok = true;
  } else {
    return failure("unknown_call");
  }
  return r;
}

namespace {
ManagementReply call(Context& ctx, Pid sup, Atom tag, Payload payload) {
  CallResult c = ctx.call(sup, tag, std::move(payload), Duration::max());
  if (!c.ok()) {
    ManagementReply r;
    r.error = c.reason;
    return r;
  }
  return std::move(*c.reply->payload.get<ManagementReply>());
}
}  // namespace

ManagementReply start_child(Context& ctx, Pid sup, Child child) {
  return call(ctx, sup, kStartChild, std::move(child));
}
ManagementReply terminate_child(Context& ctx, Pid sup, const std::string& id) {
  return call(ctx, sup, kTerminateChild, id);
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
