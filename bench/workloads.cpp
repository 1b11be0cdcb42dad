#include "bench/workloads.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>

#include "sim/simulation.hpp"
#include "supervision/stock_worker.hpp"
#include "supervision/supervisor.hpp"

namespace lic::bench {
namespace {

using Clock = std::chrono::steady_clock;
const Atom kToken("token");
const Atom kTick("tick");
const Atom kWake("wake");

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

double pingpong(const PingPongConfig& c) {
  SimOptions o;
  o.trace = TraceMode::off;
  Simulation sim(o);
  const std::uint64_t n = c.round_trips;
  if (c.channels) {
    const Chan ab = sim.make_chan(0, Atom("ab"));
    const Chan ba = sim.make_chan(0, Atom("ba"));
    // By value: the processes run in sim.run(), after this block's names are gone.
    sim.spawn([ab, ba, n](Context& ctx) {
      for (std::uint64_t i = 0; i < n; ++i) {
        ctx.chan_send(ab, i);
        ctx.chan_recv(ba);
      }
    });
    sim.spawn([ab, ba, n](Context& ctx) {
      for (std::uint64_t i = 0; i < n; ++i) {
        ctx.chan_recv(ab);
        ctx.chan_send(ba, i);
      }
    });
  } else {
    auto b_pid = std::make_shared<Pid>();  // known once b is spawned, read when a runs
    const Pid a_pid = sim.spawn([b_pid, n](Context& ctx) {
      for (std::uint64_t i = 0; i < n; ++i) {
        ctx.send(*b_pid, kToken, i);
        ctx.receive();
      }
    });
    *b_pid = sim.spawn([a_pid, n](Context& ctx) {
      for (std::uint64_t i = 0; i < n; ++i) {
        ctx.receive();
        ctx.send(a_pid, kToken, i);
      }
    });
  }
  const Clock::time_point t0 = Clock::now();
  sim.run();
  return static_cast<double>(4 * n) / seconds_since(t0);
}

namespace {

/// Shared by the ring's members: who is next, and how many hops are left.
struct RingState {
  std::vector<Pid> pids;
  std::uint64_t remaining = 0;
};

class RingNode final : public Behaviour {
 public:
  RingNode(RingState* s, std::size_t index, bool network) : s_(s), index_(index), network_(network) {}
  void handle_info(Context& ctx, const Message&) override {
    if (s_->remaining == 0) return;
    --s_->remaining;
    const Pid next = s_->pids[(index_ + 1) % s_->pids.size()];
    if (network_) {
      ctx.send(next, kToken);  // across the network: the path's 1 ms
    } else {
      ctx.send_after(kMillisecond, next, kToken);
    }
  }

 private:
  RingState* s_;
  std::size_t index_;
  bool network_;
};

class Idle final : public Behaviour {
 public:
  void handle_info(Context& ctx, const Message&) override { ctx.stop(Reason::normal()); }
};

class Sleeper final : public Behaviour {
 public:
  Sleeper(std::size_t sleeps, std::uint64_t* fired) : left_(sleeps), fired_(fired) {}
  InitResult init(Context& ctx) override {
    arm(ctx);
    return InitResult::ok();
  }
  void handle_info(Context& ctx, const Message&) override {
    ++*fired_;
    if (--left_ > 0) arm(ctx);
  }

