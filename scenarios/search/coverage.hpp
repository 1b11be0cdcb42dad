#pragma once
// What a sweep exercised (`sweep --coverage`, docs/swarm.md): for each fault of the file, the
// seeds it was on in and the seeds it acted in; each buggify point's hits; each check's passes,
// failures and seeds it was not judged in; and the supervision outcomes reached at least once
// (a restart under each strategy, a supervisor giving up at each depth, a shutdown timeout that
// ended in a kill, ...). What no seed reached is listed too: that is what the sweep never tried.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "scenarios/registry.hpp"
#include "scenarios/run/runner.hpp"
#include "scenarios/search/sweep.hpp"

namespace lic::scenarios {

/// The supervision outcomes the run reached, sorted: "restart (one_for_one)", "gave up at depth 1", ...
std::vector<std::string> outcomes_reached(const Scenario& s, const RunResult& r);
/// The outcomes a run of `s` could reach (those its tree has the parts for), sorted.
std::vector<std::string> outcomes_possible(const Scenario& s);

/// Fills r's coverage fields from the run of `s` (as written: a fault a swarm run turned off is
/// not in the run, and is recorded as off).
void record_coverage(const Scenario& s, const RunResult& run, SeedResult& r);

class Coverage {
 public:
  Coverage(const Scenario& s, const Registry& registry);
  void add(const SeedResult& r);

  struct FaultRow {
    std::string name;
    std::uint64_t on = 0;     ///< seeds it was on in
    std::uint64_t acted = 0;  ///< seeds it acted in at least once
    std::uint64_t injected = 0;
  };
  struct PointRow {
    std::string name;
    std::uint64_t on = 0;     ///< seeds it was on in
    std::uint64_t fired = 0;  ///< seeds it fired in
    std::uint64_t hits = 0;   ///< times it fired, over every seed
  };
  struct CheckRow {
    std::string name;
    std::uint64_t passed = 0;
    std::uint64_t failed = 0;
    std::uint64_t not_judged = 0;
  };

  std::uint64_t seeds() const { return seeds_; }
  const std::vector<FaultRow>& faults() const { return faults_; }
  const std::vector<PointRow>& points() const { return points_; }
  const std::vector<CheckRow>& checks() const { return checks_; }
  /// Every possible outcome with the seeds that reached it (0: never tried).
  const std::map<std::string, std::uint64_t>& outcomes() const { return outcomes_; }

  /// The coverage as a JSON object (the `coverage` of the sweep's summary.json).
  std::string json() const;
  /// The terminal section.
  std::string text() const;
  /// A page of its own (coverage.html, linked from the sweep's index.html).
  std::string html(const std::string& title) const;

 private:
  std::uint64_t seeds_ = 0;
  std::vector<FaultRow> faults_;
  std::vector<PointRow> points_;
  std::vector<CheckRow> checks_;
  std::map<std::string, std::uint64_t> outcomes_;
  std::vector<std::string> pinned_;  // buggify points the file turns on for every seed
  std::uint64_t not_judged(const CheckRow& c) const;
};

}  // namespace lic::scenarios
