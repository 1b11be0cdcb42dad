#pragma once
// A management call as the supervisors' APIs make it: wait for ever (OTP's supervisor calls use
// infinity) and answer the server's reply, or a reply whose `error` is why the call failed
// (noproc, or the server's exit reason).

#include <utility>

#include "sim/process.hpp"

namespace lic::supervision {

template <class Reply>
Reply call_reply(Context& ctx, Pid server, Atom tag, Payload payload) {
  CallResult c = ctx.call(server, tag, std::move(payload), Duration::max());
  if (!c.ok()) {
    Reply r;
    r.error = c.reason;
    return r;
  }
  return std::move(*c.reply->payload.get<Reply>());
}

}  // namespace lic::supervision
