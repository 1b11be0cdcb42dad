#pragma once
// Convergence (DESIGN.md §4): after the quiet phase every permanent child is running and no
// restart is pending. A pure function of a supervision snapshot.

#include <string>
#include <vector>

#include "supervision/supervisor.hpp"

namespace lic::properties {

/// What keeps the tree from having converged, one line per child ("/root/input/parser: not
/// running (restarting)"); empty when it has converged.
std::vector<std::string> not_converged(const std::vector<supervision::SupervisorSnapshot>& tree);

}  // namespace lic::properties
