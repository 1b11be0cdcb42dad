// Detection by net ticks (docs/network.md "Net ticks"): distributed Erlang's way of noticing a
// lost peer, when SimOptions/Simulation::set_net_ticks turns it on.
//
// Each node's net_kernel ticks every T/4 (T = net_ticktime): on each tick, every connection
// writes a tick if it wrote nothing else, and a side that read nothing from its peer over the
// last four ticks declares it down (dist_util:send_tick; OTP's docs: 0.75 T to 1.25 T). Nothing
// here runs while the network is whole: the ticks are computed, not simulated. A cut, a pause, a
// crash or one side going down starts "checks": an event at the watching side's tick when its
// silence would reach four ticks, which looks again at what it has read by then.
//
// While a cut lasts, TCP keeps the connection: what is sent waits (held flights), and lands
// after the heal, at the sender's first retransmission after it (RTO backoff from the first
// segment sent into the cut). A side that declares its peer down drops the connection: what is
// in flight either way is lost, its processes get `noconnection` for their links and monitors
// across, and the peer's processes get theirs when the peer's own side goes down (its own ticks,
// or the FIN of the close when the path from the closing side still carries).
//
// A side without a connection sets one up on demand (reach): at once when both ways are open,
// else as an attempt that what is sent waits for, which a heal lets through at its next try and
// net_setuptime ends (docs/network.md, "Connecting on demand").
//
// All iteration that can reach the trace goes in a fixed order: pids, link order, send order.

#include <algorithm>
#include <cassert>
#include <limits>
#include <stdexcept>
#include <string>

#include "sim/kernel.hpp"
#include "sim/linux_timer.hpp"

