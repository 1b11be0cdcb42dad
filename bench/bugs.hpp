#pragma once
// `letitcrash bench bugs` (docs/benchmarks.md, "Planted bugs"): how fast the harness finds each
// known bug of scenarios/bugs/. For every file, over `ranges` independent tries, the runs before
// the first failure (that run included) of three searches on the same budget: a uniform sweep
// of seeds, a swarm sweep, and the guided explorer (scenarios/search/explore.hpp, one explorer
// seed a try); the CPU time each took to get there; how small the shrinker makes the first
// failing case; and each target of issue 31 met or not, with why. The runs are deterministic:
// the same counts every time, on any machine (only the times differ).

#include <cstddef>
#include <string>

#include "scenarios/registry.hpp"

namespace lic::bench {

struct BugBenchOptions {
  std::string dir = "scenarios/bugs";  ///< the bug files (every *.yaml)
  std::size_t ranges = 20;             ///< independent tries per file and mode
  std::size_t max_seeds = 2000;        ///< a try that finds nothing in this many runs counts as not found
  std::size_t shrink_runs = 500;       ///< the shrinker's budget per file, `shrink --max-runs`' default (0: no shrinking)
  unsigned jobs = 0;                   ///< threads (0: one per core)
  bool swarm = true;                   ///< measure swarm mode too
  bool explore = true;                 ///< measure the explorer too
  std::string only;                    ///< a file stem to measure alone (empty: every file)
  /// Where each failing seed's shrunk file is written, as DIR/BUG/SEED.yaml (empty: nowhere), to
  /// read where the shrinks of one bug from different seeds part.
  std::string shrunk_dir;
  /// Where the files' behaviour and check names are looked up (a user's cli_main passes its own).
  const scenarios::Registry* registry = &scenarios::Registry::builtin();
};

/// Prints one line per bug, the targets' verdicts and the totals; returns a process exit code
/// (2: no bug files).
int run_bugs(const BugBenchOptions& o);

}  // namespace lic::bench
