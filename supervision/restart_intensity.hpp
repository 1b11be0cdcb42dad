#pragma once
// The restart-intensity window, as OTP computes it (supervisor.erl, add_restart/1, OTP 25):
//
//   Now = erlang:monotonic_time(second),            % floored to whole seconds
//   keep the earlier restarts R with R >= Now - Period, then add Now;
//   give up when the count, this restart included, exceeds Intensity.
//
// Consequence: two restarts less than Period apart always count together, Period + 1 s or more
// apart never do, and in between it depends on where they fall within their seconds: with
// Period 5, restarts at 5.0 s and 10.9 s (5.9 s apart) count together, restarts at 4.9 s and
// 10.0 s (5.1 s apart) do not. The `precise` window counts a restart while it is at most Period
// old, to the nanosecond.

#include <cstdint>
#include <deque>

#include "sim/time.hpp"
#include "supervision/child_spec.hpp"

namespace lic::supervision {

class RestartIntensity {
 public:
  RestartIntensity(std::uint32_t intensity, Duration period,
                   IntensityWindow window = IntensityWindow::otp_seconds);

  /// Records a restart at `now` (not earlier than the last). True: the supervisor restarts.
  /// False: the restarts in the window, this one included, exceed the intensity: it gives up.
  bool add(Time now);
  /// Restarts currently in the window (after the last add).
  std::size_t in_window() const { return stamps_.size(); }

 private:
  std::uint32_t intensity_;
  std::int64_t period_;  // whole seconds (otp_seconds) or nanoseconds (precise)
  IntensityWindow window_;
  std::deque<std::int64_t> stamps_;  // oldest first
};

}  // namespace lic::supervision
