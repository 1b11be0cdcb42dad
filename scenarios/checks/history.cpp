// `linearizable` (issue 38; docs/scenario-format.md, docs/library.md "Histories"): the operation
// history the behaviours recorded (properties/history.hpp) against a model's sequential
// specification (properties/linearizability.hpp). Registered like a user's own (Registry::add).

#include <fmt/format.h>

#include <algorithm>

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

Verdict judge(const CheckInput& in, const properties::Model& model, std::uint64_t max_steps) {
  const history::Recorded h = history::read_history(*in.events);
  if (!h.mistake.empty()) {
    Verdict v{false, "the history is malformed: " + h.mistake};
    v.kind = "malformed_history";
    if (h.mistake_at < in.events->size()) v.witness = witness_at((*in.events)[h.mistake_at], {}, h.mistake);
    return v;
  }
  if (h.ops.empty()) {
    Verdict v{true, "not judged: no operation was recorded"};
    v.judged = false;
    return v;
  }
  properties::LinearizabilityOptions o;
  o.max_steps = max_steps;
  const properties::LinearizabilityResult r = properties::check_linearizable(h.ops, model, o);
  const std::string counts = fmt::format("{} operations ({} checked, {} partition{}), {} search steps", h.ops.size(), r.operations,
                                         r.partitions, r.partitions == 1 ? "" : "s", r.steps);
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
  }
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
       {"max_steps", "int", "10000000", "the search's budget: past it the verdict is unknown (a failure, never a pass)"}},
      [](Args& a) -> CheckJudge {
        const std::string name = a.choice("model");
        const std::int64_t steps = a.integer("max_steps");
        if (steps < 1) a.invalid("max_steps", "must be 1 or more");
        const properties::Model* m = properties::find_model(name);
        if (m == nullptr) return {};
        const std::uint64_t budget = static_cast<std::uint64_t>(std::max<std::int64_t>(steps, 1));
        return [m, budget](const CheckInput& in) { return judge(in, *m, budget); };
      }});
  return r;
}

}  // namespace lic::scenarios
