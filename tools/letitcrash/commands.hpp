#pragma once
// The scenario commands of the CLI: run, validate, diagram, replay. Each reads its arguments,
// calls the library (scenarios/) and prints; each returns the process's exit code: 0 every
// check holds, 1 a check failed (or a replay diverged), 2 bad input.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scenarios/file/read.hpp"
#include "scenarios/registry.hpp"
#include "scenarios/run/runner.hpp"

namespace lic::tools {

/// What every command knows about how it was invoked.
struct Invocation {
  const scenarios::Registry* registry = &scenarios::Registry::builtin();
  /// The executable as it was invoked (argv[0]), for the reproduce lines a run prints.
  std::string program = "letitcrash";
};

/// Loads and validates a scenario file; on mistakes prints every diagnostic as
/// file:line:col: message to stderr and returns nothing.
std::optional<scenarios::Scenario> load_or_report(const std::string& file, const scenarios::Registry& registry);
/// The same, with the file's `fix:` applied (--fixed; file/fix.hpp): a file that declares no fix
/// is reported and gives nothing.
std::optional<scenarios::Scenario> load_or_report(const std::string& file, const scenarios::Registry& registry, bool fixed);

struct RunArgs {
  std::string file;
  std::optional<std::uint64_t> seed;
  std::optional<TieBreak> tie_break;
  std::optional<Time> until;
  std::string out_dir;   ///< empty: no reports
  bool json = false;     ///< --format json
  bool print_trace = false;  ///< --trace: every event as a readable line, as it happens
  bool swarm = false;        ///< --swarm: the seed picks the faults, knobs, tie-break and buggify points
  scenarios::Budgets budgets{};  ///< --max-events, --max-memory
  bool fixed = false;        ///< --fixed: run the file with its `fix:` applied
};
int run_command(const Invocation& cli, const RunArgs& a);

int validate_command(const Invocation& cli, const std::vector<std::string>& files, bool list);

struct DiagramArgs {
  std::string file;
  std::optional<Time> at;
  std::optional<std::uint64_t> seed;
  bool dot = false;  ///< --format dot (default: an indented text tree)
};
int diagram_command(const Invocation& cli, const DiagramArgs& a);

int replay_command(const Invocation& cli, const std::string& trace_file, const scenarios::Budgets& budgets = {});

}  // namespace lic::tools
