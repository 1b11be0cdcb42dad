#pragma once
// `letitcrash bench bugs` (docs/benchmarks.md, "Planted bugs"): how fast the harness finds each
// known bug of scenarios/bugs/. For every file, over `ranges` independent seed ranges, the seeds
// a sweep runs before the first failure (that seed included), without and with swarm mode; and
// how small the shrinker makes the first failing case. The runs are deterministic: the same
// figures every time, on any machine (only the wall time differs).

#include <cstddef>
#include <string>

namespace lic::bench {

struct BugBenchOptions {
  std::string dir = "scenarios/bugs";  ///< the bug files (every *.yaml)
  std::size_t ranges = 20;             ///< independent seed ranges per file and mode
  std::size_t max_seeds = 2000;        ///< a range that finds nothing in this many counts as not found
  std::size_t shrink_runs = 200;       ///< the shrinker's budget per file (0: no shrinking)
  unsigned jobs = 0;                   ///< threads (0: one per core)
};

/// Prints one line per bug and the totals; returns a process exit code (2: no bug files).
int run_bugs(const BugBenchOptions& o);

}  // namespace lic::bench
