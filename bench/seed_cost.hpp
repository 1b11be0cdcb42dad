#pragma once
// Issue 37's "seconds to an answer": what a sweep's seed costs outside its event loop, and what
// guided search's feedback costs beside a run, on every catalogue file (docs/benchmarks.md "A
// seed's cost outside its events").

#include <cstdint>
#include <optional>

#include "bench/bench.hpp"
#include "bench/figures.hpp"
#include "scenarios/registry.hpp"
#include "scenarios/scenario.hpp"

namespace lic::bench {

/// One run of `s` at `seed`, timed: the run, then guided search's signature over it, then its
/// marks (seconds each). `empty`: the signature and the marks found nothing.
struct FeedbackTimes {
  double run_s = 0;
  double signature_s = 0;
  double marks_s = 0;
  bool empty = false;
};
FeedbackTimes feedback_times(const scenarios::Scenario& s, const scenarios::Registry& registry, std::optional<std::uint64_t> seed);

/// sweep_seed_overhead_pct (the worst file), _median_pct and one figure a file;
/// explore_feedback_overhead_pct (the median file) and explore_marks_pct.
void run_seed_cost(const BenchOptions& o, Figures& f);

}  // namespace lic::bench
