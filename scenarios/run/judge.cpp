#include "scenarios/run/judge.hpp"

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

std::vector<CheckResult> run_checks(const std::vector<CheckDecl>& checks, const CheckInput& in, const Registry& r) {
  std::vector<CheckResult> out;
  for (const CheckDecl& c : checks) {
    std::vector<Diagnostic> errors;
    const CheckJudge judge = r.make_check(c, errors);
    CheckResult res{check_title(c, r), false, "", std::nullopt};
    if (!judge) {
      res.detail = errors.empty() ? "cannot be judged" : errors.front().message;
    } else {
      try {
        Verdict v = judge(in);
        res.passed = v.passed;
        res.detail = std::move(v.detail);
        res.witness = std::move(v.witness);
      } catch (const std::exception& e) {
        res.detail = std::string("the check's judge failed: ") + e.what();
      }
    }
    if (!res.witness) res.witness = run_end(in, named_paths(c, r), "the run's end (the verdict is about the whole run)");
    out.push_back(std::move(res));
  }
  return out;
}

}  // namespace lic::scenarios
