#pragma once
// A worker that keeps a link to another process, found by its registered name anywhere in the
// cluster, and pings it: cross-node application traffic for partition scenarios. Each tick it
// (re)connects if it is not linked, and pings its peer if it is. Losing an established link
// (noconnection in a partition, the peer's crash) is traced as `peer_lost`, and with
// `crash_on_disconnect` the worker crashes with that reason, so its supervisor restarts it; a
// connection attempt that fails at once (the peer's node is unreachable) is `peer_unreachable`
// and is simply retried at the next tick, never a crash (otherwise a partition would be a
// restart loop and escalate).

#include <cstdint>

#include "sim/process.hpp"

namespace lic::scenarios::systems {

struct PeerConfig {
  Atom name{};   ///< register under this name (empty: none)
  Atom peer{};   ///< the registered name to link to (empty: only answers pings)
  Duration interval = kMillisecond * 500;
  bool crash_on_disconnect = false;
};

class Peer final : public Behaviour {
 public:
  explicit Peer(PeerConfig c) : c_(c) {}
  InitResult init(Context& ctx) override;
  void handle_info(Context& ctx, const Message& m) override;

 private:
  PeerConfig c_;
  Pid linked_;
  bool connecting_ = false;
  std::int64_t pings_ = 0;
};

}  // namespace lic::scenarios::systems
