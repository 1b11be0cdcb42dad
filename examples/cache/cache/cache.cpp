#include "cache/cache.hpp"

#include <optional>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

namespace cache {

namespace {

// What the processes say to each other.
const lic::Atom kGet("get");      // a call: the payload is the key (std::int64_t)
const lic::Atom kValue("value");  // the reply: the payload is the value
const lic::Atom kError("error");  // the cache's reply when the backend did not answer
const lic::Atom kTick("tick");

// What they put in the trace (events and their fields, declared once).
const lic::Atom kLookup("cache_lookup");  // {key, result: hit | miss | error}
const lic::Atom kRequest("request");      // {n}: a client asks
const lic::Atom kAnswer("answer");        // {n, result: value | unavailable}
const lic::Atom kKey("key");
const lic::Atom kN("n");
const lic::Atom kResult("result");
const lic::Atom kHit("hit"), kMiss("miss"), kUnavailable("unavailable");

/// The backend: every get takes `latency`, and fails (the process crashes) with probability
/// `fail`.
class Backend final : public lic::Behaviour {
 public:
  Backend(lic::Atom name, lic::Duration latency, lic::Ratio fail) : name_(name), latency_(latency), fail_(fail) {}
  lic::InitResult init(lic::Context& ctx) override {
    ctx.register_name(name_);
    return lic::InitResult::ok();
  }
  lic::CallReply handle_call(lic::Context& ctx, const lic::Message& m, lic::From) override {
    const std::int64_t* key = m.payload.get<std::int64_t>();
    if (m.tag != kGet || key == nullptr) return lic::CallReply::reply(kError);
    ctx.sleep(latency_);
    if (ctx.rng().chance(fail_)) throw std::runtime_error("backend_failure");
    return lic::CallReply::reply(kValue, *key * *key);
  }

 private:
  lic::Atom name_;
  lic::Duration latency_;
  lic::Ratio fail_;
};

/// The cache: answers from its map, or asks the backend (waiting at most `timeout`) and keeps
/// the answer. It starts empty: a restart loses what it held.
class Server final : public lic::Behaviour {
 public:
  Server(lic::Atom name, lic::Atom backend, lic::Duration timeout) : name_(name), backend_(backend), timeout_(timeout) {}
  lic::InitResult init(lic::Context& ctx) override {
    ctx.register_name(name_);
    return lic::InitResult::ok();
  }
  lic::CallReply handle_call(lic::Context& ctx, const lic::Message& m, lic::From) override {
    const std::int64_t* key = m.payload.get<std::int64_t>();
    if (m.tag != kGet || key == nullptr) return lic::CallReply::reply(kError);
    if (const auto it = held_.find(*key); it != held_.end()) {
      ctx.emit(kLookup, {{kKey, *key}, {kResult, kHit}});
      return lic::CallReply::reply(kValue, it->second);
    }
    const lic::CallResult r = ctx.call(backend_, kGet, *key, timeout_);  // by its registered name
    const std::int64_t* value = r.ok() ? r.reply->payload.get<std::int64_t>() : nullptr;
    ctx.emit(kLookup, {{kKey, *key}, {kResult, value != nullptr ? kMiss : kError}});
    if (value == nullptr) return lic::CallReply::reply(kError);
    held_[*key] = *value;
    return lic::CallReply::reply(kValue, *value);
  }

 private:
  lic::Atom name_;
  lic::Atom backend_;
  lic::Duration timeout_;
  std::map<std::int64_t, std::int64_t> held_;
};

/// The client: every `interval` asks the cache for one of `keys` keys; with `retry_once`, asks
/// again once when the answer is "unavailable".
class Client final : public lic::Behaviour {
 public:
  Client(lic::Atom cache, lic::Duration interval, std::int64_t keys, lic::Duration timeout, bool retry_once)
      : cache_(cache), interval_(interval), keys_(keys), timeout_(timeout), retry_once_(retry_once) {}
  lic::InitResult init(lic::Context& ctx) override {
    ctx.send_after(interval_, ctx.self(), kTick);
    return lic::InitResult::ok();
  }
  void handle_info(lic::Context& ctx, const lic::Message& m) override {
    if (m.tag != kTick) return;
    ctx.send_after(interval_, ctx.self(), kTick);
    const auto key = static_cast<std::int64_t>(ctx.rng().uniform(static_cast<std::uint64_t>(keys_)));
    ctx.emit(kRequest, {{kN, ++n_}});
    lic::CallResult r = get(ctx, key);
    if (retry_once_ && !(r.ok() && r.reply->tag == kValue)) r = get(ctx, key);
    const bool answered = r.ok() && r.reply->tag == kValue;
    ctx.emit(kAnswer, {{kN, n_}, {kResult, answered ? kValue : kUnavailable}});
  }

