#pragma once
// When a Linux kernel timer armed now for `d` really fires (kernel/time/timer.c): whole jiffies
// (HZ=250, 4 ms: Debian's kernels), and beyond the timer wheel's first level the expiry rounded
// up to the level's granule (calc_wheel_index: 32 ms for timers of 0.25-2 s, 256 ms up to 16 s,
// 2 s up to 2 min, ...). TCP's retransmission and keepalive timers are such timers: the
// simulated PostgreSQL's connections (scenarios/behaviours/pg/) and the net-tick model's
// retransmissions after a cut (sim/net_ticks.cpp) fire as this says.

#include <algorithm>
#include <cstdint>

#include "sim/time.hpp"

namespace lic {

/// A jiffy: Linux's timer tick at HZ=250 (Debian's kernels), in ns.
inline constexpr std::int64_t kLinuxJiffy = 4'000'000;

/// How long a Linux timer armed at `now` for `d` really takes (never less than `d`).
inline Duration linux_timer(Time now, Duration d) {
  const std::int64_t clk = now.ns / kLinuxJiffy;
  const std::int64_t delta = (std::max(d.ns, std::int64_t{0}) + kLinuxJiffy - 1) / kLinuxJiffy;
  std::int64_t expires = clk + delta;
  int lvl = 0;  // the wheel's level for a timer `delta` jiffies away
  while (lvl < 8 && delta >= (std::int64_t{63} << (3 * lvl))) ++lvl;
  if (lvl > 0) expires = ((expires >> (3 * lvl)) + 1) << (3 * lvl);
  return Duration{std::max(expires * kLinuxJiffy - now.ns, d.ns)};
}

}  // namespace lic
