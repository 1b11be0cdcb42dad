// Fuzz target: a scenario file through the reader, the validator, the YAML writer and the
// runner (issue 18, docs/robustness.md). Whatever the bytes, the reader answers with
// diagnostics; a file it accepts must write back to YAML that reads to the same YAML again
// (the round-trip), and must run within small budgets to its reports, or stop at a budget.
// Anything else (an abort, a sanitizer report, an uncaught exception) is a finding.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "reports/run_report.hpp"
#include "reports/trace_format.hpp"
#include "scenarios/file/read.hpp"
#include "scenarios/file/write.hpp"
#include "scenarios/run/report.hpp"
#include "scenarios/run/runner.hpp"
#include "sim/simulation.hpp"

namespace {

[[noreturn]] void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "scenario_fuzz: %s\n%s\n", what, detail.c_str());
  std::abort();
}

/// Scenario -> YAML -> Scenario must read without a mistake and write the same YAML again.
void round_trip(const lic::scenarios::Scenario& s) {
  const std::string yaml = lic::scenarios::to_yaml(s);
  const lic::scenarios::ParseResult again = lic::scenarios::parse_scenario(yaml, "written.yaml");
  if (!again.ok())
    finding("the YAML written from an accepted scenario does not read back",
            lic::scenarios::format_diagnostic("written.yaml", again.errors.front()) + "\n--- written:\n" + yaml);
  const std::string twice = lic::scenarios::to_yaml(again.scenario);
  if (twice != yaml) finding("writing the scenario read back gives other YAML", "--- first:\n" + yaml + "--- second:\n" + twice);
}

/// Runs a short stretch of the scenario within small budgets and renders what `run --out` would.
void run_briefly(const lic::scenarios::Scenario& s) {
  lic::scenarios::RunOptions o;
  o.until = lic::Time{} + lic::kSecond * 5;
  o.budgets.max_events = 20'000;  // rendered in full below: keep one input well under a second
  o.budgets.max_events_at_instant = 20'000;
  o.budgets.max_memory_bytes = std::uint64_t{64} << 20;
  try {
    const lic::scenarios::RunResult r = lic::scenarios::run(s, o);
    const lic::reports::RunReport report = lic::scenarios::make_report(s, r, "fuzz.yaml", "letitcrash run fuzz.yaml");
    std::size_t bytes = lic::reports::summary_json(report).size() + lic::reports::perfetto_json(report).size();
    bytes += lic::scenarios::trace_header(s, r.seed, r.tie_break, o.until, "fuzz.yaml").size();
    for (const lic::TraceEvent& e : r.sim->trace().events()) bytes += lic::reports::format_event_json(e).size();
    if (bytes == 0) finding("a run rendered nothing", lic::scenarios::to_yaml(s));
  } catch (const lic::BudgetExceeded&) {
    // a budget stopping a hostile scenario is the answer, not a finding
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const lic::scenarios::ParseResult p = lic::scenarios::parse_scenario(text, "fuzz.yaml");
  for (const lic::scenarios::Diagnostic& d : p.errors) (void)lic::scenarios::format_diagnostic("fuzz.yaml", d);
  if (!p.ok()) return 0;
  round_trip(p.scenario);
  run_briefly(p.scenario);
  return 0;
}
