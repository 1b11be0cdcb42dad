#include "scenarios/run/metrics.hpp"

#include <algorithm>
#include <cmath>

namespace lic::scenarios {

reports::Metrics measure(const Registry& registry, const CheckInput& in) {
  reports::Metrics out;
  for (const MetricInfo& m : registry.metrics()) {
    try {
      m.measure(in, out);
    } catch (const std::exception&) {
      // A metric is an observation: one that fails reports nothing rather than end the run.
    }
  }
  return out;
}

double Distribution::quantile(double p) const {
  if (values.empty()) return 0;
  std::vector<double> v = values;
  std::sort(v.begin(), v.end());
  const double rank = std::ceil(p * static_cast<double>(v.size()));
  const auto i = static_cast<std::size_t>(std::clamp(rank, 1.0, static_cast<double>(v.size()))) - 1;
  return v[i];
}

double Distribution::max() const { return values.empty() ? 0 : *std::max_element(values.begin(), values.end()); }

void MetricSummary::add(const reports::Metrics& m) {
  for (const auto& [name, v] : m) {
    Distribution& d = by_name_[name];
    ++d.runs;
    d.values.insert(d.values.end(), v.values.begin(), v.values.end());
  }
}

}  // namespace lic::scenarios
