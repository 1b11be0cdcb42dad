#pragma once
// The benchmark workloads of DESIGN.md §9. Each returns figures; bench.cpp prints them one per
// line as `name value unit`. Real time is measured here (never in sim/): this is the harness.

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "sim/fiber.hpp"
#include "sim/trace.hpp"

namespace lic::bench {

struct Figure {
  std::string name;
  double value;
  std::string unit;
};

struct RingConfig {
  std::size_t processes = 1000;
  std::uint64_t hops = 2'000'000;
  bool behaviour = true;  ///< behaviour processes (callbacks) or free-form fiber processes
  FiberBackend backend = FiberBackend::context;
  TraceMode trace = TraceMode::off;
  /// 2 or more: the members are spread round-robin over this many nodes and each hop is a
  /// plain send across the network (the default path: 1 ms, nothing lost) instead of a 1 ms
  /// timer. With `processes` a multiple of it, every hop crosses. Behaviour processes only.
  std::size_t network_nodes = 0;
};

struct RingResult {
  double hops_per_s;
  std::uint64_t virtual_ns;
  std::uint64_t trace_events;
  std::size_t trace_kept_bytes = 0;  ///< keep mode: what the kept trace holds (Trace::kept_bytes)
};

/// W1: a token passes `hops` times around a ring, 1 ms of virtual latency per hop (a timer, or
/// the network path between two nodes).
RingResult ring(const RingConfig& c);

struct PingPongConfig {
  std::uint64_t round_trips = 200'000;
  bool channels = true;  ///< two rendezvous channels (Go's style), or mailboxes (send/receive)
};

/// Two free-form processes pass a value back and forth `round_trips` times: on two rendezvous
/// channels, or by message. Returns operations per second, four per round trip (two sends and
/// two receives). Tracing is off.
double pingpong(const PingPongConfig& c);

struct SpawnConfig {
  std::size_t processes = 10'000;
  bool behaviour = true;
  FiberBackend backend = FiberBackend::context;
};

struct SpawnResult {
  double spawns_per_s;
  double resident_bytes_per_process;
};

/// W2: N processes each wait for one message; all are messaged and end. Resident memory per
/// idle process is measured while all N wait. Run in a fresh OS process (see isolated()) so the
/// allocator's leftovers from earlier workloads do not blur the figure.
SpawnResult spawn(const SpawnConfig& c);

struct TimerConfig {
  std::size_t processes = 1000;
  std::size_t sleeps = 1000;  ///< per process
  bool behaviour = true;
  FiberBackend backend = FiberBackend::context;
};

/// W3: N processes each sleep M pseudo-random virtual durations; timer events per second.
double timers(const TimerConfig& c);

struct SupervisedResult {
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  double bytes_per_worker = kNone;  ///< resident bytes per worker: the child records and specs,
                                    ///< each worker's process and behaviour, a share of the supervisors
  double start_s = kNone;           ///< real time to build the specs and start the whole tree
  double restart_ms = kNone;        ///< flat only: real time of one child's kill and restart
  double shutdown_s = kNone;        ///< flat only: real time to stop the supervisor and every child
};

/// `workers` idle stock workers, all started, tracing off: under a two-level tree (a root over
/// sqrt(N) one_for_one supervisors of sqrt(N) workers each), or `flat`, all under one root
/// one_for_one supervisor. Run it isolated().
SupervisedResult supervised_workers(std::size_t workers, bool flat);

/// Runs `fn` in a forked child and returns what it returned (NaN values if the child failed).
std::vector<double> isolated(const std::function<std::vector<double>()>& fn);

/// Current resident set size of this process, in bytes.
std::size_t resident_bytes();

}  // namespace lic::bench
