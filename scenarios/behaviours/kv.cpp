// A replicated key-value store and its clients (issue 38; docs/history.md): the system the
// `linearizable` check is shown on. It is written as a user of the public API writes a system:
// plain behaviours, the leader election of leader.coordinator, registered names, calls.
//
// Each store node runs a `kv.replica` beside a `leader.coordinator` whose `leader_name` names the
// store's leader. The replica whose node holds that name (Context::node_of(whereis(leader))) is
// the primary: it serves reads and writes, and replicates each write to every other replica,
// either after it has acknowledged the write (`replicate: async`, the planted bug) or before
// (`sync`: every replica has it, then the primary applies it and says ok). The others refuse
// clients (`not_leader`) and apply what the primary replicates. A failover (the primary cut off
// from the database loses the election) hands the store to a replica that, under `async`, lacks
// writes already acknowledged: its reads go stale, which `linearizable {model: kv}` finds.
//
// Clients route each operation to the replica on the leader's node, and record it
// (properties/history.hpp): a write refused or a read unanswered failed, a write unanswered is
// unknown (info).

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "properties/history.hpp"
#include "scenarios/behaviours/table.hpp"

namespace lic::scenarios {

namespace {

const Atom kWrite("write"), kRead("read"), kReplicate("replicate"), kOk("ok"), kValue("value"), kTick("tick");
const Atom kNotLeader("not_leader"), kUnavailable("unavailable");

using Write = std::pair<std::string, std::string>;  // key, value

/// The name the replica on `node` registers: STORE@NODE.
Atom replica_name(const std::string& store, Atom node) { return Atom(store + "@" + std::string(node.text())); }

/// The replica the leader's node runs, or none while nobody leads.
Atom primary_name(Context& ctx, Atom leader, const std::string& store) {
  const Pid l = ctx.whereis(leader);
  const Atom node = l ? ctx.node_of(l) : Atom();
  return node.empty() ? Atom() : replica_name(store, node);
}

struct ReplicaConfig {
  Atom leader;                        // the name the leader election registers
  std::string store;                  // replicas register STORE@NODE
  std::vector<std::string> replicas;  // the store's nodes
  bool sync = true;
  Duration timeout{};
};

class Replica final : public Behaviour {
 public:
  explicit Replica(ReplicaConfig c) : c_(std::move(c)) {}
  InitResult init(Context& ctx) override {
    ctx.register_name(replica_name(c_.store, ctx.node()));
    return InitResult::ok();
  }
  CallReply handle_call(Context& ctx, const Message& m, From from) override {
    if (m.tag == kReplicate) {
      // sync: only from the replica this one sees as primary. A replicate that a cut held (TCP
      // keeps it, docs/network.md) can land after a failover, from a primary since deposed: a
      // write its client was told is unknown and the deposed primary never applied.
      if (c_.sync && primary_name(ctx, c_.leader, c_.store) != replica_name(c_.store, ctx.node_of(from.pid)))
        return CallReply::reply(kNotLeader);
      apply(m);
      return CallReply::reply(kOk);
    }
    if (primary_name(ctx, c_.leader, c_.store) != replica_name(c_.store, ctx.node())) return CallReply::reply(kNotLeader);
    if (m.tag == kRead) {
      const std::string* key = m.payload.get<std::string>();
      const auto it = key != nullptr ? data_.find(*key) : data_.end();
      return CallReply::reply(kValue, it == data_.end() ? std::string() : it->second);
    }
    const Write* w = m.tag == kWrite ? m.payload.get<Write>() : nullptr;
    if (w == nullptr) return CallReply::reply(kNotLeader);
    if (!c_.sync) data_[w->first] = w->second;
    for (const std::string& node : c_.replicas) {
      const Atom peer = replica_name(c_.store, Atom(node));
      if (node == ctx.node().text()) continue;
      if (!c_.sync) {
        ctx.send(peer, kReplicate, *w);  // the bug: acknowledged before the others have it
      } else if (const CallResult r = ctx.call(peer, kReplicate, *w, c_.timeout); !r.ok() || r.reply->tag != kOk) {
        return CallReply::reply(kUnavailable);  // not applied here; maybe at some: unknown
      }
    }
    data_[w->first] = w->second;
    return CallReply::reply(kOk);
  }
  void handle_info(Context&, const Message& m) override {
    if (m.tag == kReplicate) apply(m);
  }

 private:
  void apply(const Message& m) {
    if (const Write* w = m.payload.get<Write>()) data_[w->first] = w->second;
  }

