// Property tests of the kernel (RapidCheck through Catch2): generated programs of processes that
// spawn, send, link, monitor, trap, kill and crash, interpreted in fresh Simulations.
//
// A generated program is plain data (Program below) with a readable operator<<, so a failing
// case prints the shrunk program; the interpreter turns it into process bodies. Every body runs
// a bounded script and ends or blocks; blocked processes are unwound when the Simulation goes.

#include <rapidcheck.h>

#include "sim/rc_prop.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sim/simulation.hpp"

using namespace lic;
using namespace lic::literals;

namespace {

const Atom kTags[3] = {Atom("a"), Atom("b"), Atom("c")};
const Atom kX("x");
const Atom kChildDone("child_done");
const Atom kSeq("seq");

// ---- the program language ------------------------------------------------------------------

enum class Why : std::uint8_t { normal, shutdown, shutdown_x, kill, error_x };

Reason reason_of(Why w) {
  switch (w) {
    case Why::normal: return Reason::normal();
    case Why::shutdown: return Reason::shutdown();
    case Why::shutdown_x: return Reason::shutdown(kX);
    case Why::kill: return Reason::kill();
    case Why::error_x: return Reason::error(kX);
  }
  return Reason::normal();
}

std::ostream& operator<<(std::ostream& os, Why w) {
  switch (w) {
    case Why::normal: return os << "normal";
    case Why::shutdown: return os << "shutdown";
    case Why::shutdown_x: return os << "{shutdown,x}";
    case Why::kill: return os << "kill";
    case Why::error_x: return os << "{error,x}";
  }
  return os << "?";
}

enum class Op : std::uint8_t {
  send,         ///< send(target, tag, step index)
  send_after,   ///< send_after(ms, target, tag, step index)
  receive,      ///< receive anything, timeout ms (0 only looks)
  sleep,        ///< sleep ms
  link,         ///< link(target)
  unlink,       ///< unlink(target)
  monitor,      ///< monitor(target), the ref pushed on a stack
  demonitor,    ///< demonitor the newest ref (flag: flush)
  spawn_child,  ///< a child that sleeps ms, tells its parent, then ends with `why` (flag: linked)
  trap_exit,    ///< trap_exit(flag)
  exit_other,   ///< exit(target, why)
  exit_self,    ///< exit(why)
  raise,        ///< throw std::runtime_error
};

struct Step {
  Op op = Op::sleep;
  int target = 0;  ///< a root process index; == the number of roots: "my last child" (or me)
  int ms = 0;
  int tag = 0;
  Why why = Why::normal;
  bool flag = false;
};

struct ProcSpec {
  bool trap = false;    ///< starts trapping exits
  bool linger = false;  ///< after its script, receives (bounded) instead of ending
  std::vector<Step> script;
};

struct WorldAction {
  int at_ms = 0;
  bool kill = true;  ///< sim.exit(target, why); otherwise sim.send(target, tag)
  int target = 0;
  Why why = Why::kill;
  int tag = 0;
};

struct Program {
  std::vector<ProcSpec> procs;
  std::vector<WorldAction> world;
};

void show_target(std::ostream& os, int target, std::size_t n) {
  if (static_cast<std::size_t>(target) >= n) {
    os << "child";
  } else {
    os << 'P' << target;
  }
}

void show_step(std::ostream& os, const Step& s, std::size_t n) {
  switch (s.op) {
    case Op::send:
      os << "send(";
      show_target(os, s.target, n);
      os << ", " << kTags[s.tag].text() << ")";
      return;
    case Op::send_after:
      os << "send_after(" << s.ms << "ms, ";
      show_target(os, s.target, n);
      os << ", " << kTags[s.tag].text() << ")";
      return;
    case Op::receive: os << "receive(" << s.ms << "ms)"; return;
    case Op::sleep: os << "sleep(" << s.ms << "ms)"; return;
    case Op::link:
      os << "link(";
      show_target(os, s.target, n);
      os << ")";
      return;
    case Op::unlink:
      os << "unlink(";
      show_target(os, s.target, n);
      os << ")";
      return;
    case Op::monitor:
      os << "monitor(";
      show_target(os, s.target, n);
      os << ")";
      return;
    case Op::demonitor: os << (s.flag ? "demonitor(newest, flush)" : "demonitor(newest)"); return;
    case Op::spawn_child:
      os << (s.flag ? "spawn_link" : "spawn") << "(child: sleep " << s.ms << "ms; exit " << s.why
         << ")";
      return;
    case Op::trap_exit: os << "trap_exit(" << (s.flag ? "true" : "false") << ")"; return;
    case Op::exit_other:
      os << "exit(";
      show_target(os, s.target, n);
      os << ", " << s.why << ")";
      return;
    case Op::exit_self: os << "exit(" << s.why << ")"; return;
    case Op::raise: os << "throw runtime_error"; return;
  }
}

std::ostream& operator<<(std::ostream& os, const Program& p) {
  const std::size_t n = p.procs.size();
  os << "Program{\n";
  for (std::size_t i = 0; i < n; ++i) {
    const ProcSpec& ps = p.procs[i];
    os << "  P" << i << (ps.trap ? " (trapping)" : "") << (ps.linger ? " (lingers)" : "") << ": [";
    for (std::size_t j = 0; j < ps.script.size(); ++j) {
      if (j > 0) os << "; ";
      show_step(os, ps.script[j], n);
    }
    os << "]\n";
  }
  os << "  world: [";
  for (std::size_t j = 0; j < p.world.size(); ++j) {
    const WorldAction& w = p.world[j];
    if (j > 0) os << "; ";
    os << "@" << w.at_ms << "ms ";
    if (w.kill) {
      os << "exit(P" << w.target << ", " << w.why << ")";
    } else {
      os << "send(P" << w.target << ", " << kTags[w.tag].text() << ")";
    }
  }
  return os << "]\n}";
}

// ---- generators ----------------------------------------------------------------------------

rc::Gen<Why> gen_why() {
  return rc::gen::element(Why::normal, Why::shutdown, Why::shutdown_x, Why::kill, Why::error_x);
}

rc::Gen<Op> gen_op() {
  // The ops that end a process are rarer, so that scripts get somewhere.
  return rc::gen::weightedElement<Op>({{6, Op::send},
                                       {3, Op::send_after},
                                       {5, Op::receive},
                                       {4, Op::sleep},
                                       {3, Op::link},
                                       {1, Op::unlink},
                                       {3, Op::monitor},
                                       {2, Op::demonitor},
                                       {3, Op::spawn_child},
                                       {2, Op::trap_exit},
                                       {2, Op::exit_other},
                                       {1, Op::exit_self},
                                       {1, Op::raise}});
}

rc::Gen<Step> gen_step(int n) {
  return rc::gen::apply(
      [](Op op, int target, int ms, int tag, Why why, bool flag) {
        return Step{op, target, ms, tag, why, flag};
      },
      gen_op(), rc::gen::inRange(0, n + 1), rc::gen::inRange(0, 6), rc::gen::inRange(0, 3),
      gen_why(), rc::gen::arbitrary<bool>());
}

rc::Gen<ProcSpec> gen_proc(int n) {
  return rc::gen::apply(
      [](bool trap, bool linger, std::vector<Step> script) {
        return ProcSpec{trap, linger, std::move(script)};
      },
      rc::gen::arbitrary<bool>(), rc::gen::arbitrary<bool>(),
      rc::gen::mapcat(rc::gen::inRange(0, 21), [n](int len) {
        return rc::gen::container<std::vector<Step>>(static_cast<std::size_t>(len), gen_step(n));
      }));
}

rc::Gen<WorldAction> gen_world_action(int n) {
  return rc::gen::apply(
      [](int at, bool kill, int target, Why why, int tag) {
        return WorldAction{at, kill, target, why, tag};
      },
      rc::gen::inRange(0, 25), rc::gen::arbitrary<bool>(), rc::gen::inRange(0, n), gen_why(),
      rc::gen::inRange(0, 3));
}

rc::Gen<Program> gen_program() {
  return rc::gen::mapcat(rc::gen::inRange(2, 13), [](int n) {
    return rc::gen::apply(
        [](std::vector<ProcSpec> procs, std::vector<WorldAction> world) {
          return Program{std::move(procs), std::move(world)};
        },
        rc::gen::container<std::vector<ProcSpec>>(static_cast<std::size_t>(n), gen_proc(n)),
        rc::gen::mapcat(rc::gen::inRange(0, 5), [n](int len) {
          return rc::gen::container<std::vector<WorldAction>>(static_cast<std::size_t>(len),
                                                              gen_world_action(n));
        }));
  });
}

// ---- the interpreter -----------------------------------------------------------------------

Duration ms(int v) { return kMillisecond * v; }

/// One interpretation of a program. `pids` is declared before `sim` so that it outlives the
/// process bodies, which read it, while the Simulation unwinds them.
struct Run {
  const Program& prog;
  std::vector<Pid> pids;
  Simulation sim;

