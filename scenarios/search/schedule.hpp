#pragma once
// A run's fault schedule as data (issue 31, docs/explore.md). A schedule is an ordinary
// scenario whose every fault is an explicit event: a time, a kind, a target and its knobs, no
// `mtbf` and no `every`. It runs, it is written out and read back as a file, and a mutation of it
// is an exact neighbour: the same run but for what the mutation changed (the faults no longer
// draw from a random stream, so moving one moves nothing else). The random streams the
// behaviours, the network and the tie-break draw from are named by the scenario's `seed`; a
// mutation may re-seed them.

#include <cstdint>
#include <string>
#include <vector>

#include "scenarios/scenario.hpp"
#include "sim/rng.hpp"
#include "sim/trace.hpp"

namespace lic::scenarios {

/// `s` as run at `seed`, with every fault that acted (was injected or skipped) in `log` written as
/// one explicit fault at each time it acted, named `NAME@k` (its k-th firing), and every fault
/// that never acted left out. A scheduled fault already explicit (`at` and no `every`) stays as
/// written. The seed is written in.
Scenario concretize(const Scenario& s, std::uint64_t seed, const EventLog& log);

/// What a mutation did, for a person: "shift crash@2 by +12ms", "drop pause@1", "reseed".
using MutationNote = std::string;

/// What mutations may use besides the schedule: the file's own faults (a new fault is one of
/// them, made explicit), its tree paths (a retarget picks a sibling or another process) and its
/// nodes.
struct MutationPalette {
  std::vector<faults::Fault> faults;  ///< the file's faults as written
  std::vector<std::string> paths;     ///< every path in the file's trees, parents first
  std::vector<Atom> nodes;            ///< the file's nodes (empty: the default node alone)
  Duration chaos{};                   ///< the chaos phase: faults act in [0, chaos)
};

MutationPalette palette_of(const Scenario& s);

/// One to four mutations of `s`, drawn from `rng`: a fault shifted in time (finely or coarsely),
/// retargeted, its window lengthened or shortened, duplicated nearby, dropped, or a fault of the
/// file added at a random time; the random streams re-seeded; or (with `other`) spliced: `s`'s
/// faults before a time and `other`'s after it. Returns what it did; `s` changes in place.
std::vector<MutationNote> mutate(Scenario& s, const Scenario* other, const MutationPalette& p, Rng& rng);

/// Whether `s` has anything to mutate: a fault, a fault of the file to add, or a random stream
/// that matters (every scenario has a seed, so this is true unless it has no fault at all and
/// the palette none either).
bool mutable_schedule(const MutationPalette& p);

}  // namespace lic::scenarios
