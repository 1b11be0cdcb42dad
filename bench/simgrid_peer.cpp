// simgrid_peer: runs letitcrash's three benchmark workloads on SimGrid's S4U API so
// that the two simulators can be printed side by side.
//
// Build (standalone, not part of the letitcrash build because SimGrid is optional):
//   g++ -std=c++20 -O2 -Wall -Wextra -Wpedantic bench/simgrid_peer.cpp
//       $(pkg-config --cflags --libs simgrid) -o /tmp/simgrid_peer
//
// Usage: simgrid_peer [w1|w2|w3|all] [--n N] [--m M]
//   w1 ring  : N actors (default 1000) pass one token for M hops (default 1,000,000),
//              1 ms of virtual time per hop.            -> hops per real second
//   w2 spawn : N actors (default 10000) each block on its own mailbox.
//                                                       -> spawns per real second,
//                                                          KiB resident per blocked actor
//   w3 timers: N actors (default 1000) each sleep M (default 100) pseudo-random virtual
//              durations of 1..1000 us.                 -> timer events per real second
//
// Output: one `name value unit` line per figure on stdout, nothing else. Real (wall-clock)
// time is measured with std::chrono::steady_clock; that is fine here because this is the
// benchmark harness, not a simulator.

#include <simgrid/s4u.hpp>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace {

using steady = std::chrono::steady_clock;

double seconds_since(steady::time_point start)
{
  return std::chrono::duration<double>(steady::now() - start).count();
}

// ---------------------------------------------------------------------------------------
// Engine set-up shared by all workloads.

// One Engine per process: SimGrid keeps global state (the EngineImpl singleton, the
// mailbox and host registries) that does not support a second engine after the first.
// Each workload therefore runs in its own forked child (see main), which also gives W2 a
// fresh heap so its RSS delta is not flattered by pages recycled from an earlier workload.
struct engine_box {
  std::vector<std::string> args;
  std::vector<char*> argv;
  int argc = 0;
};

// Number of memory mappings this process may still create, or -1 if unknown. SimGrid's
// stack guard pages cost two mappings per actor (see fill_engine_args).
long spare_memory_mappings()
{
  long limit = -1;
  if (std::FILE* f = std::fopen("/proc/sys/vm/max_map_count", "r")) {
    if (std::fscanf(f, "%ld", &limit) != 1)
      limit = -1;
    std::fclose(f);
  }
  if (limit < 0)
    return -1;
  long used = 0;
  if (std::FILE* f = std::fopen("/proc/self/maps", "r")) {
    for (int c; (c = std::fgetc(f)) != EOF;)
      used += (c == '\n');
    std::fclose(f);
  }
  return limit - used;
}

// The flags below are passed as if given on the command line, so that they are applied
// before the engine initialises its context factory and logging.
//  - log=root.thresh:critical silences SimGrid entirely (stdout must only carry figures,
//    and the "Configuration change" lines would otherwise go to stderr on every run).
//  - contexts/factory:raw is SimGrid's fastest context switch (hand-written asm), the
//    closest analogue of our own hand-rolled fibers; it is also what the reference
//    figures were measured with.
//  - contexts/stack-size:64 (KiB) instead of the 8 MiB default, so that W2 at 100k actors
//    fits: 64 KiB is plenty for the tiny actor bodies below, and 100k x 8 MiB would be
//    800 GB of address space.
//  - contexts/guard-size: SimGrid's default of one guard page per stack is kept when
//    possible, because then stacks come from posix_memalign and only the pages an actor
//    actually touches become resident. But each guard page is mprotect()ed, splitting the
//    heap mapping: two VMAs per actor, so beyond ~32k actors Linux's default
//    vm.max_map_count (65530) is exhausted and SimGrid aborts. Above that we fall back to
//    guard-size:0, where SimGrid allocates stacks with calloc, which zeroes (and thus makes
//    resident) the whole 64 KiB: W2's KiB/actor then jumps to ~66, and we say so on stderr.
void fill_engine_args(engine_box& box, std::uint64_t n_actors, std::vector<std::string> extra = {})
{
  box.args = {"simgrid_peer", "--log=root.thresh:critical", "--cfg=contexts/factory:raw",
              "--cfg=contexts/stack-size:64"};
  long spare = spare_memory_mappings();
  const long margin = 1024;  // mappings for the engine, malloc arenas, libraries loaded later
  if (spare >= 0 && static_cast<double>(spare) < 2.0 * static_cast<double>(n_actors) + margin) {
    box.args.emplace_back("--cfg=contexts/guard-size:0");
    std::fprintf(stderr,
                 "simgrid_peer: note: %" PRIu64 " actors need more memory mappings than vm.max_map_count allows"
                 " with stack guard pages; using contexts/guard-size:0 (stacks fully resident)\n",
                 n_actors);
  }
  for (auto& a : extra)
    box.args.push_back(std::move(a));
  for (auto& a : box.args)
    box.argv.push_back(a.data());
  box.argv.push_back(nullptr);
  box.argc = static_cast<int>(box.args.size());
}

