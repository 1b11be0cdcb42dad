#pragma once
// From a finished run to what a person opens: the report writers' view of the run (reports/
// run_report.hpp), the trace header that `replay` reads back, and the one-line command that runs
// it again. The CLI and a user's own code write a run's reports through here.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reports/run_report.hpp"
#include "scenarios/run/runner.hpp"

namespace lic::scenarios {

/// letitcrash's version ("0.3.0"), as the trace header and `--version` give it.
std::string_view version();

/// Quotes a command-line word for a POSIX shell when it needs it.
std::string shell_word(const std::string& w);

/// The one-line command that runs `file` again exactly as this run did: `program run FILE
/// --seed N --tie-break T [--until D]`. `program` is the executable as a person would type it
/// (the CLI passes the name it was invoked by).
std::string reproduce_command(const std::string& program, const std::string& file, std::uint64_t seed, TieBreak tie,
                              const std::optional<Time>& until);
/// The same for a swarm run: `program run FILE --seed N --swarm` (the seed picks the rest; a
/// tie-break given on the command line is passed on).
std::string swarm_reproduce_command(const std::string& program, const std::string& file, std::uint64_t seed,
                                    const std::optional<TieBreak>& tie, const std::optional<Time>& until);

/// The first line of trace.jsonl: what `replay` needs to run the same again (the scenario
/// itself as YAML, the seed, the tie-break and the stop time).
std::string trace_header(const Scenario& s, std::uint64_t seed, TieBreak tie, const std::optional<Time>& until,
                         const std::string& file);

/// The tree as the scenario declares it, for the diagrams.
std::vector<reports::ShapeNode> tree_shapes(const Scenario& s);

/// The report writers' view of a finished run (it points into `r`'s trace: keep `r` alive).
reports::RunReport make_report(const Scenario& s, const RunResult& r, const std::string& file,
                               const std::string& reproduce);

/// The reports the scenario selects (`reports:`, every one by default).
reports::ReportSelection selection(const ReportSet& set);

/// Writes the run's reports into `dir` (the scenario's selection; trace.jsonl starts with the
/// header replay reads). Returns one error per file that could not be written.
std::vector<std::string> write_run_reports(const Scenario& s, const RunResult& r, const std::string& file,
                                           const std::optional<Time>& until, const std::string& reproduce,
                                           const std::filesystem::path& dir);

}  // namespace lic::scenarios
