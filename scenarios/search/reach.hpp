#pragma once
// How far a failing file holds beyond its own seed, and the random streams it needs pinned to
// hold there (issue 32; docs/shrinking.md, "Seeds"). A shrunk file that fails only at its seed
// is a poor reproducer: one more process, one more message, and the draws that made it fail
// move. Here the file's failure is tried on seeds 1..100; when fewer than 90 fail the same way,
// the fewest streams it drew from (a process's by its tree path, a link's, a fault's, a buggify
// point's, the tie-break's) are pinned to its seed (`streams:`) so that it fails whatever the
// seed is: the pins are then what the failure needs, written in the file for a person to read.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "scenarios/checks/table.hpp"
#include "scenarios/registry.hpp"
#include "scenarios/run/runner.hpp"
#include "scenarios/scenario.hpp"

namespace lic::scenarios {

/// Seeds 1..kReachSeeds are tried; a file "holds" when at least kReachHolds of them fail the same way.
inline constexpr std::uint64_t kReachSeeds = 100;
inline constexpr std::size_t kReachHolds = 90;

struct SeedReach {
  std::size_t failing = 0;           ///< seeds of 1..100 on which the file (with its pins) fails the same way
  std::size_t failing_unpinned = 0;  ///< the same before any pin (equal to `failing` when none was needed)
  std::vector<std::string> pinned;   ///< the stream keys pinned to the file's seed, in key order
  std::vector<std::string> drawn;    ///< every pinnable stream the run at its seed drew from, in key order
  std::size_t runs = 0;              ///< runs it took, a seed range counted as 100 even when it stopped early
  bool stopped = false;              ///< `stop` ended the search for pins before it was done
};

struct ReachOptions {
  const Registry* registry = nullptr;  ///< null: Registry::builtin()
  Budgets budgets{};                   ///< each run's
  /// Runs at most to find the pins, each try of 1..100 counted as 100 (the count with and without
  /// them is not bounded by it).
  std::size_t max_runs = 5000;
  /// Asked between candidates; true ends the search for pins with what it has.
  std::function<bool()> stop{};
  unsigned jobs = 0;  ///< threads (0: one per core); the answer does not depend on them
};

/// Tries `s` (validated; it fails with `id` at its own seed) on seeds 1..100 and, when fewer
/// than 90 fail so, pins to `s.seed` the fewest streams that make at least 90 fail so: `s`
/// gains them in `streams:` (pinning a stream to the file's seed leaves the run at that seed as
/// it was). When even every stream the run drew from pinned does not reach 90, nothing is
/// pinned and `failing` says how far it holds.
SeedReach pin_streams(Scenario& s, const FailureId& id, const ReachOptions& o = {});

/// The random streams a run of `s` at its own seed draws from, by the keys a file's `streams:`
/// can pin (`process /root/a`, `link a b`, `tie-break`, ...), in the order the run first drew them.
std::vector<std::string> streams_drawn(const Scenario& s, const ReachOptions& o = {});

}  // namespace lic::scenarios
