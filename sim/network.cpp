// Nodes and the simulated network (DESIGN.md §2, docs/network.md).
//
// A message or exit signal between processes on different nodes becomes a Flight on the
// Channel of its directed path: it lands after the path's latency, in send order unless the
// path reorders it. Contact between two nodes is lost when either way is blocked or either node
// goes down: then every link and monitor between their processes fires `noconnection` once and
// everything in flight between them is lost (signals in flight become that `noconnection`).
// All iteration that can reach the trace goes in a fixed order: pids, link order, send order.

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <string>
#include <tuple>

#include "sim/kernel.hpp"

namespace lic {

namespace {
const Atom kPartitioned("partitioned");
const Atom kLost("lost");
const Atom kTagDown("DOWN");

Ratio larger(Ratio a, Ratio b) {
  // Cross-multiplied in 128 bits: exact for any Ratio.
  __extension__ using Wide = unsigned __int128;
  return Wide{a.num} * b.den >= Wide{b.num} * a.den ? a : b;
}

/// A message's latency on a path: min plus an exponential with mean (mean - min), so that the
/// path's mean latency is `latency_mean`; with a `latency_max`, uniform over [min, max].
Duration draw_latency(const LinkParams& p, Rng& rng) {
  Duration lat = p.latency_min;
  if (p.latency_max > p.latency_min)  // the uniform model: every nanosecond of [min, max] alike
    return lat + Duration{static_cast<std::int64_t>(rng.uniform(static_cast<std::uint64_t>((p.latency_max - p.latency_min).ns) + 1))};
  if (p.latency_max != Duration::zero()) return lat;  // uniform over one value
  if (p.latency_mean > p.latency_min) lat += rng.exponential(p.latency_mean - p.latency_min);
  return lat;
}

/// What loss, duplication and reordering may touch: the system's own traffic, not the kernel's
/// protocol (a lost `$init_ack` would hang a supervisor, which no Erlang connection can do).
bool droppable(const Message& m) {
  const MsgKind k = m.kind;
  return (k == MsgKind::plain || k == MsgKind::cast || k == MsgKind::call || k == MsgKind::reply) &&
         m.tag != kInitAck;
}
}  // namespace

// ---- nodes and paths -----------------------------------------------------------------------

std::uint32_t Simulation::Impl::node_of(Atom name) {
  auto it = node_index.find(name.index());
  if (it != node_index.end()) return it->second;
  const auto ix = static_cast<std::uint32_t>(nodes.size());
  nodes.push_back(NodeState{});
  nodes.back().name = name;
  node_index.emplace(name.index(), ix);
  return ix;
}

Channel& Simulation::Impl::raw_channel(std::uint32_t from, std::uint32_t to) {
  const std::uint64_t key = (std::uint64_t{1} << 63) | (std::uint64_t{from} << 32) | to;
  auto it = channel_index.find(key);
  if (it != channel_index.end()) return channels[it->second];
  const std::uint32_t base = channel_ix(from, to);
  const auto ix = static_cast<std::uint32_t>(channels.size());
  channel_index.emplace(key, ix);
  Channel& c = channels.emplace_back();
  c.from = from;
  c.to = to;
  c.raw_of = base;
  c.rng = channels[base].rng.derive("raw");
  return c;
}

Channel& Simulation::Impl::channel(std::uint32_t from, std::uint32_t to) {
  const std::uint64_t key = (std::uint64_t{from} << 32) | to;
  auto it = channel_index.find(key);
  if (it != channel_index.end()) return channels[it->second];
  const auto ix = static_cast<std::uint32_t>(channels.size());
  channel_index.emplace(key, ix);
  Channel& c = channels.emplace_back();
  c.from = from;
  c.to = to;
  // Named by the nodes' names, not their indices: a path's draws do not depend on the order
  // nodes were first mentioned in.
  const Rng root = sim.streams_watched()
                       ? sim.stream_root("link " + std::string(nodes[from].name.text()) + " " + std::string(nodes[to].name.text()))
                       : sim.root_rng_;
  c.rng = root.derive("net").derive(nodes[from].name.text()).derive(nodes[to].name.text());
  return c;
}

LinkParams Simulation::Impl::effective(Channel& c) {
  const Channel& own = c.raw_of != UINT32_MAX ? channels[c.raw_of] : c;
  LinkParams p = own.has_params ? own.params : default_link;
  const Atom from = nodes[c.from].name;
  const Atom to = nodes[c.to].name;
  for (const auto& [id, e] : link_effects) {
    if ((!e.from.empty() && e.from != from) || (!e.to.empty() && e.to != to)) continue;
    p.loss = larger(p.loss, e.loss);
    p.duplicate = larger(p.duplicate, e.duplicate);
    p.reorder = larger(p.reorder, e.reorder);
    p.clog += e.clog;
  }
  return p;
}

void Simulation::Impl::note_node(EventKind kind, std::uint32_t node, Atom other, std::uint64_t msg) {
  if (!sim.trace_.enabled()) return;
  TraceEvent e;
  e.time = sim.now_;
  e.kind = kind;
  e.node = nodes[node].name;
  e.tag = other;
  e.msg = msg;
  sim.trace_.append(e);
}

// ---- flights -------------------------------------------------------------------------------

std::uint32_t Simulation::Impl::new_flight(Flight f) {
  std::uint32_t slot;
  if (!free_flights.empty()) {
    slot = free_flights.back();
    free_flights.pop_back();
    f.gen = flights[slot].gen;
    flights[slot] = std::move(f);
  } else {
    slot = static_cast<std::uint32_t>(flights.size());
    flights.push_back(std::move(f));
  }
  flights[slot].live = true;
  flights[slot].order = next_flight_order++;
  return slot;
}

void Simulation::Impl::schedule_flight(std::uint32_t slot) {
  Flight& f = flights[slot];
  queue.push(f.arrival, EventQueue::Item{kNet, f.gen, slot});
}

void Simulation::Impl::net_send(Process* from, Process* to, MessagePtr m) {
  const std::uint32_t a = from->node_ix;
  const std::uint32_t b = to->node_ix;
  if (!nodes[b].up) {
    note(EventKind::drop, from, to->pid, from->pid, Reason::noconnection(), m->tag, m->id);
    return;
  }
  if (!cut_procs.empty() && droppable(*m) && (cut_off(from->pid) || cut_off(to->pid))) {
    note(EventKind::drop, from, to->pid, from->pid, Reason::other(kPartitioned), m->tag, m->id);
    return;
  }
  bool queued = false;  // net ticks: waits for the connection being set up
  // Under net ticks, a message of a process that models its own transport crosses as a packet.
  const bool raw = ticks() && (from->raw_net || to->raw_net) && droppable(*m);
  if (raw) {
    if (path_blocked(a, b)) {
      note(EventKind::drop, from, to->pid, from->pid, Reason::other(kPartitioned), m->tag, m->id);
      return;
    }
  } else if (ticks()) {
    const Pid to_pid = to->pid;
    if (!reach(a, b)) {
      if (!attempting(a, b)) {
        note(EventKind::drop, from, to_pid, from->pid, Reason::noconnection(), m->tag, m->id);
        return;
      }
      queued = true;
    } else {
      // Setting up a connection may have ended the receiver (a peer's side that went down fires).
      to = find(to_pid);
      if (to == nullptr || to->dead) {
        note(EventKind::drop, from, to_pid, from->pid, Reason::noproc(), m->tag, m->id);
        return;
      }
    }
  } else if (path_blocked(a, b)) {
    note(EventKind::drop, from, to->pid, from->pid, Reason::other(kPartitioned), m->tag, m->id);
    return;
  }
  // The trace notes below call sinks, which may name new nodes or paths (growing `channels`):
  // the path is held by index, its draws are all made before the first note.
  const std::uint32_t ci = channel_ix(a, b, raw);
  const LinkParams p = effective(channels[ci]);
  // The draws, always in this order and only for what the path can do to a message: loss,
  // duplication, reordering, then one latency per copy.
  Rng& rng = channels[ci].rng;
  const bool user = droppable(*m);
  bool lost = user && p.loss.num != 0 && rng.chance(p.loss);
  bool doubled = !lost && user && p.duplicate.num != 0 && rng.chance(p.duplicate);
  bool reordered[2] = {false, false};
  Duration latency[2];
  for (int k = 0; k < (doubled ? 2 : 1) && !lost; ++k) {
    reordered[k] = user && p.reorder.num != 0 && rng.chance(p.reorder);
    latency[k] = draw_latency(p, rng);
  }
  if (ticks() && !raw) {
    // Distributed Erlang runs over TCP: within a connection nothing is lost, doubled or
    // reordered. A lost segment is sent again after the retransmission timeout and lands then
    // (what follows it waits behind it); a copy is dropped by the receiver's TCP; order is kept.
    // (The draws are those of instant detection, and nothing more: the stream stays put.)
    if (lost) latency[0] = p.latency_min + rto(channels[ci]);
    lost = false;
    doubled = false;
    reordered[0] = reordered[1] = false;
  }
  if (lost) {
    note(EventKind::drop, from, to->pid, from->pid, Reason::other(kLost), m->tag, m->id);
    return;
  }
  // A DOWN is the kernel's, from a process already gone: only its landing is traced (`down`).
  if (m->kind != MsgKind::down) note(EventKind::send, from, from->pid, to->pid, {}, m->tag, m->id);
  MessagePtr dup;
  if (doubled) dup = copy_message(*m);
  int k = 0;
  for (MessagePtr* copy : {&m, &dup}) {
    const int i = k++;
    if (!*copy) continue;
    Channel& c = channels[ci];
    Flight f;
    f.from = from->pid;
    f.to = to->pid;
    f.fifo = !reordered[i];
    f.channel = ci;
    f.arrival = sim.now_ + latency[i] + p.clog;
    if (f.fifo) {
      f.arrival = std::max(f.arrival, c.last_arrival);
      c.last_arrival = f.arrival;
    }
    f.msg = copy->release();
    const bool held = !raw && ticks_hold(c, b, f, queued);
    const std::uint32_t slot = new_flight(std::move(f));
    if (flights[slot].fifo) c.fifo.push_back(slot);
    if (!held) schedule_flight(slot);
  }
}

bool Simulation::Impl::ticks_hold(Channel& c, std::uint32_t to, Flight& f, bool queued) {
  if (!ticks()) return false;
  if (queued) {
    f.held = f.queued = true;  // released when the connection is up, dropped if it never is
    return true;
  }
  note_send(c);
  if (holding(c, to)) {
    f.held = true;  // waits in TCP: released after the heal, or lost with the connection
    return true;
  }
  if (c.resume != Time::max() && f.arrival < c.resume) {
    f.arrival = c.resume;  // behind what was held
    if (f.fifo) c.last_arrival = std::max(c.last_arrival, f.arrival);
  }
  return false;
}

Flight Simulation::Impl::take_flight(std::uint32_t slot) {
  Flight f = std::move(flights[slot]);
  flights[slot] = Flight{};
  flights[slot].gen = f.gen + 1;  // its pending event is stale now
  free_flights.push_back(slot);
  return f;
}

void Simulation::Impl::cancel_flights(FunctionRef<bool(const Flight&)> which) {
  for (std::uint32_t s = 0; s < flights.size(); ++s) {
    if (!flights[s].live || !which(flights[s])) continue;
    auto& q = channels[flights[s].channel].fifo;
    q.erase(std::remove(q.begin(), q.end(), s), q.end());
    Flight f = take_flight(s);
    if (f.msg != nullptr) MessageDeleter{}(f.msg);
  }
}

void Simulation::Impl::net_exit(Pid from, Process* from_proc, Process* to, Reason reason,
                                bool via_link) {
  const std::uint32_t a = from_proc->node_ix;
  const std::uint32_t b = to->node_ix;
  Channel& c = channel(a, b);
  const LinkParams p = effective(c);
  const Duration lat = draw_latency(p, c.rng);
  Flight f;
  f.from = from;
  f.to = to->pid;
  f.reason = reason;
  f.via_link = via_link;
  f.channel = static_cast<std::uint32_t>(&c - channels.data());
  f.arrival = std::max(sim.now_ + lat + p.clog, c.last_arrival);
  c.last_arrival = f.arrival;
  const bool held = ticks_hold(c, b, f);
  const std::uint32_t slot = new_flight(std::move(f));
  c.fifo.push_back(slot);
  if (!held) schedule_flight(slot);
}

void Simulation::Impl::land(std::uint32_t slot, std::uint32_t gen) {
  if (slot >= flights.size() || !flights[slot].live || flights[slot].gen != gen || flights[slot].held) return;
  const std::uint32_t ch = flights[slot].channel;
  const std::uint32_t dest = channels[ch].to;
  if (paused(dest)) {
    // The node is paused: what arrives waits for it (and keeps its order).
    queue.push(nodes[dest].paused_until, EventQueue::Item{kNet, gen, slot});
    return;
  }
  channels[ch].last_land = sim.now_;  // (net ticks: the receiving side read something)
  if (!flights[slot].fifo) {
    Flight f = take_flight(slot);
    deliver_flight(f);
    return;
  }
  // Deliver, in send order, everything on this path due by now up to this flight: under a
  // random tie-break the same-instant events may come in any order, the path's order holds.
  for (;;) {
    std::deque<std::uint32_t>& q = channels[ch].fifo;
    if (q.empty()) return;
    const std::uint32_t s = q.front();
    if (sim.now_ < flights[s].arrival || flights[s].held) return;
    q.pop_front();
    Flight f = take_flight(s);
    deliver_flight(f);  // may grow `flights` and `channels`: nothing held across it
    if (s == slot) return;
  }
}

void Simulation::Impl::deliver_flight(Flight& f) {
  Process* p = find(f.to);
  if (f.msg == nullptr) {
    exit_signal(f.from, nullptr, p, f.reason, f.via_link);
    return;
  }
  MessagePtr m(f.msg);
  f.msg = nullptr;
  if (p == nullptr || p->dead) {
    if (m->kind != MsgKind::down) {
      note(EventKind::drop, nullptr, f.to, m->from, Reason::noproc(), m->tag, m->id);
    }
    return;
  }
  if (m->kind == MsgKind::down) {
    note(EventKind::down, p, p->pid, m->from, m->reason, {}, m->ref.id);
  } else {
    note(EventKind::deliver, p, f.to, m->from, {}, m->tag, m->id);
  }
  enqueue(p, std::move(m));
}

void Simulation::Impl::deliver_down(Process* watcher, Pid target, Ref ref, const Reason& reason) {
  note(EventKind::down, watcher, watcher->pid, target, reason, {}, ref.id);
  MessagePtr m = make_message();
  m->kind = MsgKind::down;
  m->tag = kTagDown;
  m->from = target;
  m->ref = ref;
  m->reason = reason;
  m->id = next_msg++;
  enqueue(watcher, std::move(m));
}

// ---- losing contact ------------------------------------------------------------------------

void Simulation::Impl::lose_contact(std::uint32_t a, std::uint32_t b) {
  assert(a != b);
  const bool was_draining = draining;
  draining = true;  // every signal first, then the deaths they cause, in order
  std::uint64_t fired = 0;
  const std::uint32_t ab = channel_ix(a, b);
  const std::uint32_t ba = channel_ix(b, a);
  channels[ab].fifo.clear();
  channels[ba].fifo.clear();
  // Nothing sent so far will arrive, so nothing sent later waits behind it: the next message
  // on either path takes its own latency (the FIFO floor would otherwise be a lost message's).
  channels[ab].last_arrival = Time{};
  channels[ba].last_arrival = Time{};

  // 1. What was in flight between them, in send order: messages are lost; exit signals and
  //    DOWNs become the noconnection their receiver would have seen instead.
  std::vector<std::pair<std::uint64_t, std::uint32_t>> lost;
  for (std::uint32_t s = 0; s < flights.size(); ++s) {
    const Flight& f = flights[s];
    if (f.live && (f.channel == ab || f.channel == ba)) lost.emplace_back(f.order, s);
  }
  std::sort(lost.begin(), lost.end());
  std::vector<Flight> taken;
  taken.reserve(lost.size());
  for (const auto& [order, s] : lost) taken.push_back(take_flight(s));

  // 2. Links and monitors between processes on the two nodes, unhooked on both sides first.
  struct Fire {
    Pid from;
    Pid to;
    Ref ref;  // a monitor's, empty for a link
  };
  std::vector<Fire> fires;
  for (Process* p : procs) {
    if (p == nullptr || p->dead || (p->node_ix != a && p->node_ix != b)) continue;
    const std::uint32_t other = p->node_ix == a ? b : a;
    for (std::size_t i = 0; i < p->links.size();) {
      Process* o = find(p->links[i]);
      if (o == nullptr || o->node_ix != other) {
        ++i;
        continue;
      }
      const Pid q = p->links[i];
      p->links.erase(p->links.begin() + static_cast<std::ptrdiff_t>(i));
      auto it = std::find(o->links.begin(), o->links.end(), p->pid);
      if (it != o->links.end()) o->links.erase(it);
      fires.push_back({q, p->pid, {}});
      fires.push_back({p->pid, q, {}});
    }
    for (std::size_t i = 0; i < p->monitoring.size();) {
      const MonitorEntry m = p->monitoring[i];
      Process* o = find(m.pid);
      if (o == nullptr || o->node_ix != other) {
        ++i;
        continue;
      }
      p->monitoring.erase(p->monitoring.begin() + static_cast<std::ptrdiff_t>(i));
      auto it = std::find_if(o->monitored_by.begin(), o->monitored_by.end(),
                             [&](const MonitorEntry& e) { return e.ref == m.ref; });
      if (it != o->monitored_by.end()) o->monitored_by.erase(it);
      fires.push_back({m.pid, p->pid, m.ref});
    }
  }

  for (Flight& f : taken) {
    Process* to = find(f.to);
    if (f.msg != nullptr) {
      MessagePtr m(f.msg);
      f.msg = nullptr;
      if (m->kind == MsgKind::down) {
        if (to != nullptr && !to->dead && !to->dying) {
          deliver_down(to, m->from, m->ref, Reason::noconnection());
          ++fired;
        }
      } else {
        note(EventKind::drop, nullptr, f.to, m->from, Reason::noconnection(), m->tag, m->id);
      }
    } else if (f.via_link) {
      if (to != nullptr && !to->dead && !to->dying) ++fired;
      exit_signal(f.from, nullptr, to, Reason::noconnection(), true);
    } else {
      // exit/2 sent across a connection that broke is lost, as in distributed Erlang.
      note(EventKind::exit_signal, nullptr, f.to, f.from, f.reason, Atom("lost"));
    }
  }
  for (const Fire& x : fires) {
    Process* to = find(x.to);
    if (to == nullptr || to->dead || to->dying) continue;  // (a crashed node's own processes)
    ++fired;
    if (x.ref) {
      deliver_down(to, x.from, x.ref, Reason::noconnection());
    } else {
      exit_signal(x.from, nullptr, to, Reason::noconnection(), true);
    }
  }
  note_node(EventKind::disconnect, a, nodes[b].name, fired);
  draining = was_draining;
  if (!was_draining) drain_deaths();
}

// ---- the world's side: nodes ---------------------------------------------------------------

void Simulation::set_default_link(const LinkParams& p) {
  impl_->default_link = p;
  impl_->note_node(EventKind::link_change, 0, Atom("*"));
}

void Simulation::set_link(Atom from, Atom to, const LinkParams& p) {
  Impl& k = *impl_;
  // Named in a fixed order (argument evaluation order is unspecified and differs between gcc
  // and clang; node numbering reaches the trace).
  const std::uint32_t a = k.node_of(from);
  const std::uint32_t b = k.node_of(to);
  Channel& c = k.channel(a, b);
  c.has_params = true;
  c.params = p;
  k.note_node(EventKind::link_change, c.from, to);
}

LinkParams Simulation::link_params(Atom from, Atom to) {
  const std::uint32_t a = impl_->node_of(from);
  const std::uint32_t b = impl_->node_of(to);
  return impl_->effective(impl_->channel(a, b));
}

std::uint64_t Simulation::add_link_effect(const LinkEffect& e) {
  const std::uint64_t id = impl_->next_effect++;
  impl_->link_effects.emplace(id, e);
  return id;
}

void Simulation::remove_link_effect(std::uint64_t id) { impl_->link_effects.erase(id); }

void Simulation::block(Atom from, Atom to) {
  Impl& k = *impl_;
  const std::uint32_t a = k.node_of(from);
  const std::uint32_t b = k.node_of(to);
  if (a == b || k.path_blocked(a, b)) return;
  const bool was = k.connected(a, b);
  k.blocked_paths.emplace(a, b);
  k.note_node(EventKind::partition, a, to);
  if (k.ticks()) {
    if (k.nodes[a].up && k.nodes[b].up) k.tick_block(a, b);
  } else if (was) {
    k.lose_contact(a, b);
  }
}

void Simulation::unblock(Atom from, Atom to) {
  Impl& k = *impl_;
  const std::uint32_t a = k.node_of(from);
  const std::uint32_t b = k.node_of(to);
  if (k.blocked_paths.erase({a, b}) != 0) {
    k.note_node(EventKind::heal, a, to);
    if (k.ticks()) k.tick_heal(a, b);
  }
}

void Simulation::heal_all() {
  Impl& k = *impl_;
  // In (from, to) index order: the order nodes were first named in this run.
  auto paths = std::move(k.blocked_paths);
  k.blocked_paths.clear();
  for (const auto& [a, b] : paths) k.note_node(EventKind::heal, a, k.nodes[b].name);
  if (k.ticks()) {
    for (const auto& [a, b] : paths) k.tick_heal(a, b);
  }
}

bool Simulation::blocked(Atom from, Atom to) {
  const std::uint32_t a = impl_->node_of(from);
  const std::uint32_t b = impl_->node_of(to);
  return impl_->path_blocked(a, b);
}

bool Simulation::connected(Atom a, Atom b) {
  const std::uint32_t x = impl_->node_of(a);
  const std::uint32_t y = impl_->node_of(b);
  return impl_->connected(x, y);
}

void Simulation::crash_node(Atom node) {
  Impl& k = *impl_;
  const std::uint32_t n = k.node_of(node);
  if (!k.nodes[n].up) return;
  std::vector<std::uint32_t> peers;
  for (std::uint32_t j = 0; j < k.nodes.size(); ++j) {
    if (j != n && k.connected(n, j)) peers.push_back(j);
  }
  k.nodes[n].up = false;
  k.nodes[n].paused_until = now_;
  k.nodes[n].down_since = now_;
  k.note_node(EventKind::node_down, n);
  const bool was_draining = k.draining;
  k.draining = true;
  // Everything on the node dies at this instant, in pid order, with no cleanup...
  for (Process* p : k.procs) {
    if (p == nullptr || p->dead || p->dying || p->node_ix != n) continue;
    p->dying = true;
    k.deaths.emplace_back(p, Reason::killed());
  }
  // ...and every other node sees the connection go: noconnection on links and monitors (under
  // net ticks, each when its side hears of it).
  if (k.ticks()) {
    k.tick_crash(n);
  } else {
    for (std::uint32_t j : peers) k.lose_contact(n, j);
  }
  k.draining = was_draining;
  if (!was_draining) k.drain_deaths();
}

void Simulation::restart_node(Atom node) {
  Impl& k = *impl_;
  const std::uint32_t n = k.node_of(node);
  if (k.nodes[n].up) return;
  k.nodes[n].up = true;
  if (k.ticks()) {
    // A new net_kernel: a new ticker phase from now.
    // (The previous incarnation's ticks stay known: a peer across a cut still counts from them.)
    k.nodes[n].old_tick_base = k.tick_base(n);
    k.nodes[n].old_ticker_set = true;
    ++k.nodes[n].boots;
    k.nodes[n].tick_base = now_;
    k.nodes[n].up_since = now_;
    k.nodes[n].ticker_set = false;
  }
  k.note_node(EventKind::node_up, n);
  if (k.nodes[n].boot) {
    std::function<void()> boot = k.nodes[n].boot;  // boot may replace it
    boot();
  }
}

void Simulation::set_node_boot(Atom node, std::function<void()> boot) {
  impl_->nodes[impl_->node_of(node)].boot = std::move(boot);
}

bool Simulation::node_up(Atom node) { return impl_->nodes[impl_->node_of(node)].up; }

Disk& Simulation::disk(Atom node) { return impl_->nodes[impl_->node_of(node)].disk; }

void Simulation::pause_node(Atom node, Duration d) {
  Impl& k = *impl_;
  const std::uint32_t n = k.node_of(node);
  const Time until = now_ + d;
  if (!k.nodes[n].up || d <= Duration::zero() || until <= k.nodes[n].paused_until) return;
  if (!k.paused(n)) k.nodes[n].pause_start = now_;
  k.nodes[n].paused_until = until;
  if (k.ticks()) k.tick_pause(n);
  ++k.paused_nodes;  // one per pending resume event
  k.note_node(EventKind::node_pause, n, {}, static_cast<std::uint64_t>(until.ns));
  k.queue.push(until, EventQueue::Item{Impl::kResume, 0, n});
}

bool Simulation::node_paused(Atom node) { return impl_->paused(impl_->node_of(node)); }

void Simulation::suspend_process(Pid pid, Duration d) {
  Impl& k = *impl_;
  const Process* p = k.find(pid);
  if (p == nullptr || p->dead || d <= Duration::zero()) return;
  const Time until = now_ + d;
  Time& at = k.suspended[pid.id].until;
  if (until <= at) return;
  at = until;
  k.note(EventKind::process_suspend, p, pid, {}, {}, {}, static_cast<std::uint64_t>(until.ns));
  k.queue.push(until, EventQueue::Item{Impl::kResumeProc, 0, pid.id});
}

void Simulation::resume_process(Pid p) { impl_->resume_suspended(p.id); }

bool Simulation::process_suspended(Pid p) const { return impl_->suspended.count(p.id) != 0; }

void Simulation::cut_process(Pid pid) {
  Impl& k = *impl_;
  const Process* p = k.find(pid);
  if (p == nullptr || p->dead || !k.cut_procs.insert(pid.id).second) return;
  k.note(EventKind::process_cut, p, pid);
}

void Simulation::heal_process(Pid pid) {
  Impl& k = *impl_;
  if (k.cut_procs.erase(pid.id) == 0) return;
  k.note(EventKind::process_heal, k.find(pid), pid);
}

bool Simulation::process_cut(Pid p) const { return impl_->cut_off(p); }

void Simulation::set_clock_skew(Atom node, Duration skew) {
  impl_->nodes[impl_->node_of(node)].skew = skew;
}

void Simulation::set_clock(Atom node, Duration skew, std::int64_t drift_ppm) {
  if (drift_ppm < -kMaxDriftPpm || drift_ppm > kMaxDriftPpm)
    throw std::invalid_argument("set_clock: a drift of " + std::to_string(drift_ppm) + " ppm is beyond +-500000 ppm");
  NodeState& s = impl_->nodes[impl_->node_of(node)];
  s.local_base = s.local(now_);  // the drift changes from now on
  s.true_base = now_;
  s.skew = skew;
  s.drift_ppm = drift_ppm;
  if (trace_.enabled()) {
    TraceEvent e;
    e.time = now_;
    e.kind = EventKind::clock_change;
    e.node = node;
    e.msg = static_cast<std::uint64_t>(skew.ns);
    e.other = Pid{static_cast<std::uint64_t>(drift_ppm)};
    trace_.append(e);
  }
}

Duration Simulation::clock_skew(Atom node) { return impl_->nodes[impl_->node_of(node)].skew; }
std::int64_t Simulation::clock_drift_ppm(Atom node) { return impl_->nodes[impl_->node_of(node)].drift_ppm; }

Time Simulation::node_time(Atom node) {
  const NodeState& s = impl_->nodes[impl_->node_of(node)];
  return s.local(now_) + s.skew;
}

std::vector<Atom> Simulation::nodes() const {
  std::vector<Atom> out;
  for (const NodeState& n : impl_->nodes) out.push_back(n.name);
  return out;
}

}  // namespace lic
