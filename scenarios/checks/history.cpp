// `linearizable` (issue 38; docs/scenario-format.md, docs/library.md "Histories"): the operation
// history the behaviours recorded (properties/history.hpp) against a model's sequential
// specification (properties/linearizability.hpp). Registered like a user's own (Registry::add).

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "properties/history.hpp"
#include "properties/linearizability.hpp"
#include "scenarios/checks/table.hpp"

namespace lic::scenarios {

namespace {

/// "register|cas-register|kv|...": the models, as a one-of argument type.
std::string model_choices() {
  std::string t;
  for (const std::string& m : properties::model_names()) t += (t.empty() ? "" : "|") + m;
  return t;
}

/// The operations of the window, described, at most `most` of them.
std::string window_text(const history::Recorded& h, const std::vector<std::size_t>& window, std::size_t most) {
  std::string out;
  for (std::size_t i = 0; i < window.size() && i < most; ++i)
    out += (i == 0 ? "" : "; ") + properties::describe(h.ops[window[i]]);
  if (window.size() > most) out += fmt::format("; and {} more", window.size() - most);
  return out;
}

/// The operations on `keys` alone, with their events (none given: all of them).
history::Recorded only_keys(history::Recorded h, const std::vector<std::string>& keys) {
  if (keys.empty()) return h;
  history::Recorded out;
  out.mistake = h.mistake;
  out.mistake_at = h.mistake_at;
  for (std::size_t i = 0; i < h.ops.size(); ++i) {
    if (std::find(keys.begin(), keys.end(), h.ops[i].key) == keys.end()) continue;
    out.ops.push_back(std::move(h.ops[i]));
    out.invoked_at.push_back(h.invoked_at[i]);
    out.completed_at.push_back(h.completed_at[i]);
  }
  return out;
}

}  // namespace

Verdict judge_linearizable(const CheckInput& in, const properties::Model& model, std::uint64_t max_steps, const std::vector<std::string>& keys) {
  const history::Recorded h = only_keys(history::read_history(*in.events), keys);
  if (!h.mistake.empty()) {
    Verdict v{false, "the history is malformed: " + h.mistake};
    v.kind = "malformed_history";
    if (h.mistake_at < in.events->size()) v.witness = witness_at((*in.events)[h.mistake_at], {}, h.mistake);
    return v;
  }
  if (h.ops.empty()) {
    Verdict v{true, keys.empty() ? "not judged: no operation was recorded" : "not judged: no operation on the keys given was recorded"};
    v.judged = false;
    return v;
  }
  properties::LinearizabilityOptions o;
  o.max_steps = max_steps;
  const properties::LinearizabilityResult r = properties::check_linearizable(h.ops, model, o);
  const std::string unseen = r.unseen_writes == 0 ? "" : fmt::format(", {} unknown writes nothing saw left out", r.unseen_writes);
  const std::string counts = fmt::format("{} operations ({} checked, {} partition{}{}), {} search steps", h.ops.size(), r.operations,
                                         r.partitions, r.partitions == 1 ? "" : "s", unseen, r.steps);
  if (r.verdict == properties::Linearizable::yes) return Verdict{true, "linearizable as a " + model.name + ": " + counts};
  if (r.verdict == properties::Linearizable::unknown) {  // never a pass it did not earn
    Verdict v{false, "unknown: " + r.unknown_why + "; " + counts + " (raise max_steps)"};
    v.kind = "undecided";
    return v;
  }
  const properties::NonLinearizable& w = *r.witness;
  const properties::Op& stuck = h.ops[w.stuck];
  const std::vector<std::size_t> tail(w.prefix.end() - static_cast<std::ptrdiff_t>(std::min<std::size_t>(w.prefix.size(), 3)),
                                      w.prefix.end());
  Verdict v{false, fmt::format("not linearizable as a {}{}: the longest linearizable prefix holds {} of its operations, ending "
                               "with {}; then {} (by client {}) fits nowhere among the {} concurrent with it: {}; {}",
                               model.name, w.key.empty() ? "" : " (key '" + w.key + "')", w.prefix.size(),
                               tail.empty() ? std::string("nothing") : window_text(h, tail, 3), properties::describe(stuck), stuck.client,
                               w.window.size(), window_text(h, w.window, 8), counts)};
  v.kind = "not_linearizable";
  const std::size_t at = h.completed_at[w.stuck];
  if (at < in.events->size()) {
    const TraceEvent& e = (*in.events)[at];
    v.witness = witness_at(e, {std::string(e.label.name.text())},
                           properties::describe(stuck) + " cannot follow the longest linearizable prefix");
    // The timeline marks the operations the detail names: the prefix's last ones and the window.
    for (const std::vector<std::size_t>* named : {&tail, &w.window})
      for (const std::size_t i : *named)
        if (i != w.stuck && h.completed_at[i] < in.events->size()) v.witness->related.push_back(h.completed_at[i]);
  }
  return v;
}

namespace {

/// `delivery`: each message id sent (msg_sent) against its receipts (msg_received). A message
/// sent after the chaos phase of a run with a quiet phase may still be on its way: not lost.
Verdict delivery(const CheckInput& in, bool at_least, bool at_most) {
  // Events by their position in the log (it hands events out as values: nothing to point at).
  static constexpr std::size_t kNone = ~std::size_t{0};
  struct Seen {
    std::size_t sent = kNone;
    std::size_t second = kNone;  // its second receipt
    std::size_t received = 0;
  };
  const EventLog& log = *in.events;
  std::map<std::string, Seen> ids;
  std::size_t phantom = kNone;
  std::size_t sent = 0, received = 0;
  for (std::size_t at = 0; at < log.size(); ++at) {
    const TraceEvent e = log[at];
    if (e.kind != EventKind::system || (e.name != history::kMsgSent && e.name != history::kMsgReceived)) continue;
    const std::string id = e.text(history::kMsgId);
    Seen& s = ids[id];
    if (e.name == history::kMsgSent) {
      ++sent;
      if (s.sent == kNone) s.sent = at;
      continue;
    }
    ++received;
    if (s.sent == kNone && phantom == kNone) phantom = at;
    if (++s.received == 2) s.second = at;
  }
  if (sent == 0 && received == 0) {
    Verdict v{true, "not judged: no message was recorded (msg_sent, msg_received)"};
    v.judged = false;
    return v;
  }
  const bool settles = in.quiet_ran;  // a quiet phase: what was sent in the chaos phase had time to arrive
  std::size_t lost = 0, duplicated = 0;
  std::size_t first_lost = kNone;
  std::size_t first_dup = kNone;
  std::string lost_id, dup_id;
  for (const auto& [id, s] : ids) {
    if (s.sent != kNone && s.received == 0 && (!settles || log[s.sent].time < in.phases.chaos_end)) {
      ++lost;
      if (first_lost == kNone || s.sent < first_lost) first_lost = s.sent, lost_id = id;
    }
    if (s.received > 1) {
      ++duplicated;
      if (first_dup == kNone || s.second < first_dup) first_dup = s.second, dup_id = id;
    }
  }
  const std::string counts = fmt::format("{} messages sent, {} receipts: {} lost, {} delivered more than once", sent, received, lost, duplicated);
  Verdict v{true, counts};
  const auto fail = [&](const char* kind, std::size_t at_index, const std::string& why) {
    const TraceEvent at = log[at_index];
    v.passed = false;
    v.kind = kind;
    v.detail = why + "; " + counts;
    v.witness = witness_at(at, {std::string(at.label.name.text())}, why);
  };
  if (phantom != kNone) fail("phantom", phantom, "message '" + log[phantom].text(history::kMsgId) + "' was received but never sent");
  else if (at_most && first_dup != kNone) fail("duplicated", first_dup, "message '" + dup_id + "' was received a second time here");
  else if (at_least && first_lost != kNone) fail("lost", first_lost, "message '" + lost_id + "', sent here, was never received");
  return v;
}

}  // namespace

std::vector<CheckInfo> history_checks() {
  std::vector<CheckInfo> r;
  r.push_back(CheckInfo{
      "linearizable",
      "the operations the behaviours recorded (op_invoke, op_ok, ...) are linearizable against `model`'s sequential "
      "specification; past `max_steps` the verdict is unknown, which fails",
      {{"model", model_choices(), "", "the data type: register, cas-register, kv (by key), set, queue or counter"},
       {"max_steps", "int", "10000000", "the search's budget: past it the verdict is unknown (a failure, never a pass)"},
       {"keys", "list", "", "only the operations on these keys are checked (a big history's keys of interest)", true}},
      [](Args& a) -> CheckJudge {
        const std::string name = a.choice("model");
        const std::vector<std::string> keys = a.given("keys") ? a.words("keys") : std::vector<std::string>{};
        const std::int64_t steps = a.integer("max_steps");
        if (steps < 1) a.invalid("max_steps", "must be 1 or more");
        const properties::Model* m = properties::find_model(name);
        if (m == nullptr) return {};
        const std::uint64_t budget = static_cast<std::uint64_t>(std::max<std::int64_t>(steps, 1));
        return [m, budget, keys](const CheckInput& in) { return judge_linearizable(in, *m, budget, keys); };
      }});
  r.push_back(CheckInfo{
      "delivery",
      "each message a behaviour recorded as sent (msg_sent) was received (msg_received) as `guarantee` says: exactly_once, "
      "at_least_once (none lost) or at_most_once (none twice); a receipt of no send always fails",
      {{"guarantee", "exactly_once|at_least_once|at_most_once", "", "what the system promises"}},
      [](Args& a) -> CheckJudge {
        const std::string g = a.choice("guarantee");
        const bool at_least = g != "at_most_once";
        const bool at_most = g != "at_least_once";
        return [at_least, at_most](const CheckInput& in) { return delivery(in, at_least, at_most); };
      }});
  return r;
}

}  // namespace lic::scenarios