 private:
  void arm(Context& ctx) {
    ctx.send_after(Duration{ctx.rng().uniform_range(1'000, 1'000'000)}, ctx.self(), kTick);
  }
  std::size_t left_;
  std::uint64_t* fired_;
};

}  // namespace

std::size_t resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long size = 0;
  unsigned long resident = 0;
  const int n = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  return n == 2 ? resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE)) : 0;
}

RingResult ring(const RingConfig& c) {
  SimOptions o;
  o.backend = c.backend;
  o.trace = c.trace;
  Simulation sim(o);
  RingState s;
  s.remaining = c.hops;
  s.pids.reserve(c.processes);
  const bool network = c.network_nodes >= 2;
  for (std::size_t i = 0; i < c.processes; ++i) {
    if (c.behaviour) {
      SpawnOptions so;
      if (network) so.node = Atom("n" + std::to_string(i % c.network_nodes));
      s.pids.push_back(sim.spawn(std::make_unique<RingNode>(&s, i, network), so));
    } else {
      s.pids.push_back(sim.spawn([&s, i](Context& ctx) {
        for (;;) {
          ctx.receive();
          if (s.remaining == 0) return;
          --s.remaining;
          ctx.send_after(kMillisecond, s.pids[(i + 1) % s.pids.size()], kToken);
        }
      }));
    }
  }
  sim.run();  // every member started and waiting
  const Time start = sim.now();
  sim.send(s.pids[0], kToken);
  const auto t0 = Clock::now();
  sim.run();
  const double dt = seconds_since(t0);
  return RingResult{static_cast<double>(c.hops) / dt,
                    static_cast<std::uint64_t>((sim.now() - start).ns), sim.trace().count(), sim.trace().kept_bytes()};
}

SpawnResult spawn(const SpawnConfig& c) {
  SimOptions o;
  o.backend = c.backend;
  o.trace = TraceMode::off;
  Simulation sim(o);
  std::vector<Pid> pids;
  pids.reserve(c.processes);
  const std::size_t before = resident_bytes();
  const auto t0 = Clock::now();
  for (std::size_t i = 0; i < c.processes; ++i) {
    if (c.behaviour) {
      pids.push_back(sim.spawn(std::make_unique<Idle>()));
    } else {
      pids.push_back(sim.spawn([](Context& ctx) { ctx.receive(); }));
    }
  }
  sim.run();  // all started (init ran / body reached its receive)
  const double dt = seconds_since(t0);
  const std::size_t after = resident_bytes();
  for (Pid p : pids) sim.send(p, kWake);
  sim.run();
  if (sim.process_count() != 0) std::fprintf(stderr, "bench: W2 processes did not all end\n");
  return SpawnResult{static_cast<double>(c.processes) / dt,
                     static_cast<double>(after - before) / static_cast<double>(c.processes)};
}

double timers(const TimerConfig& c) {
  SimOptions o;
  o.backend = c.backend;
  o.trace = TraceMode::off;
  Simulation sim(o);
  std::uint64_t fired = 0;
  for (std::size_t i = 0; i < c.processes; ++i) {
    if (c.behaviour) {
      sim.spawn(std::make_unique<Sleeper>(c.sleeps, &fired));
    } else {
      sim.spawn([&fired, n = c.sleeps](Context& ctx) {
        for (std::size_t k = 0; k < n; ++k) {
          ctx.sleep(Duration{ctx.rng().uniform_range(1'000, 1'000'000)});
          ++fired;
        }
      });
    }
  }
  const auto t0 = Clock::now();
  sim.run();
  const double dt = seconds_since(t0);
  const std::uint64_t expected = static_cast<std::uint64_t>(c.processes) * c.sleeps;
  if (fired != expected) std::fprintf(stderr, "bench: W3 fired %llu of %llu\n",
                                      static_cast<unsigned long long>(fired),
                                      static_cast<unsigned long long>(expected));
  return static_cast<double>(fired) / dt;
}

namespace {
supervision::Child idle_stock_worker(std::size_t i) {
  supervision::Child c;
  c.spec.id = "w" + std::to_string(i);
  c.start.behaviour = [] { return std::make_unique<supervision::StockWorker>(supervision::WorkerConfig{}); };
  return c;
}

// The flat supervisor's per-child costs: one worker in the middle killed and restarted, then the
// whole supervisor stopped (every child shut down in reverse start order).
void flat_restart_and_shutdown(Simulation& sim, Pid root, std::size_t workers, SupervisedResult& r) {
  const Pid victim = sim.info(root)->links[workers / 2];
  auto t = Clock::now();
  sim.exit(victim, Reason::kill());
  sim.run();
  r.restart_ms = seconds_since(t) * 1e3;
  if (sim.alive(victim) || sim.process_count() != workers + 1) r.restart_ms = std::numeric_limits<double>::quiet_NaN();
  t = Clock::now();
  sim.send(root, supervision::kSystemStop, Reason::shutdown());
  sim.run();
  r.shutdown_s = seconds_since(t);
  if (sim.process_count() != 0) r.shutdown_s = std::numeric_limits<double>::quiet_NaN();
}
}  // namespace

SupervisedResult supervised_workers(std::size_t workers, bool flat) {
  SimOptions o;
  o.trace = TraceMode::off;
  Simulation sim(o);
  const std::size_t before = resident_bytes();
  // Two-level: sqrt(N) supervisors of sqrt(N) workers each under a root. Flat: the root
  // supervises all N.
  const std::size_t width = flat ? workers : static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(workers))));
  const auto t0 = Clock::now();
  Pid root_pid;
  {
    supervision::SupervisorSpec root;
    root.flags.strategy = supervision::Strategy::one_for_one;
    if (flat) {
      root.children.reserve(workers);
      for (std::size_t i = 0; i < workers; ++i) root.children.push_back(idle_stock_worker(i));
    }
    for (std::size_t made = 0, g = 0; !flat && made < workers; ++g) {
      supervision::SupervisorSpec group;
      group.flags.strategy = supervision::Strategy::one_for_one;
      for (std::size_t i = 0; i < width && made < workers; ++i, ++made) group.children.push_back(idle_stock_worker(i));
      root.children.push_back(supervision::Supervisor::child("g" + std::to_string(g), std::move(group)));
    }
    SpawnOptions so;
    so.label = Label{Atom("/root"), 1};
    root_pid = sim.spawn(std::make_unique<supervision::Supervisor>(std::move(root)), so);
  }
  sim.run();  // every worker started and idle
  SupervisedResult r;
  r.start_s = seconds_since(t0);
  const std::size_t after = resident_bytes();
  const std::size_t supervisors = 1 + (flat ? 0 : (workers + width - 1) / width);
  if (sim.process_count() != workers + supervisors) {
    std::fprintf(stderr, "bench: %zu processes, expected %zu\n", sim.process_count(), workers + supervisors);
    return r;
  }
  r.bytes_per_worker = static_cast<double>(after - before) / static_cast<double>(workers);
  if (flat) flat_restart_and_shutdown(sim, root_pid, workers, r);
  return r;
}

std::vector<double> isolated(const std::function<std::vector<double>()>& fn) {
  int fds[2];
  if (pipe(fds) != 0) return fn();
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return fn();
  }
  if (child == 0) {
    close(fds[0]);
    // Nothing may leave this branch but _exit: an exception unwinding out of it would carry the
    // child on through the parent's code, and it would print a second report into the same
    // stdout (a `bench --json` under load once ended in "Extra data" after its object).
    std::vector<double> out;
    try {
      out = fn();
    } catch (...) {
      _exit(2);
    }
    const std::size_t n = out.size();
    bool ok = write(fds[1], &n, sizeof n) == static_cast<ssize_t>(sizeof n);
    ok = ok && write(fds[1], out.data(), n * sizeof(double)) ==
                   static_cast<ssize_t>(n * sizeof(double));
    _exit(ok ? 0 : 1);
  }
  close(fds[1]);
  std::size_t n = 0;
  std::vector<double> out;
  if (read(fds[0], &n, sizeof n) == static_cast<ssize_t>(sizeof n) && n < 64) {
    out.resize(n);
    std::size_t got = 0;
    auto* bytes = reinterpret_cast<char*>(out.data());
    while (got < n * sizeof(double)) {
      const ssize_t r = read(fds[0], bytes + got, n * sizeof(double) - got);
      if (r <= 0) break;
      got += static_cast<std::size_t>(r);
    }
    if (got != n * sizeof(double)) out.assign(n, std::numeric_limits<double>::quiet_NaN());
  }
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  return out;
}

}  // namespace lic::bench
