#pragma once
// The mistakes in a scenario that are not about syntax: unknown behaviours and checks and their
// arguments (looked up in a Registry), duplicate ids, services, nodes and trees, paths and nodes
// that name nothing, dependency cycles, steps that do not fit their target, and what the `model`
// check cannot judge. parse_scenario runs it on every file; a scenario built in code should pass
// it before it runs.

#include <vector>

#include "scenarios/registry.hpp"
#include "scenarios/scenario.hpp"

namespace lic::scenarios {

/// Every mistake, at the marks the scenario carries (none for a scenario built in code).
std::vector<Diagnostic> validate(const Scenario& s, const Registry& registry = Registry::builtin());

/// What parse_scenario runs after reading: appends validate()'s findings to `errors` (the
/// reading's own); what the `model` check cannot judge is looked for only when there are none.
void validate_into(const Scenario& s, const Registry& registry, std::vector<Diagnostic>& errors);

}  // namespace lic::scenarios
