#pragma once
// Writing scenario files: a Scenario as YAML that parse_scenario reads back as an equal Scenario,
// so generated and shrunk cases are ordinary files a person can read, run and keep.

#include <string>

#include "scenarios/scenario.hpp"

namespace lic::scenarios {

/// The scenario as a YAML document that parse_scenario reads back as an equal Scenario.
std::string to_yaml(const Scenario& s);

}  // namespace lic::scenarios
