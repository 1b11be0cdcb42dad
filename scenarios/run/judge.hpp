#pragma once
// Judging a finished run: each check the scenario asks for (checks/table.hpp), looked up in the
// registry and given what the run left (CheckInput).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "scenarios/checks/table.hpp"
#include "scenarios/registry.hpp"

namespace lic::scenarios {

/// A check's title in reports: its name, and its first path argument in brackets.
std::string check_title(const CheckDecl& c, const Registry& r);

/// Judges every check. A check the registry does not know (or whose arguments do not read) fails
/// with the reason; the scenario's validation reports both before a run.
/// The failing check a run hands on (to the shrinker, to explore): the first failing one that
/// `expect` names, else the first failing one; none when every check held.
std::optional<std::size_t> first_failing(const std::vector<CheckResult>& results, const std::vector<CheckDecl>& checks,
                                         const std::vector<std::string>& expect);

std::vector<CheckResult> run_checks(const std::vector<CheckDecl>& checks, const CheckInput& in, const Registry& r);

}  // namespace lic::scenarios
