#include "supervision/stock_worker.hpp"

#include "sim/trace_keys.hpp"

#include <algorithm>
#include <memory>

namespace lic::supervision {

const Atom kCrash("crash");
const Atom kTick("tick");

namespace {
}  // namespace

InitResult StockWorker::init(Context& ctx) {
  if (config_.stop != StopStyle::prompt) ctx.trap_exit(true);
  if (config_.init_delay > Duration::zero()) ctx.sleep(config_.init_delay);
  InitResult result = InitResult::ok();
  if (!config_.inits.empty()) {
    const std::size_t k = std::min<std::size_t>(ctx.label().instance, config_.inits.size());
    result = config_.inits[k == 0 ? 0 : k - 1];
  }
  if (result.status != InitResult::Status::ok) return result;
  // The plans start when the worker is up, so each incarnation gets its own.
  const SelfCrash& c = config_.crash;
  if (c.kind == SelfCrash::Kind::after) ctx.send_after(c.time, ctx.self(), kCrash, c.reason);
  if (c.kind == SelfCrash::Kind::exponential) {
    ctx.send_after(ctx.rng().exponential(c.time), ctx.self(), kCrash, c.reason);
  }
  if (config_.tick) ctx.send_after(*config_.tick, ctx.self(), kTick);
  return result;
}

CallReply StockWorker::handle_call(Context&, const Message& m, From) {
  if (!config_.echo) return CallReply::noreply();
  return CallReply::reply(m.tag, m.payload.copy());
}

void StockWorker::handle_info(Context& ctx, const Message& m) {
  if (m.tag == kCrash) {
    const Reason* why = m.get<Reason>();
    crashing_ = true;
    ctx.stop(why != nullptr ? *why : Reason::error(Atom("crash")));
    return;
  }
  if (m.tag == kTick && m.from == ctx.self() && config_.tick) return on_tick(ctx);
  if (config_.echo && m.kind == MsgKind::plain && m.from && m.from != ctx.self()) {
    ctx.send(m.from, m.tag, m.payload.copy());
  }
}

void StockWorker::on_tick(Context& ctx) {
  ++ticks_;
  ctx.emit(kTick, {{keys::kN, static_cast<std::int64_t>(ticks_)}});
  if (config_.ticks_max != 0 && ticks_ >= config_.ticks_max) {
    ctx.stop(Reason::normal());
    return;
  }
  ctx.send_after(*config_.tick, ctx.self(), kTick);
}

void StockWorker::terminate(Context& ctx, const Reason& r) {
  // A trapping gen_server runs terminate for any exit signal from its parent, as OTP's does:
  // shutdown, another reason its supervisor ended with, or an orphan's `killed` (its parent was
  // killed). Only its own crash is not slow.
  (void)r;
  if (crashing_) return;
  if (config_.stop == StopStyle::delay && config_.stop_delay > Duration::zero()) ctx.sleep(config_.stop_delay);
  if (config_.stop == StopStyle::stall) ctx.receive([](const Message&) { return false; });
}

Child stock_child(ChildSpec spec, WorkerConfig config) {
  Child c;
  c.spec = std::move(spec);
  c.start.behaviour = [config = std::move(config)] { return std::make_unique<StockWorker>(config); };
  return c;
}

}  // namespace lic::supervision