  Run(const Program& p, SimOptions opts) : prog(p), sim(opts) {
    for (std::size_t i = 0; i < prog.procs.size(); ++i) {
      SpawnOptions o;
      o.trap_exit = prog.procs[i].trap;
      pids.push_back(sim.spawn([this, i](Context& ctx) { body(ctx, prog.procs[i]); }, o));
    }
    for (const WorldAction& w : prog.world) {
      const Pid target = pids[static_cast<std::size_t>(w.target)];
      if (w.kill) {
        const Reason r = reason_of(w.why);
        sim.schedule(Time{0} + ms(w.at_ms), [this, target, r] { sim.exit(target, r); });
      } else {
        const Atom tag = kTags[w.tag];
        sim.schedule(Time{0} + ms(w.at_ms), [this, target, tag] { sim.send(target, tag, -1); });
      }
    }
    sim.run();
  }

  static void child(Context& ctx, Pid parent, int life_ms, Why why) {
    ctx.sleep(ms(life_ms));
    ctx.send(parent, kChildDone, life_ms);
    if (why != Why::normal) ctx.exit(reason_of(why));
  }

  void body(Context& ctx, const ProcSpec& spec) const {
    std::vector<Ref> refs;
    Pid last_child;
    const auto resolve = [&](int target) -> Pid {
      if (static_cast<std::size_t>(target) < pids.size()) {
        return pids[static_cast<std::size_t>(target)];
      }
      return last_child ? last_child : ctx.self();
    };
    for (std::size_t i = 0; i < spec.script.size(); ++i) {
      const Step& s = spec.script[i];
      const int seq = static_cast<int>(i);
      switch (s.op) {
        case Op::send: ctx.send(resolve(s.target), kTags[s.tag], seq); break;
        case Op::send_after: ctx.send_after(ms(s.ms), resolve(s.target), kTags[s.tag], seq); break;
        case Op::receive: ctx.receive(ms(s.ms)); break;
        case Op::sleep: ctx.sleep(ms(s.ms)); break;
        case Op::link: ctx.link(resolve(s.target)); break;
        case Op::unlink: ctx.unlink(resolve(s.target)); break;
        case Op::monitor: refs.push_back(ctx.monitor(resolve(s.target))); break;
        case Op::demonitor:
          if (!refs.empty()) {
            ctx.demonitor(refs.back(), s.flag);
            refs.pop_back();
          }
          break;
        case Op::spawn_child: {
          const Pid me = ctx.self();
          const int life = s.ms;
          const Why why = s.why;
          Body b = [me, life, why](Context& c) { child(c, me, life, why); };
          last_child = s.flag ? ctx.spawn_link(std::move(b)) : ctx.spawn(std::move(b));
          break;
        }
        case Op::trap_exit: ctx.trap_exit(s.flag); break;
        case Op::exit_other: ctx.exit(resolve(s.target), reason_of(s.why)); break;
        case Op::exit_self: ctx.exit(reason_of(s.why));  // does not return
        case Op::raise: throw std::runtime_error("boom");
      }
    }
    if (spec.linger) {
      for (int i = 0; i < 64; ++i) ctx.receive();
    }
  }
};

struct Outcome {
  std::uint64_t hash = 0;
  std::uint64_t events = 0;  ///< trace events
  std::uint64_t steps = 0;   ///< kernel events processed
  std::size_t live = 0;
  std::int64_t end_ns = 0;
  bool operator==(const Outcome&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  return os << "{hash " << std::hex << o.hash << std::dec << ", " << o.events << " trace events, "
            << o.steps << " kernel events, " << o.live << " live, ends at " << o.end_ns << "ns}";
}

Outcome run_program(const Program& prog, std::uint64_t seed, TieBreak tb, FiberBackend backend,
                    TraceMode trace = TraceMode::keep) {
  Run r(prog, SimOptions{.seed = seed, .tie_break = tb, .backend = backend, .trace = trace});
  return Outcome{r.sim.trace().hash(), r.sim.trace().count(), r.sim.events_processed(),
                 r.sim.process_count(), r.sim.now().ns};
}

// ---- ordering programs ---------------------------------------------------------------------

struct SenderStep {
  bool sleep = false;
  int arg = 0;  ///< receiver index, or the sleep in ms
};

struct ReceiverSpec {
  int limit = -1;               ///< ends normally after this many messages; -1: never
  std::vector<int> sleeps_ms;   ///< after its k-th message it sleeps sleeps_ms[k % size]
};

struct OrderProgram {
  std::vector<std::vector<SenderStep>> senders;
  std::vector<ReceiverSpec> receivers;
};

std::ostream& operator<<(std::ostream& os, const OrderProgram& p) {
  os << "OrderProgram{\n";
  for (std::size_t s = 0; s < p.senders.size(); ++s) {
    os << "  S" << s << ": [";
    for (std::size_t j = 0; j < p.senders[s].size(); ++j) {
      const SenderStep& st = p.senders[s][j];
      if (j > 0) os << "; ";
      if (st.sleep) {
        os << "sleep(" << st.arg << "ms)";
      } else {
        os << "send(R" << st.arg << ")";
      }
    }
    os << "]\n";
  }
  for (std::size_t r = 0; r < p.receivers.size(); ++r) {
    os << "  R" << r << ": limit " << p.receivers[r].limit << ", sleeps [";
    for (std::size_t j = 0; j < p.receivers[r].sleeps_ms.size(); ++j) {
      os << (j > 0 ? " " : "") << p.receivers[r].sleeps_ms[j];
    }
    os << "]ms\n";
  }
  return os << "}";
}

rc::Gen<OrderProgram> gen_order_program() {
  return rc::gen::mapcat(rc::gen::inRange(1, 5), [](int receivers) {
    const auto step = rc::gen::apply(
        [](bool sleep, int to, int sleep_ms) { return SenderStep{sleep, sleep ? sleep_ms : to}; },
        rc::gen::weightedElement<bool>({{3, false}, {1, true}}), rc::gen::inRange(0, receivers),
        rc::gen::inRange(0, 3));
    const auto sender = rc::gen::mapcat(rc::gen::inRange(0, 25), [step](int len) {
      return rc::gen::container<std::vector<SenderStep>>(static_cast<std::size_t>(len), step);
    });
    const auto receiver = rc::gen::apply(
        [](bool limited, int limit, std::vector<int> sleeps) {
          return ReceiverSpec{limited ? limit : -1, std::move(sleeps)};
        },
        rc::gen::weightedElement<bool>({{3, false}, {1, true}}), rc::gen::inRange(0, 20),
        rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 3)));
    return rc::gen::apply(
        [](std::vector<std::vector<SenderStep>> s, std::vector<ReceiverSpec> r) {
          return OrderProgram{std::move(s), std::move(r)};
        },
        rc::gen::mapcat(rc::gen::inRange(1, 6),
                        [sender](int n) {
                          return rc::gen::container<std::vector<std::vector<SenderStep>>>(
                              static_cast<std::size_t>(n), sender);
                        }),
        rc::gen::container<std::vector<ReceiverSpec>>(static_cast<std::size_t>(receivers),
                                                      receiver));
  });
}

