// The event loop and the execution protocol: which fiber runs what, and when it switches.
//
// Invariants (checked by the kernel tests):
//  - exactly one fiber is the runner; only the runner pops events;
//  - a process's code runs only while `current` is that process;
//  - a fiber that is not the runner is either bound to a blocked process or parked in a pool.

#include <fmt/format.h>

#include <cassert>
#include <exception>
#include <utility>

#include "sim/kernel.hpp"

namespace lic {

const Atom kInitAck("$init_ack");

namespace {
// Pending events above which a firing timer prefetches what the next ones touch (the event
// queue's radix threshold, where the working set stops fitting in the cache).
constexpr std::size_t kPrefetchAbove = 16384;
}  // namespace

Process::~Process() {
  while (mbox_head != nullptr) {
    Message* m = mbox_head;
    mbox_head = m->next;
    MessageDeleter{}(m);
  }
}

Simulation::Impl::Impl(Simulation& s)
    : sim(s), queue(s.opts_.tie_break, s.stream_root(s.opts_.tie_break == TieBreak::fifo ? "" : "tie-break").derive("tie_break")) {
  node_of(s.opts_.default_node);  // node 0
  budgets_on = s.opts_.max_events != 0 || s.opts_.max_trace_bytes != 0 || s.opts_.max_events_at_instant != 0;
  if (budgets_on && (s.opts_.max_trace_bytes != 0 || s.opts_.max_events_at_instant != 0)) {
    s.trace_.on_checkpoint(&Impl::trace_checkpoint, this);
    s.trace_.set_checkpoint(kTraceCheckEvery);
  }
}

Simulation::Impl::~Impl() {
  for (Flight& f : flights) {
    if (f.msg != nullptr) MessageDeleter{}(f.msg);
  }
}

Simulation::Simulation(SimOptions opts)
    : opts_(opts),
      trace_(opts.trace),
      root_rng_(opts.seed),
      fibers_(opts.backend),
      impl_(std::make_unique<Impl>(*this)) {}

Simulation::~Simulation() { impl_->teardown(); }

Rng Simulation::stream_root(std::string_view key) {
  if (key.empty() || !streams_watched()) return root_rng_;
  if (opts_.record_streams && !streams_used_.contains(key)) streams_used_.emplace(key);
  const auto pin = opts_.pins.find(key);
  return pin == opts_.pins.end() ? root_rng_ : Rng(pin->second);
}

// ---- running -------------------------------------------------------------------------------

bool Simulation::step() {
  if (impl_->queue.empty()) return false;
  impl_->deadline = Time::max();
  impl_->budget = 1;
  if (impl_->runner == nullptr) impl_->runner = impl_->take_runner();
  fibers_.switch_to(impl_->runner);
  if (impl_->failure) std::rethrow_exception(std::exchange(impl_->failure, nullptr));
  return true;
}

void Simulation::run() { run_until(Time::max()); }

std::uint64_t Simulation::timers_cancelled() const { return impl_->queue.cancels(); }

void Simulation::run_until(Time t) {
  assert(fibers_.current() == fibers_.main() && "run() is called from outside the simulation");
  impl_->deadline = t;
  impl_->budget = UINT64_MAX;
  if (impl_->runner == nullptr) impl_->runner = impl_->take_runner();
  fibers_.switch_to(impl_->runner);
  if (impl_->failure) std::rethrow_exception(std::exchange(impl_->failure, nullptr));
  if (t != Time::max() && t > now_) now_ = t;
}

void Simulation::Impl::loop() {
  for (;;) {
    // The loop runs no process's code. A callback that blocked on this fiber's stack left
    // `current` naming its process when the loop moved here; clear it, or that process would
    // look "running" to enqueue (no wake-up) and to finish (no unwind).
    current = nullptr;
    drain_unwind();
    EventQueue::Entry e;
    if (budget > 0 && queue.pop_until(deadline, e)) {
      // Budgets off (the default, SimOptions): nothing to count, nothing to remember.
      if (budgets_on) {
        if (std::exception_ptr over = over_budget(e.time)) {
          failure = over;
          sim.fibers_.switch_to(sim.fibers_.main());
          if (tearing_down) throw FiberEnd{};
          continue;
        }
        if (e.item.type == kRun && sim.opts_.max_events_at_instant != 0) {
          recent[recent_next % recent.size()] = Pid{e.item.a};
          ++recent_next;
        }
        trace_at_pop = sim.trace_.count();
        sim.trace_.set_checkpoint(trace_at_pop + kTraceCheckEvery);
      }
      sim.now_ = e.time;
      ++sim.events_;
      --budget;
      dispatch(e);
      continue;
    }
    sim.fibers_.switch_to(sim.fibers_.main());
    if (tearing_down) throw FiberEnd{};
  }
}

std::exception_ptr Simulation::Impl::over_budget(Time t) {
  if (pending_budget) return std::exchange(pending_budget, nullptr);  // found between events
  const SimOptions& o = sim.opts_;
  at_instant = t == instant ? at_instant + 1 : 1;
  instant = t;
  const auto where = [&] { return fmt::format("at t={}, event {}", format_time(sim.now_), sim.events_); };
  // A timer cancelled before it fires is work no event shows (a fault re-armed at every restart
  // of its target cancels and sets one): it counts as an event here.
  const std::uint64_t cancels = queue.cancels();
  if (o.max_events != 0 && sim.events_ + cancels >= o.max_events)
    return std::make_exception_ptr(BudgetExceeded(fmt::format(
        "budget exceeded: {} events (--max-events) {}{}", o.max_events, where(),
        cancels == 0 ? std::string() : fmt::format(" (and {} timers cancelled before they fired)", cancels))));
  if (sim.events_ % 4096 == 0) {
    if (std::exception_ptr over = over_memory(where)) return over;
  }
  if (o.max_events_at_instant == 0 || at_instant <= o.max_events_at_instant) return nullptr;
  std::string who;
  for (std::uint64_t i = recent_next < recent.size() ? 0 : recent_next - recent.size(); i < recent_next; ++i) {
    const Pid p = recent[i % recent.size()];
    const Process* q = find(p);
    const std::string name = q != nullptr && !q->label.name.empty() ? std::string(q->label.name.text()) : fmt::format("<{}>", p.id);
    if (who.find(name) == std::string::npos) who += (who.empty() ? "" : ", ") + name;
  }
  return std::make_exception_ptr(BudgetExceeded(fmt::format(
      "livelock: {} events at t={} without virtual time passing (the last to run: {}); a retry or a message loop with no delay",
      at_instant - 1, format_time(t), who.empty() ? std::string("no process: timers and callbacks") : who)));
}

std::exception_ptr Simulation::Impl::over_memory(const std::function<std::string()>& where) {
  const SimOptions& o = sim.opts_;
  if (o.max_trace_bytes == 0) return nullptr;
  const std::size_t kept = sim.trace_.kept_bytes();
  if (kept > o.max_trace_bytes)
    return std::make_exception_ptr(BudgetExceeded(fmt::format("budget exceeded: the trace holds {} events, over {} MiB (--max-memory) {}",
                                                              sim.trace_.events().size(), o.max_trace_bytes >> 20, where())));
  // A run that streams its events instead of keeping them: what its sinks gather counts.
  if (const std::size_t held = sim.trace_.sink_bytes(); kept + held > o.max_trace_bytes)
    return std::make_exception_ptr(BudgetExceeded(fmt::format(
        "budget exceeded: what the run gathers from its events for its checks and reports holds {} MiB, over {} MiB (--max-memory) {}",
        (kept + held) >> 20, o.max_trace_bytes >> 20, where())));
  return nullptr;
}

void Simulation::Impl::trace_checkpoint(void* impl) { static_cast<Impl*>(impl)->between_events(); }

// Every kTraceCheckEvery trace events recorded with no kernel event run in between: the code
// recording them (a process's, a behaviour's callback, the world's) has not waited since. Over a
// budget, the run stops at the next safe place (pending_budget). One kernel event may record
// several trace events of its own (a node's crash records each death), so the livelock bound
// here is four times the events one instant may run.
void Simulation::Impl::between_events() {
  const SimOptions& o = sim.opts_;
  const std::uint64_t recorded = sim.trace_.count() - trace_at_pop;
  sim.trace_.set_checkpoint(sim.trace_.count() + kTraceCheckEvery);
  if (tearing_down || failure || pending_budget) return;
  const auto where = [&] { return fmt::format("at t={}, event {}", format_time(sim.now_), sim.events_); };
  std::exception_ptr over = over_memory(where);
  if (!over && o.max_events_at_instant != 0 && recorded > 4 * o.max_events_at_instant) {
    const std::string who = current != nullptr && !current->label.name.empty() ? std::string(current->label.name.text())
                            : current != nullptr                             ? fmt::format("<{}>", current->pid.id)
                                                                             : std::string("no process: timers and callbacks");
    over = std::make_exception_ptr(BudgetExceeded(fmt::format(
        "livelock: {} trace events at t={} with no event run between them (recorded by {}); a loop in a process's own code "
        "that never waits, such as a retry with no delay",
        recorded, format_time(sim.now_), who)));
  }
  pending_budget = over;
}

void Simulation::Impl::stop_for_budget() {
  failure = std::exchange(pending_budget, nullptr);
  budget = 0;
  // A process's own fiber goes back to the runner that resumed it, as if it waited; the runner's
  // own stack (a behaviour's callback) to main, as the loop does.
  FiberSystem::Fiber* self = sim.fibers_.current();
  assert(self != sim.fibers_.main() && "process code runs on a fiber");
  sim.fibers_.switch_to(self == runner ? sim.fibers_.main() : runner);
  throw FiberEnd{};
}

void Simulation::Impl::dispatch(const EventQueue::Entry& e) {
  switch (e.item.type) {
    case kRun: {
      Process* p = find(Pid{e.item.a});
      if (p == nullptr || p->dead) return;
      if (paused(p->node_ix)) {
        queue.push(nodes[p->node_ix].paused_until, e.item);
        return;
      }
      if (defer_if_suspended(p->pid, e.item)) return;
      p->run_pending = false;
      if (p->fiber != nullptr) {
        resume(p);
      } else if (p->is_behaviour) {
        behaviour_step(p);
      } else if (!p->started) {
        start_free_form(p);
      }
      return;
    }
    case kTimeout: {
      Process* p = find(Pid{e.item.a});
      if (p == nullptr || p->dead || !p->waiting || p->wait_token != e.item.b) return;
      if (paused(p->node_ix)) {
        queue.push(nodes[p->node_ix].paused_until, e.item);
        return;
      }
      if (defer_if_suspended(p->pid, e.item)) return;
      p->timed_out = true;
      p->waiting = false;
      resume(p);
      return;
    }
    case kTimer: {
      // Only when the pending events are many (the queue's radix threshold): below, what they
      // touch is in the cache and the look-ahead would only cost instructions (W1's ring).
      if (queue.size() > kPrefetchAbove) prefetch_timers();
      if (paused_nodes != 0) {
        // A timer for a process on a paused node fires when the pause ends.
        const Process* p = find(timers.peek(static_cast<std::uint32_t>(e.item.a),
                                            static_cast<std::uint32_t>(e.item.b)));
        if (p != nullptr && paused(p->node_ix)) {
          queue.push(nodes[p->node_ix].paused_until, e.item);
          return;
        }
      }
      Pid to;
      MessagePtr m = timers.take(static_cast<std::uint32_t>(e.item.a),
                                 static_cast<std::uint32_t>(e.item.b), to);
      if (!m) return;
      Process* p = find(to);
      if (p == nullptr || p->dead) {
        note(EventKind::drop, nullptr, to, m->from, Reason::noproc(), m->tag, m->id);
        return;
      }
      note(EventKind::deliver, p, to, m->from, {}, m->tag, m->id);
      enqueue(p, std::move(m));
      return;
    }
    case kCallback: {
      auto it = callbacks.find(e.seq);
      if (it == callbacks.end()) return;
      std::function<void()> fn = std::move(it->second);
      callbacks.erase(it);
      try {
        fn();
      } catch (const FiberEnd&) {
        throw;
      } catch (...) {
        // World code (a test, a fault injector) failed: stop and rethrow from run().
        failure = std::current_exception();
        budget = 0;
      }
      return;
    }
    case kNet:
      land(static_cast<std::uint32_t>(e.item.a), e.item.b);
      return;
    case kTickCheck:
      tick_check(static_cast<std::uint32_t>(e.item.a >> 32), static_cast<std::uint32_t>(e.item.a), e.item.b);
      return;
    case kConnClose: {
      const auto s = static_cast<std::uint32_t>(e.item.a >> 32);
      const auto o = static_cast<std::uint32_t>(e.item.a);
      const Conn& cn = conn(s, o);
      if (cn.up[side_of(s, o)] && cn.token[side_of(s, o)] == e.item.b) lose_side(s, o, Atom("connection_closed"));
      return;
    }
    case kConnRetry:
      attempt_retry(static_cast<std::uint32_t>(e.item.a >> 32), static_cast<std::uint32_t>(e.item.a), e.item.b);
      return;
    case kConnAttempt:
      attempt_failed(static_cast<std::uint32_t>(e.item.a >> 32), static_cast<std::uint32_t>(e.item.a), e.item.b);
      return;
    case kResume: {
      --paused_nodes;
      const auto n = static_cast<std::uint32_t>(e.item.a);
      if (nodes[n].up && sim.now_ == nodes[n].paused_until) note_node(EventKind::node_resume, n);
      return;
    }
    case kResumeProc: {
      const auto it = suspended.find(e.item.a);
      if (it == suspended.end() || it->second.until != sim.now_) return;  // extended, or resumed early
      resume_suspended(e.item.a);
      return;
    }
    default:
      assert(false && "unknown event type");
  }
}

void Simulation::Impl::resume_suspended(std::uint64_t pid) {
  const auto it = suspended.find(pid);
  if (it == suspended.end()) return;
  std::vector<EventQueue::Item> due = std::move(it->second.deferred);
  suspended.erase(it);
  const Process* p = find(Pid{pid});
  if (p == nullptr || p->dead) return;
  note(EventKind::process_resume, p, p->pid);
  for (const EventQueue::Item& item : due) queue.push(sim.now_, item);
}

// With a million processes, a timer's slot, its receiver's pid entry and record, its message
// and the receiver's behaviour lie far apart and far from the cache; read one after the other
// as the event runs, each costs a full memory latency (docs/benchmarks.md, W3 at 1M). The queue
// knows which timers fire next: for the kAhead-th and the one before, fetch the lines their
// event names (the slot, the pid entry); for the second next, the lines those point to (the
// record, the message); for the next, the behaviour the record points to. Each stage's lines
// have arrived by the time the next stage reads them. Prefetches change no state and no order.
void Simulation::Impl::prefetch_timers() {
  constexpr std::size_t kAhead = 4;
  EventQueue::Item next[kAhead];
  const std::size_t n = queue.upcoming(next, kAhead);
  std::size_t t = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (next[i].type != kTimer) continue;
    ++t;
    const std::uint64_t pid = next[i].a >> 32;
    const auto slot = static_cast<std::uint32_t>(next[i].a);
    if (pid == 0 || pid >= procs.size()) continue;
    if (t >= kAhead - 1) {
      __builtin_prefetch(&procs[pid]);
      timers.prefetch_slot(slot);
      continue;
    }
    const Process* p = procs[pid];
    if (p == nullptr) continue;
    if (t == 2) {
      __builtin_prefetch(p);
      __builtin_prefetch(reinterpret_cast<const char*>(p) + 64);
      timers.prefetch_message(slot);
    } else {
      __builtin_prefetch(p->behaviour.get());
    }
  }
}

