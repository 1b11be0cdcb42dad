// Channels with Go's semantics (sim/channel.hpp). A ready operation happens at once in the
// calling process; otherwise the process waits in a ChanWaiter queued on each channel it waits
// on, and the process that makes its case possible completes it (hands the value over, or
// takes the value it sends) and wakes it. Order: a channel's queues are first come, first
// served; the only random choice is among the ready cases of a select, from the process's own
// stream, as Go chooses at random.

#include <algorithm>
#include <array>
#include <string>
#include <stdexcept>

#include "sim/kernel.hpp"

namespace lic {

namespace {

const Atom kOpSend("send");
const Atom kOpRecv("recv");
const Atom kClosed("closed");
const Atom kDone("done");
const Atom kTimeoutOp("timeout");
const Atom kNil("nil");

}  // namespace

// Context's channel calls go through this, which sees the kernel's private state.
struct ChanOps {
  Kernel::Impl& k;
  Process* self;

  ChanState& state(Chan c) const {
    if (c.id == 0 || c.id >= k.chans.size()) throw std::logic_error("not a channel");
    ChanState& s = k.chans[c.id];
    if (s.node != self->node_ix)
      throw std::logic_error("channel " + std::string(s.name.text()) + " belongs to node " +
                             std::string(k.nodes[s.node].name.text()));
    return s;
  }

  void note(EventKind kind, Process* p, const ChanState& s, Pid other = {}, Reason r = {}) const {
    k.note(kind, p, p->pid, other, r, s.name, s.buf.size());
  }

  /// A case on a nil channel (Go's zero value): never ready, so never chosen; alone it waits
  /// for ever.
  static bool is_nil(const SelectCase& c) { return c.chan.id == 0; }

  /// What a nil channel's wait and wake events name: `nil`, on the waiter's node, empty.
  ChanState nil_state() const {
    ChanState s;
    s.name = kNil;
    s.node = self->node_ix;
    return s;
  }

  /// Notes `kind` for `p` on case `c`'s channel (a nil one named `nil`).
  void note_case(EventKind kind, Process* p, const SelectCase& c, Pid other, Reason r) const {
    if (is_nil(c)) note(kind, p, nil_state(), other, r);
    else note(kind, p, k.chans[c.chan.id], other, r);
  }

  /// Takes `w` off every queue it waits in (it is done, timed out or gone).
  void unqueue(ChanWaiter& w) const {
    for (const SelectCase& c : w.cases) {
      if (is_nil(c)) continue;
      ChanState& s = k.chans[c.chan.id];
      auto& q = c.is_send ? s.sendq : s.recvq;
      std::erase_if(q, [&](const auto& e) { return e.first == &w; });
    }
  }

  /// Ends `w`'s wait with its case `i`, done by `by`, and wakes it.
  void complete(ChanWaiter& w, std::size_t i, Pid by, bool closed) const {
    w.done = true;
    w.chosen = static_cast<int>(i);
    w.closed = closed;
    w.by = by;
    unqueue(w);
    k.unpark(w.p);
  }

  /// The first waiter in `q` (entries are removed when their waiter ends, so it is live).
  static std::pair<ChanWaiter*, std::size_t> first(const std::deque<std::pair<ChanWaiter*, std::size_t>>& q) {
    return q.empty() ? std::pair<ChanWaiter*, std::size_t>{nullptr, 0} : q.front();
  }

  bool ready(const SelectCase& c) const {
    const ChanState& s = k.chans[c.chan.id];
    if (c.is_send) return s.closed || !s.recvq.empty() || s.buf.size() < s.cap;
    return !s.buf.empty() || !s.sendq.empty() || s.closed;
  }

  [[noreturn]] static void panic(const char* what) { throw std::runtime_error(what); }

