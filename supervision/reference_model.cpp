#include "supervision/reference_model.hpp"

#include <algorithm>
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

  std::vector<Event> run(const std::vector<Injection>& injections) {
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
      now_ = last_ + inj.after;
      inject(inj);
    }
    return std::move(out_);
  }

 private:
  struct Sup;
  struct Slot {
    const Node* node = nullptr;
    bool running = false;     // has a live process
    bool restarting = false;  // a failed restart waits for its retry
    std::uint32_t starts = 0;
    std::unique_ptr<Sup> sub;  // a running child supervisor
  };
  struct Sup {
    const Node* node = nullptr;
    std::string path;
    std::uint32_t instance = 0;
    Sup* parent = nullptr;
    std::vector<Slot> slots;  // start order
    std::vector<std::int64_t> stamps;
    bool alive = true;
  };

  void emit(Happened k, const std::string& path, std::uint32_t instance, const Reason* r = nullptr) {
    out_.push_back({now_, k, path, instance, r != nullptr ? to_string(*r) : std::string()});
    last_ = now_;
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
    for (const Node& c : s.node->children) s.slots.push_back(Slot{&c, false, false, 0, nullptr});
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
    emit(Happened::spawn, path, n);
    if (c.node->spec.type == ChildType::worker) {
      const auto& inits = c.node->inits;
      const InitOutcome o = inits.empty() ? InitOutcome::ok : inits[std::min<std::size_t>(n, inits.size()) - 1];
      if (o == InitOutcome::ignore) {
        emit(Happened::exit, path, n, Reason::normal());
        return Start::ignore;
      }
      if (o == InitOutcome::error) {
        err = init_failure();
        emit(Happened::exit, path, n, err);
        return Start::error;
      }
      c.running = true;
      return Start::ok;
    }
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
    if (c.node->spec.type == ChildType::supervisor) {
      if (how.kind != Shutdown::Kind::infinity) throw std::logic_error("model: child supervisors have shutdown infinity");
      stop_all(*c.sub);  // its terminate: its own children, reverse order
      got = Reason::shutdown();
      c.sub->alive = false;
      graveyard_.push_back(std::move(c.sub));
    } else if (how.kind == Shutdown::Kind::brutal_kill) {
      got = Reason::killed();
    } else {
      const bool timed = how.kind == Shutdown::Kind::timeout;
      switch (c.node->stop) {
        case StopStyle::prompt:
          got = Reason::shutdown();
          break;
        case StopStyle::delay:
          if (timed && how.timeout <= c.node->stop_delay) {
            now_ = now_ + how.timeout;
            got = Reason::killed();
          } else {
            now_ = now_ + c.node->stop_delay;
            got = Reason::shutdown();
          }
          break;
        case StopStyle::stall:
          if (!timed) throw std::logic_error("model: a stalling worker with shutdown infinity hangs");
          now_ = now_ + how.timeout;
          got = Reason::killed();
          break;
      }
    }
    emit(Happened::exit, path, c.starts, got);
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
    const bool restart = type == RestartType::permanent || (type == RestartType::transient && !is_clean(why));
    if (!restart) {
      const bool significant = c.node->spec.significant;
      if (type == RestartType::temporary) s.slots.erase(s.slots.begin() + static_cast<std::ptrdiff_t>(i));
      if (auto_shutdown(s, significant)) {
        emit(Happened::auto_shutdown, s.path, s.instance);
        give_up(s);
      }
      return;
    }
    std::size_t failed = i;
    // Each round counts one restart: the first, then each retry of a start that failed.
    for (;;) {
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
      const std::optional<std::size_t> again = restart_scope(s, failed);
      if (!again) return;
      failed = *again;
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
      ok = found != s->slots.size() && s->slots[found].running;
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
    exited(*s, found, why);
  }

  const Node& root_;
  std::unique_ptr<Sup> top_;
  std::vector<std::unique_ptr<Sup>> graveyard_;  // ended instances, kept for frames still on them
  std::vector<Event> out_;
  Time now_;
  Time last_;
};

}  // namespace

std::vector<std::string> worker_paths(const Node& root) {
  std::vector<std::string> out;
  collect_workers(root, "/" + root.spec.id, out);
  return out;
}

std::vector<Event> predict(const Node& root, const std::vector<Injection>& injections) {
  return Interpreter(root).run(injections);
}

}  // namespace lic::supervision::model
