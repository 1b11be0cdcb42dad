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

std::vector<CheckResult> run_checks(const std::vector<CheckDecl>& checks, const CheckInput& in, const Registry& r) {
  std::vector<CheckResult> out;
  for (const CheckDecl& c : checks) {
    std::vector<Diagnostic> errors;
    const CheckJudge judge = r.make_check(c, errors);
    CheckResult res{check_title(c, r), false, ""};
    if (!judge) {
      res.detail = errors.empty() ? "cannot be judged" : errors.front().message;
    } else {
      try {
        Verdict v = judge(in);
        res.passed = v.passed;
        res.detail = std::move(v.detail);
      } catch (const std::exception& e) {
        res.detail = std::string("the check's judge failed: ") + e.what();
      }
    }
    out.push_back(std::move(res));
  }
  return out;
}

}  // namespace lic::scenarios
