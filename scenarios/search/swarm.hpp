#pragma once
// Swarm testing (Groce et al., ISSTA 2012; TigerBeetle's VOPR swarm; docs/swarm.md): each seed
// runs its own configuration of the file. From a stream of its own the seed picks which faults
// are on, each ranged knob (`mtbf: 5s..2m`) inside its range, the tie-break, and which buggify
// points of the file's behaviours are on. The choice is written into an ordinary Scenario (the
// faults left on keep their names, so each keeps its random stream), so a swarm run is a plain
// run of that scenario: its trace header holds it and it replays from the trace alone.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "scenarios/registry.hpp"
#include "scenarios/scenario.hpp"

namespace lic::scenarios {

/// What a seed chose.
struct SwarmChoice {
  std::vector<std::string> on;   ///< the faults left on, by name, in file order
  std::vector<std::string> off;  ///< those turned off
  /// Each ranged knob of a fault left on, as drawn: {"crash#0.mtbf", "37.2s"}.
  std::vector<std::pair<std::string, std::string>> knobs;
  TieBreak tie_break = TieBreak::fifo;
  std::vector<std::string> buggify;  ///< the buggify points turned on, sorted
  bool operator==(const SwarmChoice&) const = default;
};

struct Swarmed {
  Scenario scenario;  ///< what the seed runs
  SwarmChoice choice;
};

/// Seed `seed`'s configuration of `s` (whose buggify points are looked up in `registry`). The
/// draws come from Rng(seed).derive("swarm"), apart from every stream the run itself uses.
Swarmed swarm(const Scenario& s, std::uint64_t seed, const Registry& registry);

/// Every fault gets its default name (`crash#0`) written in, so that removing a fault does not
/// rename the ones after it (a fault's name names its random stream).
void name_faults(Scenario& s);

/// The behaviours a scenario runs (its trees' and its script's), sorted.
std::vector<std::string> behaviours_in(const Scenario& s);

/// One line: "faults on: crash#0 (mtbf 37.2s), partition#2; off: kill#1; tie-break random; buggify: ingest.s3_slow".
std::string describe(const SwarmChoice& c);

}  // namespace lic::scenarios