void Simulation::Impl::schedule_run(Process* p) {
  if (p->run_pending || p->dead) return;
  p->run_pending = true;
  queue.push(sim.now_, EventQueue::Item{kRun, 0, p->pid.id});
}

// ---- fibers --------------------------------------------------------------------------------

FiberSystem::Fiber* Simulation::Impl::take_runner() {
  if (!runner_pool.empty()) {
    FiberSystem::Fiber* f = runner_pool.back();
    runner_pool.pop_back();
    return f;
  }
  return sim.fibers_.create(sim.opts_.runner_stack_bytes, &Impl::runner_main, this);
}

FiberSystem::Fiber* Simulation::Impl::runner_main(void* arg) {
  auto* k = static_cast<Impl*>(arg);
  try {
    k->loop();
  } catch (const FiberEnd&) {
  }
  return k->sim.fibers_.main();  // runners end only at teardown, driven from main
}

void Simulation::Impl::resume(Process* p) {
  Process* saved = current;
  current = p;
  sim.fibers_.switch_to(p->fiber);
  current = saved;
}

void Simulation::Impl::block(Process* p) {
  FiberSystem::Fiber* self = sim.fibers_.current();
  p->fiber = self;
  // A behaviour callback blocking on the runner's stack keeps that stack: hand the loop over.
  if (self == runner) runner = take_runner();
  sim.fibers_.switch_to(runner);
  // Resumed by resume(p) from the runner (woken, timed out, killed, or teardown).
}

