#include "supervision/reference_model.hpp"

#include <algorithm>
#include <deque>
#include <memory>
#include <stdexcept>

namespace lic::supervision::model {

Node root(std::string id, SupFlags flags, std::vector<Node> children) {
  Node n;
  n.spec.id = std::move(id);
  n.spec.type = ChildType::supervisor;
  n.spec.shutdown = Shutdown::infinity();
  n.flags = flags;
  n.children = std::move(children);
  return n;
}

Reason init_failure() { return Reason::error(Atom("init_failed")); }

std::string to_string(const Event& e) {
  static const char* const kNames[] = {"spawn", "exit", "max_intensity", "shutdown_error", "auto_shutdown", "skipped"};
  std::string s = format_time(e.at) + " " + kNames[static_cast<int>(e.kind)] + " " + e.path;
  if (e.instance != 0) s += "#" + std::to_string(e.instance);
  if (!e.reason.empty()) s += " " + e.reason;
  return s;
}

namespace {

void collect_workers(const Node& n, const std::string& path, std::vector<std::string>& out) {
  for (const Node& c : n.children) {
    const std::string p = path + "/" + c.spec.id;
    if (c.spec.type == ChildType::worker) {
      out.push_back(p);
    } else {
      collect_workers(c, p, out);
    }
  }
}

/// The interpreter. One supervisor instance is a `Sup`; it holds one `Slot` per child spec
/// still present, in start order. Everything happens on one thread of control with one clock,
/// as the tree does when one fault at a time meets a quiet tree.
class Interpreter {
 public:
  explicit Interpreter(const Node& root) : root_(root) {}

  std::vector<Event> run(const std::vector<Injection>& injections, std::string* not_quiet, Time* not_quiet_at) {
    // The root is started by the world (no parent to restart it).
    auto top = std::make_unique<Sup>();
    top->node = &root_;
    top->path = "/" + root_.spec.id;
    top->instance = 1;
    emit(Happened::spawn, top->path, 1);
    Reason why;
    if (start_children(*top, why)) {
      top_ = std::move(top);
    } else {
      emit(Happened::exit, "/" + root_.spec.id, 1, why);
    }
    for (const Injection& inj : injections) {
      // The tree is quiet from now_ on (the last event, or the last latency after it).
      if (!inj.at) {
        now_ = now_ + inj.after;
      } else if (*inj.at >= now_) {
        now_ = *inj.at;
      } else if (not_quiet != nullptr) {
        *not_quiet = "the fault at " + format_time(*inj.at) + " on " + (inj.path.empty() ? std::string(inj.node.text()) : inj.path) +
                     " comes before the tree is quiet again at " + format_time(now_) +
                     " (the model predicts one fault at a time)";
        if (not_quiet_at != nullptr) *not_quiet_at = *inj.at;
        break;
      }
      switch (inj.fault) {
        case Fault::process: inject(inj); break;
        case Fault::crash_node: crash_node(inj.node); break;
        case Fault::restart_node: std::erase(down_, inj.node); break;
      }
    }
    return std::move(out_);
  }

 private:
  struct Sup;
  struct Slot {
    const Node* node = nullptr;
    bool running = false;     // has a process (its supervisor holds a pid)
    bool restarting = false;  // a failed restart waits for its retry
    bool exit_waiting = false;  // its process ended with its node; the EXIT waits in the mailbox
    std::uint32_t starts = 0;
    std::uint64_t spawned = 0;  // when its process was spawned, in spawn order (pid order)
    std::unique_ptr<Sup> sub;  // a running child supervisor
  };
  /// A message waiting in a supervisor's mailbox: a child's EXIT, or its own try_again_restart.
  struct Mail {
    bool try_again = false;
    const Node* child = nullptr;
    Reason reason;
  };
  struct Sup {
    const Node* node = nullptr;
    std::string path;
    std::uint32_t instance = 0;
    Sup* parent = nullptr;
    std::vector<Slot> slots;  // start order
    std::vector<std::int64_t> stamps;
    std::deque<Mail> mailbox;
    bool alive = true;
  };

