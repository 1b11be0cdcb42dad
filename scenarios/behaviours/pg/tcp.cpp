// TCP's arithmetic (tcp.hpp, pg.hpp): how long Linux retransmits before it gives up (its timer
// wheel is sim/linux_timer.hpp).
#include "scenarios/behaviours/pg/tcp.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

namespace lic::scenarios::pg {

Duration retransmission_timeout(std::int64_t retries2) {
  // tcp_model_timeout: RTO doubling from TCP_RTO_MIN, then TCP_RTO_MAX for each retry beyond.
  std::int64_t thresh = 0;
  while ((std::int64_t{2} << thresh) * kRtoMin.ns <= kRtoMax.ns) ++thresh;  // ilog2(RTO_MAX / RTO_MIN)
  if (retries2 <= thresh) return kRtoMin * ((std::int64_t{2} << retries2) - 1);
  return kRtoMin * ((std::int64_t{2} << thresh) - 1) + kRtoMax * (retries2 - thresh);
}

namespace {

Duration give_up_path(std::int64_t retries2, Duration user_timeout) {
  // The path the model takes (Outbox, linux_timer) from data sent at each instant. The wheel's
  // rounding depends on a timer's jiffy within the coarsest granule a retransmission timer
  // reaches (level 3, 512 jiffies: RTOs of 16 s to 120 s), and on the instant's place within its
  // jiffy (a timer never fires before it is due, so a start late in a jiffy carries its offset
  // along). So the starts at each jiffy of 512, at its beginning and at its end, hold the latest
  // the path can take, to within a jiffy, which is added.
  struct Segment {
    std::uint64_t qid = 0;
  };
  constexpr std::int64_t kGranules = 512;
  Duration latest{};
  for (std::int64_t c = 0; c < kGranules; ++c) {
    for (const std::int64_t offset : {std::int64_t{0}, detail::kJiffy - 1}) {
      const Time sent{c * detail::kJiffy + offset};
      detail::Outbox<Segment> out;
      out.add(sent, Segment{});
      Time now = sent + detail::linux_timer(sent, out.rto);
      for (std::optional<Duration> next; (next = out.fire(now, user_timeout, retries2));) now = now + detail::linux_timer(now, *next);
      latest = std::max(latest, now - sent);
    }
  }
  return latest + Duration{detail::kJiffy};
}

}  // namespace

Duration retransmission_give_up(std::int64_t retries2, Duration user_timeout) {
  // 1,024 paths: 0.25 ms for the defaults, 0.3 s for a tcp_user_timeout of 24.8 days. The failover
  // check asks once a run, and a sweep's runs share the answer (a pure function of the two).
  static std::mutex mutex;
  static std::map<std::pair<std::int64_t, std::int64_t>, Duration> known;
  const std::pair<std::int64_t, std::int64_t> key{retries2, user_timeout.ns};
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = known.find(key); it != known.end()) return it->second;
  }
  const Duration d = give_up_path(retries2, user_timeout);
  const std::lock_guard<std::mutex> lock(mutex);
  return known.emplace(key, d).first->second;
}

}  // namespace lic::scenarios::pg
