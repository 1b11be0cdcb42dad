#pragma once
// The common test, for a user's own Catch2 suite (target letitcrash::testing; docs/library.md):
//
//   #include <letitcrash/testing.hpp>
//   TEST_CASE("the cache holds over 500 seeds") {
//     lic::testing::require_holds("scenarios/cache.yaml", {.seeds = {1, 500}, .registry = &my_registry(),
//                                                          .program = "build/cachetest"});
//   }
//
// A file that does not read fails the test with every diagnostic as file:line:col; a seed that
// fails a check fails it with the seed, the failing checks and the command that reproduces it,
// for the first few failing seeds. `prop_holds` is the RapidCheck form: seeds drawn by
// RapidCheck, a failure reported with RapidCheck's reproduce string and letitcrash's command.

#include <catch2/catch.hpp>
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

#include <string>
#include <vector>

#include "tools/letitcrash/letitcrash.hpp"

namespace lic::testing {

struct HoldsOptions {
  SeedRange seeds{1, 500};
  const Registry* registry = nullptr;  ///< null: the built-in behaviours and checks only
  /// How the reproduce line names the executable: the user's own cli_main program, which knows
  /// their behaviours (or `letitcrash` for files that name only built-in ones).
  std::string program = "letitcrash";
  bool check_determinism = false;  ///< run each seed twice and compare the traces
  unsigned jobs = 0;               ///< 0: one per core
  std::size_t failures_shown = 5;  ///< failing seeds listed in the message
};

/// Reads `file` or fails the test with its diagnostics.
inline Scenario load_or_fail(const std::string& file, const Registry& registry) {
  ParseResult p = load_scenario(file, registry);
  std::string all;
  for (const scenarios::Diagnostic& d : p.errors) all += scenarios::format_diagnostic(file, d) + "\n";
  if (!p.ok()) FAIL(all);
  return std::move(p.scenario);
}

/// One line per failing seed: its checks and the command that runs it again.
inline std::string describe_failure(const std::string& file, const SeedResult& r, const HoldsOptions& o,
                                    TieBreak tie) {
  std::string checks;
  for (const std::string& c : r.failed) checks += (checks.empty() ? "" : ", ") + c;
  return "seed " + std::to_string(r.seed) + " failed " + checks + "\n    reproduce: " +
         scenarios::reproduce_command(o.program, file, r.seed, tie, std::nullopt);
}

/// Every seed of o.seeds passes every check of `file`.
inline void require_holds(const std::string& file, const HoldsOptions& o = {}) {
  const Registry& registry = o.registry != nullptr ? *o.registry : Registry::builtin();
  const Scenario s = load_or_fail(file, registry);
  SweepOptions so;
  so.check_determinism = o.check_determinism;
  so.jobs = o.jobs;
  so.registry = &registry;
  const std::vector<SeedResult> results = run_seeds(s, o.seeds, so);
  std::size_t failed = 0;
  std::string message;
  for (const SeedResult& r : results) {
    if (r.passed) continue;
    if (++failed <= o.failures_shown) message += describe_failure(file, r, o, s.tie_break) + "\n";
  }
  INFO(file << ": " << failed << " of " << results.size() << " seeds failed\n" << message);
  CHECK(failed == 0);
}

/// A RapidCheck property: `file` holds for every seed RapidCheck draws (max_success of them).
inline void prop_holds(const std::string& name, const std::string& file, const HoldsOptions& o = {}) {
  const Registry& registry = o.registry != nullptr ? *o.registry : Registry::builtin();
  const Scenario s = load_or_fail(file, registry);
  rc::prop(name, [&] {
    RunOptions ro;
    ro.seed = *rc::gen::arbitrary<std::uint64_t>();
    ro.registry = &registry;
    const RunResult r = run(s, ro);
    std::string failed;
    for (const CheckResult& c : r.checks)
      if (!c.passed) failed += "  FAIL " + c.name + ": " + c.detail + "\n";
    if (!r.passed)
      RC_FAIL("seed " + std::to_string(r.seed) + "\n" + failed + "  reproduce: " +
              scenarios::reproduce_command(o.program, file, r.seed, r.tie_break, std::nullopt));
  });
}

}  // namespace lic::testing
