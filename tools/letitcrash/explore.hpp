#pragma once
// `letitcrash explore`: guided search for a failure (the library's scenarios/search/explore.hpp;
// docs/explore.md). Here: the arguments, the progress line, the summary, the failure shrunk and
// written as a scenario file that is its reproducer, `--format json`, and the explore page.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "tools/letitcrash/commands.hpp"

namespace lic::tools {

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
};

/// Exit code: 0 no failure within the budget, 1 a failure found (its reproducer written), 2 bad input.
int explore_command(const Invocation& cli, const ExploreArgs& a);

}  // namespace lic::tools