  void emit(Happened k, const std::string& path, std::uint32_t instance, const Reason* r = nullptr) {
    out_.push_back({now_, k, path, instance, r != nullptr ? to_string(*r) : std::string()});
  }
  void emit(Happened k, const std::string& path, std::uint32_t instance, const Reason& r) {
    emit(k, path, instance, &r);
  }

  static std::string child_path(const Sup& s, const Slot& c) { return s.path + "/" + c.node->spec.id; }

  std::size_t slot_of(const Sup& s, const std::string& id) const {
    for (std::size_t i = 0; i < s.slots.size(); ++i) {
      if (s.slots[i].node->spec.id == id) return i;
    }
    return s.slots.size();
  }

  // --- starting ------------------------------------------------------------------------------

  enum class Start { ok, ignore, error };

  /// Starts the children of a new supervisor instance in order; on a failure, stops those
  /// started (reverse order) and reports the failure reason OTP's supervisor exits with.
  bool start_children(Sup& s, Reason& why) {
    for (const Node& c : s.node->children) s.slots.push_back(Slot{&c, false, false, false, 0, 0, nullptr});
    for (std::size_t i = 0; i < s.slots.size(); ++i) {
      Reason err;
      const Start r = start(s, i, err);
      if (r == Start::error) {
        stop_all(s);
        why = Reason::shutdown(Atom("{failed_to_start_child," + s.slots[i].node->spec.id + "," +
                                    to_string(err) + "}"));
        return false;
      }
      if (r == Start::ignore && s.slots[i].node->spec.restart == RestartType::temporary) {
        s.slots.erase(s.slots.begin() + static_cast<std::ptrdiff_t>(i));
        --i;
      }
    }
    return true;
  }

  Start start(Sup& s, std::size_t i, Reason& err) {
    Slot& c = s.slots[i];
    const std::string path = child_path(s, c);
    const std::uint32_t n = ++c.starts;
    c.restarting = false;
    c.spawned = ++spawns_;
    emit(Happened::spawn, path, n);
    if (c.node->spec.type == ChildType::worker) {
      const bool remote = !c.node->spec.node.empty();
      if (remote && is_down(c.node->spec.node)) {
        // Spawned onto a node that is down: the process never runs, the link fires at once.
        err = Reason::noconnection();
        emit(Happened::exit, path, n, err);
        return Start::error;
      }
      const auto& inits = c.node->inits;
      const InitOutcome o = inits.empty() ? InitOutcome::ok : inits[std::min<std::size_t>(n, inits.size()) - 1];
      // The worker's init runs at once on its node; its acknowledgement takes the path back.
      const Duration ack = remote ? kPathLatency : Duration::zero();
      if (o == InitOutcome::ignore) {
        emit(Happened::exit, path, n, Reason::normal());
        now_ = now_ + ack;
        return Start::ignore;
      }
      if (o == InitOutcome::error) {
        err = init_failure();
        emit(Happened::exit, path, n, err);
        now_ = now_ + ack;
        return Start::error;
      }
      c.running = true;
      now_ = now_ + ack;
      return Start::ok;
    }
    if (!c.node->spec.node.empty()) throw std::logic_error("model: supervisors run on the root's node");
    auto sub = std::make_unique<Sup>();
    sub->node = c.node;
    sub->path = path;
    sub->instance = n;
    sub->parent = &s;
    Reason why;
    if (!start_children(*sub, why)) {
      err = why;
      emit(Happened::exit, path, n, why);
      return Start::error;
    }
    c.sub = std::move(sub);
    c.running = true;
    return Start::ok;
  }

  // --- stopping ------------------------------------------------------------------------------

