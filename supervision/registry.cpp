#include "supervision/registry.hpp"

#include <utility>

namespace lic::supervision {
namespace {

const Atom kRegister("register");
const Atom kUnregister("unregister");
const Atom kLookup("lookup");

struct KeyRequest {
  std::string key;
};

/// The behaviour `keyed` returns: registration, then the inner behaviour.
class Keyed final : public Behaviour {
 public:
  Keyed(Atom registry, std::string key, std::unique_ptr<Behaviour> inner)
      : registry_(registry), key_(std::move(key)), inner_(std::move(inner)) {}

  InitResult init(Context& ctx) override {
    const Pid reg = ctx.whereis(registry_);
    if (!reg) return InitResult::stop(Reason::other(Atom("{registry_not_found," + std::string(registry_.text()) + "}")));
    const RegisterResult r = register_key(ctx, reg, key_);
    if (!r.ok) return InitResult::stop(Reason::other(Atom("already_started")));
    return inner_->init(ctx);
  }
  CallReply handle_call(Context& ctx, const Message& m, From from) override {
    return inner_->handle_call(ctx, m, from);
  }
  void handle_cast(Context& ctx, const Message& m) override { inner_->handle_cast(ctx, m); }
  void handle_info(Context& ctx, const Message& m) override { inner_->handle_info(ctx, m); }
  void terminate(Context& ctx, const Reason& r) override { inner_->terminate(ctx, r); }

 private:
  Atom registry_;
  std::string key_;
  std::unique_ptr<Behaviour> inner_;
};

}  // namespace

InitResult Registry::init(Context& ctx) {
  if (!name_.empty()) ctx.register_name(name_);
  return InitResult::ok();
}

CallReply Registry::handle_call(Context& ctx, const Message& m, From from) {
  const auto* req = m.get<KeyRequest>();
  if (req == nullptr) return CallReply::reply(m.tag, RegisterResult{});
  auto it = keys_.find(req->key);
  if (m.tag == kLookup) return CallReply::reply(m.tag, it == keys_.end() ? Pid{} : it->second);
  auto release = [this, &ctx](std::map<std::string, Pid>::iterator at) {
    const Pid pid = at->second;
    keys_.erase(at);
    auto h = holders_.find(pid);
    if (h != holders_.end() && --h->second.keys == 0) {
      ctx.demonitor(h->second.monitor, true);
      holders_.erase(h);
    }
  };
  if (m.tag == kUnregister) {
    if (it != keys_.end() && it->second == from.pid) release(it);
    return CallReply::reply(m.tag, RegisterResult{true, {}});
  }
  if (m.tag != kRegister) return CallReply::reply(m.tag, RegisterResult{});
  if (it != keys_.end()) {
    // A holder whose DOWN is still on its way is gone already: the key is free.
    if (ctx.alive(it->second)) return CallReply::reply(m.tag, RegisterResult{false, it->second});
    release(it);
  }
  keys_.emplace(req->key, from.pid);
  Holder& h = holders_[from.pid];
  if (h.keys++ == 0) h.monitor = ctx.monitor(from.pid);
  return CallReply::reply(m.tag, RegisterResult{true, {}});
}

void Registry::handle_info(Context&, const Message& m) {
  if (m.kind != MsgKind::down) return;
  auto h = holders_.find(m.from);
  if (h == holders_.end() || h->second.monitor != m.ref) return;
  std::erase_if(keys_, [pid = m.from](const auto& kv) { return kv.second == pid; });
  holders_.erase(h);
}

RegisterResult register_key(Context& ctx, Pid registry, const std::string& key) {
  CallResult r = ctx.call(registry, kRegister, KeyRequest{key}, Duration::max());
  if (!r.ok()) return {};
  return *r.reply->payload.get<RegisterResult>();
}

void unregister_key(Context& ctx, Pid registry, const std::string& key) {
  ctx.call(registry, kUnregister, KeyRequest{key}, Duration::max());
}

Pid lookup(Context& ctx, Pid registry, const std::string& key) {
  CallResult r = ctx.call(registry, kLookup, KeyRequest{key}, Duration::max());
  if (!r.ok()) return Pid{};
  return *r.reply->payload.get<Pid>();
}

std::unique_ptr<Behaviour> keyed(Atom registry, std::string key, std::unique_ptr<Behaviour> inner) {
  return std::make_unique<Keyed>(registry, std::move(key), std::move(inner));
}

Pid ensure_started(Context& ctx, Atom registry, Pid sup, const std::string& key,
                   const std::function<Child(const std::string&)>& make, Reason* error) {
  const Pid reg = ctx.whereis(registry);
  if (!reg) {
    if (error != nullptr) *error = Reason::noproc();
    return Pid{};
  }
  if (const Pid p = lookup(ctx, reg, key)) return p;
  Child c = make(key);
  auto factory = std::move(c.start.behaviour);
  c.start.behaviour = [registry, key, factory] { return keyed(registry, key, factory()); };
  ManagementReply r = start_child(ctx, sup, std::move(c));
  if (r.ok) return r.pid;
  // Another caller started it between our lookup and our start: its pid is the answer.
  if (r.error == Reason::other(Atom("already_started"))) {
    if (const Pid p = lookup(ctx, reg, key)) return p;
  }
  if (error != nullptr) *error = r.error;
  return Pid{};
}

}  // namespace lic::supervision