  /// A value moves from `sender` to `receiver` (a rendezvous, or a waiter's case completed):
  /// one chan_send and one chan_recv, in that order.
  void transfer(const ChanState& s, Process* sender, Process* receiver) const {
    note(EventKind::chan_send, sender, s, receiver->pid);
    note(EventKind::chan_recv, receiver, s, sender->pid);
  }

  /// A send that is ready: hand it to a waiting receiver, or buffer it.
  void send_now(Chan c, Payload&& v, std::uint64_t* seq = nullptr) const {
    ChanState& s = k.chans[c.id];
    if (s.closed) panic("send on closed channel");
    ++s.sent;
    if (seq != nullptr) *seq = s.sent;
    if (auto [w, i] = first(s.recvq); w != nullptr) {
      w->cases[i].received = ChanRecv{std::move(v), true};
      transfer(s, self, w->p);
      complete(*w, i, self->pid, false);
      return;
    }
    s.buf.push_back(std::move(v));
    note(EventKind::chan_send, self, s);
  }

  /// A receive that is ready: from the buffer (which the first waiting sender then refills),
  /// straight from a waiting sender (a rendezvous), or nothing: closed and drained.
  ChanRecv recv_now(Chan c) const {
    ChanState& s = k.chans[c.id];
    if (!s.buf.empty()) {
      ChanRecv out{std::move(s.buf.front()), true};
      s.buf.pop_front();
      note(EventKind::chan_recv, self, s);
      if (auto [w, i] = first(s.sendq); w != nullptr) {
        s.buf.push_back(std::move(w->cases[i].value));
        w->cases[i].seq = ++s.sent;
        note(EventKind::chan_send, w->p, s);
        complete(*w, i, self->pid, false);
      }
      return out;
    }
    if (auto [w, i] = first(s.sendq); w != nullptr) {
      ChanRecv out{std::move(w->cases[i].value), true};
      w->cases[i].seq = ++s.sent;
      transfer(s, w->p, self);
      complete(*w, i, self->pid, false);
      return out;
    }
    note(EventKind::chan_recv, self, s, {}, Reason::other(kClosed));
    return {};
  }

  void close(Chan c) const {
    if (c.id == 0) panic("close of nil channel");
    ChanState& s = state(c);
    if (s.closed) panic("close of closed channel");
    s.closed = true;
    note(EventKind::chan_close, self, s);
    // Every receiver waiting gets ok = false; every sender waiting crashes, as in Go.
    while (!s.recvq.empty()) {
      auto [w, i] = s.recvq.front();
      w->cases[i].received = ChanRecv{};
      note(EventKind::chan_recv, w->p, s, {}, Reason::other(kClosed));
      complete(*w, i, self->pid, true);
    }
    while (!s.sendq.empty()) {
      auto [w, i] = s.sendq.front();
      complete(*w, i, self->pid, true);
    }
  }

  /// Does case `i` (ready).
  void perform(std::span<SelectCase> cases, std::size_t i) const {
    SelectCase& c = cases[i];
    if (c.is_send) send_now(c.chan, std::move(c.value), &c.seq);
    else c.received = recv_now(c.chan);
  }

  int select(std::span<SelectCase> cases, Duration timeout) const {
    k.check(self);
    std::vector<std::size_t> now;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      if (is_nil(cases[i])) continue;
      state(cases[i].chan);
      if (ready(cases[i])) now.push_back(i);
    }
    if (!now.empty()) {
      const std::size_t pick = now.size() == 1 ? now[0] : now[Context(k.sim, *self).rng().uniform(now.size())];
      perform(cases, pick);
      return static_cast<int>(pick);
    }
    if (timeout <= Duration::zero()) return -1;
    return wait(cases, timeout);
  }

