#pragma once
// Issue 17's targets beside the figures `letitcrash bench` measured: for each headline name, the
// figure, the target and whether it is met. Text mode prints one `target NAME ...` line each
// after the figures, and under a missed one its `why:` (the cause measured and written up in
// docs/benchmarks.md, and where this run's own figures bound it, that bound); --json adds a
// `targets` object. bench only judges the number it measured.

#include "bench/figures.hpp"

namespace lic::bench {

/// Judges every headline figure in `f` against its target: prints the lines (text mode) and
/// records the verdicts for Figures::to_json. In quick mode nothing is judged (met is null):
/// its small sizes say nothing about a target (a quick W1 overhead can come out negative).
void judge_targets(Figures& f, bool quick);

}  // namespace lic::bench