// One host in a full zone is enough: every workload is single-host, and communications
// between actors of the same host go over SimGrid's built-in loopback link (zero latency
// unless W1 configures it), so no routes need declaring.
sg4::Host* make_platform()
{
  auto* zone = sg4::create_full_zone("zone");
  auto* host = zone->create_host("host", 1e9);
  zone->seal();
  return host;
}

// Resident set size in KiB, from /proc/self/status (the kernel reports it in kB = KiB).
long read_rss_kib()
{
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr)
    return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, "VmRSS:", 6) == 0) {
      kib = std::strtol(line + 6, nullptr, 10);
      break;
    }
  }
  std::fclose(f);
  return kib;
}

// splitmix64: tiny, seedable and identical on every platform, so both simulators can draw
// the same duration sequence without depending on <random>'s implementation choices.
std::uint64_t splitmix64(std::uint64_t& state)
{
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// ---------------------------------------------------------------------------------------
// W1 ring.
//
// The 1 ms per hop is the latency of the loopback link (network/loopback-lat:0.001), and
// each hop is a detached zero-byte put: the sender fires and goes straight back to its
// own get(), the message lands 1 ms of virtual time later. That is one network action
// per hop, the cheapest variant measured here (~0.35 M hops/s vs ~0.32 M with a blocking
// put and ~0.25 M with sleep_for(0.001) + put), and it is also the actor-model send
// semantics (asynchronous, delivered after a delay). network/model:CM02 is needed
// because the default LV08 model multiplies latencies by 13.01 (TCP calibration), which
// would make a hop 13 ms; with zero-byte messages bandwidth never matters.

struct ring_token {
  std::uint64_t hops_left;
};

void ring_forward(ring_token* token, sg4::Mailbox* out)
{
  --token->hops_left;
  out->put_init(token, 0)->detach();
}

void ring_actor(bool starts_with_token, ring_token* token, sg4::Mailbox* in, sg4::Mailbox* out)
{
  if (starts_with_token && token->hops_left > 0)
    ring_forward(token, out);
  for (;;) {
    auto* t = in->get<ring_token>();
    if (t->hops_left == 0) {
      // Everyone else is blocked in get() forever; kill them so the engine run ends here
      // rather than SimGrid reporting a deadlock.
      sg4::Actor::kill_all();
      return;
    }
    ring_forward(t, out);
  }
}

int run_w1(std::uint64_t n, std::uint64_t m)
{
  engine_box box;
  fill_engine_args(box, n, {"--cfg=network/model:CM02", "--cfg=network/loopback-lat:0.001"});
  sg4::Engine e(&box.argc, box.argv.data());
  sg4::Host* host = make_platform();

  ring_token token{m};
  std::vector<sg4::Mailbox*> boxes(n);
  for (std::uint64_t i = 0; i < n; ++i)
    boxes[i] = sg4::Mailbox::by_name("ring-" + std::to_string(i));
  for (std::uint64_t i = 0; i < n; ++i)
    sg4::Actor::create("ring", host, ring_actor, i == 0, &token, boxes[i], boxes[(i + 1) % n]);

  auto start = steady::now();
  e.run();
  double wall = seconds_since(start);

  // Cheap self-check (stderr + exit status): a mismatch means the workload is not what the
  // figure claims, e.g. a network model silently scaling the latency.
  double expected_clock = static_cast<double>(m) * 0.001;
  bool ok = token.hops_left == 0 && std::abs(sg4::Engine::get_clock() - expected_clock) <= 1e-6 * expected_clock + 1e-9;
  if (!ok)
    std::fprintf(stderr, "simgrid_peer: w1 sanity check failed (hops_left=%" PRIu64 ", clock=%g, expected %g)\n",
                 token.hops_left, sg4::Engine::get_clock(), expected_clock);

  std::printf("simgrid_w1_ring_hops_per_s %.3g hops/s\n", static_cast<double>(m) / wall);
  return ok ? 0 : 1;
}

// ---------------------------------------------------------------------------------------
// W2 spawn.
//
// A driver actor does the spawning from inside the simulation, because "all N blocked"
// is only observable there: it creates the N actors, then yields until each has run and
// parked in get(). The spawn rate covers exactly that window (create + first run until
// blocked, including each actor's mailbox creation, which is part of what a blocked actor
// costs). RSS is sampled before the first create and once all are blocked.

struct w2_result {
  double spawn_seconds = 0;
  long rss_before_kib = -1;
  long rss_blocked_kib = -1;
  std::uint64_t received = 0;
};

void w2_driver(std::uint64_t n, sg4::Host* host, w2_result* res)
{
  std::uint64_t parked = 0;
  int payload = 0;
  std::vector<sg4::Mailbox*> boxes(n);

  res->rss_before_kib = read_rss_kib();
  auto start = steady::now();
  for (std::uint64_t i = 0; i < n; ++i) {
    boxes[i] = sg4::Mailbox::by_name("spawn-" + std::to_string(i));
    sg4::Actor::create("spawn", host, [mb = boxes[i], &parked, res] {
      ++parked;  // the get() below blocks within this same scheduling slot
      mb->get<int>();
      ++res->received;
    });
  }
  // New actors run in the next scheduling round, the yielding driver after them; loop in
  // case SimGrid ever splits the round.
  while (parked < n)
    sg4::this_actor::yield();
  res->spawn_seconds = seconds_since(start);
  res->rss_blocked_kib = read_rss_kib();

  // One blocking put at a time, on purpose: N detached puts would all share the loopback
  // link, and SimGrid's max-min bandwidth solver re-solves over every in-flight flow at
  // each completion, i.e. O(N^2) (100k actors took minutes). Each receiver is already
  // parked, so every put completes in the next scheduling round.
  for (auto* mb : boxes)
    mb->put(&payload, 0);
}

int run_w2(std::uint64_t n)
{
  engine_box box;
  fill_engine_args(box, n + 1);  // + the driver
  sg4::Engine e(&box.argc, box.argv.data());
  sg4::Host* host = make_platform();

  w2_result res;
  sg4::Actor::create("driver", host, w2_driver, n, host, &res);
  e.run();

  bool ok = res.received == n && res.rss_before_kib >= 0 && res.rss_blocked_kib >= 0;
  if (!ok)
    std::fprintf(stderr, "simgrid_peer: w2 sanity check failed (received=%" PRIu64 " of %" PRIu64 ", rss %ld -> %ld)\n",
                 res.received, n, res.rss_before_kib, res.rss_blocked_kib);

  double per_actor_kib = static_cast<double>(res.rss_blocked_kib - res.rss_before_kib) / static_cast<double>(n);
  std::printf("simgrid_w2_spawn_per_s %.3g spawns/s\n", static_cast<double>(n) / res.spawn_seconds);
  std::printf("simgrid_w2_rss_per_actor_kib %.3g KiB\n", per_actor_kib);
  return ok ? 0 : 1;
}

// ---------------------------------------------------------------------------------------
// W3 timers: every sleep completion is one timer event for the engine.

void timer_actor(std::uint64_t seed, std::uint64_t m, std::uint64_t* completed)
{
  std::uint64_t state = seed;
  for (std::uint64_t j = 0; j < m; ++j) {
    std::uint64_t micros = 1 + splitmix64(state) % 1000;  // 1..1000 us
    sg4::this_actor::sleep_for(static_cast<double>(micros) * 1e-6);
    ++*completed;
  }
}

int run_w3(std::uint64_t n, std::uint64_t m)
{
  engine_box box;
  fill_engine_args(box, n);
  sg4::Engine e(&box.argc, box.argv.data());
  sg4::Host* host = make_platform();

  std::uint64_t completed = 0;
  for (std::uint64_t i = 0; i < n; ++i)
    sg4::Actor::create("timer", host, timer_actor, 0x5eed0000ULL + i, m, &completed);

  auto start = steady::now();
  e.run();
  double wall = seconds_since(start);

  bool ok = completed == n * m;
  if (!ok)
    std::fprintf(stderr, "simgrid_peer: w3 sanity check failed (completed=%" PRIu64 ", expected %" PRIu64 ")\n",
                 completed, n * m);

  std::printf("simgrid_w3_timer_events_per_s %.3g events/s\n", static_cast<double>(completed) / wall);
  return ok ? 0 : 1;
}

// ---------------------------------------------------------------------------------------
// Command line and process plumbing.

void usage(std::FILE* to)
{
  std::fprintf(to,
               "usage: simgrid_peer [w1|w2|w3|all] [--n N] [--m M]\n"
               "  defaults: w1 N=1000 M=1000000 (hops), w2 N=10000 (M unused), w3 N=1000 M=100 (sleeps/actor)\n");
}

bool parse_count(const char* text, std::uint64_t& out)
{
  if (text == nullptr || *text < '0' || *text > '9')
    return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0' || v == 0)
    return false;
  out = v;
  return true;
}

// Runs one workload in a forked child (see engine_box for why) and returns its status.
int run_in_child(int (*body)(std::uint64_t, std::uint64_t), std::uint64_t n, std::uint64_t m)
{
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("simgrid_peer: fork");
    return 1;
  }
  if (pid == 0) {
    int rc = body(n, m);
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(rc);  // skip the parent's atexit handlers and SimGrid's global teardown
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) {
    std::perror("simgrid_peer: waitpid");
    return 1;
  }
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  std::fprintf(stderr, "simgrid_peer: workload child died (signal %d)\n", WIFSIGNALED(status) ? WTERMSIG(status) : -1);
  return 1;
}

}  // namespace