void Simulation::Impl::park_runner(FiberSystem::Fiber* self) {
  runner_pool.push_back(self);
  sim.fibers_.switch_to(runner);
  // Taken from the pool: this fiber is the runner now.
  if (tearing_down) throw FiberEnd{};
}

void Simulation::Impl::check(Process* p) {
  if (tearing_down) throw FiberEnd{};
  if (pending_budget) [[unlikely]] stop_for_budget();
  if (p->dead) throw ProcessExit{p->exit_reason, false};
}

void Simulation::Impl::drain_unwind() {
  while (!unwind.empty()) {
    Process* p = unwind.back();
    unwind.pop_back();
    resume(p);  // it throws ProcessExit from wait(); its handler disposes of the record
  }
}

MessagePtr Simulation::Impl::wait(Process* p, Match match, Duration timeout) {
  check(p);
  if (MessagePtr m = take_match(p, match)) return m;
  if (timeout <= Duration::zero()) return nullptr;
  const Time until = timeout == Duration::max() ? Time::max() : sim.now_ + nodes[p->node_ix].to_true(timeout);
  for (;;) {
    p->waiting = true;
    p->timed_out = false;
    p->wait_match = &match;
    const std::uint32_t token = ++p->wait_token;
    const bool timed = until != Time::max();
    const std::uint64_t timer = timed ? queue.push(until, EventQueue::Item{kTimeout, token, p->pid.id}) : 0;
    block(p);
    p->waiting = false;
    p->wait_match = nullptr;
    // Woken before the timeout (or ended): the timeout must not fire later and move the clock
    // past the last thing that happened.
    if (timed && !p->timed_out) queue.cancel(timer);
    check(p);
    if (p->timed_out) return nullptr;
    if (MessagePtr m = take_match(p, match)) return m;
    if (sim.now_ >= until) return nullptr;
  }
}