  int wait(std::span<SelectCase> cases, Duration timeout) const {
    ChanWaiter w;
    w.p = self;
    w.cases = cases;
    // Taken off the queues however the wait ends: done, timed out, or the process killed.
    struct Guard {
      const ChanOps& ops;
      ChanWaiter& w;
      ~Guard() {
        if (!w.done) ops.unqueue(w);
      }
    } guard{*this, w};
    for (std::size_t i = 0; i < cases.size(); ++i) {
      if (!is_nil(cases[i])) {
        ChanState& s = k.chans[cases[i].chan.id];
        (cases[i].is_send ? s.sendq : s.recvq).emplace_back(&w, i);
      }
      note_case(EventKind::chan_wait, self, cases[i], {}, Reason::other(cases[i].is_send ? kOpSend : kOpRecv));
    }
    const bool woken = k.park(self, timeout);
    if (!woken || !w.done) {
      note_case(EventKind::chan_wake, self, cases[0], {}, Reason::other(kTimeoutOp));
      if (k.any_preempt) {
        unqueue(w);  // its wait is over: a send while it is preempted must not hand it a value
        k.preempt(self, kTimeoutOp);
      }
      return -1;
    }
    const ChanState& s = k.chans[cases[static_cast<std::size_t>(w.chosen)].chan.id];
    note(EventKind::chan_wake, self, s, w.by, Reason::other(w.closed ? kClosed : kDone));
    if (k.any_preempt) k.preempt(self, s.name);
    if (w.closed && cases[static_cast<std::size_t>(w.chosen)].is_send) panic("send on closed channel");
    return w.chosen;
  }
};

namespace {
ChanOps ops(Simulation& sim, Process& self) { return ChanOps{Kernel::of(sim), &self}; }
}  // namespace

// ---- Preemption -------------------------------------------------------------------------------

void Simulation::set_preemption(Atom node, Ratio chance, Duration mean) {
  if (chance.den == 0 || chance.num > chance.den)
    throw std::invalid_argument("set_preemption: a chance must be in [0, 1]");
  if (chance.num != 0 && mean <= Duration::zero())
    throw std::invalid_argument("set_preemption: the mean delay must be above zero");
  NodeState& n = impl_->nodes[impl_->node_of(node)];
  n.preempt = chance;
  n.preempt_mean = mean;
  if (chance.num != 0) impl_->any_preempt = true;
}

void Simulation::Impl::preempt(Process* p, Atom chan) {
  const NodeState& n = nodes[p->node_ix];
  if (n.preempt.num == 0) return;
  auto it = preempt_rngs.find(p->pid.id);
  if (it == preempt_rngs.end()) {
    // The goroutine's own stream, beside its rng(): turning preemption on moves none of its
    // other draws (its select choices), and `streams: {process PATH: SEED}` pins both.
    const Label& l = p->label;
    std::uint32_t& made = preempt_streams[{l.name.index(), l.instance}];
    const Rng root = sim.streams_watched() && !l.name.empty() ? sim.stream_root("process " + std::string(l.name.text())) : sim.rng();
    it = preempt_rngs.emplace(p->pid.id, root.derive("preempt").derive(l.name.text()).derive(l.instance).derive(made++)).first;
  }
  Rng& r = it->second;
  if (!r.chance(n.preempt)) return;
  const Duration d = r.exponential(n.preempt_mean);
  if (d <= Duration::zero()) return;
  note(EventKind::goroutine_preempt, p, p->pid, {}, {}, chan, static_cast<std::uint64_t>(d.ns));
  wait(p, [](const Message&) { return false; }, n.from_true(d));  // a CPU's delay is true time
}

namespace {
Chan new_chan(Kernel::Impl& k, std::size_t capacity, Atom name, std::uint32_t node, const Process* by) {
  ChanState s;
  s.name = name;
  s.cap = capacity;
  s.node = node;
  k.chans.push_back(std::move(s));  // a deque: channels never move
  if (by != nullptr) {
    k.note(EventKind::chan_make, by, by->pid, {}, {}, name, capacity);
  } else if (k.sim.trace().enabled()) {
    TraceEvent e;
    e.time = k.sim.now();
    e.kind = EventKind::chan_make;
    e.node = k.nodes[node].name;
    e.tag = name;
    e.msg = capacity;
    k.sim.trace().append(e);
  }
  return Chan{static_cast<std::uint32_t>(k.chans.size() - 1)};
}
}  // namespace

