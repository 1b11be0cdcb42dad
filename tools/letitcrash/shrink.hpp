#pragma once
// `letitcrash shrink`: a scenario file and a failing seed in; out, a smaller scenario file that
// fails the same check (the library's scenarios/search/shrink.hpp; docs/shrinking.md). Here: the
// arguments, the progress line, the before/after table, and the file with its comment header.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "tools/letitcrash/commands.hpp"

namespace lic::tools {

struct ShrinkArgs {
  std::string file;
  std::optional<std::uint64_t> seed;      ///< default: the file's
  std::optional<TieBreak> tie_break;      ///< default: the file's
  std::string out;                        ///< empty: default_shrunk_path(file)
  std::size_t max_runs = 500;             ///< candidate runs at most
  std::optional<double> max_seconds = 60; ///< wall time at most
  bool swarm = false;                     ///< shrink the seed's swarm configuration (search/swarm.hpp)
  bool keep_seed = false;                 ///< no seed hops (ShrinkOptions::move_seed false)
  scenarios::Budgets budgets{};           ///< each run's: --max-events, --max-memory
};

/// Where the shrunk file goes by default: `<file's stem>.shrunk.yaml` in the current directory
/// (beside what the user is working on, never over the file it came from).
std::string default_shrunk_path(const std::string& file);

/// The line a reproducer's header carries about other seeds: on how many of seeds 1..100 `s`
/// fails with identity `id`. Under 90, `s` first gains the fewest pinned streams (`streams:`)
/// that make it hold (search/reach.hpp), and the line names them; when none do, it says why the
/// file is bound to its own seed (a comment line, "# ...\n").
/// A file whose run takes more than `kSeedLineEvents` trace events is not run 100 times: the line
/// says so instead.
inline constexpr std::uint64_t kSeedLineEvents = 1'000'000;
std::string seed_line(const scenarios::Registry& registry, const scenarios::Budgets& budgets, scenarios::Scenario& s,
                      const scenarios::FailureId& id, std::uint64_t events);

/// Exit code: 0 the shrunk file was written, 1 the seed passes (nothing written), 2 bad input.
int shrink_command(const Invocation& cli, const ShrinkArgs& a);

}  // namespace lic::tools
