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
    // Another live process holds the key: this one was not needed. It ends `normal` (ignore),
    // as a gen_server losing a name race does, so the trace shows no crash.
    if (!r.ok) return InitResult::ignore();
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
  // Elixir's Registry links to every process that registers: if the registry dies, holders
  // that do not trap exits die with it, so a restarted (empty) registry never coexists with
  // processes that still believe they own a key. Trapping, it hears of holders that end.
  ctx.trap_exit(true);
  return InitResult::ok();
}

CallReply Registry::handle_call(Context& ctx, const Message& m, From from) {
  const auto* req = m.get<KeyRequest>();
  if (req == nullptr) return CallReply::reply(m.tag, RegisterResult{});
  auto it = keys_.find(req->key);
  if (m.tag == kLookup) {
    // A holder whose exit is still on its way is not answered (Elixir checks Process.alive?).
    const bool live = it != keys_.end() && ctx.alive(it->second);
    return CallReply::reply(m.tag, live ? it->second : Pid{});
  }
  auto release = [this, &ctx](std::map<std::string, Pid>::iterator at) {
    const Pid pid = at->second;
    keys_.erase(at);
    auto h = holders_.find(pid);
    if (h != holders_.end() && --h->second == 0) {
      ctx.unlink(pid);
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
  if (holders_[from.pid]++ == 0) ctx.link(from.pid);
  return CallReply::reply(m.tag, RegisterResult{true, {}});
}

void Registry::handle_info(Context&, const Message& m) {
  if (m.kind != MsgKind::exit) return;
  auto h = holders_.find(m.from);
  if (h == holders_.end()) return;
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
  Child c = make(key);
  auto factory = std::move(c.start.behaviour);
  c.start.behaviour = [registry, key, factory] { return keyed(registry, key, factory()); };
  // A few rounds: a start that lost the race is ignored (ok, no pid) and the winner is looked
  // up; should the winner have ended in between, start again.
  for (int round = 0; round < 3; ++round) {
    if (const Pid p = lookup(ctx, reg, key)) return p;
    ManagementReply r = start_child(ctx, sup, c);
    if (r.ok && r.pid) return r.pid;
    if (!r.ok) {
      if (error != nullptr) *error = r.error;
      return Pid{};
    }
  }
  if (error != nullptr) *error = Reason::other(Atom("key_contended"));
  return Pid{};
}

}  // namespace lic::supervision