 private:
  /// One get, recorded as a read of the key in the operation history (`cache.consistent`
  /// checks it): ok with the value, fail when the cache says it has none to give, info when
  /// no answer came (a timeout: the cache may still have read the backend).
  lic::CallResult get(lic::Context& ctx, std::int64_t key) {
    const lic::history::OpId op = history_.invoke(ctx, "read", std::to_string(key));
    lic::CallResult r = ctx.call(cache_, kGet, key, timeout_);
    const std::int64_t* value = r.ok() && r.reply->tag == kValue ? r.reply->payload.get<std::int64_t>() : nullptr;
    if (value != nullptr) history_.ok(ctx, op, std::to_string(*value));
    else if (r.ok()) history_.fail(ctx, op);
    else history_.info(ctx, op);
    return r;
  }

 private:
  lic::Atom cache_;
  lic::Duration interval_;
  std::int64_t keys_;
  lic::Duration timeout_;
  bool retry_once_;
  std::int64_t n_ = 0;
  lic::history::Client history_;
};

/// What the backend holds, as a model of the operation history: key k's value is k * k, and
/// nothing writes it. A read that returned is right only with that value; one that did not says
/// nothing. A pure step function of our own, judged as the built-in `linearizable` models are.
const lic::history::Model& squares() {
  static const lic::history::Model m = [] {
    lic::history::Model s;
    s.name = "cache.squares";
    s.init = [] { return lic::history::ModelState{}; };
    s.step = [](const lic::history::ModelState& state, const lic::history::Op& op, lic::history::ModelState& next) {
      next = state;
      if (op.f != "read") return false;
      if (op.status != lic::history::OpStatus::ok || !op.value) return true;
      const std::int64_t k = std::stoll(op.key);
      return *op.value == std::to_string(k * k);
    };
    s.by_key = true;  // keys never interact: each is checked alone
    s.inert = [](const lic::history::Op& op) { return op.status != lic::history::OpStatus::ok; };
    return s;
  }();
  return m;
}

/// `cache.answered`: every request was answered (unless its client died waiting), and at most
/// `max_unavailable` of the answers were "unavailable".
lic::CheckJudge answered(lic::Args& a) {
  const lic::Ratio most = a.ratio("max_unavailable");
  return [most](const lic::CheckInput& in) {
    std::map<std::pair<lic::Pid, std::int64_t>, lic::TraceEvent> open;  // requests not answered yet (copies: the log hands out values)
    std::int64_t requests = 0, unavailable = 0, abandoned = 0;
    std::optional<lic::TraceEvent> last_unavailable;
    for (const lic::TraceEvent& e : *in.events) {
      const std::int64_t* n = e.field<std::int64_t>(kN);
      if (e.kind == lic::EventKind::system && e.name == kRequest && n != nullptr) {
        ++requests;
        open.emplace(std::pair{e.pid, *n}, e);
      } else if (e.kind == lic::EventKind::system && e.name == kAnswer && n != nullptr) {
        open.erase({e.pid, *n});
        if (e.text(kResult) == "unavailable") ++unavailable, last_unavailable = e;
      } else if (e.kind == lic::EventKind::exit) {
        abandoned += static_cast<std::int64_t>(std::erase_if(open, [&](const auto& r) { return r.first.first == e.pid; }));
      }
    }
    const std::int64_t answers = requests - abandoned - static_cast<std::int64_t>(open.size());
    const bool few = lic::fraction_at_most(static_cast<std::uint64_t>(unavailable), static_cast<std::uint64_t>(answers), most);
    const bool passed = requests > 0 && open.empty() && few;
    lic::Verdict v{passed, std::to_string(requests) + " requests: " + std::to_string(answers) + " answered (" +
                               std::to_string(unavailable) + " unavailable, at most " + lic::format_ratio(most) +
                               " allowed), " + std::to_string(abandoned) + " abandoned by a client that died, " +
                               std::to_string(open.size()) + " unanswered"};
    // Its witness: the event that decided it, shown in the report, linked to the timeline. The
    // last "unavailable" answer, which left the share over the bound, or the first request still
    // open. None: the run's end stands in.
    if (!few && last_unavailable) {
      v.witness = lic::witness_at(*last_unavailable, {std::string(last_unavailable->label.name.text())},
                                  "the last unavailable answer: " + std::to_string(unavailable) + " of " +
                                      std::to_string(answers) + ", over " + lic::format_ratio(most));
    } else if (!open.empty()) {
      const lic::TraceEvent& first = open.begin()->second;
      v.witness = lic::witness_at(first, {std::string(first.label.name.text())}, "this request was never answered");
    }
    // Its failure's identity: which of its ways to fail (the shrinker keeps that one, and
    // `explore --keep-going` tells them apart), and no roles: which client it was is no other bug.
    if (requests == 0) v.kind = "no_requests";
    else if (!few) v.kind = "too_unavailable";
    else if (!open.empty()) v.kind = "unanswered";
    // Its margin: how far the unavailable share is from the bound, as a share of it (a guided
    // search climbs toward 0). An unanswered request is a failure with nothing to measure.
    if (most.num > 0 && answers > 0) {
      const double bound = static_cast<double>(most.num) / static_cast<double>(most.den);
      const double share = static_cast<double>(unavailable) / static_cast<double>(answers);
      v.margin = (bound - share) / bound;
    }
    if (requests == 0 || (few && !open.empty())) v.margin = -1.0;
    return v;
  };
}

/// `cache.hit_ratio`: the share of the cache's lookups it answered from memory. A measurement of
/// every run (summary.json, results lines, `sweep --metrics cache.hit_ratio`), whatever the
/// checks say; a run without a lookup adds nothing.
void hit_ratio(const lic::CheckInput& in, lic::Metrics& out) {
  std::int64_t lookups = 0, hits = 0;
  for (const lic::TraceEvent& e : *in.events) {
    if (e.kind != lic::EventKind::system || e.name != kLookup) continue;
    ++lookups;
    if (e.text(kResult) == "hit") ++hits;
  }
  if (lookups > 0) out["cache.hit_ratio"] = lic::MetricValue{{static_cast<double>(hits) / static_cast<double>(lookups)}};
}

}  // namespace

void add_to(lic::Registry& r) {
  r.add(lic::BehaviourInfo{
      "cache.backend", "a slow store: each get takes `latency` and crashes the process with probability `fail`",
      {{"name", "string", "Backend", "the name it registers"},
       {"latency", "duration", "20ms", "how long a get takes"},
       {"fail", "ratio", "0", "the chance that a get crashes it"}},
      [](lic::Args& a) -> lic::BehaviourFactory {
        const lic::Atom name = a.atom("name");
        const lic::Duration latency = a.duration("latency");
        const lic::Ratio fail = a.ratio("fail");
        return [=](const std::string&) { return std::make_unique<Backend>(name, latency, fail); };
      }});
  r.add(lic::BehaviourInfo{
      "cache.server", "a read-through cache: answers from memory, or asks the backend waiting at most `timeout`",
      {{"name", "string", "Cache", "the name it registers"},
       {"backend", "string", "Backend", "the backend's registered name"},
       {"timeout", "duration", "100ms", "how long it waits for the backend"}},
      [](lic::Args& a) -> lic::BehaviourFactory {
        const lic::Atom name = a.atom("name");
        const lic::Atom backend = a.atom("backend");
        const lic::Duration timeout = a.positive("timeout");
        return [=](const std::string&) { return std::make_unique<Server>(name, backend, timeout); };
      }});
  r.add(lic::BehaviourInfo{
      "cache.client",
      "asks the cache for a random key every `interval`, traces each request and its answer, and records each get as a read "
      "in the operation history",
      {{"cache", "string", "Cache", "the cache's registered name"},
       {"interval", "duration", "50ms", "the time between requests"},
       {"keys", "int", "100", "how many different keys it asks for"},
       {"timeout", "duration", "1s", "how long it waits for an answer"},
       // One of a few words: another is refused at its place in the file, with "did you mean".
       {"retry", "none|once", "none", "what it does when the answer is unavailable: nothing, or ask once more"}},
      [](lic::Args& a) -> lic::BehaviourFactory {
        const lic::Atom cache = a.atom("cache");
        const lic::Duration interval = a.positive("interval");
        const std::int64_t keys = a.integer("keys");
        if (keys < 1) a.invalid("keys", "must be 1 or more");
        const lic::Duration timeout = a.positive("timeout");
        const bool retry_once = a.choice("retry") == "once";
        return [=](const std::string&) { return std::make_unique<Client>(cache, interval, keys, timeout, retry_once); };
      }});
  r.add(lic::CheckInfo{"cache.answered",
                       "every client request was answered (unless its client died), at most `max_unavailable` of them "
                       "with unavailable",
                       {{"max_unavailable", "ratio", "0", "the largest share of answers that may be unavailable"}},
                       answered});
  r.add(lic::CheckInfo{"cache.consistent",
                       "every value a client read is the backend's (the cache never answers a key with another key's value or a "
                       "made-up one): the reads its clients recorded, against our own model of the backend",
                       {},
                       [](lic::Args&) -> lic::CheckJudge { return [](const lic::CheckInput& in) { return lic::judge_linearizable(in, squares()); }; }});
  r.add(lic::MetricInfo{"cache.hit_ratio", "the share of the cache's lookups answered from memory", hit_ratio});
}

const lic::Registry& registry() {
  static const lic::Registry r = [] {
    lic::Registry with = lic::Registry::with_builtins();
    add_to(with);
    return with;
  }();
  return r;
}

}  // namespace cache
