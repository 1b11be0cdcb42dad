#pragma once
// Walking one behaviour argument over a range (`sweep --vary BEHAVIOUR:ARG=A..B --steps N`): the
// same file and seeds run at each value of a grid, to find where a system stops holding (the
// largest S3 latency at which a graceful shutdown still drains in time, say). This walks an
// argument on purpose; a swarm range in a file (sampled per seed) is another thing.

#include <string>
#include <string_view>
#include <vector>

#include "scenarios/registry.hpp"
#include "scenarios/scenario.hpp"

namespace lic::scenarios {

struct Vary {
  std::string behaviour;  ///< e.g. ingest.s3
  std::string arg;        ///< e.g. latency
  std::string from;       ///< A, as a file writes it
  std::string to;         ///< B
};

/// Parses "BEHAVIOUR:ARG=A..B". Returns the reason it is not one, empty when it is.
std::string parse_vary(std::string_view text, Vary& out);

/// `steps` values evenly spaced from A to B, both included, written as a file would: the
/// argument must be a duration, an int or a ratio of a behaviour `registry` knows, and A <= B.
/// Returns an error, empty on success.
std::string vary_values(const Vary& v, const Registry& registry, std::size_t steps, std::vector<std::string>& out);

/// Sets the argument to `value` on every use of the behaviour in `s` (its trees, services and
/// start_child steps). Returns how many uses it set.
std::size_t set_arg(Scenario& s, const Vary& v, const std::string& value);

}  // namespace lic::scenarios
