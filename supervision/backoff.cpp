#include "supervision/backoff.hpp"

namespace lic::supervision {

Duration backoff_base(const BackoffPolicy& p, std::uint32_t attempt) {
  __extension__ typedef __int128 i128;
  i128 d = p.initial_delay.ns;
  const i128 cap = p.max_delay.ns;
  for (std::uint32_t i = 1; i < attempt && d < cap; ++i) {
    d = d * static_cast<i128>(p.factor.num) / static_cast<i128>(p.factor.den == 0 ? 1 : p.factor.den);
  }
  return Duration{static_cast<std::int64_t>(d < cap ? d : cap)};
}

Duration backoff_delay(const BackoffPolicy& p, std::uint32_t attempt, Rng& rng) {
  return rng.jitter(backoff_base(p, attempt), p.jitter);
}

std::optional<Duration> Backoff::failed(Time at, Rng& rng) {
  if (running_since_ && at - *running_since_ > stable_threshold_) attempts_ = 0;
  running_since_.reset();
  ++attempts_;
  if (policy_.max_attempts != 0 && attempts_ > policy_.max_attempts) return std::nullopt;
  return backoff_delay(policy_, attempts_, rng);
}

}  // namespace lic::supervision