bool Simulation::Impl::park(Process* p, Duration timeout) {
  check(p);
  const Time until = timeout == Duration::max() ? Time::max() : sim.now_ + nodes[p->node_ix].to_true(timeout);
  p->waiting = true;
  p->timed_out = false;
  p->wait_match = nullptr;  // no message wakes it
  const std::uint32_t token = ++p->wait_token;
  const bool timed = until != Time::max();
  const std::uint64_t timer = timed ? queue.push(until, EventQueue::Item{kTimeout, token, p->pid.id}) : 0;
  block(p);
  p->waiting = false;
  if (timed && !p->timed_out) queue.cancel(timer);
  check(p);
  return !p->timed_out;
}

void Simulation::Impl::unpark(Process* p) {
  if (p->dead || !p->waiting || p->wait_match != nullptr) return;
  p->waiting = false;
  ++p->wait_token;  // the pending timeout is now stale
  schedule_run(p);
}

// ---- free-form processes -------------------------------------------------------------------

void Simulation::Impl::start_free_form(Process* p) {
  p->started = true;
  const bool pooled = p->stack_bytes == sim.opts_.process_stack_bytes;
  if (pooled && !process_pool.empty()) {
    p->fiber = process_pool.back();
    process_pool.pop_back();
  } else {
    p->fiber = sim.fibers_.create(p->stack_bytes, &Impl::process_main, this);
  }
  resume(p);
}

