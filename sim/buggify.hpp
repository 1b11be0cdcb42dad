#pragma once
// Buggify points (FoundationDB's BUGGIFY): places in a system's own code that misbehave on
// purpose (a slow reply, a short batch, a late heartbeat) when the harness asks, so a run tries
// the rare paths that faults from outside never reach. A point is off unless the run turns it on
// (a swarm run's choice, or a file's `buggify:` list, docs/swarm.md); an enabled point fires on
// each evaluation with probability `fire` (25 %, as FoundationDB's) from its own random stream,
// and never once the chaos phase has ended. Code asks with lic::buggify(ctx, "name")
// (sim/process.hpp). A point that is off costs a map lookup and draws nothing, so enabling none
// leaves every trace as it was.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "sim/rng.hpp"

namespace lic {

class Buggify {
 public:
  /// How often each point was asked and how often it fired, over the run.
  struct Count {
    std::uint64_t evaluated = 0;
    std::uint64_t fired = 0;
  };

  /// Turns on `names` for this run (they fire with probability `fire` each time they are asked).
  void enable(const std::set<std::string>& names, Ratio fire = Ratio::percent(25));
  bool enabled(std::string_view name) const { return on_.contains(name); }
  /// The chaos phase ended: every point is false from now on.
  void end_chaos() { chaos_ = false; }
  bool chaos() const { return chaos_; }
  /// Asks the point once: true when it is on, the chaos phase runs and its stream says so.
  /// `root` is the run's root stream (each point draws from root.derive("buggify/<name>")).
  /// `fire` overrides the run's chance for this call (a point asked on every event fires rarely:
  /// FoundationDB's BUGGIFY_WITH_PROB).
  bool ask(const Rng& root, std::string_view name, std::optional<Ratio> fire = std::nullopt);
  /// Every point asked at least once (enabled or not), with its counts.
  const std::map<std::string, Count, std::less<>>& counts() const { return counts_; }

 private:
  std::set<std::string, std::less<>> on_;
  std::map<std::string, Rng, std::less<>> streams_;
  std::map<std::string, Count, std::less<>> counts_;
  Ratio fire_ = Ratio::percent(25);
  bool chaos_ = true;
};

}  // namespace lic
