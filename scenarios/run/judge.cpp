#include "scenarios/run/judge.hpp"

#include <algorithm>

namespace lic::scenarios {

std::string check_title(const CheckDecl& c, const Registry& r) {
  if (const CheckInfo* info = r.check(c.name)) {
    for (const ArgInfo& a : info->args) {
      const ArgValue* v = c.arg(a.name);
      if ((a.type == "path" || a.type == "supervisor path") && v != nullptr && !v->is_list) return c.name + "(" + v->scalar + ")";
    }
  }
  return c.name;
}

namespace {

/// The paths a check's arguments name: the processes a witness at the run's end is about.
std::vector<std::string> named_paths(const CheckDecl& c, const Registry& r) {
  std::vector<std::string> out;
  if (const CheckInfo* info = r.check(c.name)) {
    for (const ArgInfo& a : info->args) {
      const ArgValue* v = c.arg(a.name);
      if ((a.type == "path" || a.type == "supervisor path") && v != nullptr && !v->is_list) out.push_back(v->scalar);
    }
  }
  return out;
}

/// A verdict about the whole run: its witness is the run's end (the last event).
Witness run_end(const CheckInput& in, std::vector<std::string> processes, std::string why) {
  Witness w{in.end.ns, 0, std::move(processes), std::move(why)};
  if (in.events != nullptr && in.events->size() > 0) w.event = in.events->back().seq;  // a streamed run keeps the last
  return w;
}

}  // namespace

namespace {

/// A dynamic child's number folded: "/root/pool/worker.12" is the role "/root/pool/worker.#" (which
/// of a pool's children it was does not make another bug).
std::string fold_dynamic(const std::string& role) {
  std::string out;
  for (std::size_t i = 0; i < role.size(); ++i) {
    out += role[i];
    if (role[i] != '.' || i + 1 >= role.size() || role[i + 1] < '0' || role[i + 1] > '9') continue;
    out += '#';
    while (i + 1 < role.size() && role[i + 1] >= '0' && role[i + 1] <= '9') ++i;
  }
  return out;
}

}  // namespace

FailureId failure_id(const CheckResult& r) {
  FailureId id{r.name, r.kind.empty() ? r.name.substr(0, r.name.find('(')) : r.kind, {}};
  for (const std::string& role : r.roles) id.roles.push_back(fold_dynamic(role));
  std::sort(id.roles.begin(), id.roles.end());
  id.roles.erase(std::unique(id.roles.begin(), id.roles.end()), id.roles.end());
  return id;
}

std::string to_string(const FailureId& id) {
  std::string s = id.check + ": " + id.kind;
  if (!id.roles.empty()) {
    s += " [";
    for (std::size_t i = 0; i < id.roles.size(); ++i) s += (i == 0 ? "" : " ") + id.roles[i];
    s += "]";
  }
  return s;
}

std::optional<std::size_t> first_failing(const std::vector<CheckResult>& results, const std::vector<CheckDecl>& checks,
                                         const std::vector<std::string>& expect) {
  std::optional<std::size_t> first;
  for (std::size_t i = 0; i < results.size() && i < checks.size(); ++i) {
    if (results[i].passed) continue;
    if (std::find(expect.begin(), expect.end(), checks[i].name) != expect.end()) return i;
    if (!first) first = i;
  }
  return first;
}

std::vector<CheckResult> run_checks(const std::vector<CheckDecl>& checks, const CheckInput& in, const Registry& r) {
  std::vector<CheckResult> out;
  for (const CheckDecl& c : checks) {
    std::vector<Diagnostic> errors;
    const CheckJudge judge = r.make_check(c, errors);
    CheckResult res{check_title(c, r), false, "", std::nullopt};
    if (!judge) {
      res.detail = errors.empty() ? "cannot be judged" : errors.front().message;
      res.kind = "not_judged";
    } else {
      try {
        Verdict v = judge(in);
        res.passed = v.passed || !v.judged;
        res.judged = v.judged;
        res.detail = std::move(v.detail);
        res.witness = std::move(v.witness);
        // A margin on the verdict's side of 0, whatever the judge computed: a holding check at least
        // at the edge, a failing one below it (a user's check included).
        if (v.margin) res.margin = v.passed ? std::max(*v.margin, 0.0) : std::min(*v.margin, -1e-9);
        if (!v.passed) {
          res.kind = v.kind.empty() ? c.name : std::move(v.kind);
          res.roles = std::move(v.roles);
        }
      } catch (const std::exception& e) {
        res.detail = std::string("the check's judge failed: ") + e.what();
        res.kind = "judge_failed";
      }
    }
    if (!res.witness) res.witness = run_end(in, named_paths(c, r), "the run's end (the verdict is about the whole run)");
    out.push_back(std::move(res));
  }
  return out;
}

}  // namespace lic::scenarios