namespace lic {

namespace {
const Atom kNetTickTimeout("net_tick_timeout");
const Atom kConnectionClosed("connection_closed");
/// A connection attempt across a cut gets through at its start plus a whole number of these,
/// the first such instant after the heal: measured on real OTP 25 nodes (six runs of
/// conformance/dist's long_cut_loses: 4.10 to 5.15 s after the attempt began, in whole seconds
/// plus 0.1 s). Where the one-second cadence comes from in OTP or Linux is not traced yet.
constexpr Duration kAttemptRetry = kSecond;
/// Linux's smallest retransmission timeout (TCP_RTO_MIN), and its largest (TCP_RTO_MAX).
constexpr Duration kRtoMin = kMillisecond * 200;
constexpr Duration kRtoMax = kSecond * 120;
/// last_tick's "none": a restarted node has not ticked before its new ticker began.
constexpr Time kNoTick{std::numeric_limits<std::int64_t>::min()};
}  // namespace

// ---- the tickers ---------------------------------------------------------------------------

Time Simulation::Impl::tick_base(std::uint32_t n) {
  NodeState& ns = nodes[n];
  if (!ns.ticker_set) {
    // Each node's ticker starts at its own phase in [0, T/4), from a stream of its own: the
    // same node ticks at the same instants whatever else the run draws. A file pins it as
    // `ticks NODE` (`streams:`): then its cuts are noticed at the same instants at every seed.
    const Rng root = sim.streams_watched() ? sim.stream_root("ticks " + std::string(ns.name.text())) : sim.root_rng_;
    Rng r = root.derive("ticker").derive(ns.name.text()).derive(ns.boots);
    ns.tick_base = ns.tick_base + Duration{static_cast<std::int64_t>(r.uniform(static_cast<std::uint64_t>(tick_interval().ns)))};
    ns.ticker_set = true;
  }
  return ns.tick_base;
}

Time Simulation::Impl::next_tick(std::uint32_t n, Time t) {
  const Time base = tick_base(n);
  const std::int64_t i = tick_interval().ns;
  if (t <= base) {
    if (nodes[n].boots != 0) return base;
    return base - Duration{(base - t).ns / i * i};  // (the grid before the run: see last_tick)
  }
  const std::int64_t k = ((t - base).ns + i - 1) / i;
  return base + Duration{k * i};
}

Time Simulation::Impl::last_tick(std::uint32_t n, Time t) {
  const std::int64_t i = tick_interval().ns;
  if (nodes[n].boots != 0 && t < nodes[n].up_since && nodes[n].old_ticker_set) {
    // Before the node's restart: the previous incarnation's ticks (one incarnation back).
    const Time old = nodes[n].old_tick_base;
    if (t < old) {
      if (nodes[n].boots != 1) return kNoTick;
      return old - Duration{((old - t).ns + i - 1) / i * i};  // (the first ran since before the run)
    }
    return old + Duration{(t - old).ns / i * i};
  }
  const Time base = tick_base(n);
  if (t < base) {
    // A node there from the start has ticked since before it: the run begins on a cluster that
    // was up (its connections too). A restarted node has not ticked before its new base.
    if (nodes[n].boots != 0) return kNoTick;
    const std::int64_t back = ((base - t).ns + i - 1) / i;
    return base - Duration{back * i};
  }
  return base + Duration{(t - base).ns / i * i};
}

Duration Simulation::Impl::rto(Channel& c) {
  // Linux: srtt + max(rto_min, 4 rttvar); on a steady path, about the round trip plus rto_min.
  return kRtoMin + effective(c).latency_min * 2;
}

// ---- what a side has read ------------------------------------------------------------------

bool Simulation::Impl::reads_stopped(std::uint32_t o, std::uint32_t s, Time t) {
  const Channel& c = channel(o, s);
  if (c.episode != Time::max() || (c.resume != Time::max() && t < c.resume)) return true;
  if (!nodes[o].up || paused(o)) return true;
  return !side_up(o, s);
}

Time Simulation::Impl::last_read(std::uint32_t o, std::uint32_t s, Time t) {
  Channel& c = channel(o, s);
  const Duration lat = effective(c).latency_min;
  Time r = c.last_land;
  Time cutoff = t - lat;  // a tick sent after this has not landed by t
  if (c.stop <= t && (c.resume == Time::max() || t < c.resume)) {
    cutoff = std::min(cutoff, c.stop - lat);  // (one in flight at the cut waits in TCP)
  } else if (c.resume <= t) {
    r = std::max(r, c.resume);  // what was held landed then
  }
  if (paused(o)) cutoff = std::min(cutoff, nodes[o].pause_start - kNanosecond);
  if (!nodes[o].up) cutoff = std::min(cutoff, nodes[o].down_since - kNanosecond);
  if (auto it = conns.find(pair_key(o, s)); it != conns.end() && !it->second.up[side_of(o, s)])
    cutoff = std::min(cutoff, it->second.down_at[side_of(o, s)] - kNanosecond);
  Time tick = last_tick(o, cutoff);
  // dist_util's need_to_tick: a tick is not written when data went out since the last one (the
  // data is the read then, and it went out earlier). The last two writes are known.
  for (int k = 0; k < 2 && tick != kNoTick; ++k) {
    const auto wrote = [&](Time w) { return w > tick - tick_interval() && w <= tick; };
    if (!wrote(c.last_write) && !wrote(c.prev_write)) break;
    tick = tick - tick_interval();
  }
  if (tick != kNoTick) r = std::max(r, tick + lat);
  // Nothing read on a connection before it was set up (one from before the run has no floor:
  // its nodes have ticked since before it).
  if (auto it = conns.find(pair_key(o, s)); it != conns.end()) r = std::max(r, it->second.up_at);
  // Nothing known read at all: as if the last read were four ticks ago (the next tick decides).
  if (r.ns == std::numeric_limits<std::int64_t>::min()) r = t - tick_interval() * 4;
  return r;
}

// ---- checks --------------------------------------------------------------------------------

void Simulation::Impl::ensure_check(std::uint32_t s, std::uint32_t o) {
  Conn& cn = conn(s, o);
  const int k = side_of(s, o);
  if (!cn.up[k] || cn.check[k] || !nodes[s].up) return;
  cn.check[k] = true;
  // Four ticks of silence after the last read, at the watching side's tick.
  const Time due = std::max(next_tick(s, last_read(o, s, sim.now_)) + tick_interval() * 4, sim.now_);
  queue.push(due, EventQueue::Item{kTickCheck, cn.token[k], std::uint64_t{s} << 32 | o});
}

void Simulation::Impl::tick_check(std::uint32_t s, std::uint32_t o, std::uint32_t token) {
  Conn& cn = conn(s, o);
  const int k = side_of(s, o);
  if (!cn.up[k] || cn.token[k] != token) return;
  cn.check[k] = false;
  if (!nodes[s].up) return;
  if (paused(s)) {
    // The ticker runs when the node does: after what landed during the pause is read.
    cn.check[k] = true;
    queue.push(nodes[s].paused_until + kNanosecond, EventQueue::Item{kTickCheck, token, std::uint64_t{s} << 32 | o});
    return;
  }
  const Time due = next_tick(s, last_read(o, s, sim.now_)) + tick_interval() * 4;
  if (sim.now_ >= due) {
    lose_side(s, o, kNetTickTimeout);
    return;
  }
  if (reads_stopped(o, s, sim.now_)) ensure_check(s, o);
}

void Simulation::Impl::close_later(std::uint32_t s, std::uint32_t o, Time at) {
  Conn& cn = conn(s, o);
  const int k = side_of(s, o);
  if (!cn.up[k]) return;
  queue.push(std::max(at, sim.now_), EventQueue::Item{kConnClose, cn.token[k], std::uint64_t{s} << 32 | o});
}

// ---- flights during a cut ------------------------------------------------------------------

bool Simulation::Impl::holding(const Channel& c, std::uint32_t to) const {
  if (c.episode != Time::max() && c.stop <= sim.now_) return true;  // cut: waits for the heal
  return !side_up(to, c.from);  // the receiver closed: what is sent dies with the connection
}

void Simulation::Impl::note_send(Channel& c) {
  // (Writes into a cut are not what decides the ticks before it: the history stops there.)
  const bool stopped = c.episode != Time::max() && c.stop <= sim.now_;
  if (!stopped && c.last_write != sim.now_) {
    c.prev_write = c.last_write;
    c.last_write = sim.now_;
  }
  if (c.episode == Time::max()) return;
  if (c.first_send == Time::max()) c.first_send = sim.now_;
  else if (c.second_send == Time::max()) c.second_send = sim.now_;
  // Starved of ACKs (only the way back is blocked): new data stops at the first RTO.
  if (c.stop > sim.now_) c.stop = std::min(c.stop, sim.now_ + rto(c));
}

void Simulation::Impl::hold_in_flight(Channel& c) {
  const auto ci = static_cast<std::uint32_t>(&c - channels.data());
  for (std::uint32_t s = 0; s < flights.size(); ++s) {
    Flight& f = flights[s];
    if (!f.live || f.held || f.queued || f.channel != ci || f.arrival <= sim.now_) continue;
    f.held = true;
    ++f.gen;  // its pending event is stale
  }
}

void Simulation::Impl::release_held(Channel& c, Time at) {
  const auto ci = static_cast<std::uint32_t>(&c - channels.data());
  std::vector<std::pair<std::uint64_t, std::uint32_t>> held;
  for (std::uint32_t s = 0; s < flights.size(); ++s) {
    const Flight& f = flights[s];
    if (f.live && f.held && f.channel == ci) held.emplace_back(f.order, s);
  }
  std::sort(held.begin(), held.end());
  for (const auto& [order, s] : held) {
    Flight& f = flights[s];
    f.held = false;
    f.queued = false;
    f.arrival = std::max(f.arrival, at);
    if (f.fifo) {
      f.arrival = std::max(f.arrival, c.last_arrival);
      c.last_arrival = f.arrival;
    }
    schedule_flight(s);
  }
}

// ---- cuts, heals, pauses, crashes -----------------------------------------------------------

void Simulation::Impl::tick_block(std::uint32_t a, std::uint32_t b) {
  const std::uint32_t ab = channel_ix(a, b);
  const std::uint32_t ba = channel_ix(b, a);
  const Time now = sim.now_;
  for (const std::uint32_t ci : {ab, ba}) {
    Channel& c = channels[ci];
    if (c.episode == Time::max()) {
      c.episode = now;
      c.first_send = c.second_send = Time::max();
      c.resume = Time::max();
      c.stop = Time::max();
    }
  }
  Channel& fwd = channels[ab];
  fwd.stop = std::min(fwd.stop, now);
  hold_in_flight(fwd);
  // Packets of processes that model their own transport, on the wire at the cut, are lost.
  if (auto raw = channel_index.find((std::uint64_t{1} << 63) | (std::uint64_t{a} << 32) | b); raw != channel_index.end()) {
    const std::uint32_t ri = raw->second;
    std::vector<std::pair<std::uint64_t, std::uint32_t>> lost;
    for (std::uint32_t i = 0; i < flights.size(); ++i)
      if (flights[i].live && flights[i].channel == ri && flights[i].arrival > now) lost.emplace_back(flights[i].order, i);
    std::sort(lost.begin(), lost.end());
    for (const auto& [order, i] : lost) {
      auto& q = channels[ri].fifo;
      q.erase(std::remove(q.begin(), q.end(), i), q.end());
      Flight f = take_flight(i);
      if (f.msg != nullptr) {
        MessagePtr m(f.msg);
        f.msg = nullptr;
        note(EventKind::drop, nullptr, f.to, m->from, Reason::other(Atom("partitioned")), m->tag, m->id);
      }
    }
    channels[ri].last_arrival = Time{};
  }
  // The way back still carries, but gets no ACKs: it stops at its first RTO after the cut (its
  // first segment: a message, or its next tick).
  Channel& back = channels[ba];
  if (back.stop > now) back.stop = std::min(back.stop, next_tick(b, now) + rto(back));
  ensure_check(b, a);
  ensure_check(a, b);
}

void Simulation::Impl::tick_heal(std::uint32_t a, std::uint32_t b) {
  if (path_blocked(a, b) || path_blocked(b, a)) return;  // carries only once both ways are open
  if (attempting(a, b)) {
    // A connection being set up gets through at its next try (its handshake taken as instant).
    const Conn& cn = conn(a, b);
    const std::int64_t since = (sim.now_ - cn.attempt_start).ns;
    const std::int64_t step = kAttemptRetry.ns;
    const Time at = cn.attempt_start + Duration{(since + step - 1) / step * step};
    queue.push(at, EventQueue::Item{kConnRetry, cn.attempt_token, std::uint64_t{cn.attempt_from} << 32 | (cn.attempt_from == a ? b : a)});
    return;
  }
  const Time now = sim.now_;
  const bool both_up = side_up(a, b) && side_up(b, a);
  for (const auto& [x, y] : {std::pair{a, b}, std::pair{b, a}}) {
    Channel& c = channel(x, y);
    if (c.episode == Time::max()) continue;
    const Time at = first_retransmission(c, x, now) + effective(c).latency_min;
    c.episode = Time::max();
    c.first_send = c.second_send = Time::max();
    if (both_up) {
      c.resume = at;
      release_held(c, at);
    } else {
      c.resume = Time::max();
      c.stop = Time::max();
      if (side_up(x, y)) {
        // The receiver dropped the connection: the first segment to land is answered by a reset.
        close_later(x, y, at + effective(c).latency_min);
      } else if (side_up(y, x)) {
        close_later(y, x, at);  // the sender dropped it: its FIN lands
      }
    }
  }
  if (both_up) global_healed(a, b);  // global's calls and messages held by the cut go on
}

Time Simulation::Impl::first_retransmission(Channel& c, std::uint32_t x, Time heal) {
  // The first segment sent into the cut (u: a message, or x's next tick) is retransmitted after
  // an RTO, then after twice that, and so on (at most TCP_RTO_MAX apart), each timer as Linux's
  // wheel fires it; the first retransmission after the heal gets through and everything behind
  // it follows. When nothing else was sent within the first RTO, Linux's tail loss probe goes
  // first, and the RTO chain starts from it (measured on this kernel, loopback in a network
  // namespace: data sent every 200 ms into a cut healed at 3.9 s lands at 4.45 s, every 100 ms at
  // 4.13 s; docs/conformance-dist.md).
  const Time tick_u = next_tick(x, c.episode);
  Time u = tick_u;
  Time second = std::min(c.first_send, tick_u + tick_interval());
  if (c.first_send < tick_u) {
    u = c.first_send;
    second = std::min(c.second_send, next_tick(x, u + kNanosecond));
  }
  if (u >= heal) return heal;  // nothing went into the cut
  const Duration r = rto(c);
  Time t = second < u + kRtoMin ? u : u + linux_timer(u, kRtoMin);  // (the probe)
  Duration step = r;
  do {
    t = t + linux_timer(t, step);
    step = std::min(step * 2, kRtoMax);
  } while (t < heal);
  return t;
}

void Simulation::Impl::tick_pause(std::uint32_t n) {
  // The paused node ticks no more: every peer still connected starts counting.
  for (std::uint32_t j = 0; j < nodes.size(); ++j) {
    if (j != n && nodes[j].up && side_up(j, n)) ensure_check(j, n);
  }
}

void Simulation::Impl::tick_crash(std::uint32_t n) {
  global_crash(n);
  // The node's side of each connection goes with it (its processes are dying): its peers hear
  // of it by the close when the path carries, else by their own ticks. An attempt under way
  // to or from it ends: what waited for it is lost.
  for (std::uint32_t j = 0; j < nodes.size(); ++j) {
    if (j == n) continue;
    if (attempting(n, j)) fail_attempt(n, j);
    if (side_up(n, j)) lose_side(n, j, kConnectionClosed);
  }
}

bool Simulation::Impl::reach(std::uint32_t a, std::uint32_t b) {
  if (connected(a, b)) return true;
  if (!ticks() || !nodes[a].up || !nodes[b].up) return false;
  // Distributed Erlang connects on demand: a send, link or monitor sets up a new connection.
  // Both ways open: at once (the handshake taken as instant). Else an attempt starts: what is
  // sent meanwhile waits for it, and it fails after net_setuptime unless the cut heals first.
  if (attempting(a, b)) return false;  // what is sent waits for the attempt under way
  if (path_blocked(a, b) || path_blocked(b, a)) {
    Conn& cn = conn(a, b);
    if (!cn.attempt) {
      cn.attempt = true;
      cn.attempt_from = a;
      cn.attempt_start = sim.now_;
      ++cn.attempt_token;
      queue.push(sim.now_ + net.setuptime, EventQueue::Item{kConnAttempt, cn.attempt_token, std::uint64_t{a} << 32 | b});
    }
    return false;
  }
  connect_now(a, b);
  return true;
}

void Simulation::Impl::connect_now(std::uint32_t a, std::uint32_t b) {
  // A peer that still holds the old connection drops it for the new one.
  if (side_up(b, a)) lose_side(b, a, kConnectionClosed);
  if (side_up(a, b)) lose_side(a, b, kConnectionClosed);
  Conn& cn = conn(a, b);
  for (int k = 0; k < 2; ++k) {
    cn.up[k] = true;
    cn.check[k] = false;
    ++cn.token[k];
    cn.pending[k].clear();
  }
  cn.attempt = false;
  ++cn.attempt_token;
  cn.up_at = sim.now_;
  note_node(EventKind::connect, a, nodes[b].name);
  for (const auto& [x, y] : {std::pair{a, b}, std::pair{b, a}}) {
    Channel& c = channel(x, y);
    c.episode = c.stop = c.first_send = c.second_send = c.resume = Time::max();
    release_held(c, sim.now_ + effective(c).latency_min);  // what waited for the connection
  }
  // Links and monitors that waited for it, in the order asked.
  const std::vector<Conn::Waiter> waiting = std::move(conn(a, b).waiting);
  conn(a, b).waiting.clear();
  for (const Conn::Waiter& w : waiting) settle(w, true);
  global_connected(a, b);
}

void Simulation::Impl::attempt_retry(std::uint32_t a, std::uint32_t b, std::uint32_t token) {
  const Conn& cn = conn(a, b);
  if (!cn.attempt || cn.attempt_token != token) return;
  if (path_blocked(a, b) || path_blocked(b, a) || !nodes[a].up || !nodes[b].up) return;  // cut again
  connect_now(a, b);
}

void Simulation::Impl::attempt_failed(std::uint32_t a, std::uint32_t b, std::uint32_t token) {
  const Conn& cn = conn(a, b);
  if (!cn.attempt || cn.attempt_token != token) return;
  fail_attempt(a, b);
}

void Simulation::Impl::fail_attempt(std::uint32_t a, std::uint32_t b) {
  Conn& cn = conn(a, b);
  if (!cn.attempt) return;
  cn.attempt = false;
  ++cn.attempt_token;
  const std::vector<Conn::Waiter> waiting = std::move(cn.waiting);
  cn.waiting.clear();
  // What waited for it is lost, in send order.
  std::vector<std::pair<std::uint64_t, std::uint32_t>> queued;
  for (std::uint32_t i = 0; i < flights.size(); ++i) {
    const Flight& f = flights[i];
    if (f.live && f.queued) {
      const Channel& c = channels[f.channel];
      if ((c.from == a && c.to == b) || (c.from == b && c.to == a)) queued.emplace_back(f.order, i);
    }
  }
  std::sort(queued.begin(), queued.end());
  for (const auto& [order, i] : queued) {
    auto& q = channels[flights[i].channel].fifo;
    q.erase(std::remove(q.begin(), q.end(), i), q.end());
    Flight f = take_flight(i);
    if (f.msg != nullptr) {
      MessagePtr m(f.msg);
      f.msg = nullptr;
      note(EventKind::drop, nullptr, f.to, m->from, Reason::noconnection(), m->tag, m->id);
    }
  }
  for (const Conn::Waiter& w : waiting) settle(w, false);  // links and monitors: noconnection
  g_wake_pair(a, b, true);  // global's calls that waited for it: bad nodes
}

void Simulation::Impl::wait_for_connection(Process* p, Pid other, Ref ref) {
  const Conn::Waiter w{p->pid, other, ref};
  Process* o = find(other);
  if (o != nullptr && attempting(p->node_ix, o->node_ix)) {
    conn(p->node_ix, o->node_ix).waiting.push_back(w);
    return;
  }
  // (No attempt: a node down.) It fails after net_setuptime, unless unlinked or demonitored.
  const std::uint64_t id = queue.push(sim.now_ + net.setuptime, EventQueue::Item{kCallback, 0, 0});
  lone_waiting.emplace(id, w);
  callbacks.emplace(id, [this, id] {
    auto it = lone_waiting.find(id);
    if (it == lone_waiting.end()) return;
    const Conn::Waiter waiter = it->second;
    lone_waiting.erase(it);
    const Process* q = find(waiter.p);
    const Process* t = find(waiter.other);
    settle(waiter, q != nullptr && t != nullptr && connected(q->node_ix, t->node_ix));
  });
}

void Simulation::Impl::forget_pending(Pid p, Pid other, Ref ref) {
  const auto matches = [&](Pid from, Pid to, Ref r) { return ref ? r == ref : (!r && to == p && from == other); };
  for (auto& [key, cn] : conns) {
    for (auto& list : cn.pending) std::erase_if(list, [&](const Conn::Fire& f) { return matches(f.from, f.to, f.ref); });
    std::erase_if(cn.waiting, [&](const Conn::Waiter& w) { return w.p == p && (ref ? w.ref == ref : (!w.ref && w.other == other)); });
  }
  std::erase_if(lone_waiting, [&](const auto& e) { return e.second.p == p && (ref ? e.second.ref == ref : (!e.second.ref && e.second.other == other)); });
}

bool Simulation::Impl::link_pending(Pid p, Pid other) const {
  for (const auto& [key, cn] : conns)
    for (const auto& list : cn.pending)
      for (const Conn::Fire& f : list)
        if (!f.ref && f.to == p && f.from == other) return true;
  return false;
}

void Simulation::Impl::settle(const Conn::Waiter& w, bool up) {
  Process* q = find(w.p);
  if (q == nullptr || q->dead || q->dying) return;
  Process* t = find(w.other);
  const bool gone = t == nullptr || t->dead;
  if (!w.ref) {
    if (up && !gone) link(q, w.other);
    else exit_signal(w.other, nullptr, q, gone ? Reason::noproc() : Reason::noconnection(), true);
    return;
  }
  if (up && !gone) {
    t->monitored_by.push_back({w.ref, q->pid});
    q->monitoring.push_back({w.ref, w.other});
  } else {
    deliver_down(q, w.other, w.ref, gone ? Reason::noproc() : Reason::noconnection());
  }
}

void Simulation::Impl::after_setup_time(std::function<void()> fn) {
  const std::uint64_t id = queue.push(sim.now_ + net.setuptime, EventQueue::Item{kCallback, 0, 0});
  callbacks.emplace(id, std::move(fn));
}

// ---- one side goes down ----------------------------------------------------------------------

void Simulation::Impl::lose_side(std::uint32_t s, std::uint32_t o, Atom why) {
  Conn& cn = conn(s, o);
  const int ks = side_of(s, o);
  const int ko = 1 - ks;
  if (!cn.up[ks]) return;
  cn.up[ks] = false;
  cn.check[ks] = false;
  ++cn.token[ks];
  cn.down_at[ks] = sim.now_;
  const bool was_draining = draining;
  draining = true;
  std::uint64_t fired = 0;
  const bool alive_s = nodes[s].up;
  auto live = [&](Pid p) {
    Process* q = find(p);
    return q != nullptr && !q->dead && !q->dying ? q : nullptr;
  };

  // 1. What was in flight or held either way, in send order: messages are lost; a link's exit
  //    signal or a DOWN becomes noconnection, at once for a receiver on this side, when the
  //    peer's side goes for one there.
  const std::uint32_t sc = channel_ix(s, o);
  const std::uint32_t oc = channel_ix(o, s);
  std::vector<std::pair<std::uint64_t, std::uint32_t>> lost;
  for (std::uint32_t i = 0; i < flights.size(); ++i) {
    const Flight& f = flights[i];
    if (f.live && !f.queued && (f.channel == sc || f.channel == oc)) lost.emplace_back(f.order, i);
  }
  std::sort(lost.begin(), lost.end());
  std::vector<Flight> taken;
  taken.reserve(lost.size());
  for (const auto& [order, i] : lost) taken.push_back(take_flight(i));
  // (The cut, if any, stays on the paths: the peer's side still reads nothing through it.)
  for (const std::uint32_t ci : {sc, oc}) {
    auto& q = channels[ci].fifo;  // (what waits for a new connection stays)
    q.erase(std::remove_if(q.begin(), q.end(), [&](std::uint32_t i) { return !flights[i].live; }), q.end());
    channels[ci].last_arrival = Time{};
  }
  std::vector<Conn::Fire> now_fires = std::move(cn.pending[ks]);
  cn.pending[ks].clear();
  for (Flight& f : taken) {
    const bool here = f.channel == oc;  // landing on this side
    if (f.msg != nullptr) {
      MessagePtr m(f.msg);
      f.msg = nullptr;
      if (m->kind == MsgKind::down) {
        (here ? now_fires : cn.pending[ko]).push_back({m->from, f.to, m->ref});
      } else {
        note(EventKind::drop, nullptr, f.to, m->from, Reason::noconnection(), m->tag, m->id);
      }
    } else if (f.via_link) {
      (here ? now_fires : cn.pending[ko]).push_back({f.from, f.to, {}});
    } else {
      note(EventKind::exit_signal, nullptr, f.to, f.from, f.reason, Atom("lost"));
    }
  }

  // 2. Links and monitors between the two nodes' processes, unhooked on both ends: this side's
  //    end fires now, the peer's when its side goes.
  for (Process* p : procs) {
    if (p == nullptr || p->dead || (p->node_ix != s && p->node_ix != o)) continue;
    const std::uint32_t other = p->node_ix == s ? o : s;
    const bool mine = p->node_ix == s;
    for (std::size_t i = 0; i < p->links.size();) {
      Process* q = find(p->links[i]);
      if (q == nullptr || q->node_ix != other) {
        ++i;
        continue;
      }
      const Pid qp = p->links[i];
      p->links.erase(p->links.begin() + static_cast<std::ptrdiff_t>(i));
      erase_pid(q->links, p->pid);
      (mine ? now_fires : cn.pending[ko]).push_back({qp, p->pid, {}});
      (mine ? cn.pending[ko] : now_fires).push_back({p->pid, qp, {}});
    }
    for (std::size_t i = 0; i < p->monitoring.size();) {
      const MonitorEntry m = p->monitoring[i];
      Process* q = find(m.pid);
      if (q == nullptr || q->node_ix != other) {
        ++i;
        continue;
      }
      p->monitoring.erase(p->monitoring.begin() + static_cast<std::ptrdiff_t>(i));
      erase_ref(q->monitored_by, m.ref);
      (mine ? now_fires : cn.pending[ko]).push_back({m.pid, p->pid, m.ref});
    }
  }
  if (!cn.up[ko]) cn.pending[ko].clear();  // (the peer's side went first: it fired its own)
  for (const Conn::Fire& x : now_fires) {
    Process* to = live(x.to);
    if (to == nullptr) continue;
    ++fired;
    if (x.ref) {
      deliver_down(to, x.from, x.ref, Reason::noconnection());
    } else {
      exit_signal(x.from, nullptr, to, Reason::noconnection(), true);
    }
  }
  if (alive_s && sim.trace_.enabled()) {
    TraceEvent e;
    e.time = sim.now_;
    e.kind = EventKind::disconnect;
    e.node = nodes[s].name;
    e.tag = nodes[o].name;
    e.msg = fired;
    e.reason = Reason::other(why);
    sim.trace_.append(e);
  }
  // 3. The peer: it sees the close when the path from here still carries, else its ticks tell.
  if (cn.up[ko] && nodes[o].up) {
    Channel& c = channel(s, o);
    if (!path_blocked(s, o) && !path_blocked(o, s)) {
      close_later(o, s, sim.now_ + effective(c).latency_min);
    } else {
      ensure_check(o, s);
    }
  }
  draining = was_draining;
  if (!was_draining) drain_deaths();
  if (alive_s) global_nodedown(s, o);  // global's nodedown (global.cpp)
}

// ---- the world's side ----------------------------------------------------------------------

void Simulation::set_net_ticks(const NetTicks& t) {
  if (t.ticktime < Duration::zero() || t.setuptime < Duration::zero())
    throw std::invalid_argument("set_net_ticks: a negative time");
  if (t.ticktime != Duration::zero() && t.ticktime < 4 * kMillisecond)
    throw std::invalid_argument("set_net_ticks: a net_ticktime below 4 ms (its ticks are a quarter of it)");
  impl_->net = t;
}

const NetTicks& Simulation::net_ticks() const { return impl_->net; }

}  // namespace lic
