#pragma once
// Runs a reference-model tree (reference_model.hpp) in the simulator: the real Supervisor with
// workers that behave as the model's nodes say, the same injections at the same instants, and
// the trace read back as the model's events. Property tests compare the two lists.

#include <string>
#include <vector>

#include "sim/simulation.hpp"
#include "supervision/reference_model.hpp"
#include "supervision/supervisor.hpp"

namespace lic::supervision::model {

/// The Supervisor spec for a supervisor node, its workers built from the nodes (which must
/// outlive the simulation).
SupervisorSpec build(const Node& supervisor);

/// Starts `root` in `sim` at its current time, applies the injections as predict() times them
/// (each `after` the tree went quiet), runs to quiet, and returns what the trace shows.
/// `at`, if given, receives the instant each injection was made (a script's step times).
std::vector<Event> observe(Simulation& sim, const Node& root, const std::vector<Injection>& injections,
                           std::vector<Time>* at = nullptr);

/// The events of the trace as the model names them (spawn, exit, max_intensity, shutdown_error,
/// auto_shutdown of labelled processes), from event `from` on.
std::vector<Event> events_of(const EventLog& log, std::size_t from = 0);
inline std::vector<Event> events_of(const Trace& trace, std::size_t from = 0) { return events_of(trace.events(), from); }

/// A readable account of the first difference, or empty when the lists are equal.
std::string first_difference(const std::vector<Event>& expected, const std::vector<Event>& got);

}  // namespace lic::supervision::model
