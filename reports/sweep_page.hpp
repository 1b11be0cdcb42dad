#pragma once
// A sweep's pages: index.html (a pass/fail strip per seed, the failing seeds with their
// reproduce lines and witnesses, a histogram per metric, the fault coverage) and junit.xml (a
// test case per failing seed and a summary case). Drawn from plain data that `letitcrash sweep`
// and `merge` fill; self-contained: inline CSS and inline SVG, nothing fetched.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "reports/run_report.hpp"

namespace lic::reports {

/// Each seed's outcome, a code a seed: the seed of position i is first + i * stride (a shard's
/// seeds are every stride-th of the range). 0: no result for it; 1: passed; k >= 2: failed, with
/// the checks failure_kinds[k - 2] (when k - 2 is past its end: failed, checks not kept).
struct SeedOutcomes {
  std::uint64_t first = 0;
  std::uint64_t stride = 1;
  std::vector<std::uint16_t> codes;
  std::vector<std::string> failure_kinds;  ///< "restarts(/root/a), alive(/root/b)"
  static constexpr std::uint16_t kMissing = 0;
  static constexpr std::uint16_t kPassed = 1;
};

struct SweepFailure {
  std::uint64_t seed = 0;
  std::string reproduce;              ///< the command that runs the seed again
  std::vector<std::string> failed;    ///< the failing checks' names
  /// Each failing check's witness, when kept, by check name in `failed`'s order.
  std::vector<std::pair<std::string, Witness>> witnesses;
};

struct SweepMetric {
  std::string name;
  std::size_t runs = 0;  ///< runs that reported it
  /// Every value of every run as (value, how many), ascending; past a million values, a
  /// sketch's buckets, each read as one value within `quantile_error` of those in it.
  std::vector<std::pair<double, std::uint64_t>> values;
  std::uint64_t count = 0;  ///< values in all
  double p50 = 0, p90 = 0, p99 = 0, max = 0;  ///< nearest rank, as the terminal prints them
  double quantile_error = 0;                  ///< 0: exact
};

struct SweepCoverage {
  struct Fault {
    std::string name;
    std::uint64_t on = 0, acted = 0, injected = 0;
  };
  struct Check {
    std::string name;
    std::uint64_t passed = 0, failed = 0, not_judged = 0;
  };
  std::uint64_t seeds = 0;
  std::vector<Fault> faults;
  std::vector<Check> checks;
};

/// The files beside the page, as links relative to it (empty: not written).
struct SweepLinks {
  std::string results, summary, junit, coverage;
};

struct SweepReport {
  std::string scenario;
  std::string file;
  std::string seeds;  ///< "A..B"
  std::string shard;  ///< "K/N"
  std::string tie_break;
  bool swarm = false;
  std::uint64_t total = 0, passed = 0, failed = 0;
  SeedOutcomes outcomes;
  /// Failing seeds in seed order, at most a few hundred of `failed` (the rest are in the results).
  std::vector<SweepFailure> failing;
  std::vector<SweepMetric> metrics;
  std::optional<SweepCoverage> coverage;
  SweepLinks links;
};

/// The strip draws one rect a seed up to this many seeds, and at most this many cells beyond.
constexpr std::size_t kStripCells = 2000;

/// A cell of the strip: the seeds with a result among positions [begin, end) of the outcomes.
struct StripCell {
  std::uint64_t first = 0, last = 0;  ///< the first and last seed with a result in it
  std::uint64_t seeds = 0, failed = 0;
  std::string tip;  ///< "seed 5: passed", "seed 6: FAILED (restarts(/root/a))", "seeds 1..50: 3 of 50 failed"
};
/// One cell a seed with a result when there are at most kStripCells of them; else at most
/// kStripCells cells over consecutive positions, in seed order.
std::vector<StripCell> strip_cells(const SeedOutcomes& o);

/// A histogram bar: the values in [lo, hi) (the last bar: [lo, hi]).
struct HistogramBar {
  double lo = 0, hi = 0;
  std::uint64_t n = 0;
};
/// Equal-width bars over the finite values (one bar when they are all equal, none when there is
/// no finite value); every finite value is in exactly one bar.
std::vector<HistogramBar> histogram(const std::vector<double>& values);
/// The same over values with counts.
std::vector<HistogramBar> histogram_of_counts(const std::vector<std::pair<double, std::uint64_t>>& values);

std::string sweep_index_html(const SweepReport& r);
std::string sweep_junit_xml(const SweepReport& r);

}  // namespace lic::reports
