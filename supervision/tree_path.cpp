#include "supervision/tree_path.hpp"

namespace lic::supervision {

Pid find_by_path(const Simulation& sim, std::string_view path) { return sim.find_labelled(path); }

}  // namespace lic::supervision
