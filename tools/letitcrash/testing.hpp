#pragma once
// The common test, for a project's own Catch2 suite (target letitcrash::testing; docs/library.md):
//
//   #include <letitcrash/testing.hpp>
//   TEST_CASE("the cache holds over 500 seeds") {
//     lic::testing::HoldsOptions o;
//     o.seeds = {1, 500};
//     o.registry = &my_registry();
//     o.program = "build/cachetest";   // your own cli_main executable, for the reproduce lines
//     lic::testing::require_holds(SCENARIOS "/cache.yaml", o);   // an absolute path
//   }
//
// A file that does not read fails the test with every diagnostic as file:line:col; a seed that
// fails a check fails it, and the first failing seeds are printed on stderr, each with its checks
// and the command that reproduces it (one line each, unwrapped), then the first of them again
// with each failing check's detail and witness. `prop_holds` is the RapidCheck
// form: seeds drawn by RapidCheck, whose reproduce string is printed when the test binary exits.
// The project's test executable provides Catch2's main (`#define CATCH_CONFIG_MAIN` in one file).

#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "tools/letitcrash/letitcrash.hpp"

namespace lic::testing {

struct HoldsOptions {
  SeedRange seeds{1, 500};
  const Registry* registry = nullptr;  ///< null: the built-in behaviours and checks only
  /// How the reproduce line names the executable: your own cli_main program, which knows your
  /// behaviours. Empty: `letitcrash` when `registry` is null, else a placeholder that says so.
  std::string program;
  bool check_determinism = false;  ///< run each seed twice and compare the traces
  unsigned jobs = 0;               ///< 0: one per core
  std::size_t failures_shown = 5;  ///< failing seeds printed
};

inline const Registry& registry_of(const HoldsOptions& o) {
  return o.registry != nullptr ? *o.registry : Registry::builtin();
}

inline std::string program_of(const HoldsOptions& o) {
  if (!o.program.empty()) return o.program;
  return o.registry == nullptr ? "letitcrash" : "<your cli_main executable>";
}

/// Reads `file` (give an absolute path: tests run in the build folder) or fails the test with
/// its diagnostics.
inline Scenario load_or_fail(const std::string& file, const Registry& registry) {
  ParseResult p = load_scenario(file, registry);
  std::string all;
  for (const scenarios::Diagnostic& d : p.errors) all += scenarios::format_diagnostic(file, d) + "\n";
  if (!p.ok()) FAIL(all);
  return std::move(p.scenario);
}

/// The command that runs `seed` of `file` again.
inline std::string reproduce(const std::string& file, std::uint64_t seed, TieBreak tie, const HoldsOptions& o) {
  return scenarios::reproduce_command(program_of(o), file, seed, tie, std::nullopt);
}

/// Each failing check of `seed`, run again: its detail and its witness (where it was decided).
inline std::string why_failed(const Scenario& s, std::uint64_t seed, const Registry& registry) {
  RunOptions ro;
  ro.seed = seed;
  ro.registry = &registry;
  const RunResult r = run(s, ro);
  std::ostringstream out;
  out << "  seed " << seed << ", why:\n";
  for (const CheckResult& c : r.checks) {
    if (c.passed) continue;
    out << "    FAIL " << c.name << ": " << c.detail << "\n";
    if (c.witness) out << "      at " << reports::format_witness(*c.witness) << "\n";
  }
  return out.str();
}

/// Every seed of o.seeds passes every check of `file`.
inline void require_holds(const std::string& file, const HoldsOptions& o = {}) {
  const Registry& registry = registry_of(o);
  const Scenario s = load_or_fail(file, registry);
  SweepOptions so;
  so.check_determinism = o.check_determinism;
  so.jobs = o.jobs;
  so.registry = &registry;
  const std::vector<SeedResult> results = run_seeds(s, o.seeds, so);
  std::size_t failed = 0;
  std::ostringstream lines;  // on stderr, so that Catch does not wrap the commands
  for (const SeedResult& r : results) {
    if (r.passed || ++failed > o.failures_shown) continue;
    std::string checks;
    for (const std::string& c : r.failed) checks += (checks.empty() ? "" : ", ") + c;
    lines << "  seed " << r.seed << " failed " << checks << "\n    " << reproduce(file, r.seed, s.tie_break, o) << "\n";
  }
  if (failed > 0) {
    std::cerr << file << ": " << failed << " of " << results.size() << " seeds failed:\n" << lines.str();
    for (const SeedResult& r : results) {  // the first failing seed again, with why it failed
      if (r.passed) continue;
      std::cerr << why_failed(s, r.seed, registry);
      break;
    }
  }
  INFO(file << ": " << failed << " of " << results.size() << " seeds failed (the commands that reproduce them are on stderr)");
  CHECK(failed == 0);
}

/// A RapidCheck property: `file` holds for every seed RapidCheck draws (RC_PARAMS's max_success
/// of them). A failure prints the seed, its failing checks and the letitcrash command; RapidCheck
/// prints its own reproduce string when the test binary exits.
inline void prop_holds(const std::string& description, const std::string& file, const HoldsOptions& o = {}) {
  using namespace rc::detail;
  const Registry& registry = registry_of(o);
  const Scenario s = load_or_fail(file, registry);
  TestMetadata metadata;  // an id: RapidCheck then prints the reproduce string at exit
  metadata.id = Catch::getResultCapture().getCurrentTestName() + "/" + description;
  metadata.description = description;
  const auto result = checkTestable(
      [&] {
        RunOptions ro;
        ro.seed = *rc::gen::arbitrary<std::uint64_t>();
        ro.registry = &registry;
        const RunResult r = run(s, ro);
        std::string failed;
        for (const CheckResult& c : r.checks)
          if (!c.passed) failed += "  FAIL " + c.name + ": " + c.detail + "\n";
        if (!r.passed)
          RC_FAIL("seed " + std::to_string(r.seed) + "\n" + failed + "  " + reproduce(file, r.seed, r.tie_break, o));
      },
      metadata);
  std::ostringstream message;
  printResultMessage(result, message);
  if (!result.template is<SuccessResult>()) std::cerr << message.str() << "\n";
  INFO(message.str());
  CHECK(result.template is<SuccessResult>());
}

}  // namespace lic::testing