Chan Context::make_chan(std::size_t capacity, Atom name) {
  auto& k = Kernel::of(*sim_);
  k.check(self_);
  return new_chan(k, capacity, name, self_->node_ix, self_);
}

Chan Simulation::make_chan(std::size_t capacity, Atom name, Atom node) {
  return new_chan(*impl_, capacity, name, impl_->node_of(node.empty() ? opts_.default_node : node), nullptr);
}

void Context::chan_send(Chan c, Payload value) {
  SelectCase one[1] = {SelectCase::send(c, std::move(value))};
  ops(*sim_, *self_).select(one, Duration::max());
}

ChanRecv Context::chan_recv(Chan c) {
  SelectCase one[1] = {SelectCase::recv(c)};
  ops(*sim_, *self_).select(one, Duration::max());
  return std::move(one[0].received);
}

void Context::chan_close(Chan c) {
  Kernel::of(*sim_).check(self_);
  ops(*sim_, *self_).close(c);
}

std::size_t Context::chan_len(Chan c) const { return c ? ops(*sim_, *self_).state(c).buf.size() : 0; }
std::size_t Context::chan_cap(Chan c) const { return c ? ops(*sim_, *self_).state(c).cap : 0; }
bool Context::chan_closed(Chan c) const { return c ? ops(*sim_, *self_).state(c).closed : false; }

int Context::select(std::span<SelectCase> cases, Duration timeout) {
  if (cases.empty()) throw std::logic_error("select with no case");
  return ops(*sim_, *self_).select(cases, timeout);
}

CancelContext Context::make_context(Atom name) { return CancelContext{make_chan(0, name)}; }

namespace {

const char* const kCanceled = "context canceled";           // context.Canceled.Error()
const char* const kDeadlineExceeded = "context deadline exceeded";  // context.DeadlineExceeded.Error()

/// Closes a context's done channel, saying why, unless it is closed already.
void close_context(Context& ctx, const CancelContext& c, const char* why) {
  if (ctx.chan_closed(c.done)) return;
  Kernel::of(ctx.simulation()).chans[c.done.id].ctx_err = why;
  ctx.chan_close(c.done);
}

}  // namespace

CancelContext Context::make_context_with_timeout(Atom name, Duration timeout) {
  const CancelContext c = make_context(name);
  if (timeout <= Duration::zero()) {
    close_context(*this, c, kDeadlineExceeded);
    return c;
  }
  SpawnOptions o;
  o.label = Label{Atom(std::string(name.text()) + ".timer"), 1};
  spawn(
      [c, timeout](Context& g) {
        std::array<SelectCase, 1> done{SelectCase::recv(c.done)};
        if (g.select(done, timeout) == -1) close_context(g, c, kDeadlineExceeded);
      },
      o);
  return c;
}

void Context::cancel(const CancelContext& c) { close_context(*this, c, kCanceled); }

std::string_view Context::context_err(const CancelContext& c) const {
  if (!chan_closed(c.done)) return {};
  const char* why = Kernel::of(*sim_).chans[c.done.id].ctx_err;
  return why == nullptr ? kCanceled : why;  // a done channel closed by hand: as cancel
}

WaitGroup Context::make_waitgroup(Atom name) {
  auto& k = Kernel::of(*sim_);
  k.check(self_);
  k.wgs.push_back(WaitGroupState{name, self_->node_ix, 0, Chan{}});
  return WaitGroup{static_cast<std::uint32_t>(k.wgs.size() - 1)};
}