int main(int argc, char** argv)
{
  std::string_view which = "all";
  std::uint64_t n = 0;  // 0 = per-workload default
  std::uint64_t m = 0;
  bool which_set = false;
  bool quick = false;  // letitcrash bench --quick: a smoke run, small sizes

  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--n" || a == "--m") {
      std::uint64_t v = 0;
      if (i + 1 >= argc || !parse_count(argv[i + 1], v)) {
        std::fprintf(stderr, "simgrid_peer: %s needs a positive integer\n", argv[i]);
        usage(stderr);
        return 2;
      }
      (a == "--n" ? n : m) = v;
      ++i;
    } else if (!which_set && (a == "w1" || a == "w2" || a == "w3" || a == "all")) {
      which = a;
      which_set = true;
    } else if (a == "--quick") {
      quick = true;
    } else if (a == "-h" || a == "--help") {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "simgrid_peer: unknown argument '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }

  // --quick: small sizes, each still long enough for its figure to mean something.
  const std::uint64_t w1_hops = quick ? 100000 : 1000000;
  const std::uint64_t w2_actors = quick ? 1000 : 10000;
  const std::uint64_t w3_sleeps = quick ? 20 : 100;
  auto w1 = [](std::uint64_t nn, std::uint64_t mm) { return run_w1(nn ? nn : 1000, mm); };
  auto w2 = [](std::uint64_t nn, std::uint64_t) { return run_w2(nn); };
  auto w3 = [](std::uint64_t nn, std::uint64_t mm) { return run_w3(nn ? nn : 1000, mm); };

  int rc = 0;
  if (which == "w1" || which == "all")
    rc |= run_in_child(w1, n, m ? m : w1_hops);
  if (which == "w2" || which == "all")
    rc |= run_in_child(w2, n ? n : w2_actors, m);
  if (which == "w3" || which == "all")
    rc |= run_in_child(w3, n, m ? m : w3_sleeps);
  return rc == 0 ? 0 : 1;
}
