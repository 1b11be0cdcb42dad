#include "supervision/dependency_order.hpp"

#include <algorithm>

namespace lic::supervision {

DependencyOrder order_by_dependencies(const std::vector<std::vector<std::size_t>>& depends_on) {
  const std::size_t n = depends_on.size();
  DependencyOrder out;
  std::vector<int> level(n, -1);
  // A service goes in the first level after all it depends on: 1 + the highest level among its
  // dependencies. Kahn's order visits each dependency edge once, so a chain of n services costs
  // O(n), not O(n) per level. A dependency on no service (a bad index) is never satisfied.
  std::vector<std::size_t> unmet(n, 0);
  std::vector<std::vector<std::size_t>> dependents(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t d : depends_on[i]) {
      ++unmet[i];
      if (d < n) dependents[d].push_back(i);
    }
  }
  std::vector<std::size_t> ready;
  for (std::size_t i = 0; i < n; ++i) {
    if (unmet[i] == 0) {
      level[i] = 0;
      ready.push_back(i);
    }
  }
  std::size_t placed = 0;
  int levels = 0;
  while (!ready.empty()) {
    const std::size_t v = ready.back();
    ready.pop_back();
    ++placed;
    levels = std::max(levels, level[v] + 1);
    for (std::size_t w : dependents[v]) {
      level[w] = std::max(level[w], level[v] + 1);
      if (--unmet[w] == 0) ready.push_back(w);
    }
  }
  // Within a level, declaration order.
  out.levels.resize(static_cast<std::size_t>(levels));
  for (std::size_t i = 0; i < n; ++i) {
    if (unmet[i] == 0) {
      out.levels[static_cast<std::size_t>(level[i])].push_back(i);
    } else {
      level[i] = -1;  // waits on a cycle or a bad index
    }
  }
  if (placed == n) return out;
  // Walk unplaced services along unplaced dependencies until one repeats: that is a cycle.
  std::size_t start = 0;
  while (level[start] != -1) ++start;
  std::vector<std::size_t> path;
  std::vector<int> seen_at(n, -1);
  std::size_t v = start;
  for (;;) {
    if (seen_at[v] != -1) {
      out.cycle.assign(path.begin() + seen_at[v], path.end());
      out.cycle.push_back(v);
      return out;
    }
    seen_at[v] = static_cast<int>(path.size());
    path.push_back(v);
    std::size_t next = n;
    for (std::size_t d : depends_on[v]) {
      if (d >= n) {  // a dependency on nothing: report it as a one-step "cycle" to itself
        out.cycle = {v, v};
        return out;
      }
      if (level[d] == -1) {
        next = d;
        break;
      }
    }
    v = next;
  }
}

}  // namespace lic::supervision
