#pragma once
// The behaviours a scenario file can name (`behaviour: idle`, `behaviour: stall`, ...), with
// their arguments: the stock workers for testing supervisors and the behaviours the reference
// systems register (docs/scenario-format.md lists them all; `letitcrash validate --list`
// prints them).

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "scenarios/scenario.hpp"
#include "sim/process.hpp"

namespace lic::scenarios {

/// Makes one instance of a behaviour. `start_arg` is the argument of a simple_one_for_one
/// start_child ("" otherwise).
using BehaviourFactory = std::function<std::unique_ptr<Behaviour>(const std::string& start_arg)>;

struct ArgInfo {
  std::string name;
  std::string type;       ///< "duration", "ratio", "int", "bool", "string", "reason", "init results"
  std::string fallback;   ///< its default, as written in a file ("" = required)
  std::string help;
};

struct BehaviourInfo {
  std::string name;
  std::string help;
  std::vector<ArgInfo> args;
};

/// Every behaviour, sorted by name.
const std::vector<BehaviourInfo>& catalogue();

/// Checks `ref` (a known name, known arguments, each a valid value of its type) and returns its
/// factory; on a mistake appends a diagnostic at the offending name or value and returns an
/// empty function.
BehaviourFactory make_behaviour(const BehaviourRef& ref, std::vector<Diagnostic>& errors);

}  // namespace lic::scenarios