  /// The supervisor stops child i with its shutdown spec; the clock moves by what it waits.
  void stop(Sup& s, std::size_t i) {
    Slot& c = s.slots[i];
    c.restarting = false;
    if (!c.running) return;
    const std::string path = child_path(s, c);
    const Shutdown how = c.node->spec.shutdown;
    Reason got;
    if (c.exit_waiting) {
      // It ended with its node: monitor_child finds its EXIT in the mailbox and takes that
      // reason as the result, at once (OTP's shutdown/2); that EXIT is gone from the mailbox.
      std::erase_if(s.mailbox, [&c](const Mail& m) { return !m.try_again && m.child == c.node; });
      c.exit_waiting = false;
      c.running = false;
      got = Reason::noconnection();
      emit(Happened::shutdown_error, path, 0, got);  // noconnection is never a fine result
      return;
    }
    // To a worker on another node the shutdown (or kill) takes the path, and so does the DOWN.
    const Duration lat = c.node->spec.node.empty() ? Duration::zero() : kPathLatency;
    if (c.node->spec.type == ChildType::supervisor) {
      if (how.kind != Shutdown::Kind::infinity) throw std::logic_error("model: child supervisors have shutdown infinity");
      stop_all(*c.sub);  // its terminate: its own children, reverse order
      got = Reason::shutdown();
      c.sub->alive = false;
      graveyard_.push_back(std::move(c.sub));
    } else if (how.kind == Shutdown::Kind::brutal_kill) {
      now_ = now_ + lat;
      got = Reason::killed();
    } else {
      const bool timed = how.kind == Shutdown::Kind::timeout;
      // The timeout runs from the moment the supervisor asks; the kill then takes the path too.
      switch (c.node->stop) {
        case StopStyle::prompt:
          now_ = now_ + lat;
          got = Reason::shutdown();
          break;
        case StopStyle::delay:
          if (timed && how.timeout <= c.node->stop_delay) {
            now_ = now_ + how.timeout + lat;
            got = Reason::killed();
          } else {
            now_ = now_ + lat + c.node->stop_delay;
            got = Reason::shutdown();
          }
          break;
        case StopStyle::stall:
          if (!timed) throw std::logic_error("model: a stalling worker with shutdown infinity hangs");
          now_ = now_ + how.timeout + lat;
          got = Reason::killed();
          break;
      }
    }
    emit(Happened::exit, path, c.starts, got);
    now_ = now_ + lat;  // the DOWN on its way back
    c.running = false;
    // OTP's shutdown/2 accepts killed after brutal_kill and shutdown otherwise; a non-permanent
    // child may also have ended normal / shutdown / {shutdown, _}.
    const Reason expected = how.kind == Shutdown::Kind::brutal_kill ? Reason::killed() : Reason::shutdown();
    const bool fine = got == expected || (c.node->spec.restart != RestartType::permanent && got.is_clean());
    if (!fine) emit(Happened::shutdown_error, path, 0, got);
  }

  void stop_all(Sup& s) {
    for (std::size_t i = s.slots.size(); i-- > 0;) stop(s, i);
  }

  // --- exits and restarts --------------------------------------------------------------------

  /// The supervisor `s` itself ends with `why` (it has already stopped its children).
  void supervisor_exited(Sup& s, const Reason& why) {
    s.alive = false;
    emit(Happened::exit, s.path, s.instance, why);
    Sup* parent = s.parent;
    if (parent == nullptr) {
      graveyard_.push_back(std::move(top_));
      return;
    }
    const std::size_t i = slot_of(*parent, s.node->spec.id);
    Slot& slot = parent->slots[i];
    graveyard_.push_back(std::move(slot.sub));  // `s` stays valid for the callers' frames
    exited(*parent, i, why);
    handle_mail(*parent);
  }

  void give_up(Sup& s) {
    stop_all(s);
    supervisor_exited(s, Reason::shutdown());
  }

  bool is_clean(const Reason& r) { return r.is_clean(); }

  /// Child i of `s` ended with `why` (not by the supervisor's own hand).
  void exited(Sup& s, std::size_t i, const Reason& why) {
    Slot& c = s.slots[i];
    c.running = false;
    const RestartType type = c.node->spec.restart;
    const bool wanted = type == RestartType::permanent || (type == RestartType::transient && !is_clean(why));
    if (!wanted) {
      const bool significant = c.node->spec.significant;
      if (type == RestartType::temporary) s.slots.erase(s.slots.begin() + static_cast<std::ptrdiff_t>(i));
      if (auto_shutdown(s, significant)) {
        emit(Happened::auto_shutdown, s.path, s.instance);
        give_up(s);
      }
      return;
    }
    restart(s, i);
  }

