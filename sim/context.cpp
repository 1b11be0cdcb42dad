// Context: the process-side API. Each call checks that the process is still alive first (a
// killed process unwinds at its next kernel call), then asks the kernel.

#include <algorithm>
#include <stdexcept>

#include "sim/kernel.hpp"
#include "sim/trace_keys.hpp"

namespace lic {

namespace {
auto& kernel(Simulation& s) { return Kernel::of(s); }

MessagePtr build(MsgKind kind, Atom tag, Payload&& payload, Ref ref = {}) {
  MessagePtr m = make_message();
  m->kind = kind;
  m->tag = tag;
  m->ref = ref;
  m->payload = std::move(payload);
  return m;
}
}  // namespace

Pid Context::self() const { return self_->pid; }
Time Context::now() const { return kernel(*sim_).nodes[self_->node_ix].local(sim_->now()); }
Atom Context::node() const { return self_->node; }
Time Context::node_time() const { return now() + kernel(*sim_).nodes[self_->node_ix].skew; }

bool Context::node_up(Atom node) const { return sim_->node_up(node); }
Disk& Context::disk() const { return sim_->disk(node()); }

bool Context::buggify(std::string_view name, std::optional<Ratio> fire) {
  // Its stream only when the point can fire: an off point draws nothing, so it is not one a
  // shrunk file would pin.
  const Buggify& b = sim_->buggify();
  const bool draws = b.chaos() && b.enabled(name);
  const Rng root = draws && sim_->streams_watched() ? sim_->stream_root("buggify " + std::string(name)) : sim_->rng();
  if (!sim_->buggify().ask(root, name, fire)) return false;
  emit(fault_events::kBuggify, {{keys::kPoint, std::string(name)}});
  return true;
}
const Label& Context::label() const { return self_->label; }

// Named by the process's label, not its pid: removing a process from a scenario (or adding one)
// never shifts another's draws. Processes that share a label (a helper respawned under the same
// name) take the next stream of that label in the order they first draw; unlabelled ones share
// the empty label that way.
Rng& Context::rng() {
  if (!self_->has_rng) {
    const Label& l = self_->label;
    std::uint32_t& drawn = kernel(*sim_).stream_draws[{l.name.index(), l.instance}];
    const Rng root = sim_->streams_watched() && !l.name.empty() ? sim_->stream_root("process " + std::string(l.name.text()))
                                                                 : sim_->rng();
    self_->rng = root.derive("process").derive(l.name.text()).derive(l.instance).derive(drawn++);
    self_->has_rng = true;
  }
  return self_->rng;
}

void Context::send(Pid to, Atom tag, Payload payload) {
  auto& k = kernel(*sim_);
  k.check(self_);
  k.wait_for_room(self_, to);
  k.send(self_->pid, self_, to, build(MsgKind::plain, tag, std::move(payload)));
}

void Context::send(Atom registered_name, Atom tag, Payload payload) {
  send(whereis(registered_name), tag, std::move(payload));
}

Ref Context::send_after(Duration delay, Pid to, Atom tag, Payload payload) {
  auto& k = kernel(*sim_);
  k.check(self_);
  MessagePtr m = build(MsgKind::plain, tag, std::move(payload));
  m->from = self_->pid;
  m->id = k.next_msg++;
  k.note(EventKind::send, self_, self_->pid, to, {}, m->tag, m->id);
  auto [slot, gen] = k.timers.add(std::move(m), to);
  k.queue.push(sim_->now() + k.nodes[self_->node_ix].to_true(delay < Duration::zero() ? Duration::zero() : delay),
               EventQueue::Item{Simulation::Impl::kTimer, gen, Simulation::Impl::timer_event(slot, to)});
  return Ref{(std::uint64_t{gen} << 32) | slot};
}

bool Context::cancel_timer(Ref timer) {
  auto& k = kernel(*sim_);
  k.check(self_);
  return k.timers.cancel(static_cast<std::uint32_t>(timer.id & 0xffffffffU),
                         static_cast<std::uint32_t>(timer.id >> 32));
}

MessagePtr Context::receive(Match match, Duration timeout) {
  return kernel(*sim_).wait(self_, match, timeout);
}

MessagePtr Context::receive(Duration timeout) {
  return receive([](const Message&) { return true; }, timeout);
}

void Context::sleep(Duration d) {
  kernel(*sim_).wait(self_, [](const Message&) { return false; }, d);
}

std::size_t Context::mailbox_size() const { return self_->mbox_size; }

SpawnResult Context::spawn_ex(Body body, SpawnOptions opts) {
  auto& k = kernel(*sim_);
  k.check(self_);
  SpawnResult r = k.spawn(self_, nullptr, std::make_unique<Body>(std::move(body)), opts);
  k.check(self_);
  return r;
}

SpawnResult Context::spawn_ex(std::unique_ptr<Behaviour> behaviour, SpawnOptions opts) {
  auto& k = kernel(*sim_);
  k.check(self_);
  SpawnResult r = k.spawn(self_, std::move(behaviour), nullptr, opts);
  k.check(self_);
  return r;
}

Pid Context::spawn(Body body, SpawnOptions opts) { return spawn_ex(std::move(body), opts).pid; }

Pid Context::spawn_link(Body body, SpawnOptions opts) {
  opts.link = true;
  return spawn_ex(std::move(body), opts).pid;
}

Pid Context::spawn(std::unique_ptr<Behaviour> behaviour, SpawnOptions opts) {
  return spawn_ex(std::move(behaviour), opts).pid;
}

void Context::link(Pid other) {
  auto& k = kernel(*sim_);
  k.check(self_);
  k.link(self_, other);
  k.check(self_);  // linking to a dead process may have ended this one (noproc)
}

void Context::unlink(Pid other) {
  auto& k = kernel(*sim_);
  k.check(self_);
  k.unlink(self_, other);
}

Ref Context::monitor(Pid other) {
  auto& k = kernel(*sim_);
  k.check(self_);
  return k.monitor(self_, other);
}

void Context::demonitor(Ref ref, bool flush) {
  auto& k = kernel(*sim_);
  k.check(self_);
  k.demonitor(self_, ref, flush);
}

void Context::raw_network(bool on) {
  kernel(*sim_).check(self_);
  self_->raw_net = on;
}

void Context::trap_exit(bool on) {
  auto& k = kernel(*sim_);
  k.check(self_);
  if (self_->trap_exit == on) return;
  self_->trap_exit = on;
  k.note(EventKind::trap_exit, self_, self_->pid, {}, {}, {}, on ? 1 : 0);
}

bool Context::trapping_exits() const { return self_->trap_exit; }

void Context::exit(Pid target, Reason reason) {
  auto& k = kernel(*sim_);
  k.check(self_);
  Process* t = k.find(target);
  if (t != nullptr && !t->dead && t->node_ix != self_->node_ix) {
    // exit/2 to another node crosses the network; it is lost (and traced so) if the two nodes
    // are out of contact.
    if (k.reach(self_->node_ix, t->node_ix)) {
      t = k.find(target);  // (a connection set up may have ended it)
      if (t != nullptr && !t->dead) k.net_exit(self_->pid, self_, t, reason, false);
    } else {
      k.note(EventKind::exit_signal, nullptr, t->pid, self_->pid, reason, Atom("lost"));
    }
    return;
  }
  k.exit_signal(self_->pid, self_, t, reason, false);
  k.check(self_);
}

void Context::exit(Reason reason) {
  kernel(*sim_).check(self_);
  throw ProcessExit{reason, true};
}

bool Context::alive(Pid p) const { return sim_->alive(p); }

void Context::register_name(Atom name) {
  auto& k = kernel(*sim_);
  k.check(self_);
  if (!self_->registered.empty() || k.registry.count(name.index()) != 0) {
    // OTP raises badarg: the name is taken or this process already has one.
    throw std::invalid_argument("register_name: name taken or process already registered");
  }
  k.registry.emplace(name.index(), self_->pid);
  self_->registered = name;
  k.note(EventKind::register_name, self_, self_->pid, {}, {}, name);
}

void Context::unregister_name(Atom name) {
  auto& k = kernel(*sim_);
  k.check(self_);
  auto it = k.registry.find(name.index());
  if (it == k.registry.end()) return;
  if (Process* owner = k.find(it->second)) owner->registered = Atom();
  k.note(EventKind::unregister_name, self_, it->second, {}, {}, name);
  k.registry.erase(it);
}

Pid Context::whereis(Atom name) const { return sim_->whereis(name); }

bool Context::register_global(Atom name, Pid pid) {
  auto& k = kernel(*sim_);
  k.check(self_);
  k.require_global("register_global");
  const std::uint64_t id = k.global_start(self_, std::string(name.text()), pid, true);
  while (k.gresults.count(id) == 0) k.park(self_, Duration::max());
  const bool yes = k.gresults.at(id);
  k.gresults.erase(id);
  return yes;
}

void Context::unregister_global(Atom name) {
  auto& k = kernel(*sim_);
  k.check(self_);
  k.require_global("unregister_global");
  if (!whereis_global(name)) return;  // (OTP's unregister_name looks first, too)
  const std::uint64_t id = k.global_start(self_, std::string(name.text()), Pid{}, false);
  while (k.gresults.count(id) == 0) k.park(self_, Duration::max());
  k.gresults.erase(id);
}

Pid Context::whereis_global(Atom name) const { return sim_->whereis_global(node(), name); }

bool Context::send_global(Atom name, Atom tag, Payload payload) {
  const Pid to = whereis_global(name);
  if (!to) return false;
  send(to, tag, std::move(payload));
  return true;
}

Atom Context::node_of(Pid p) const {
  const Process* q = kernel(*sim_).find(p);
  return q != nullptr ? q->node : Atom();
}

CallResult Context::call(Atom name, Atom tag, Payload payload, Duration timeout) {
  const Pid to = whereis(name);
  if (!to) {
    kernel(*sim_).check(self_);
    emit(process_events::kCallNoproc, {{keys::kName, name}, {keys::kTag, tag}});
    CallResult r;
    r.status = CallResult::Status::down;
    r.reason = Reason::noproc();
    return r;
  }
  return call(to, tag, std::move(payload), timeout);
}

CallResult Context::call(Pid to, Atom tag, Payload payload, Duration timeout) {
  auto& k = kernel(*sim_);
  k.check(self_);
  CallResult result;
  if (to == self_->pid) {
    result.status = CallResult::Status::down;
    result.reason = Reason::other(Atom("calling_self"));
    return result;
  }
  k.wait_for_room(self_, to);
  const Ref mref = k.monitor(self_, to);
  k.send(self_->pid, self_, to, build(MsgKind::call, tag, std::move(payload), mref));
  MessagePtr m = k.wait(
      self_,
      [mref](const Message& x) {
        return (x.kind == MsgKind::reply || x.kind == MsgKind::down) && x.ref == mref;
      },
      timeout);
  if (!m) {
    // The monitor stays until a late reply or the callee's DOWN arrives; either is dropped on
    // arrival and ends the entry, so the list holds only calls whose callee may still answer.
    self_->abandoned_calls.push_back(mref);
    result.status = CallResult::Status::timeout;
    result.reason = Reason::other(Atom("timeout"));
  } else if (m->kind == MsgKind::down) {
    result.status = CallResult::Status::down;
    result.reason = m->reason;
  } else {
    k.demonitor(self_, mref, true);
    result.reply = std::move(m);
  }
  return result;
}

void Context::cast(Pid to, Atom tag, Payload payload) {
  auto& k = kernel(*sim_);
  k.check(self_);
  k.wait_for_room(self_, to);
  k.send(self_->pid, self_, to, build(MsgKind::cast, tag, std::move(payload)));
}

void Context::reply(From from, Atom tag, Payload payload) {
  auto& k = kernel(*sim_);
  k.check(self_);
  k.send(self_->pid, self_, from.pid, build(MsgKind::reply, tag, std::move(payload), from.ref));
}

void Context::stop(Reason reason) {
  self_->stop_requested = true;
  self_->stop_reason = reason;
}

void Context::emit(Atom name, std::vector<TraceField> fields) {
  if (!sim_->trace().enabled()) return;
  if (auto& k = kernel(*sim_); k.pending_budget) [[unlikely]] k.stop_for_budget();
  TraceEvent e;
  e.time = sim_->now();
  e.kind = EventKind::system;
  e.node = self_->node;
  e.pid = self_->pid;
  e.label = self_->label;
  e.name = name;
  sim_->trace().append(e, std::move(fields));
}

}  // namespace lic
