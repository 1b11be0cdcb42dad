#include "scenarios/run/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

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

namespace {

const double kGamma = (1 + Distribution::kSketchError) / (1 - Distribution::kSketchError);
const double kLogGamma = std::log(kGamma);

std::int32_t bucket_of(double magnitude) {
  const double i = std::ceil(std::log(magnitude) / kLogGamma);
  return static_cast<std::int32_t>(std::clamp(i, -2.0e9, 2.0e9));
}

double value_of(std::int32_t bucket) { return 2 * std::pow(kGamma, bucket) / (kGamma + 1); }

}  // namespace

void Distribution::add(double x) {
  ++count_;
  if (!sketched_) {
    values_.push_back(x);
    if (values_.size() <= kExactValues) return;
    sketched_ = true;
    for (double v : values_) sketch(v);
    values_.clear();
    values_.shrink_to_fit();
    return;
  }
  sketch(x);
}

void Distribution::sketch(double x) {
  if (std::isnan(x)) {
    ++nans_;
    return;
  }
  if (!has_max_ || x > max_) max_ = x, has_max_ = true;
  if (std::isinf(x)) ++(x > 0 ? plus_inf_ : minus_inf_);
  else if (x == 0) ++zeros_;
  else ++(x > 0 ? positive_ : negative_)[bucket_of(std::fabs(x))];
}

std::vector<std::pair<double, std::uint64_t>> Distribution::weighted() const {
  std::vector<std::pair<double, std::uint64_t>> out;
  if (!sketched_) {
    std::vector<double> v = values_;
    std::sort(v.begin(), v.end());
    for (double x : v) {
      if (!out.empty() && out.back().first == x) ++out.back().second;
      else out.emplace_back(x, 1);
    }
    return out;
  }
  const double inf = std::numeric_limits<double>::infinity();
  if (minus_inf_ != 0) out.emplace_back(-inf, minus_inf_);
  for (auto it = negative_.rbegin(); it != negative_.rend(); ++it) out.emplace_back(-value_of(it->first), it->second);
  if (zeros_ != 0) out.emplace_back(0.0, zeros_);
  for (const auto& [b, n] : positive_) out.emplace_back(value_of(b), n);
  if (plus_inf_ != 0) out.emplace_back(inf, plus_inf_);
  if (nans_ != 0) out.emplace_back(std::numeric_limits<double>::quiet_NaN(), nans_);
  return out;
}

double Distribution::quantile(double p) const {
  if (count_ == 0) return 0;
  const double rank = std::ceil(p * static_cast<double>(count_));
  const auto k = static_cast<std::uint64_t>(std::clamp(rank, 1.0, static_cast<double>(count_)));
  if (!sketched_) {
    std::vector<double> v = values_;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k - 1), v.end());
    return v[k - 1];
  }
  std::uint64_t seen = 0;
  for (const auto& [x, n] : weighted()) {
    seen += n;
    if (seen >= k) return x;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

double Distribution::max() const {
  if (!sketched_) return values_.empty() ? 0 : *std::max_element(values_.begin(), values_.end());
  return has_max_ ? max_ : std::numeric_limits<double>::quiet_NaN();
}

void MetricSummary::add(const reports::Metrics& m) {
  for (const auto& [name, v] : m) {
    Distribution& d = by_name_[name];
    ++d.runs;
    for (double x : v.values) d.add(x);
  }
}

}  // namespace lic::scenarios
