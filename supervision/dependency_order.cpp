#include "supervision/dependency_order.hpp"

#include <algorithm>

namespace lic::supervision {

DependencyOrder order_by_dependencies(const std::vector<std::vector<std::size_t>>& depends_on) {
  const std::size_t n = depends_on.size();
  DependencyOrder out;
  std::vector<int> level(n, -1);
  std::size_t placed = 0;
  // Level by level: a service goes in the first level after all it depends on.
  for (int l = 0; placed < n; ++l) {
    std::vector<std::size_t> this_level;
    for (std::size_t i = 0; i < n; ++i) {
      if (level[i] != -1) continue;
      const bool ready = std::all_of(depends_on[i].begin(), depends_on[i].end(), [&](std::size_t d) {
        return d < n && level[d] != -1 && level[d] < l;
      });
      if (ready) this_level.push_back(i);
    }
    if (this_level.empty()) break;  // the rest wait on each other: a cycle (or a bad index)
    for (std::size_t i : this_level) level[i] = l;
    placed += this_level.size();
    out.levels.push_back(std::move(this_level));
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