FiberSystem::Fiber* Simulation::Impl::process_main(void* arg) {
  auto* k = static_cast<Impl*>(arg);
  Simulation& sim = k->sim;
  for (;;) {
    Process* p = k->current;  // resume() set it before switching here
    Reason reason = Reason::normal();
    try {
      Context ctx(sim, *p);
      (*p->body)(ctx);
      k->check(p);  // a swallowed kill or teardown still ends the process as such
    } catch (const ProcessExit& e) {
      reason = e.reason;
    } catch (const FiberEnd&) {
      return sim.fibers_.main();
    } catch (const std::exception& e) {
      reason = Reason::error(Atom(e.what()));
    } catch (...) {
      reason = Reason::error(Atom("unknown_exception"));
    }
    if (k->tearing_down) return sim.fibers_.main();
    if (!p->dead) k->end_process(p, reason);
    FiberSystem::Fiber* self = p->fiber;
    const bool pooled = p->stack_bytes == sim.opts_.process_stack_bytes;
    p->fiber = nullptr;
    k->dispose(p);
    if (!pooled) return k->runner;
    k->process_pool.push_back(self);
    sim.fibers_.switch_to(k->runner);
    if (k->tearing_down) return sim.fibers_.main();
  }
}

// ---- behaviour processes -------------------------------------------------------------------

