#pragma once
// `letitcrash bench histories` (docs/history.md, "Against Porcupine"): the linearizability checker
// on Porcupine's test histories, each verdict against Porcupine's and each time beside
// Porcupine's own (conformance/porcupine/porcupine-times.txt, measured on this machine), and a
// generated 100,000-operation key-value history; then issue 38's targets, met or not.

#include <string>

namespace lic::bench {

struct HistoryBenchOptions {
  std::string dir = "conformance/porcupine";  ///< verdicts.txt, porcupine-times.txt and the histories
  int repeat = 3;                             ///< each time is the best of this many checks
};

/// Prints one line per history and the targets; 0 when every verdict agrees, 1 when one does
/// not, 2 when the folder cannot be read.
int run_histories(const HistoryBenchOptions& o);

}  // namespace lic::bench
