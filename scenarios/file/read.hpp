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

/// The reader's limits (docs/robustness.md). A file is read up to kMaxScenarioBytes; its YAML
/// may expand (aliases counted at each use) to kMaxYamlNodes values; yaml-cpp itself stops
/// at kYamlRecursion levels of recursion, which is kYamlNesting levels of maps and lists, and
/// kYamlTreeDepth supervisors below a root written in block style (measured; docs/robustness.md).
inline constexpr std::size_t kMaxScenarioBytes = std::size_t{16} << 20;
inline constexpr std::size_t kMaxYamlNodes = 1'000'000;
inline constexpr int kYamlRecursion = 2000;
inline constexpr int kYamlNesting = 499;
inline constexpr int kYamlTreeDepth = 247;

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

/// `text` safe to print on a terminal: control characters (C0 but tab and line feed, DEL, C1)
/// and bytes that are not UTF-8 are written as \xNN, so an echoed file name, argument or key
/// cannot move the cursor, recolour or retitle the terminal.
std::string printable(std::string_view text);

/// `file:line:col: message`, as the CLI prints a diagnostic (both escaped by printable()).
std::string format_diagnostic(const std::string& file, const Diagnostic& d);

}  // namespace lic::scenarios
