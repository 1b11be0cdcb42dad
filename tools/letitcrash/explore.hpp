#pragma once
// `letitcrash explore`: guided search for a failure (the library's scenarios/search/explore.hpp;
// docs/explore.md). Here: the arguments, the progress line, the summary, the failure shrunk and
// written as a scenario file that is its reproducer, `--format json`, and the explore page.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <vector>

#include "scenarios/search/sweep.hpp"
#include "tools/letitcrash/commands.hpp"

namespace lic::tools {

/// `sweep --guided`: the explorer over a sweep's seeds (docs/explore.md "In CI"). The shard's
/// seeds are its budget, its plain runs take them in order, and its first seed is the search's.
struct GuidedSweep {
  scenarios::SeedRange seeds;
  scenarios::Shard shard;
};

struct ExploreArgs {
  std::string file;
  std::size_t runs = 1000;            ///< runs at most
  unsigned jobs = 0;                  ///< 0: one per core
  std::uint64_t seed = 1;             ///< the search's own seed
  std::string out;                    ///< a folder for the page, the corpus and the reproducer; empty: none
  bool fresh = false;                 ///< start --out over when it holds an earlier explore of the file
  bool keep_going = false;            ///< collect distinct failures until the budget ends
  bool json = false;                  ///< --format json
  std::size_t shrink_runs = 200;      ///< the shrinker's budget per failure; 0: write the failure as found
  std::optional<double> max_seconds;  ///< wall time for the search (the shrink has its own budget)
  scenarios::Budgets budgets{};
  bool fixed = false;                 ///< the file with its `fix:` applied
  std::optional<GuidedSweep> sweep;   ///< set: `sweep --guided` (runs and seed come from it)
};

/// Exit code: 0 no failure within the budget, 1 a failure found (its reproducer written), 2 bad input.
int explore_command(const Invocation& cli, const ExploreArgs& a);

/// Whether `path` is an explore's folder (or its explore.json): `merge` then joins guided sweeps.
bool is_explore_output(const std::string& path);

/// `merge OUT DIR...` of guided sweeps' shards (their --out folders): one folder with the union of
/// their corpora, coverage and distinct failures, each shard's figures, and the page. Exit code:
/// 0 every shard there and no failure, 1 a failure or a missing shard, 2 the inputs do not belong
/// together.
int explore_merge_command(const Invocation& cli, const std::string& out, const std::vector<std::string>& inputs);

}  // namespace lic::tools
