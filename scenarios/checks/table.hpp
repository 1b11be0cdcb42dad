#pragma once
// The checks a scenario file can ask for (`checks:`), each a pure function of the finished run:
// its trace, its phases and its final state (DESIGN.md §5). The CLI, the catalogue tests and
// the sweeps all judge a run with these.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "scenarios/faults/injector.hpp"
#include "scenarios/scenario.hpp"
#include "sim/trace.hpp"

namespace lic::scenarios {

struct CheckInfo {
  std::string name;
  std::string help;
  bool needs_of = false;   ///< takes a tree path
  bool needs_min = false;  ///< takes a ratio
  bool needs_max = false;  ///< takes a count: `max` (at most) or `count` (exactly)
};

/// Every check, in the order docs/scenario-format.md lists them.
const std::vector<CheckInfo>& check_catalogue();
/// The check called `name`, or null.
const CheckInfo* find_check(const std::string& name);

struct CheckResult {
  std::string name;    ///< as written: "converges", "availability(/root/input)"
  bool passed = false;
  std::string detail;  ///< what was measured or what went wrong, one line
};

/// What a check reads.
struct CheckInput {
  const EventLog* events = nullptr;
  Time end{};
  faults::PhaseOutcome phases{};
  bool quiet_ran = false;                   ///< the quiet phase ran to its end
  std::vector<std::string> roots;           ///< the root trees' paths ("/root")
  std::vector<std::string> alive;           ///< paths alive at the end
  std::map<std::string, std::uint32_t> starts;  ///< start attempts per path
  const Scenario* scenario = nullptr;           ///< what ran (the `model` check reads its tree and script)
};

/// The checks a scenario runs: its own, or when it names none, `no_escalation` (`escalates`
/// when it expects escalation) and, with a quiet phase, `converges`.
std::vector<CheckDecl> effective_checks(const Scenario& s);

std::vector<CheckResult> run_checks(const std::vector<CheckDecl>& checks, const CheckInput& in);

}  // namespace lic::scenarios
