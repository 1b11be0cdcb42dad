#include "supervision/restart_intensity.hpp"

namespace lic::supervision {

namespace {
constexpr std::int64_t kNsPerSecond = 1'000'000'000;

/// floor(ns / 1 s), also for negative values (erlang:convert_time_unit floors).
std::int64_t floor_seconds(std::int64_t ns) {
  return ns >= 0 ? ns / kNsPerSecond : -((-ns + kNsPerSecond - 1) / kNsPerSecond);
}
}  // namespace

RestartIntensity::RestartIntensity(std::uint32_t intensity, Duration period, IntensityWindow window)
    : intensity_(intensity),
      // OTP's period is a whole number of seconds; a fraction is dropped (scenario validation
      // rejects one in otp_seconds mode).
      period_(window == IntensityWindow::otp_seconds ? period.ns / kNsPerSecond : period.ns),
      window_(window) {}

bool RestartIntensity::add(Time now) {
  const std::int64_t stamp = window_ == IntensityWindow::otp_seconds ? floor_seconds(now.ns) : now.ns;
  const std::int64_t threshold = stamp - period_;
  while (!stamps_.empty() && stamps_.front() < threshold) stamps_.pop_front();
  stamps_.push_back(stamp);
  return stamps_.size() <= intensity_;
}

}  // namespace lic::supervision
