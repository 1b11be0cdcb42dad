// Spawning, messages, links, monitors, exit signals and termination, with OTP's rules
// (DESIGN.md §2). Deaths are processed from a queue, in the order they happen, so a chain of a
// million links never recurses.

#include <algorithm>
#include <cassert>
#include <iterator>

#include "sim/kernel.hpp"

namespace lic {

namespace {
const Atom kTagExit("EXIT");
const Atom kTagDown("DOWN");
const Atom kIgnored("ignored");
const Atom kTrapped("trapped");
const Atom kDied("died");
const Atom kBehaviour("behaviour");
const Atom kProcess("process");
const Atom kMailboxFull("mailbox_full");
}  // namespace

// ---- trace ---------------------------------------------------------------------------------

void Simulation::Impl::record(EventKind kind, const Process* p, Pid pid, Pid other,
                              Reason reason, Atom tag, std::uint64_t msg) {
  sim.trace_.append_kernel(sim.now_, kind, pid, other, reason, tag, msg,
                           p != nullptr ? p->node : Atom{}, p != nullptr ? p->label : Label{});
}

// ---- timers --------------------------------------------------------------------------------

TimerTable::~TimerTable() {
  for (Slot& s : slots_) {
    if (s.msg != nullptr) MessageDeleter{}(s.msg);
  }
}

std::pair<std::uint32_t, std::uint32_t> TimerTable::add(MessagePtr m, Pid to) {
  std::uint32_t i;
  if (!free_.empty()) {
    i = free_.back();
    free_.pop_back();
  } else {
    i = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  slots_[i].msg = m.release();
  slots_[i].to = to;
  return {i, slots_[i].gen};
}

MessagePtr TimerTable::take(std::uint32_t slot, std::uint32_t gen, Pid& to) {
  if (slot >= slots_.size()) return {};
  Slot& s = slots_[slot];
  if (s.gen != gen || s.msg == nullptr) return {};
  MessagePtr m(s.msg);
  to = s.to;
  s.msg = nullptr;
  ++s.gen;
  free_.push_back(slot);
  return m;
}

bool TimerTable::cancel(std::uint32_t slot, std::uint32_t gen) {
  Pid ignored;
  return static_cast<bool>(take(slot, gen, ignored));
}

// ---- spawning ------------------------------------------------------------------------------

SpawnResult Simulation::Impl::spawn(Process* parent, std::unique_ptr<Behaviour> b,
                                    std::unique_ptr<Body> body, const SpawnOptions& opts) {
  auto* p = ::new (process_memory.allocate()) Process();
  p->pid = Pid{procs.size()};
  procs.push_back(p);
  ++sim.live_processes_;
  p->parent = parent != nullptr ? parent->pid : Pid{};
  p->label = opts.label;
  if (!p->label.name.empty()) labelled.emplace_hint(labelled.end(), p->label.name.index(), p->pid.id);
  p->node_ix = !opts.node.empty() ? node_of(opts.node) : parent != nullptr ? parent->node_ix : 0;
  nodes[p->node_ix].hosted = true;
  p->node = nodes[p->node_ix].name;
  p->trap_exit = opts.trap_exit;
  p->ack_init = opts.ack_init && parent != nullptr;
  p->mailbox_max = opts.mailbox_max;
  p->mailbox_block = opts.mailbox_block;
  p->is_behaviour = b != nullptr;
  p->behaviour = std::move(b);
  p->body = std::move(body);
  p->stack_bytes = opts.stack_bytes != 0 ? opts.stack_bytes : sim.opts_.process_stack_bytes;
  note(EventKind::spawn, p, p->pid, p->parent, {}, p->is_behaviour ? kBehaviour : kProcess,
       opts.trap_exit ? 1 : 0);
  SpawnResult r{p->pid, {}};
  // Spawning onto a node that is down or cut off from the spawner: as in distributed Erlang the
  // spawner gets a pid, the process never runs, and its link or monitor fires noconnection.
  const bool reachable = parent != nullptr ? reach(parent->node_ix, p->node_ix)
                                           : nodes[p->node_ix].up;
  if (!reachable) {
    p->started = true;
    if (parent != nullptr && opts.link) {
      p->links.push_back(parent->pid);
      parent->links.push_back(p->pid);
      note(EventKind::link, parent, parent->pid, p->pid);
    }
    if (parent != nullptr && opts.monitor) {
      r.monitor = Ref{next_ref++};
      note(EventKind::monitor, parent, parent->pid, p->pid, {}, {}, r.monitor.id);
      p->monitored_by.push_back({r.monitor, parent->pid});
      parent->monitoring.push_back({r.monitor, p->pid});
    }
    end_process(p, Reason::noconnection());
    return r;
  }
  if (parent != nullptr && opts.link) {
    // What link() does, without its search of the parent's links: a fresh pid is in none, and
    // the two are connected (checked above). A supervisor of a million children searched its
    // links once for each.
    parent->links.push_back(p->pid);
    p->links.push_back(parent->pid);
    note(EventKind::link, parent, parent->pid, p->pid);
  }
  if (parent != nullptr && opts.monitor) r.monitor = monitor(parent, p->pid);
  if (!start_delays.empty() && !p->label.name.empty()) {
    auto it = start_delays.find(p->label.name.index());
    if (it != start_delays.end()) {
      p->run_pending = true;
      queue.push(sim.now_ + it->second, EventQueue::Item{kRun, 0, p->pid.id});
      start_delays.erase(it);
      return r;
    }
  }
  schedule_run(p);
  return r;
}

// ---- messages ------------------------------------------------------------------------------

void Simulation::Impl::send(Pid from, Process* from_proc, Pid to, MessagePtr m) {
  m->from = from;
  m->id = next_msg++;
  Process* target = find(to);
  if (target == nullptr || target->dead) {
    note(EventKind::drop, from_proc, to, from, Reason::noproc(), m->tag, m->id);
    return;
  }
  if (from_proc != nullptr && from_proc->node_ix != target->node_ix) {
    net_send(from_proc, target, std::move(m));
    return;
  }
  note(EventKind::send, from_proc, from, to, {}, m->tag, m->id);
  enqueue(target, std::move(m));
}

void Simulation::Impl::enqueue(Process* p, MessagePtr m) {
  if ((m->kind == MsgKind::reply || m->kind == MsgKind::down) && !p->abandoned_calls.empty()) {
    auto it = std::find(p->abandoned_calls.begin(), p->abandoned_calls.end(), m->ref);
    if (it != p->abandoned_calls.end()) {
      // A late reply to a call that timed out, or its callee's DOWN: OTP drops the reply (the
      // caller's alias is gone) and the caller never sees the monitor. Either ends the entry.
      p->abandoned_calls.erase(it);
      if (m->kind == MsgKind::reply) demonitor(p, m->ref, false);
      note(EventKind::drop, p, p->pid, m->from, Reason::other(Atom("call_timed_out")), m->tag,
           m->id);
      return;
    }
  }
  if (mailbox_refuses(p, *m)) {
    note(EventKind::drop, p, p->pid, m->from, Reason::other(kMailboxFull), m->tag, m->id);
    return;
  }
  if (counts_toward_bound(*m)) ++p->user_mail;
  Message* raw = m.release();
  raw->next = nullptr;
  if (p->mbox_tail != nullptr) {
    p->mbox_tail->next = raw;
  } else {
    p->mbox_head = raw;
  }
  p->mbox_tail = raw;
  ++p->mbox_size;
  if (p->waiting) {
    if (p->wait_match != nullptr && (*p->wait_match)(*raw)) {
      p->waiting = false;
      ++p->wait_token;  // the pending timeout is now stale
      schedule_run(p);
    }
  } else if (p->is_behaviour && p->fiber == nullptr && current != p) {
    schedule_run(p);
  }
}

MessagePtr Simulation::Impl::take_match(Process* p, const Match& match) {
  Message* prev = nullptr;
  for (Message* m = p->mbox_head; m != nullptr; prev = m, m = m->next) {
    if (!match(*m)) continue;
    if (prev != nullptr) {
      prev->next = m->next;
    } else {
      p->mbox_head = m->next;
    }
    if (p->mbox_tail == m) p->mbox_tail = prev;
    m->next = nullptr;
    --p->mbox_size;
    mailbox_took(p, *m);
    return MessagePtr(m);
  }
  return {};
}

void Simulation::Impl::mailbox_took(Process* p, const Message& m) {
  if (!counts_toward_bound(m)) return;
  --p->user_mail;
  if (!p->mailbox_block) return;  // only a blocking mailbox has senders waiting (wait_for_room)
  while (p->blocked_head < p->blocked_senders.size()) {
    Process* w = find(p->blocked_senders[p->blocked_head++]);
    if (p->blocked_head == p->blocked_senders.size()) {
      p->blocked_senders.clear();
      p->blocked_head = 0;
    } else if (p->blocked_head >= 64 && 2 * p->blocked_head >= p->blocked_senders.size()) {
      // Served half a long queue: drop the served front, so it never grows without bound.
      p->blocked_senders.erase(p->blocked_senders.begin(), p->blocked_senders.begin() + p->blocked_head);
      p->blocked_head = 0;
    }
    if (w != nullptr && !w->dead && w->waiting && w->wait_match == nullptr) {
      unpark(w);
      return;
    }
  }
}

void Simulation::Impl::wait_for_room(Process* sender, Pid to) {
  for (;;) {
    Process* t = find(to);
    if (t == nullptr || t->dead || !t->mailbox_block || t->node_ix != sender->node_ix ||
        t->user_mail < t->mailbox_max)
      return;
    t->blocked_senders.push_back(sender->pid);
    note(EventKind::mailbox_wait, sender, sender->pid, to, {}, {}, t->mbox_size);
    park(sender, Duration::max());
  }
}

void Simulation::Impl::end_task(Process* main, const Reason& reason) {
  if (!nodes[main->node_ix].up) return;
  note(EventKind::task_exit, main, main->pid, {}, reason);
  sim.crash_node(nodes[main->node_ix].name);  // what main leaves behind goes with it
}

// ---- links and monitors --------------------------------------------------------------------

void Simulation::Impl::link(Process* p, Pid other) {
  if (other == p->pid) return;
  Process* o = find(other);
  if (o == nullptr || o->dead) {
    // OTP: linking to a process that does not exist gives the caller an exit signal noproc.
    exit_signal(other, nullptr, p, Reason::noproc(), true);
    return;
  }
  if (std::find(p->links.begin(), p->links.end(), other) != p->links.end()) return;
  if (ticks() && link_pending(p->pid, other)) return;  // still linked as far as p's side knows
  if (!reach(p->node_ix, o->node_ix)) {
    if (ticks()) {
      wait_for_connection(p, other, {});  // linked if the connection comes up, else noconnection
      return;
    }
    exit_signal(other, nullptr, p, Reason::noconnection(), true);
    return;
  }
  // (Setting up a connection may have ended the other: a peer's side that went down fires.)
  o = find(other);
  if (o == nullptr || o->dead) {
    exit_signal(other, nullptr, p, Reason::noproc(), true);
    return;
  }
  p->links.push_back(other);
  o->links.push_back(p->pid);
  note(EventKind::link, p, p->pid, other);
}

void Simulation::Impl::unlink(Process* p, Pid other) {
  // The other end's exit signal may be crossing the network (its end of the link is gone
  // already): after unlink it has no effect, as OTP's unlink/1 guarantees.
  if (!flights.empty()) {
    const Pid self = p->pid;
    cancel_flights([self, other](const Flight& f) {
      return f.to == self && f.from == other && f.msg == nullptr && f.via_link;
    });
  }
  // From the back: a pid is in a link list at most once (link() adds none twice, and both ends
  // go together), so this is the entry a search from the front would find. A supervisor unlinks
  // its children in reverse start order, each the last of its list: a search from the front
  // made a wide supervisor's shutdown quadratic (100k children: 1.6 s).
  if (ticks()) forget_pending(p->pid, other, {});  // (its noconnection still to fire, or waiting)
  auto rit = std::find(p->links.rbegin(), p->links.rend(), other);
  if (rit == p->links.rend()) return;
  p->links.erase(std::next(rit).base());
  if (Process* o = find(other)) erase_pid(o->links, p->pid);
  note(EventKind::unlink, p, p->pid, other);
}

Ref Simulation::Impl::monitor(Process* p, Pid other) {
  const Ref ref{next_ref++};
  note(EventKind::monitor, p, p->pid, other, {}, {}, ref.id);
  Process* o = find(other);
  if (o == nullptr || o->dead) {
    deliver_down(p, other, ref, Reason::noproc());
    return ref;
  }
  if (!reach(p->node_ix, o->node_ix)) {
    if (ticks()) {
      wait_for_connection(p, other, ref);  // monitoring if the connection comes up, else DOWN noconnection
      return ref;
    }
    deliver_down(p, other, ref, Reason::noconnection());
    return ref;
  }
  o = find(other);  // (as in link: a connection set up may have ended it)
  if (o == nullptr || o->dead) {
    deliver_down(p, other, ref, Reason::noproc());
    return ref;
  }
  o->monitored_by.push_back({ref, p->pid});
  p->monitoring.push_back({ref, other});
  return ref;
}

void Simulation::Impl::demonitor(Process* p, Ref ref, bool flush) {
  auto it = std::find_if(p->monitoring.begin(), p->monitoring.end(),
                         [ref](const MonitorEntry& e) { return e.ref == ref; });
  if (it != p->monitoring.end()) {
    const Pid target = it->pid;
    p->monitoring.erase(it);
    if (Process* o = find(target)) erase_ref(o->monitored_by, ref);
    note(EventKind::demonitor, p, p->pid, target, {}, {}, ref.id);
  } else {
    if (ticks()) forget_pending(p->pid, {}, ref);  // (its DOWN still to fire, or waiting)
    // Its DOWN may be crossing the network: demonitor means it never arrives.
    const Pid self = p->pid;
    cancel_flights([self, ref](const Flight& f) {
      return f.to == self && f.msg != nullptr && f.msg->kind == MsgKind::down && f.msg->ref == ref;
    });
  }
  if (flush) {
    take_match(p, [ref](const Message& m) { return m.kind == MsgKind::down && m.ref == ref; });
  }
}

// ---- exit signals and termination ----------------------------------------------------------

void Simulation::Impl::exit_signal(Pid from, Process* from_proc, Process* target, Reason reason,
                                   bool via_link) {
  (void)from_proc;
  if (target == nullptr || target->dead || target->dying) return;
  if (!via_link && reason.kind == ReasonKind::kill) {
    // exit(Pid, kill) cannot be trapped; the target ends `killed`, and that is what links see.
    note(EventKind::exit_signal, target, target->pid, from, reason, kDied);
    end_process(target, Reason::killed());
    return;
  }
  if (target->trap_exit) {
    note(EventKind::exit_signal, target, target->pid, from, reason, kTrapped);
    MessagePtr m = make_message();
    m->kind = MsgKind::exit;
    m->tag = kTagExit;
    m->from = from;
    m->reason = reason;
    m->id = next_msg++;
    enqueue(target, std::move(m));
    return;
  }
  if (reason.kind == ReasonKind::normal && from != target->pid) {
    note(EventKind::exit_signal, target, target->pid, from, reason, kIgnored);
    return;
  }
  note(EventKind::exit_signal, target, target->pid, from, reason, kDied);
  end_process(target, reason);
}

void Simulation::Impl::end_process(Process* p, Reason reason) {
  if (p->dead || p->dying) return;
  p->dying = true;
  deaths.emplace_back(p, reason);
  drain_deaths();
}

void Simulation::Impl::drain_deaths() {
  if (draining) return;
  draining = true;
  while (!deaths.empty()) {
    auto [p, reason] = deaths.front();
    deaths.pop_front();
    finish(p, reason);
  }
  draining = false;
}

void Simulation::Impl::finish(Process* p, const Reason& reason) {
  p->dead = true;
  p->exit_reason = reason;
  p->waiting = false;
  procs[p->pid.id] = nullptr;
  if (!p->label.name.empty()) labelled.erase({p->label.name.index(), p->pid.id});
  --sim.live_processes_;
  if (any_preempt) preempt_rngs.erase(p->pid.id);
  note(EventKind::exit, p, p->pid, {}, reason);
  if (gused) global_exit(p);
  if (!p->registered.empty()) {
    registry.erase(p->registered.index());
    note(EventKind::unregister_name, p, p->pid, {}, {}, p->registered);
  }
  // Messages left in the mailbox are lost with the process: record each, for conservation.
  while (p->mbox_head != nullptr) {
    MessagePtr m(p->mbox_head);
    p->mbox_head = m->next;
    m->next = nullptr;
    note(EventKind::drop, p, p->pid, m->from, reason, m->tag, m->id);
  }
  p->mbox_tail = nullptr;
  p->mbox_size = 0;
  p->user_mail = 0;
  // Senders waiting for room go on (their send finds no process).
  for (std::size_t k = p->blocked_head; k < p->blocked_senders.size(); ++k) {
    if (Process* w = find(p->blocked_senders[k])) unpark(w);
  }
  p->blocked_senders.clear();
  p->blocked_head = 0;
  // Links, in link order: each linked process gets the exit signal (normal included: a trapping
  // process turns it into a message, a non-trapping one ignores it).
  std::vector<Pid> links = std::move(p->links);
  // A process on another node gets the signal across the network, or noconnection at once when
  // the two nodes are not in contact (this node crashed, or the spawn never reached it).
  for (Pid l : links) {
    Process* o = find(l);
    if (o == nullptr) continue;
    erase_pid(o->links, p->pid);
    if (o->node_ix == p->node_ix) {
      exit_signal(p->pid, p, o, reason, true);
    } else if (!connected(p->node_ix, o->node_ix)) {
      exit_signal(p->pid, nullptr, o, Reason::noconnection(), true);
    } else {
      net_exit(p->pid, p, o, reason, true);
    }
  }
  std::vector<MonitorEntry> watchers = std::move(p->monitored_by);
  for (const MonitorEntry& w : watchers) {
    Process* o = find(w.pid);
    if (o == nullptr) continue;
    erase_ref(o->monitoring, w.ref);
    if (o->node_ix == p->node_ix) {
      deliver_down(o, p->pid, w.ref, reason);
    } else if (!connected(p->node_ix, o->node_ix)) {
      deliver_down(o, p->pid, w.ref, Reason::noconnection());
    } else {
      MessagePtr m = make_message();
      m->kind = MsgKind::down;
      m->tag = kTagDown;
      m->from = p->pid;
      m->ref = w.ref;
      m->reason = reason;
      m->id = next_msg++;
      net_send(p, o, std::move(m));
    }
  }
  for (const MonitorEntry& m : p->monitoring) {
    if (Process* o = find(m.pid)) erase_ref(o->monitored_by, m.ref);
  }
  p->monitoring.clear();
  if (p->is_main) end_task(p, reason);
  // Its code may still be on a stack: the running process unwinds when it next asks the kernel;
  // a blocked one is resumed by the loop to unwind. Otherwise the record goes now.
  if (p == current) return;
  if (p->fiber != nullptr) {
    unwind.push_back(p);
    return;
  }
  destroy(p);
}

void Simulation::Impl::dispose(Process* p) {
  assert(p->dead);
  destroy(p);
}

void Simulation::Impl::destroy(Process* p) {
  p->~Process();
  process_memory.deallocate(p);
}

// ---- the world's side of the API -----------------------------------------------------------

Pid Simulation::spawn(Body body, SpawnOptions opts) {
  return impl_->spawn(nullptr, nullptr, std::make_unique<Body>(std::move(body)), opts).pid;
}

Pid Simulation::spawn(std::unique_ptr<Behaviour> behaviour, SpawnOptions opts) {
  return impl_->spawn(nullptr, std::move(behaviour), nullptr, opts).pid;
}

void Simulation::send(Pid to, Atom tag, Payload payload) {
  MessagePtr m = make_message();
  m->tag = tag;
  m->payload = std::move(payload);
  impl_->send(Pid{}, nullptr, to, std::move(m));
}

void Simulation::exit(Pid target, Reason reason) {
  impl_->exit_signal(Pid{}, nullptr, impl_->find(target), reason, false);
}

void Simulation::emit(Atom name, std::vector<TraceField> fields) {
  if (!trace_.enabled()) return;
  TraceEvent e;
  e.time = now_;
  e.kind = EventKind::system;
  e.name = name;
  trace_.append(e, std::move(fields));
}

void Simulation::delay_next_start(Atom label, Duration d) {
  if (d > Duration::zero()) {
    impl_->start_delays[label.index()] = d;
  } else {
    impl_->start_delays.erase(label.index());
  }
}

void Simulation::crash(Pid target, Reason reason) {
  Process* p = impl_->find(target);
  if (p == nullptr || p->dead || p->dying) return;
  impl_->note(EventKind::exit_signal, p, p->pid, Pid{}, reason, Atom("crashed"));
  impl_->end_process(p, reason);
}

std::uint64_t Simulation::schedule(Time at, std::function<void()> fn) {
  if (at < now_) at = now_;
  const std::uint64_t id = impl_->queue.push(at, EventQueue::Item{Impl::kCallback, 0, 0});
  // The callback is keyed by the event's own id so that cancel() can drop both.
  impl_->callbacks.emplace(id, std::move(fn));
  return id;
}

void Simulation::cancel(std::uint64_t id) {
  if (impl_->callbacks.erase(id) > 0) impl_->queue.cancel(id);
}

bool Simulation::alive(Pid p) const { return impl_->find(p) != nullptr; }

Pid Simulation::whereis(Atom name) const {
  auto it = impl_->registry.find(name.index());
  return it == impl_->registry.end() ? Pid{} : it->second;
}

Pid Simulation::whereis_global(Atom node, Atom name) const {
  Impl& k = *impl_;
  k.require_global("whereis_global");
  const std::uint32_t n = k.node_of(node);
  if (n >= k.gnodes.size()) return Pid{};
  const auto& names = k.gnodes[n].names;
  auto it = names.find(name.text());
  return it == names.end() ? Pid{} : it->second.pid;
}

std::optional<ProcessInfo> Simulation::info(Pid pid) const {
  const Process* p = impl_->find(pid);
  if (p == nullptr) return std::nullopt;
  ProcessInfo i;
  i.pid = p->pid;
  i.node = p->node;
  i.label = p->label;
  i.behaviour = p->is_behaviour;
  i.trap_exit = p->trap_exit;
  i.waiting = p->waiting;
  i.raw_network = p->raw_net;
  i.mailbox = p->mbox_size;
  i.links = p->links;
  i.monitors = p->monitoring.size();
  return i;
}

const Behaviour* Simulation::behaviour_of(Pid pid) const {
  const Process* p = impl_->find(pid);
  return p != nullptr ? p->behaviour.get() : nullptr;
}

Pid Simulation::find_labelled(std::string_view path) const {
  if (path.empty()) return Pid{};
  const Atom atom = Atom::find(path);  // a label is an atom already: an unknown path labels nothing
  if (atom.empty()) return Pid{};
  const std::uint32_t name = atom.index();
  const auto it = impl_->labelled.lower_bound({name, 0});
  return it != impl_->labelled.end() && it->first == name ? Pid{it->second} : Pid{};
}

std::vector<Pid> Simulation::processes() const {
  std::vector<Pid> out;
  for (const Process* p : impl_->procs) {
    if (p != nullptr) out.push_back(p->pid);
  }
  return out;
}

}  // namespace lic