  ReplicaConfig c_;
  std::map<std::string, std::string> data_;
};

struct ClientConfig {
  Atom leader;
  std::string store;
  Duration interval{};
  Ratio writes{};
  std::int64_t keys = 1;
  Duration timeout{};
};

/// A client: every `interval`, a write of a value of its own or a read of one of `keys` keys,
/// sent to the leader's replica and recorded as an operation; nothing while nobody leads.
class Client final : public Behaviour {
 public:
  explicit Client(ClientConfig c) : c_(std::move(c)) {}
  InitResult init(Context& ctx) override {
    ctx.send_after(c_.interval, ctx.self(), kTick);
    return InitResult::ok();
  }
  void handle_info(Context& ctx, const Message& m) override {
    if (m.tag != kTick) return;
    ctx.send_after(c_.interval, ctx.self(), kTick);
    const Atom primary = primary_name(ctx, c_.leader, c_.store);
    if (primary.empty()) return;
    const std::string key = "k" + std::to_string(ctx.rng().uniform(static_cast<std::uint64_t>(c_.keys)));
    if (ctx.rng().chance(c_.writes)) {
      const std::string value = std::to_string(ctx.self().id) + "." + std::to_string(++n_);
      const history::OpId id = history_.invoke(ctx, "write", key, value);
      const CallResult r = ctx.call(primary, kWrite, Write{key, value}, c_.timeout);
      if (r.ok() && r.reply->tag == kOk) history_.ok(ctx, id);
      else if (r.ok() && r.reply->tag == kNotLeader) history_.fail(ctx, id);  // refused: not applied
      else history_.info(ctx, id);  // a timeout, or applied somewhere but not everywhere: unknown
      return;
    }
    const history::OpId id = history_.invoke(ctx, "read", key);
    const CallResult r = ctx.call(primary, kRead, key, c_.timeout);
    const std::string* v = r.ok() && r.reply->tag == kValue ? r.reply->payload.get<std::string>() : nullptr;
    if (v != nullptr) history_.ok(ctx, id, *v);
    else history_.fail(ctx, id);  // a read that got no answer saw nothing
  }

 private:
  ClientConfig c_;
  history::Client history_;
  std::int64_t n_ = 0;
};

BehaviourFactory build_replica(Args& a) {
  ReplicaConfig c;
  c.leader = a.atom("leader");
  c.store = std::string(a.atom("store").text());
  c.replicas = a.words("replicas");
  c.sync = a.choice("replicate") == "sync";
  c.timeout = a.positive("timeout");
  return [c](const std::string&) { return std::make_unique<Replica>(c); };
}

BehaviourFactory build_client(Args& a) {
  ClientConfig c;
  c.leader = a.atom("leader");
  c.store = std::string(a.atom("store").text());
  c.interval = a.positive("interval");
  c.writes = a.ratio("writes");
  c.keys = a.integer("keys");
  if (c.keys < 1) a.invalid("keys", "must be 1 or more");
  c.timeout = a.positive("timeout");
  return [c](const std::string&) { return std::make_unique<Client>(c); };
}

ArgInfo leader_arg() {
  return refers_to({"leader", "string", "kv_leader", "the name the store's leader election registers (leader.coordinator's leader_name)"});
}
ArgInfo store_arg() { return {"store", "string", "kv", "the store's name: its replicas register STORE@NODE"}; }

}  // namespace

std::vector<BehaviourInfo> kv_behaviours() {
  return {
      {"kv.client",
       "writes values of its own and reads keys back, every `interval`, through the replica on the leader's node, and "
       "records each operation for `linearizable`",
       {leader_arg(), store_arg(),
        pacing({"interval", "duration", "20ms", "the time between operations"}),
        {"writes", "ratio", "50%", "the share of operations that are writes"},
        {"keys", "int", "3", "how many keys it uses (k0, k1, ...)"},
        {"timeout", "duration", "200ms", "how long it waits for an answer (a write then is unknown, a read fails)"}},
       build_client},
      {"kv.replica",
       "a replica of a key-value store (registered STORE@NODE): the one on the leader's node is the primary, which "
       "replicates each write to the others after acknowledging it (async) or before (sync); the others refuse clients",
       {{"replicas", "list", "", "the store's nodes, this one among them"},
        leader_arg(),
        store_arg(),
        {"replicate", "async|sync", "sync", "async: acknowledge, then replicate (the bug); sync: replicate, then acknowledge"},
        {"timeout", "duration", "30s", "how long a sync write waits for each replica (past it the write is unknown, and the replica may hold it while this one does not: keep it longer than a cut lasts)"}},
       build_replica},
  };
}

}  // namespace lic::scenarios