struct Received {
  Pid from;
  int seq = 0;
  std::uint64_t id = 0;
};

}  // namespace

// ---- properties ----------------------------------------------------------------------------

TEST_CASE("kernel determinism: generated programs of spawns - sends - links - monitors - kills and exits give the same trace hash twice",
          "[property][kernel]") {
  lic::test::prop("same program and seed: same trace; under both tie-breaks and both fiber backends",
           [] {
             const Program prog = *gen_program();
             const auto seed = *rc::gen::arbitrary<std::uint64_t>();
             RC_TAG(prog.procs.size() < 6 ? "2-5 processes" : "6-12 processes");
             for (const TieBreak tb : {TieBreak::fifo, TieBreak::random}) {
               const Outcome first = run_program(prog, seed, tb, FiberBackend::context);
               const Outcome again = run_program(prog, seed, tb, FiberBackend::context);
               RC_LOG() << to_string(tb) << " context: " << first << " then " << again << "\n";
               RC_ASSERT(first == again);
               const Outcome fiber = run_program(prog, seed, tb, FiberBackend::boost_fiber);
               RC_LOG() << to_string(tb) << " boost_fiber: " << fiber << "\n";
               RC_ASSERT(first == fiber);
               // Hash mode keeps nothing but must hash exactly what keep mode does.
               const Outcome hashed =
                   run_program(prog, seed, tb, FiberBackend::context, TraceMode::hash);
               RC_ASSERT(first == hashed);
             }
           });
}

