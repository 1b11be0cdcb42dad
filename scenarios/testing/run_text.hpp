#pragma once
// Test helpers (test code only): run a scenario written inline as YAML, load a file that must be
// valid, and find a check's result by its title.

#include <catch2/catch.hpp>
#include <algorithm>
#include <string>

#include "scenarios/file/read.hpp"
#include "scenarios/run/runner.hpp"

namespace lic::scenarios::testing {

/// Parses `text` (it must be a valid file) and runs it, at `seed` when given.
inline RunResult run_text(const std::string& text, std::optional<std::uint64_t> seed = std::nullopt) {
  const ParseResult p = parse_scenario(text, "t.yaml");
  for (const Diagnostic& d : p.errors) UNSCOPED_INFO(format_diagnostic("t.yaml", d));
  REQUIRE(p.ok());
  RunOptions o;
  o.seed = seed;
  return run(p.scenario, o);
}

/// Loads the file at `path` (it must be a valid file; every mistake is printed when it is not).
inline Scenario load_valid(const std::string& path) {
  const ParseResult p = load_scenario(path);
  for (const Diagnostic& d : p.errors) UNSCOPED_INFO(format_diagnostic(path, d));
  REQUIRE(p.ok());
  return p.scenario;
}

/// The result of the check titled `name` ("alive(/root/db)"); it must be there.
inline const CheckResult& check_named(const RunResult& r, const std::string& name) {
  const auto it = std::find_if(r.checks.begin(), r.checks.end(), [&](const CheckResult& c) { return c.name == name; });
  INFO("no check titled " << name);
  REQUIRE(it != r.checks.end());
  return *it;
}

}  // namespace lic::scenarios::testing
