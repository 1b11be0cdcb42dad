#pragma once
// A run's metrics, and their distribution over many seeds (`sweep`).

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "reports/run_report.hpp"
#include "scenarios/checks/table.hpp"
#include "scenarios/registry.hpp"

namespace lic::scenarios {

/// Every registered metric's values for a finished run. A metric that throws adds nothing.
reports::Metrics measure(const Registry& registry, const CheckInput& in);

/// One metric over many runs: every value of every run (a list metric pools its values).
struct Distribution {
  std::size_t runs = 0;  ///< runs that reported it
  std::vector<double> values;
  /// The p-quantile by nearest rank (p in (0, 1]); 0 when there is no value.
  double quantile(double p) const;
  double max() const;
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
