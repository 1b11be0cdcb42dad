#include "supervision/tree_path.hpp"

namespace lic::supervision {

Pid find_by_path(const Simulation& sim, std::string_view path) {
  for (Pid p : sim.processes()) {
    if (sim.info(p)->label.name.text() == path) return p;
  }
  return Pid{};
}

}  // namespace lic::supervision
