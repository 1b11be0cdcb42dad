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

/// A rare event of a run: when, and what (its system event's name, else its kind).
struct Landmark {
  Time time;
  Atom what;
  bool operator==(const Landmark&) const = default;
};

/// What a run did that a mutation of its schedule can aim at (Mallory's lesson: a fault placed
/// against what the system was doing, not at a blind time). Both lists are in time order.
struct RunMarks {
  /// Landmarks: the times of the run's rare events (kind, name and role seen at most
  /// kLandmarkRepeats times in the run, the faults' own injections left out): a restart, a
  /// timeout, a session lost, an upload given up, a signal. A fault placed just before or after
  /// one lands while the system reacts to something.
  std::vector<Landmark> landmarks;
  /// The first landmark at or after the run's first injection: from here on they are reactions
  /// (landmarks.size() when there is none, or no fault acted).
  std::size_t first_reaction = 0;
  /// Messages between nodes in flight near a fault (sent within kFlightRadius of an injection):
  /// each message's send and delivery. A cut that begins inside one catches a packet in flight.
  std::vector<std::pair<Time, Time>> flights;
  bool operator==(const RunMarks&) const = default;
};

inline constexpr int kLandmarkRepeats = 4;
inline constexpr std::size_t kMaxLandmarks = 256;
inline constexpr Duration kFlightRadius = kSecond * 2;
inline constexpr std::size_t kMaxFlights = 256;

/// The marks of a finished run's trace.
RunMarks marks_of(const EventLog& log);

/// What mutations may use besides the schedule: the file's own faults (a new fault is one of
/// them, made explicit), its tree paths (a retarget picks a sibling or another process) and its
/// nodes.
struct MutationPalette {
  std::vector<faults::Fault> faults;  ///< the file's faults as written
  std::vector<std::string> paths;     ///< every path in the file's trees, parents first
  std::vector<Atom> nodes;            ///< the file's nodes (empty: the default node alone)
  Duration chaos{};                   ///< the chaos phase: faults act in [0, chaos)
  /// The random streams a run draws from, by the keys `streams:` pins (search/reach.hpp's
  /// streams_drawn; empty: the whole seed alone is re-seeded).
  std::vector<std::string> streams;
};

MutationPalette palette_of(const Scenario& s);

/// One to four mutations of `s`, drawn from `rng`: a fault shifted in time (finely or coarsely),
/// retargeted, its window lengthened or shortened, duplicated nearby, dropped, or a fault of the
/// file added at a random time; the random streams re-seeded; or (with `other`) spliced: `s`'s
/// faults before a time and `other`'s after it; one stream of `p.streams` re-seeded, the others
/// kept. With `marks` (what `s`'s own run did): a fault,
/// or a copy of it, placed at one of the run's landmarks, or a network or node fault moved to
/// begin while a message is in flight. Returns what it did; `s` changes in place.
std::vector<MutationNote> mutate(Scenario& s, const Scenario* other, const MutationPalette& p, Rng& rng,
                                 const RunMarks* marks = nullptr);

/// Whether `s` has anything to mutate: a fault, a fault of the file to add, or a random stream
/// that matters (every scenario has a seed, so this is true unless it has no fault at all and
/// the palette none either).
bool mutable_schedule(const MutationPalette& p);

}  // namespace lic::scenarios
