#pragma once
// TCP as Linux keeps it on either end of a connection (not an API: pg.hpp is): pure state, no
// messages. Keepalive decides what a keepalive timer does when it fires (tcp_keepalive_timer),
// Outbox holds the data sent and not yet acknowledged and decides each retransmission
// (tcp_retransmit_timer), and linux_timer says when a timer armed now really fires (the timer
// wheel). Each end of a connection holds one of each: the server's are in its Session
// (server.hpp; wire.cpp runs them), the client's in its connection process (client.cpp). The RTO
// constants and retransmission_timeout are pg.hpp's; tcp.cpp defines the functions.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "scenarios/behaviours/pg.hpp"
#include "sim/linux_timer.hpp"

namespace lic::scenarios::pg::detail {

/// Keepalive, as Linux's tcp_keepalive_timer decides it: what to do when the timer fires.
struct Keepalive {
  Duration idle{}, interval{};
  std::int64_t count = 9;
  Duration user_timeout{};
  Time last_heard{};
  std::int64_t probes = 0;
  std::uint64_t gen = 0;  // a stale timer carries an older one

  enum class Do : std::uint8_t { wait, probe, dead };
  struct Step {
    Do what = Do::wait;
    Duration next{};
  };
  /// `unacked`: data is out, so keepalive waits ("alive without keepalive").
  Step step(Time now, bool unacked) {
    if (unacked) return {Do::wait, idle};
    const Duration elapsed = now - last_heard;
    if (elapsed < idle) return {Do::wait, idle - elapsed};
    const bool dead = user_timeout > Duration::zero() ? elapsed >= user_timeout && probes > 0 : probes >= count;
    if (dead) return {Do::dead, {}};
    ++probes;
    return {Do::probe, interval};
  }
  /// Something was heard: true when probes were out (the timer must look again, `idle` from now;
  /// otherwise the armed timer finds the silence shorter and waits what is left).
  bool heard(Time now) {
    last_heard = now;
    const bool probing = probes != 0;
    probes = 0;
    return probing;
  }
};

/// Data sent and not yet acknowledged, as Linux retransmits it (tcp_retransmit_timer).
template <class Segment>
struct Outbox {
  std::vector<Segment> segs;
  Time first{};  // when the oldest was first sent (retrans_stamp)
  Duration rto = kRtoInitial;
  std::int64_t retransmits = 0;
  std::uint64_t gen = 0;
  bool armed = false;
  Time armed_at{};      // when the timer was last armed...
  Duration armed_for{};  // ...and for how long (before the timer wheel's rounding)

  /// A new segment; true when the timer must be armed (`rto` from now).
  bool add(Time now, Segment seg) {
    segs.push_back(std::move(seg));
    if (armed) return false;
    arm(now);
    return true;
  }
  /// The timer armed afresh, `rto` from now (with nothing queued: a FIN alone, an orphan's).
  void arm(Time now) {
    first = now;
    armed_at = now;
    rto = kRtoInitial;
    armed_for = rto;
    retransmits = 0;
    armed = true;
    ++gen;
  }
  /// The other side acknowledged `qid`; true when the timer must be armed again (`rto` from now).
  bool acked(Time now, std::uint64_t qid) {
    std::erase_if(segs, [qid](const Segment& s) { return s.qid == qid; });
    arm(now);
    armed = !segs.empty();
    return armed;
  }
  /// The timer fired: dead (nullopt), or send everything again and look after the result. The
  /// clock starts at the first retransmission (Linux's retrans_stamp is the segment's timestamp,
  /// which its first retransmission sets).
  std::optional<Duration> fire(Time now, Duration user_timeout, std::int64_t retries2) {
    if (retransmits == 0) first = now;
    const Duration elapsed = now - first;
    const Duration limit = user_timeout > Duration::zero() ? user_timeout : retransmission_timeout(retries2);
    if (retransmits > 0 && elapsed >= limit) return std::nullopt;
    ++retransmits;
    rto = std::min(rto * 2, kRtoMax);
    Duration next = rto;
    if (user_timeout > Duration::zero()) next = std::max(std::min(next, limit - elapsed), kMillisecond);  // tcp_clamp_rto_to_user_timeout
    ++gen;
    armed_at = now;
    armed_for = next;
    return next;
  }
};

/// tcp_orphan_retries: 0, Linux's default, means 8 (tcp_orphan_retries() in net/ipv4/tcp_timer.c):
/// an orphan's unacknowledged FIN is sent again until retransmission_timeout(8), 102.2 s after
/// the first resend, has passed; then the socket is gone without a word, and the peer learns of it
/// only when it sends something (its keepalive probe, or data) and gets a reset.
inline constexpr std::int64_t kOrphanRetries = 8;

/// How long a client's OS holds back the ACK of an answer, hoping to send it with its next
/// query (Linux's delayed ACK in an interactive exchange: TCP_DELACK_MIN, HZ/25). Measured on the
/// recording machine (docs/conformance-pg.md, cut_inside_delayed_ack): a cut 35 ms after an
/// answer found it unacknowledged, one 42 ms after did not.
inline constexpr Duration kDelayedAck = kMillisecond * 40;

/// A jiffy: Linux's timer tick at HZ=250 (Debian's kernels).
inline constexpr std::int64_t kJiffy = kLinuxJiffy;

/// How long a Linux timer armed now for `d` really takes (sim/linux_timer.hpp): TCP's keepalive
/// and retransmission timers are such timers.
using lic::linux_timer;

}  // namespace lic::scenarios::pg::detail
