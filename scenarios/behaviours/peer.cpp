#include "scenarios/behaviours/peer.hpp"

#include "scenarios/behaviours/table.hpp"
#include "sim/trace_keys.hpp"

namespace lic::scenarios::systems {

namespace {
const Atom kTick("peer_tick");
const Atom kPing("ping");
const Atom kPong("pong");
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
      ctx.emit(Atom("peer_unreachable"), {{keys::kPeer, c_.peer}, {keys::kReason, Atom(to_string(m.reason))}});
      return;
    }
    ctx.emit(Atom("peer_lost"), {{keys::kPeer, c_.peer}, {keys::kReason, Atom(to_string(m.reason))}});
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
      ctx.emit(Atom("peer_linked"), {{keys::kPeer, c_.peer}, {keys::kPid, m.from}});
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

// ---- what a file can name ----------------------------------------------------------------------

namespace lic::scenarios {

std::vector<BehaviourInfo> peer_behaviours() {
  return {BehaviourInfo{
      "peer",
      "keeps a link to the process registered as `peer` (on any node) and pings it every interval: cross-node "
      "traffic; losing an established link is peer_lost (a crash with crash_on_disconnect), a failed attempt "
      "peer_unreachable (retried)",
      {registered_as({"name", "string", "-", "the name it registers (- : none)"}),
       refers_to({"peer", "string", "-", "the registered name it links to (- : none, it only answers pings)"}),
       {"interval", "duration", "500ms", "the time between connection attempts and pings (more than 0)"},
       {"crash_on_disconnect", "bool", "false", "crash with the link's exit reason when an established link is lost"}},
      [](Args& a) -> BehaviourFactory {
        systems::PeerConfig c;
        c.name = a.optional_atom("name");
        c.peer = a.optional_atom("peer");
        c.interval = a.positive("interval");
        c.crash_on_disconnect = a.flag("crash_on_disconnect");
        return [c](const std::string&) { return std::make_unique<systems::Peer>(c); };
      }}};
}

}  // namespace lic::scenarios