TEST_CASE("kernel accounting: every spawned process either ends with one exit event or is still alive",
          "[property][kernel]") {
  lic::test::prop("spawn and exit events balance against the live processes", [] {
    const Program prog = *gen_program();
    const auto seed = *rc::gen::arbitrary<std::uint64_t>();
    const TieBreak tb = *rc::gen::element(TieBreak::fifo, TieBreak::random);
    Run r(prog, SimOptions{.seed = seed, .tie_break = tb});
    std::set<std::uint64_t> spawned;
    std::map<std::uint64_t, int> exits;
    for (const TraceEvent& e : r.sim.trace().events()) {
      if (e.kind == EventKind::spawn) {
        RC_ASSERT(spawned.insert(e.pid.id).second);  // a pid is never reused
      } else if (e.kind == EventKind::exit) {
        RC_ASSERT(spawned.count(e.pid.id) == 1);  // exits come after the spawn
        ++exits[e.pid.id];
      }
    }
    RC_ASSERT(spawned.size() >= prog.procs.size());
    std::size_t ended = 0;
    for (const std::uint64_t pid : spawned) {
      const auto it = exits.find(pid);
      const int n = it == exits.end() ? 0 : it->second;
      RC_LOG() << "pid " << pid << ": " << n << " exit events, alive " << r.sim.alive(Pid{pid})
               << "\n";
      RC_ASSERT(n <= 1);
      RC_ASSERT(r.sim.alive(Pid{pid}) == (n == 0));
      ended += static_cast<std::size_t>(n);
    }
    RC_ASSERT(spawned.size() - ended == r.sim.process_count());
    RC_ASSERT(r.sim.processes().size() == r.sim.process_count());
  });
}

