#pragma once
// Replaying a recorded run: trace.jsonl's first line says which scenario (as YAML), seed,
// tie-break and stop time made it; the run is made again and compared event for event with the
// recording. Same binary, same trace: a difference is a nondeterminism or a changed build.

#include <cstdint>
#include <string>

#include "scenarios/registry.hpp"
#include "scenarios/run/runner.hpp"

namespace lic::scenarios {

struct ReplayOutcome {
  enum class Status : std::uint8_t {
    identical,  ///< every event as recorded
    diverged,   ///< the first difference is at event `at`
    bad_input,  ///< not a trace `run --out` wrote, or its scenario does not read: see `errors`
  };
  Status status = Status::bad_input;
  std::vector<std::string> errors;  ///< bad input: file:line:col: message, one per mistake
  std::string scenario;
  std::uint64_t seed = 0;
  std::uint64_t trace_hash = 0;  ///< of the re-run
  std::size_t recorded = 0;      ///< events in the recording
  std::size_t replayed = 0;      ///< events of the re-run
  std::size_t at = 0;            ///< diverged: the first event that differs (0-based)
  std::string recorded_line;     ///< diverged: that event as recorded ("" past the recording's end)
  std::string replayed_line;     ///< diverged: that event as re-run ("" past the re-run's end)
};

/// Replays `trace_file` with the behaviours and checks of `registry`.
ReplayOutcome replay(const std::string& trace_file, const Registry& registry = Registry::builtin(),
                     const Budgets& budgets = {});

}  // namespace lic::scenarios
