#include "scenarios/behaviours/peer.hpp"

namespace lic::scenarios::systems {

namespace {
const Atom kTick("peer_tick");
const Atom kPing("ping");
const Atom kPong("pong");
const Atom kPeerKey("peer");
const Atom kReasonKey("reason");
}  // namespace

InitResult Peer::init(Context& ctx) {
  if (!c_.name.empty()) ctx.register_name(c_.name);
  ctx.trap_exit(true);
  if (!c_.peer.empty()) ctx.send_after(c_.interval, ctx.self(), kTick);
  return InitResult::ok();
}

void Peer::handle_info(Context& ctx, const Message& m) {
  if (m.kind == MsgKind::exit) {
    if (m.from != linked_) return;  // not our peer's (the parent's is handled by the kernel)
    const bool established = !connecting_;
    linked_ = Pid{};
    connecting_ = false;
    if (!established) {
      ctx.emit(Atom("peer_unreachable"), {{kPeerKey, c_.peer}, {kReasonKey, Atom(to_string(m.reason))}});
      return;
    }
    ctx.emit(Atom("peer_lost"), {{kPeerKey, c_.peer}, {kReasonKey, Atom(to_string(m.reason))}});
    if (c_.crash_on_disconnect) ctx.stop(m.reason);
    return;
  }
  if (m.tag == kPing) {
    ctx.send(m.from, kPong);
    return;
  }
  if (m.tag == kPong) {
    if (connecting_ && m.from == linked_) {
      // The first answer on a new link: the connection is established.
      connecting_ = false;
      ctx.emit(Atom("peer_linked"), {{kPeerKey, c_.peer}, {Atom("pid"), m.from}});
    }
    return;
  }
  if (m.tag != kTick) return;
  if (!linked_) {
    const Pid p = ctx.whereis(c_.peer);
    if (p && p != ctx.self()) {
      linked_ = p;
      connecting_ = true;
      ctx.link(p);
    }
  }
  if (linked_) ctx.send(linked_, kPing, ++pings_);
  ctx.send_after(c_.interval, ctx.self(), kTick);
}

}  // namespace lic::scenarios::systems