TEST_CASE("kernel ordering: under random tie-break every seed keeps messages between one sender and one receiver in send order",
          "[property][kernel]") {
  lic::test::prop("per-pair FIFO; and every message is received or recorded as dropped", [] {
    const OrderProgram prog = *gen_order_program();
    const auto seed = *rc::gen::arbitrary<std::uint64_t>();
    const std::size_t nr = prog.receivers.size();
    const std::size_t ns = prog.senders.size();

    std::size_t total = 0;
    for (const auto& s : prog.senders) total += s.size();

    std::vector<std::vector<Received>> got(nr);
    std::vector<Pid> rpids(nr);
    std::vector<Pid> spids(ns);
    Simulation sim(SimOptions{.seed = seed, .tie_break = TieBreak::random});
    for (std::size_t r = 0; r < nr; ++r) {
      const ReceiverSpec& spec = prog.receivers[r];
      std::vector<Received>* out = &got[r];
      rpids[r] = sim.spawn([&spec, out, total](Context& ctx) {
        const std::size_t limit =
            spec.limit < 0 ? total + 1 : static_cast<std::size_t>(spec.limit);
        for (std::size_t k = 0; k < limit; ++k) {
          MessagePtr m = ctx.receive();
          const int* seq = m->get<int>();
          out->push_back(Received{m->from, seq != nullptr ? *seq : -1, m->id});
          if (!spec.sleeps_ms.empty()) ctx.sleep(ms(spec.sleeps_ms[k % spec.sleeps_ms.size()]));
        }
      });
    }
    for (std::size_t s = 0; s < ns; ++s) {
      const std::vector<SenderStep>* script = &prog.senders[s];
      spids[s] = sim.spawn([script, &rpids](Context& ctx) {
        std::vector<int> next(rpids.size(), 0);
        for (const SenderStep& st : *script) {
          if (st.sleep) {
            ctx.sleep(ms(st.arg));
          } else {
            const auto r = static_cast<std::size_t>(st.arg);
            ctx.send(rpids[r], kSeq, next[r]++);
          }
        }
      });
    }
    sim.run();

    // How many each sender sent each receiver, from the program.
    std::vector<std::vector<int>> sent(ns, std::vector<int>(nr, 0));
    for (std::size_t s = 0; s < ns; ++s) {
      for (const SenderStep& st : prog.senders[s]) {
        if (!st.sleep) ++sent[s][static_cast<std::size_t>(st.arg)];
      }
    }
    // From the trace: per pair, the ids of sends that reached the mailbox, and of drops.
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::vector<std::uint64_t>> trace_sent;
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::vector<std::uint64_t>> trace_dropped;
    for (const TraceEvent& e : sim.trace().events()) {
      if (e.kind == EventKind::send && e.tag == kSeq) {
        trace_sent[{e.pid.id, e.other.id}].push_back(e.msg);
      } else if (e.kind == EventKind::drop && e.tag == kSeq) {
        // drop: pid = the receiver, other = the sender
        trace_dropped[{e.other.id, e.pid.id}].push_back(e.msg);
      }
    }

    for (std::size_t r = 0; r < nr; ++r) {
      const bool ended = !sim.alive(rpids[r]);
      RC_ASSERT(ended == (prog.receivers[r].limit >= 0 &&
                          got[r].size() == static_cast<std::size_t>(prog.receivers[r].limit)));
      for (std::size_t s = 0; s < ns; ++s) {
        std::vector<int> seqs;
        std::vector<std::uint64_t> ids;
        for (const Received& g : got[r]) {
          if (g.from == spids[s]) {
            seqs.push_back(g.seq);
            ids.push_back(g.id);
          }
        }
        const auto key = std::make_pair(spids[s].id, rpids[r].id);
        const std::vector<std::uint64_t>& tsent = trace_sent[key];
        const std::vector<std::uint64_t>& tdrop = trace_dropped[key];
        RC_LOG() << "S" << s << " -> R" << r << ": sent " << sent[s][r] << ", received "
                 << seqs.size() << ", send events " << tsent.size() << ", drops " << tdrop.size()
                 << "\n";
        // In send order and with no gap: 0, 1, 2, ...
        for (std::size_t k = 0; k < seqs.size(); ++k) RC_ASSERT(seqs[k] == static_cast<int>(k));
        // Complete: a live receiver got everything; one that ended lost the rest as drops.
        if (!ended) {
          RC_ASSERT(static_cast<int>(seqs.size()) == sent[s][r]);
          RC_ASSERT(tdrop.empty());
        }
        RC_ASSERT(static_cast<int>(seqs.size() + tdrop.size()) == sent[s][r]);
        // The trace agrees: send ids increase, the received ones are their prefix, and what a
        // dead receiver lost comes after what it got.
        RC_ASSERT(std::is_sorted(tsent.begin(), tsent.end()));
        RC_ASSERT(std::adjacent_find(tsent.begin(), tsent.end()) == tsent.end());
        RC_ASSERT(tsent.size() >= ids.size());
        RC_ASSERT(std::equal(ids.begin(), ids.end(), tsent.begin()));
        RC_ASSERT(std::is_sorted(tdrop.begin(), tdrop.end()));
        if (!ids.empty() && !tdrop.empty()) RC_ASSERT(tdrop.front() > ids.back());
      }
    }
  });
}
