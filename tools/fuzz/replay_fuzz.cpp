// Fuzz target: `replay`'s reading of a trace file (issue 18, docs/robustness.md). The bytes are
// written to a file (replay reads a path) and replayed within small budgets. A trace that is not
// one `run --out` wrote is bad input (diagnostics); a good header re-runs its scenario. Anything
// else (an abort, a sanitizer report, an uncaught exception) is a finding.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "scenarios/run/replay.hpp"
#include "sim/simulation.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/lic-replay-fuzz." + std::to_string(::getpid()) + ".jsonl";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  const bool written = std::fwrite(data, 1, size, f) == size;
  if (std::fclose(f) != 0 || !written) return 0;
  lic::scenarios::Budgets budgets;
  budgets.max_events = 50'000;
  budgets.max_events_at_instant = 20'000;
  budgets.max_memory_bytes = std::uint64_t{64} << 20;
  try {
    (void)lic::scenarios::replay(path, lic::scenarios::Registry::builtin(), budgets);
  } catch (const lic::BudgetExceeded&) {
    // the recorded scenario ran past a budget: the answer, not a finding
  }
  std::remove(path.c_str());
  return 0;
}
