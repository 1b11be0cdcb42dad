#pragma once
// The scenario subcommands of `letitcrash`: run, validate, diagram, replay (and what sweep
// shares with them). Each returns the process's exit code: 0 every check holds, 1 a check
// failed (or a replay diverged), 2 bad input.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reports/run_report.hpp"
#include "scenarios/run/runner.hpp"
#include "scenarios/file/read.hpp"

namespace lic::tools {

/// Loads and validates a scenario file; on mistakes prints every diagnostic as
/// file:line:col: message to stderr and returns nothing.
std::optional<scenarios::Scenario> load_or_report(const std::string& file);

/// The one-line command that runs `file` again exactly as this run did.
std::string reproduce_command(const std::string& file, std::uint64_t seed, TieBreak tie,
                              const std::optional<Time>& until);

/// The report writers' view of a finished run.
reports::RunReport make_report(const scenarios::Scenario& s, const scenarios::RunResult& r,
                               const std::string& file, const std::string& reproduce);

/// The first line of trace.jsonl: what `replay` needs to run the same again (the scenario
/// itself as YAML, the seed, the tie-break and the stop time).
std::string trace_header(const scenarios::Scenario& s, std::uint64_t seed, TieBreak tie,
                         const std::optional<Time>& until, const std::string& file);

struct RunArgs {
  std::string file;
  std::optional<std::uint64_t> seed;
  std::optional<TieBreak> tie_break;
  std::optional<Time> until;
  std::string out_dir;   ///< empty: no reports
  bool json = false;     ///< --format json
  bool print_trace = false;  ///< --trace: every event as a readable line, as it happens
};
int run_command(const RunArgs& a);

int validate_command(const std::vector<std::string>& files, bool list);

struct DiagramArgs {
  std::string file;
  std::optional<Time> at;
  std::optional<std::uint64_t> seed;
  bool dot = false;  ///< --format dot (default: an indented text tree)
};
int diagram_command(const DiagramArgs& a);

int replay_command(const std::string& trace_file);

}  // namespace lic::tools
