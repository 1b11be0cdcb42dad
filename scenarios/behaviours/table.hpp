#pragma once
// What a scenario file can name as a worker (`behaviour: idle`, `behaviour: pipeline.reader`):
// each behaviour once, with its arguments and help, and how to build it from them. The built-in
// ones (stock workers for testing supervisors, the reference systems' processes) are listed by
// the functions below and added to a Registry (scenarios/registry.hpp) through the same
// Registry::add a user's own code calls (docs/library.md); `letitcrash validate --list` prints
// them all.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "scenarios/args.hpp"
#include "sim/process.hpp"

namespace lic::scenarios {

/// Makes one instance of a behaviour. `start_arg` is the argument of a simple_one_for_one
/// start_child ("" otherwise).
using BehaviourFactory = std::function<std::unique_ptr<Behaviour>(const std::string& start_arg)>;

/// A buggify point a behaviour's code asks (lic::buggify(ctx, name), sim/buggify.hpp): listed by
/// `validate --list`, picked by swarm runs, counted by `sweep --coverage`.
struct BuggifyPoint {
  std::string name;  ///< by convention the behaviour's prefix and a word: "ingest.s3_slow"
  std::string help;  ///< what misbehaves when it fires
  bool operator==(const BuggifyPoint&) const = default;
};

/// A behaviour a file can name.
struct BehaviourInfo {
  std::string name;  ///< as a file writes it; a system's behaviours share a prefix ("pipeline.")
  std::string help;  ///< one line for `validate --list` and the docs
  std::vector<ArgInfo> args;
  /// Reads the arguments (every mistake goes to Args) and returns the factory. Called when a
  /// file is validated (the factory is dropped) and again when it runs.
  std::function<BehaviourFactory(Args&)> build;
  /// The buggify points its code asks.
  std::vector<BuggifyPoint> buggify{};
  /// Its code runs goroutines: processes that wait on channels (sim/channel.hpp). A node's
  /// `preempt` (docs/scenario-format.md) needs one on the node, else it would change nothing.
  bool goroutines = false;
};

/// The stock workers: idle, trap_exit, stall, crash_after, flaky, echo, ticker.
std::vector<BehaviourInfo> stock_behaviours();
/// Seed 000's mini pipeline: pipeline.reader, parser, validator, sink, dead_letter.
std::vector<BehaviourInfo> pipeline_behaviours();
/// The cross-node peer (partition scenarios).
std::vector<BehaviourInfo> peer_behaviours();
/// Seed 004's ingest server: ingest.server, ingest.s3, ingest.disk.
std::vector<BehaviourInfo> ingest_behaviours();
/// The simulated PostgreSQL: pg.server.
std::vector<BehaviourInfo> pg_behaviours();
/// Seed 001's Coordinator: leader.coordinator.
std::vector<BehaviourInfo> leader_behaviours();
/// The primary-backup key-value store and its recording clients (behaviours/kv.cpp).
std::vector<BehaviourInfo> kv_behaviours();

}  // namespace lic::scenarios