  /// OTP's restart/2: counts one restart (the first, or the retry of a start that failed),
  /// then restarts the strategy's scope. A start that fails is retried (try_again_restart)
  /// after whatever already waits in the mailbox.
  void restart(Sup& s, std::size_t failed) {
    if (!count_restart(s)) {
      emit(Happened::max_intensity, s.path, s.instance);
      if (s.slots[failed].node->spec.restart == RestartType::temporary) {
        s.slots.erase(s.slots.begin() + static_cast<std::ptrdiff_t>(failed));
      } else {
        s.slots[failed].restarting = false;
      }
      give_up(s);
      return;
    }
    if (const std::optional<std::size_t> again = restart_scope(s, failed)) {
      s.mailbox.push_back(Mail{true, s.slots[*again].node, {}});
    }
  }

  /// The supervisor handles its mailbox in order while it lives: a child's EXIT (unless a
  /// shutdown already read it), a retry (unless the child is no longer waiting for one).
  void handle_mail(Sup& s) {
    while (s.alive && !s.mailbox.empty()) {
      const Mail m = s.mailbox.front();
      s.mailbox.pop_front();
      const std::size_t k = slot_of(s, m.child->spec.id);
      if (k == s.slots.size()) continue;
      if (m.try_again && s.slots[k].restarting) {
        restart(s, k);
      } else if (!m.try_again && s.slots[k].exit_waiting) {
        s.slots[k].exit_waiting = false;
        exited(s, k, m.reason);
      }
    }
  }

  /// OTP's auto_shutdown, for a significant child that was not restarted.
  bool auto_shutdown(const Sup& s, bool significant) const {
    const AutoShutdown a = s.node->flags.auto_shutdown;
    if (a == AutoShutdown::never || !significant) return false;
    if (a == AutoShutdown::any_significant) return true;
    return std::none_of(s.slots.begin(), s.slots.end(), [](const Slot& c) {
      return c.node->spec.significant && (c.running || c.restarting);
    });
  }

  /// The restart window: OTP keeps restart times in whole seconds and counts those at least
  /// `now - period` (seconds); the precise window counts those at most `period` old.
  bool count_restart(Sup& s) {
    const SupFlags& f = s.node->flags;
    const bool whole = f.window == IntensityWindow::otp_seconds;
    const std::int64_t unit = whole ? 1'000'000'000 : 1;
    const std::int64_t stamp = now_.ns / unit;  // virtual time is never negative
    const std::int64_t oldest = stamp - f.period.ns / unit;
    std::erase_if(s.stamps, [oldest](std::int64_t t) { return t < oldest; });
    s.stamps.push_back(stamp);
    return s.stamps.size() <= f.intensity;
  }

  /// Restarts child `failed` with the strategy's scope; the position of a child whose start
  /// failed (to retry), or nothing.
  std::optional<std::size_t> restart_scope(Sup& s, std::size_t failed) {
    const Strategy st = s.node->flags.strategy;
    std::size_t first = failed;
    std::size_t last = failed + 1;
    if (st == Strategy::one_for_all) first = 0, last = s.slots.size();
    if (st == Strategy::rest_for_one) last = s.slots.size();
    // The group's running members stop in reverse start order; temporary members leave.
    std::vector<const Node*> group;
    for (std::size_t k = first; k < last; ++k) group.push_back(s.slots[k].node);
    for (std::size_t k = last; k-- > first;) {
      if (k != failed) stop(s, k);
    }
    for (std::size_t k = last; k-- > first;) {
      if (k != failed && s.slots[k].node->spec.restart == RestartType::temporary) {
        s.slots.erase(s.slots.begin() + static_cast<std::ptrdiff_t>(k));
      }
    }
    // Then every remaining member starts again in order, whether it was running or not.
    for (const Node* n : group) {
      const std::size_t k = slot_of(s, n->spec.id);
      if (k == s.slots.size()) continue;  // a temporary member that left
      Reason err;
      const Start r = start(s, k, err);
      if (r == Start::error) {
        s.slots[k].restarting = true;
        return k;
      }
      if (r == Start::ignore && n->spec.restart == RestartType::temporary) {
        s.slots.erase(s.slots.begin() + static_cast<std::ptrdiff_t>(k));
      }
    }
    return std::nullopt;
  }

