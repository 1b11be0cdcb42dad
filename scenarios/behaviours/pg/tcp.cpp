// TCP's arithmetic (tcp.hpp, pg.hpp): when Linux's timer wheel fires a timer, and how long Linux
// retransmits before it gives up.
#include "scenarios/behaviours/pg/tcp.hpp"

#include <algorithm>

namespace lic::scenarios::pg {

namespace detail {

Duration linux_timer(Time now, Duration d) {
  constexpr std::int64_t kJiffy = 4'000'000;
  const std::int64_t clk = now.ns / kJiffy;
  const std::int64_t delta = (std::max(d.ns, std::int64_t{0}) + kJiffy - 1) / kJiffy;
  std::int64_t expires = clk + delta;
  int lvl = 0;
  while (lvl < 8 && delta >= (std::int64_t{63} << (3 * lvl))) ++lvl;
  if (lvl > 0) expires = ((expires >> (3 * lvl)) + 1) << (3 * lvl);
  return Duration{std::max(expires * kJiffy - now.ns, d.ns)};
}

}  // namespace detail

Duration retransmission_timeout(std::int64_t retries2) {
  // tcp_model_timeout: RTO doubling from TCP_RTO_MIN, then TCP_RTO_MAX for each retry beyond.
  std::int64_t thresh = 0;
  while ((std::int64_t{2} << thresh) * kRtoMin.ns <= kRtoMax.ns) ++thresh;  // ilog2(RTO_MAX / RTO_MIN)
  if (retries2 <= thresh) return kRtoMin * ((std::int64_t{2} << retries2) - 1);
  return kRtoMin * ((std::int64_t{2} << thresh) - 1) + kRtoMax * (retries2 - thresh);
}

}  // namespace lic::scenarios::pg
