#include "supervision/restart_strategy.hpp"

namespace lic::supervision {

bool restart_wanted(RestartType type, const Reason& reason) {
  switch (type) {
    case RestartType::permanent: return true;
    case RestartType::transient: return !reason.is_clean();
    case RestartType::temporary: return false;
  }
  return false;
}

RestartPlan plan_restart(Strategy strategy, std::span<const ChildState> children, std::size_t failed) {
  RestartPlan plan;
  if (failed >= children.size()) return plan;
  if (strategy == Strategy::one_for_one || strategy == Strategy::simple_one_for_one) {
    plan.restart.push_back(failed);
    return plan;
  }
  const std::size_t first = strategy == Strategy::one_for_all ? 0 : failed;
  for (std::size_t i = children.size(); i-- > first;) {
    if (i != failed && children[i].running) plan.terminate.push_back(i);
  }
  for (std::size_t i = first; i < children.size(); ++i) {
    if (i != failed && children[i].restart == RestartType::temporary) {
      plan.remove.push_back(i);
    } else {
      plan.restart.push_back(i);
    }
  }
  return plan;
}

}  // namespace lic::supervision
