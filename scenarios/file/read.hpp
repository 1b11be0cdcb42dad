#pragma once
// Scenario files: YAML in (with every mistake reported as file:line:col: message) and YAML out
// (a scenario written back reads as the same scenario). The format is docs/scenario-format.md.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/scenario.hpp"

namespace lic::scenarios {

struct ParseResult {
  Scenario scenario;
  std::vector<Diagnostic> errors;  ///< in file order; empty: the scenario is valid and runnable
  bool ok() const { return errors.empty(); }
};

/// Reads a scenario from `text`; `file` names it in diagnostics. Parses everything it can and
/// reports every mistake it finds (not just the first): YAML syntax, unknown keys, wrong types,
/// bad durations, ratios and reasons, unknown behaviours and arguments, duplicate ids, paths
/// that name nothing, unknown nodes, dependency cycles.
ParseResult parse_scenario(std::string_view text, const std::string& file);

/// Reads the file at `path` (an unreadable file is one diagnostic at 0:0).
ParseResult load_scenario(const std::filesystem::path& path);

/// Checks a scenario built in code (or read) for the mistakes that are not about syntax: what
/// parse_scenario does after reading. Marks come from the scenario.
std::vector<Diagnostic> validate(const Scenario& s);

/// `file:line:col: message`, as the CLI prints a diagnostic.
std::string format_diagnostic(const std::string& file, const Diagnostic& d);

/// The scenario as a YAML document that parse_scenario reads back as an equal Scenario.
std::string to_yaml(const Scenario& s);

}  // namespace lic::scenarios
