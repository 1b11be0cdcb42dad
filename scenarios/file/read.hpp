#pragma once
// Reading scenario files: YAML in, with every mistake reported as file:line:col: message (the
// format is docs/scenario-format.md). A file that reads is then validated (validate.hpp) against
// the registry of behaviours and checks it may name.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/registry.hpp"
#include "scenarios/scenario.hpp"

namespace lic::scenarios {

struct ParseResult {
  Scenario scenario;
  std::vector<Diagnostic> errors;  ///< in file order; empty: the scenario is valid and runnable
  bool ok() const { return errors.empty(); }
};

/// Reads a scenario from `text`; `file` names it in diagnostics. Parses everything it can and
/// reports every mistake it finds (not just the first): YAML syntax, unknown keys, wrong types,
/// bad durations, ratios and reasons; then what validate() finds.
ParseResult parse_scenario(std::string_view text, const std::string& file,
                           const Registry& registry = Registry::builtin());

/// Reads the file at `path` (an unreadable file is one diagnostic at 0:0).
ParseResult load_scenario(const std::filesystem::path& path, const Registry& registry = Registry::builtin());

/// `file:line:col: message`, as the CLI prints a diagnostic.
std::string format_diagnostic(const std::string& file, const Diagnostic& d);

}  // namespace lic::scenarios
