#include "properties/convergence.hpp"

namespace lic::properties {

std::vector<std::string> not_converged(const std::vector<supervision::SupervisorSnapshot>& tree) {
  std::vector<std::string> out;
  for (const supervision::SupervisorSnapshot& s : tree) {
    for (const supervision::ChildInfo& c : s.children) {
      const std::string who = s.path + "/" + c.id;
      if (c.restarting) {
        out.push_back(who + ": a restart is pending");
      } else if (!c.pid && c.restart == supervision::RestartType::permanent) {
        out.push_back(who + ": a permanent child is not running");
      }
    }
  }
  return out;
}

}  // namespace lic::properties