void Simulation::Impl::behaviour_step(Process* p) {
  FiberSystem::Fiber* self = sim.fibers_.current();
  MessagePtr m;
  if (p->started) {
    if (p->mbox_head == nullptr) return;
    m.reset(p->mbox_head);
    p->mbox_head = m->next;
    if (p->mbox_head == nullptr) p->mbox_tail = nullptr;
    m->next = nullptr;
    --p->mbox_size;
    mailbox_took(p, *m);
  }
  current = p;
  run_callback(p, m.get());
  current = nullptr;
  m.reset();
  // The callback may have blocked and been resumed by another runner: then this fiber is no
  // longer the runner and goes back to the pool once the process is let go.
  if (p->dead) {
    p->fiber = nullptr;
    dispose(p);
  } else {
    p->fiber = nullptr;
    if (p->mbox_head != nullptr) schedule_run(p);
  }
  if (runner != self) park_runner(self);
}

void Simulation::Impl::run_callback(Process* p, Message* m) {
  Context ctx(sim, *p);
  Behaviour& b = *p->behaviour;
  if (!p->started) {
    run_init(p, ctx);
    return;
  }
  try {
    switch (m->kind) {
      case MsgKind::call: {
        CallReply r = b.handle_call(ctx, *m, From{m->from, m->ref});
        check(p);
        if (r.has_reply) ctx.reply(From{m->from, m->ref}, r.tag, std::move(r.payload));
        break;
      }
      case MsgKind::cast:
        b.handle_cast(ctx, *m);
        break;
      case MsgKind::exit:
        // gen_server: an exit signal from the parent, trapped, stops the server (terminate runs).
        // A process the world spawned has the world (Pid{}) as its parent: Simulation::exit
        // stops it gracefully, as a parent supervisor would.
        if (m->from == p->parent) {
          p->stop_requested = true;
          p->stop_reason = m->reason;
        } else {
          b.handle_info(ctx, *m);
        }
        break;
      default:
        b.handle_info(ctx, *m);
    }
    check(p);
    if (p->stop_requested) finish_behaviour(p, p->stop_reason, true);
  } catch (const ProcessExit& e) {
    if (!p->dead) finish_behaviour(p, e.reason, e.self_requested);
  } catch (const FiberEnd&) {
    throw;
  } catch (const std::exception& e) {
    if (!p->dead) finish_behaviour(p, Reason::error(Atom(e.what())), true);
  } catch (...) {
    if (!p->dead) finish_behaviour(p, Reason::error(Atom("unknown_exception")), true);
  }
}

