#pragma once
// What a scenario file can name: behaviours (behaviours/table.hpp) and checks (checks/table.hpp),
// each once, with its arguments and help. Reading, validating and running a file all look names
// up here. The built-in catalogue fills a registry through Registry::add, the same call a
// user's own code makes to add their behaviours and checks (docs/library.md):
//
//   lic::scenarios::Registry reg = lic::scenarios::Registry::with_builtins();
//   reg.add(lic::scenarios::BehaviourInfo{"cache.server", "...", {...}, build_cache});
//   return lic::cli_main(argc, argv, reg);

#include <string_view>
#include <vector>

#include "scenarios/behaviours/table.hpp"
#include "scenarios/checks/table.hpp"

namespace lic::scenarios {

class Registry {
 public:
  /// An empty registry.
  Registry() = default;
  /// A registry holding the built-in behaviours and checks, to add one's own to.
  static Registry with_builtins();
  /// The built-in registry, shared (what the letitcrash executable and the defaults use).
  static const Registry& builtin();

  /// Adds a behaviour. Throws std::invalid_argument when the name is empty, taken, or has a
  /// space, or when an argument has no name, an unknown type, or a name used twice.
  void add(BehaviourInfo b);
  /// Adds a check, with the same rules.
  void add(CheckInfo c);
  /// Adds a metric (a name taken or without a measure function is refused).
  void add(MetricInfo m);

  /// Every behaviour, sorted by name.
  const std::vector<BehaviourInfo>& behaviours() const { return behaviours_; }
  /// Every check, in the order they were added.
  const std::vector<CheckInfo>& checks() const { return checks_; }
  /// Every metric, in the order they were added.
  const std::vector<MetricInfo>& metrics() const { return metrics_; }
  const BehaviourInfo* behaviour(std::string_view name) const;
  /// Every behaviour's buggify points, each once, sorted by name. Two behaviours may share a
  /// point; Registry::add refuses one name with two meanings (two helps).
  std::vector<BuggifyPoint> buggify_points() const;
  /// The points of the behaviours `s` runs, sorted by name.
  std::vector<BuggifyPoint> buggify_points(const std::vector<std::string>& behaviours) const;
  const CheckInfo* check(std::string_view name) const;

  /// Checks `ref` (a known name; known arguments, each a valid value of its type) and returns
  /// its factory; on a mistake appends a diagnostic at the offending name or value and returns
  /// an empty function.
  BehaviourFactory make_behaviour(const BehaviourRef& ref, std::vector<Diagnostic>& errors) const;
  /// The same for a check: its judge, or an empty function.
  CheckJudge make_check(const CheckDecl& c, std::vector<Diagnostic>& errors) const;

 private:
  std::vector<BehaviourInfo> behaviours_;
  std::vector<CheckInfo> checks_;
  std::vector<MetricInfo> metrics_;
};

}  // namespace lic::scenarios
