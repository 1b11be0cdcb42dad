#include "supervision/stock_worker.hpp"

#include <algorithm>
#include <memory>

namespace lic::supervision {

const Atom kCrash("crash");

InitResult StockWorker::init(Context& ctx) {
  if (config_.stop != StopStyle::prompt) ctx.trap_exit(true);
  if (config_.init_delay > Duration::zero()) ctx.sleep(config_.init_delay);
  if (config_.inits.empty()) return InitResult::ok();
  const std::size_t k = std::min<std::size_t>(ctx.label().instance, config_.inits.size());
  return config_.inits[k == 0 ? 0 : k - 1];
}

void StockWorker::handle_info(Context& ctx, const Message& m) {
  if (m.tag != kCrash) return;
  const Reason* why = m.get<Reason>();
  crashing_ = true;
  ctx.stop(why != nullptr ? *why : Reason::error(Atom("crash")));
}

void StockWorker::terminate(Context& ctx, const Reason& r) {
  if (crashing_ || r != Reason::shutdown()) return;  // only a requested stop is slow
  if (config_.stop == StopStyle::delay) ctx.sleep(config_.stop_delay);
  if (config_.stop == StopStyle::stall) ctx.receive([](const Message&) { return false; });
}

Child stock_child(ChildSpec spec, WorkerConfig config) {
  Child c;
  c.spec = std::move(spec);
  c.start.behaviour = [config = std::move(config)] { return std::make_unique<StockWorker>(config); };
  return c;
}

Pid find_by_path(const Simulation& sim, std::string_view path) {
  for (Pid p : sim.processes()) {
    if (sim.info(p)->label.name.text() == path) return p;
  }
  return Pid{};
}

}  // namespace lic::supervision