  // --- faults --------------------------------------------------------------------------------

  void inject(const Injection& inj) {
    // Walk the path from the root through running supervisors.
    Sup* s = top_ && top_->alive ? top_.get() : nullptr;
    const std::string prefix = "/" + root_.spec.id;
    std::size_t at = inj.path.rfind(prefix, 0) == 0 ? prefix.size() : std::string::npos;
    std::size_t found = 0;
    bool ok = s != nullptr && at != std::string::npos;
    while (ok && at < inj.path.size()) {
      const std::size_t next = inj.path.find('/', at + 1);
      const std::string id = inj.path.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
      found = slot_of(*s, id);
      ok = found != s->slots.size() && s->slots[found].running && !s->slots[found].exit_waiting;
      if (!ok || next == std::string::npos) break;
      ok = s->slots[found].sub != nullptr;
      if (ok) s = s->slots[found].sub.get();
      at = next;
    }
    if (!ok || s->slots[found].node->spec.type != ChildType::worker) {
      emit(Happened::skipped, inj.path, 0);
      return;
    }
    const Reason why = inj.reason.kind == ReasonKind::kill ? Reason::killed() : inj.reason;
    emit(Happened::exit, inj.path, s->slots[found].starts, why);
    // From another node its EXIT takes the path to the supervisor.
    if (!s->slots[found].node->spec.node.empty()) now_ = now_ + kPathLatency;
    exited(*s, found, why);
    handle_mail(*s);
  }

  // --- nodes ---------------------------------------------------------------------------------

  bool is_down(Atom node) const { return std::find(down_.begin(), down_.end(), node) != down_.end(); }

  struct Hit {
    std::uint64_t spawned;
    Sup* sup;
    std::size_t slot;
  };

  void running_on(Sup& s, Atom node, std::vector<Hit>& out) {
    for (std::size_t i = 0; i < s.slots.size(); ++i) {
      const Slot& c = s.slots[i];
      if (c.sub) running_on(*c.sub, node, out);
      if (c.running && c.node->spec.type == ChildType::worker && c.node->spec.node == node) {
        out.push_back({c.spawned, &s, i});
      }
    }
  }

  /// Every worker on the node ends `killed` (pid order); its supervisor gets an EXIT
  /// noconnection for each (link order: the order they were spawned in) and handles them.
  void crash_node(Atom node) {
    if (is_down(node)) return;
    down_.push_back(node);
    std::vector<Hit> hits;
    if (top_ && top_->alive) running_on(*top_, node, hits);
    std::sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) { return a.spawned < b.spawned; });
    for (const Hit& h : hits) {
      if (h.sup != hits.front().sup) throw std::logic_error("model: the workers on a crashed node have one supervisor");
      Slot& c = h.sup->slots[h.slot];
      emit(Happened::exit, child_path(*h.sup, c), c.starts, Reason::killed());
      c.exit_waiting = true;
    }
    for (const Hit& h : hits) h.sup->mailbox.push_back(Mail{false, h.sup->slots[h.slot].node, Reason::noconnection()});
    if (!hits.empty()) handle_mail(*hits.front().sup);
  }

  const Node& root_;
  std::unique_ptr<Sup> top_;
  std::vector<std::unique_ptr<Sup>> graveyard_;  // ended instances, kept for frames still on them
  std::vector<Event> out_;
  std::vector<Atom> down_;  // nodes that crashed and have not restarted
  std::uint64_t spawns_ = 0;
  Time now_;
};

}  // namespace

std::vector<std::string> worker_paths(const Node& root) {
  std::vector<std::string> out;
  collect_workers(root, "/" + root.spec.id, out);
  return out;
}

std::vector<Event> predict(const Node& root, const std::vector<Injection>& injections,
                           std::string* not_quiet, Time* not_quiet_at) {
  return Interpreter(root).run(injections, not_quiet, not_quiet_at);
}

}  // namespace lic::supervision::model
