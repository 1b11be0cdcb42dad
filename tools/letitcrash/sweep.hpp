#pragma once
// `letitcrash sweep` and `letitcrash merge`: one scenario over many seeds on every core, split
// into shards for many machines, with results as JSON lines that a killed sweep resumes and
// `merge` joins (the library's scenarios/search/sweep.hpp and results_file.hpp). Here: the
// arguments, the progress bar and the summary.

#include <optional>
#include <string>
#include <vector>

#include "scenarios/search/sweep.hpp"
#include "tools/letitcrash/commands.hpp"

namespace lic::tools {

struct SweepArgs {
  std::string file;
  scenarios::SeedRange seeds;
  scenarios::Shard shard;
  unsigned jobs = 0;               ///< worker threads; 0: one per core
  bool check_determinism = false;  ///< run each seed twice and compare
  std::optional<TieBreak> tie_break;  ///< default: the file's
  std::optional<Time> until;
  /// The results file; empty: results are only summarised, and a killed sweep cannot resume.
  std::string out;
  bool fresh = false;  ///< start --out over even when it holds another sweep's results
  /// --vary BEHAVIOUR:ARG=A..B: the seeds again at each of `steps` values of the argument.
  std::string vary;
  std::size_t steps = 10;
  /// The metrics to print (empty: all of them); unknown names print nothing.
  std::vector<std::string> metrics;
  bool swarm = false;       ///< each seed runs its own configuration (docs/swarm.md)
  bool coverage = false;    ///< print what the sweep exercised (always in summary.json)
  bool stop_at_first_failure = false;  ///< stop at the first failing seed, in seed order
  std::size_t shrink = 0;   ///< shrink the first K failing seeds to scenario files
  scenarios::Budgets budgets{};  ///< each run's: --max-events, --max-memory
  bool fixed = false;       ///< --fixed: the file with its `fix:` applied
  bool guided = false;      ///< --guided: the explorer over the seeds' budget (docs/explore.md "In CI")
};

/// Exit code: 0 every seed passed, 1 a seed failed or was not deterministic, 2 bad input.
int sweep_command(const Invocation& cli, const SweepArgs& a);

/// Joins shards' results files into `out`. Exit code: 0 every seed of the range is there and
/// passed, 1 a seed failed or is missing, 2 the inputs do not belong together.
int merge_command(const Invocation& cli, const std::string& out, const std::vector<std::string>& inputs);

}  // namespace lic::tools
