// A primary-backup key-value store and its clients (issue 38; docs/history.md): the system the
// `linearizable` check is shown on. The primary applies each write and replicates it to the
// backup, either after it has acknowledged the write (`replicate: async`, the planted bug) or
// before (`sync`); clients write and read, reading from the primary or the backup, and record
// every operation (properties/history.hpp). Reading from a backup that lags behind writes already
// acknowledged is a stale read: not linearizable.

#include <map>
#include <string>
#include <utility>

#include "properties/history.hpp"
#include "scenarios/behaviours/table.hpp"

namespace lic::scenarios {

namespace {

const Atom kPrimary("Primary"), kBackup("Backup");
const Atom kWrite("write"), kRead("read"), kReplicate("replicate"), kOk("ok"), kValue("value"), kTick("tick");

using Write = std::pair<std::string, std::string>;  // key, value

/// One copy of the map: the primary (which replicates) or the backup (which applies).
class Replica final : public Behaviour {
 public:
  Replica(Atom name, bool primary, bool sync, Duration timeout) : name_(name), primary_(primary), sync_(sync), timeout_(timeout) {}
  InitResult init(Context& ctx) override {
    ctx.register_name(name_);
    return InitResult::ok();
  }
  CallReply handle_call(Context& ctx, const Message& m, From) override {
    if (m.tag == kRead) {
      const std::string* key = m.payload.get<std::string>();
      const auto it = key != nullptr ? data_.find(*key) : data_.end();
      return CallReply::reply(kValue, it == data_.end() ? std::string() : it->second);
    }
    const Write* w = m.payload.get<Write>();
    if (w == nullptr) return CallReply::reply(kOk);
    data_[w->first] = w->second;
    if (primary_ && m.tag == kWrite) {
      if (!sync_) {
        ctx.send(kBackup, kReplicate, *w);  // acknowledged before the backup has it
      } else if (!ctx.call(kBackup, kReplicate, *w, timeout_).ok()) {
        return CallReply::reply(Atom("unavailable"));  // applied here, maybe not there: unknown
      }
    }
    return CallReply::reply(kOk);
  }
  void handle_info(Context&, const Message& m) override {
    if (const Write* w = m.tag == kReplicate ? m.payload.get<Write>() : nullptr) data_[w->first] = w->second;
  }

 private:
  Atom name_;
  bool primary_;
  bool sync_;
  Duration timeout_;
  std::map<std::string, std::string> data_;
};

struct ClientConfig {
  Duration interval{};
  Ratio writes{};
  std::int64_t keys = 1;
  Atom read_from;
  Duration timeout{};
};

/// A client: every `interval`, a write of a value of its own or a read of one of `keys` keys,
/// each recorded as an operation.
class Client final : public Behaviour {
 public:
  explicit Client(ClientConfig c) : c_(c) {}
  InitResult init(Context& ctx) override {
    ctx.send_after(c_.interval, ctx.self(), kTick);
    return InitResult::ok();
  }
  void handle_info(Context& ctx, const Message& m) override {
    if (m.tag != kTick) return;
    ctx.send_after(c_.interval, ctx.self(), kTick);
    const std::string key = "k" + std::to_string(ctx.rng().uniform(static_cast<std::uint64_t>(c_.keys)));
    if (ctx.rng().chance(c_.writes)) {
      const std::string value = std::to_string(ctx.self().id) + "." + std::to_string(++n_);
      const history::OpId id = history_.invoke(ctx, "write", key, value);
      const CallResult r = ctx.call(kPrimary, kWrite, Write{key, value}, c_.timeout);
      if (r.ok() && r.reply->tag == kOk) history_.ok(ctx, id);
      else history_.info(ctx, id);  // a timeout, or applied on the primary alone: unknown
      return;
    }
    const history::OpId id = history_.invoke(ctx, "read", key);
    const CallResult r = ctx.call(c_.read_from, kRead, key, c_.timeout);
    const std::string* v = r.ok() ? r.reply->payload.get<std::string>() : nullptr;
    if (v != nullptr) history_.ok(ctx, id, *v);
    else history_.fail(ctx, id);  // a read that got no answer saw nothing
  }

 private:
  ClientConfig c_;
  history::Client history_;
  std::int64_t n_ = 0;
};

BehaviourFactory build_replica(Args& a, bool primary) {
  const bool sync = primary && a.choice("replicate") == "sync";
  const Duration timeout = primary ? a.positive("timeout") : kSecond;
  return [=](const std::string&) { return std::make_unique<Replica>(primary ? kPrimary : kBackup, primary, sync, timeout); };
}

BehaviourFactory build_client(Args& a) {
  ClientConfig c;
  c.interval = a.positive("interval");
  c.writes = a.ratio("writes");
  c.keys = a.integer("keys");
  if (c.keys < 1) a.invalid("keys", "must be 1 or more");
  c.read_from = a.choice("read_from") == "backup" ? kBackup : kPrimary;
  c.timeout = a.positive("timeout");
  return [c](const std::string&) { return std::make_unique<Client>(c); };
}

}  // namespace

std::vector<BehaviourInfo> kv_behaviours() {
  return {
      {"kv.backup", "the key-value store's backup (registered Backup): applies what the primary replicates; serves reads", {},
       [](Args& a) { return build_replica(a, false); }},
      {"kv.client",
       "writes values of its own and reads them back, every `interval`, and records each operation for `linearizable`",
       {{"interval", "duration", "20ms", "the time between operations"},
        {"writes", "ratio", "50%", "the share of operations that are writes"},
        {"keys", "int", "3", "how many keys it uses (k0, k1, ...)"},
        {"read_from", "primary|backup", "primary", "the replica it reads from"},
        {"timeout", "duration", "200ms", "how long it waits for an answer (a write then is unknown, a read fails)"}},
       build_client},
      {"kv.primary",
       "the key-value store's primary (registered Primary): applies each write and replicates it to Backup, after "
       "acknowledging it (async) or before (sync)",
       {{"replicate", "async|sync", "sync", "async: acknowledge, then replicate (the bug); sync: replicate, then acknowledge"},
        {"timeout", "duration", "100ms", "how long a sync write waits for the backup (past it the write is unknown)"}},
       [](Args& a) { return build_replica(a, true); }},
  };
}

}  // namespace lic::scenarios