void Simulation::Impl::run_init(Process* p, Context& ctx) {
  // gen_server/proc_lib: init's result is acknowledged to the spawner (when it asked, for a
  // synchronous start) before the process ends on ignore, stop or a crash; terminate never runs
  // for a failed init.
  p->started = true;
  InitResult r;
  try {
    r = p->behaviour->init(ctx);
    check(p);
  } catch (const ProcessExit& e) {
    if (p->dead) return;
    r = InitResult::stop(e.reason);
  } catch (const FiberEnd&) {
    throw;
  } catch (const std::exception& e) {
    r = InitResult::stop(Reason::error(Atom(e.what())));
  } catch (...) {
    r = InitResult::stop(Reason::error(Atom("unknown_exception")));
  }
  if (p->ack_init) {
    MessagePtr ack = make_message();
    ack->tag = kInitAck;
    ack->reason = r.status == InitResult::Status::ok       ? Reason::normal()
                  : r.status == InitResult::Status::ignore ? Reason::other(Atom("ignore"))
                                                           : r.reason;
    ack->payload = static_cast<int>(r.status);
    send(p->pid, p, p->parent, std::move(ack));
  }
  if (r.status == InitResult::Status::ignore) {
    end_process(p, Reason::normal());
  } else if (r.status == InitResult::Status::stop) {
    end_process(p, r.reason);
  }
}

void Simulation::Impl::finish_behaviour(Process* p, Reason r, bool run_terminate) {
  if (run_terminate) {
    p->stop_requested = false;
    Context ctx(sim, *p);
    try {
      p->behaviour->terminate(ctx, r);
    } catch (const ProcessExit& e) {
      if (p->dead) return;
      r = e.reason;
    } catch (const FiberEnd&) {
      throw;
    } catch (const std::exception& e) {
      r = Reason::error(Atom(e.what()));
    } catch (...) {
      r = Reason::error(Atom("unknown_exception"));
    }
  }
  if (!p->dead) end_process(p, r);
}

// ---- teardown ------------------------------------------------------------------------------

void Simulation::Impl::teardown() {
  tearing_down = true;
  FiberSystem& f = sim.fibers_;
  // Unwind every stack still holding process frames, then every parked fiber; each ends by
  // switching back here.
  for (std::size_t i = 1; i < procs.size(); ++i) {
    Process* p = procs[i];
    if (p != nullptr && p->fiber != nullptr && p->started) {
      current = p;
      f.switch_to(p->fiber);
      current = nullptr;
    }
  }
  for (Process* p : unwind) {
    if (p->fiber != nullptr) f.switch_to(p->fiber);
  }
  for (FiberSystem::Fiber* r : runner_pool) f.switch_to(r);
  for (FiberSystem::Fiber* r : process_pool) f.switch_to(r);
  if (runner != nullptr) f.switch_to(runner);
  for (Process* p : unwind) destroy(p);
  for (Process* p : procs) {
    if (p != nullptr) destroy(p);
  }
  procs.clear();
}

}  // namespace lic