namespace {

WaitGroupState& wg_state(Kernel::Impl& k, const Process* self, WaitGroup wg) {
  if (wg.id == 0 || wg.id >= k.wgs.size()) throw std::logic_error("not a WaitGroup");
  WaitGroupState& s = k.wgs[wg.id];
  if (s.node != self->node_ix)
    throw std::logic_error("WaitGroup " + std::string(s.name.text()) + " belongs to node " + std::string(k.nodes[s.node].name.text()));
  return s;
}

}  // namespace

void Context::wg_add(WaitGroup wg, std::int64_t delta) {
  auto& k = Kernel::of(*sim_);
  k.check(self_);
  WaitGroupState& s = wg_state(k, self_, wg);
  s.count += delta;
  if (s.count < 0) throw std::runtime_error("sync: negative WaitGroup counter");
  if (s.count != 0 || !s.zero) return;
  const Chan zero = s.zero;
  s.zero = Chan{};  // the next wait, after the count rises again, waits on a new one
  chan_close(zero);
}

void Context::wg_wait(WaitGroup wg) {
  auto& k = Kernel::of(*sim_);
  k.check(self_);
  WaitGroupState& s = wg_state(k, self_, wg);
  if (s.count == 0) return;
  if (!s.zero) s.zero = make_chan(0, s.name);
  chan_recv(s.zero);  // ok = false when the count comes to zero and closes it
}

}  // namespace lic

// ---- OS signals and the task ------------------------------------------------------------------

namespace lic {

namespace {

const Atom kSigterm("sigterm");
const Atom kSigkill("sigkill");

/// The runtime offers `v` on `c` without waiting (Go's signal delivery): handed to a receiver
/// that waits, buffered if there is room, dropped otherwise. Traced as a chan_send from pid 0.
void offer(Kernel::Impl& k, Chan c, Payload v) {
  ChanState& s = k.chans[c.id];
  if (s.closed) return;
  const auto world_send = [&](Pid to) {
    if (!k.sim.trace().enabled()) return;
    TraceEvent e;
    e.time = k.sim.now();
    e.kind = EventKind::chan_send;
    e.node = k.nodes[s.node].name;
    e.tag = s.name;
    e.other = to;
    e.msg = s.buf.size();
    k.sim.trace().append(e);
  };
  if (!s.recvq.empty()) {
    auto [w, i] = s.recvq.front();
    w->cases[i].received = ChanRecv{std::move(v), true};
    world_send(w->p->pid);
    k.note(EventKind::chan_recv, w->p, w->p->pid, {}, {}, s.name, s.buf.size());
    ChanOps{k, w->p}.complete(*w, i, Pid{}, false);
  } else if (s.buf.size() < s.cap) {
    s.buf.push_back(std::move(v));
    world_send({});
  }
}

}  // namespace

void Context::notify_signals(Chan c) {
  auto& k = Kernel::of(*sim_);
  k.check(self_);
  ChanOps{k, self_}.state(c);  // a channel of this node
  self_->signal_chan = c;
}

void Context::set_main() {
  Kernel::of(*sim_).check(self_);
  self_->is_main = true;
}

void Simulation::signal_node(Atom node, Atom sig) {
  Impl& k = *impl_;
  const std::uint32_t n = k.node_of(node);
  if (!k.nodes[n].up) return;
  k.note_node(EventKind::signal, n, sig);
  if (sig == kSigkill) {
    crash_node(node);
    return;
  }
  if (sig != kSigterm) return;
  std::vector<Process*> asked;
  std::vector<Pid> roots;
  for (Process* p : k.procs) {
    if (p == nullptr || p->dead || p->dying || p->node_ix != n) continue;
    if (p->signal_chan) asked.push_back(p);
    if (!p->parent) roots.push_back(p->pid);
  }
  for (Process* p : asked) {
    k.note(EventKind::signal, p, p->pid, {}, {}, sig);
    offer(k, p->signal_chan, sig);
  }
  // Nobody asked: the runtime stops the node's roots, as OTP's init:stop does.
  if (asked.empty()) {
    for (Pid r : roots) exit(r, Reason::shutdown());
  }
}

}  // namespace lic
