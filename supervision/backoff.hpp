#pragma once
// The lifecycle supervisor's restart delay (seed 003): exponential backoff with a cap and
// jitter, an attempt limit, and an attempt counter that resets once a service has run longer
// than its stable threshold. Integer arithmetic only: the factor is a Ratio (2.0 is {2, 1},
// 1.5 is {3, 2}) and the jitter a Ratio (±10 % is {1, 10}).

#include <cstdint>
#include <optional>

#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace lic::supervision {

struct BackoffPolicy {
  Duration initial_delay = kSecond;       ///< the first retry's delay
  Duration max_delay = kSecond * 90;      ///< the cap, before jitter
  Ratio factor{2, 1};                     ///< multiplier per attempt
  Ratio jitter{1, 10};                    ///< ± this fraction of the delay
  std::uint32_t max_attempts = 0;         ///< 0: retry for ever
  bool operator==(const BackoffPolicy&) const = default;
};

/// The delay before retry `attempt` (1, 2, ...) without jitter: min(initial * factor^(attempt-1),
/// max). Seed 003's table: 1 s, 2 s, 4 s, 8 s, ... capped at 90 s.
Duration backoff_base(const BackoffPolicy& p, std::uint32_t attempt);

/// The same with jitter drawn from `rng`: uniform in base ± base * jitter (4 s: 3.6 s..4.4 s;
/// the cap 90 s: 81 s..99 s, as in the seed's table).
Duration backoff_delay(const BackoffPolicy& p, std::uint32_t attempt, Rng& rng);

/// Counts a service's consecutive failed attempts.
class Backoff {
 public:
  Backoff(BackoffPolicy policy, Duration stable_threshold)
      : policy_(policy), stable_threshold_(stable_threshold) {}

  /// The service reached Running at `at`.
  void started(Time at) { running_since_ = at; }
  /// The service failed at `at`: the delay before the next attempt, or nothing when the attempts
  /// are used up. A run longer than the stable threshold first resets the counter.
  std::optional<Duration> failed(Time at, Rng& rng);
  std::uint32_t attempts() const { return attempts_; }

 private:
  BackoffPolicy policy_;
  Duration stable_threshold_;
  std::uint32_t attempts_ = 0;
  std::optional<Time> running_since_;
};

}  // namespace lic::supervision
