#pragma once
// Start order for depends_on (seed 003): dependencies first, services of the same level
// together, stop in the reverse order. A cycle is an error that names it.

#include <cstddef>
#include <string>
#include <vector>

namespace lic::supervision {

struct DependencyOrder {
  /// Levels to start in order; within a level, declaration order. Stop: levels reversed.
  std::vector<std::vector<std::size_t>> levels;
  /// When not empty: a cycle, as the services along it, the first repeated at the end.
  std::vector<std::size_t> cycle;
  bool ok() const { return cycle.empty(); }
};

/// `depends_on[i]` lists the services (by index) service i needs running first.
DependencyOrder order_by_dependencies(const std::vector<std::vector<std::size_t>>& depends_on);

}  // namespace lic::supervision
