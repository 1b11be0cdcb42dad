#pragma once
// Tree paths: a supervised process is labelled with its path in the tree ("/root/input/parser"),
// so faults, script steps, checks and reports name processes the way a scenario file does.

#include <string_view>

#include "sim/simulation.hpp"

namespace lic::supervision {

/// The live process whose label names `path` (a tree path), or Pid{}.
Pid find_by_path(const Simulation& sim, std::string_view path);

}  // namespace lic::supervision
