#pragma once
// A run's metrics, and their distribution over many seeds (`sweep`).

#include <cstddef>
#include <cstdint>
#include <utility>
#include <map>
#include <string>
#include <vector>

#include "reports/run_report.hpp"
#include "scenarios/checks/table.hpp"
#include "scenarios/registry.hpp"

namespace lic::scenarios {

/// Every registered metric's values for a finished run. A metric that throws adds nothing.
reports::Metrics measure(const Registry& registry, const CheckInput& in);

/// One metric over many runs: every value of every run (a list metric pools its values), kept
/// exactly up to kExactValues. Past that (a sweep of millions of seeds) the values go into a
/// log-bucket sketch, DDSketch's mapping: a value x counts in bucket ceil(log_gamma |x|), gamma =
/// (1 + a) / (1 - a) with a = kSketchError, and a bucket reads back as 2 gamma^i / (gamma + 1),
/// within a relative a of every value in it. So a quantile read from the sketch is within 1 % of
/// the exact nearest-rank quantile's value, in memory that grows with the values' range (about
/// 115 buckets a factor of ten), not their number. The switch happens at a count, and buckets
/// do not depend on the order values come in: a sweep and the merge of its shards agree.
class Distribution {
 public:
  static constexpr std::size_t kExactValues = 1'000'000;
  static constexpr double kSketchError = 0.01;

  std::size_t runs = 0;  ///< runs that reported it

  void add(double x);
  /// Every value is kept (quantiles are exact).
  bool exact() const { return !sketched_; }
  /// The relative error of quantile(): 0 while exact, else kSketchError.
  double quantile_error() const { return sketched_ ? kSketchError : 0.0; }
  std::uint64_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  /// The p-quantile by nearest rank (p in (0, 1]); 0 when there is no value.
  double quantile(double p) const;
  double max() const;
  /// The values as (value, how many), ascending: each value while exact, each bucket's
  /// representative once sketched (for a histogram).
  std::vector<std::pair<double, std::uint64_t>> weighted() const;

 private:
  void sketch(double x);
  std::vector<double> values_;  // while exact
  bool sketched_ = false;
  std::uint64_t count_ = 0;
  std::map<std::int32_t, std::uint64_t> positive_, negative_;  // bucket -> values (negative: of |x|)
  std::uint64_t zeros_ = 0, plus_inf_ = 0, minus_inf_ = 0, nans_ = 0;
  double max_ = 0;  // once sketched: the largest value (not NaN) seen
  bool has_max_ = false;
};

/// Collects metrics seed by seed, in any order (the quantiles sort).
class MetricSummary {
 public:
  void add(const reports::Metrics& m);
  const std::map<std::string, Distribution>& by_name() const { return by_name_; }

 private:
  std::map<std::string, Distribution> by_name_;
};

}  // namespace lic::scenarios
