#pragma once
// Guided search over fault schedules (issue 31, docs/explore.md): `letitcrash explore` and
// `bench bugs` call it; so can a user's own test. It starts from plain seeds, turns each run into
// an explicit schedule (search/schedule.hpp), and keeps a corpus of the schedules that reached a
// new slot of behaviour coverage (search/signature.hpp) or came closer than any run before to
// failing a check (the checks' margins). Each next run is a mutation of a corpus entry picked by
// energy: the smallest margin, or the rarest coverage. It stops at the first failure, or with
// keep_going collects the distinct ones (failure identity: checks/table.hpp's FailureId).
//
// Determinism: runs are made in generations of a fixed size; every candidate of a generation is
// drawn from the corpus as it stood when the generation began, with a random stream named by
// the run's index, and the results are folded back in index order. So the same seed makes the
// same runs, in the same order, with the same outcome, on any number of threads. The library
// never reads a clock: a caller with a wall-time budget passes `stop`.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "scenarios/checks/table.hpp"
#include "scenarios/registry.hpp"
#include "scenarios/run/runner.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/search/schedule.hpp"
#include "scenarios/search/signature.hpp"

namespace lic::scenarios {

/// Candidates drawn at once from one state of the corpus.
inline constexpr std::size_t kExploreGeneration = 4;

/// One schedule kept in the corpus, with what its run measured.
struct CorpusEntry {
  Scenario schedule;                         ///< explicit faults, its seed written in
  std::vector<std::optional<double>> margins;  ///< per check, in effective_checks order
  std::optional<double> least;               ///< the smallest of them
  Signature signature;
  RunMarks marks;                            ///< what its run did, for mutations to aim at
  std::size_t run = 0;                       ///< the run that found it (1-based)
  std::size_t picked = 0;                    ///< times it was mutated
  std::string how;                           ///< "seed 123" or the mutations that made it
};

/// A failure found: the run, the check, its identity, and the schedule that fails.
struct ExploreFailure {
  std::size_t run = 0;   ///< 1-based
  bool plain = false;    ///< a plain seed of the file (not a mutated schedule)
  std::uint64_t seed = 0;
  /// What failed, every fault an explicit event, the seed written in. For a plain seed this is
  /// the run's faults written out: it runs as the seed ran but for the order of events at one
  /// instant, so it may (rarely) pass where the file at the seed fails; run the file at `seed`
  /// then.
  Scenario schedule;
  CheckDecl check;       ///< the check that failed
  CheckResult result;
  FailureId id;
  std::string how;
};

/// One run, for the page and the progress line.
struct ExploreStep {
  std::size_t run = 0;     ///< 1-based
  bool plain = false;
  bool kept = false;       ///< it joined the corpus
  bool failed = false;
  std::size_t coverage = 0;  ///< slots reached by every run so far
  std::vector<std::optional<double>> best;  ///< each check's smallest margin so far
};

struct ExploreProgress {
  std::size_t runs = 0;
  std::size_t max_runs = 0;
  std::size_t corpus = 0;
  std::size_t coverage = 0;
  std::size_t failures = 0;
  const std::vector<std::string>* checks = nullptr;     ///< titles
  const std::vector<std::optional<double>>* best = nullptr;  ///< each check's smallest margin so far
};

struct ExploreOptions {
  std::uint64_t seed = 1;        ///< the search's own seed: which plain seeds, which mutations
  std::size_t runs = 1000;       ///< runs at most
  unsigned jobs = 0;             ///< threads; 0: one per core
  const Registry* registry = nullptr;  ///< null: Registry::builtin()
  Budgets budgets{};             ///< each run's; a run that blows one counts as passing
  bool keep_going = false;       ///< collect every distinct failure instead of stopping at the first
  /// Asked before each generation; true ends the search with what it has. Empty: never.
  std::function<bool()> stop{};
  std::function<void(const ExploreProgress&)> progress{};
  /// Whether a failure found is the one sought; one that is not is recorded (with keep_going's
  /// rule, once per identity) and the search goes on. Empty: every failure is. (`bench bugs`
  /// accepts only the failure a bug file's fix removes: a neighbouring failure is not its bug.)
  std::function<bool(const ExploreFailure&)> accept{};
  /// The plain seeds, in the order the runs take them: the k-th plain run (from 0) runs seed
  /// plain_seed(k). Empty: each is drawn from the search's seed, 1 to 10^9. (`sweep --guided`
  /// gives its shard's seeds, in order: its plain runs are the first seeds of its range.)
  std::function<std::uint64_t(std::size_t)> plain_seed{};
};

struct ExploreResult {
  std::size_t runs = 0;
  std::optional<std::size_t> runs_to_first_failure;  ///< the first failure `accept` took
  std::vector<ExploreFailure> failures;  ///< distinct by identity, in the order found
  std::vector<CorpusEntry> corpus;
  std::size_t coverage = 0;              ///< slots reached
  std::vector<std::uint32_t> slots;      ///< which: the slots reached, ascending (`merge` unions shards')
  std::size_t plain_runs = 0;            ///< runs of a plain seed of the file (the rest ran mutated schedules)
  std::vector<std::string> checks;       ///< the checks' titles, in effective_checks order
  std::vector<bool> has_margin;          ///< per check: it reported a margin in some run (else: coverage only)
  std::vector<std::optional<double>> best;  ///< per check, the smallest margin seen
  std::vector<ExploreStep> steps;        ///< one a run
  /// The file has no fault, and its seed changes nothing (its first runs had the same trace):
  /// it stopped there. (A file with no fault whose seed matters runs plain seeds only.)
  bool nothing_to_mutate = false;
  bool stopped = false;                  ///< `stop` ended it
};

/// Explores `s` (validated, with at least one check).
ExploreResult explore(const Scenario& s, const ExploreOptions& o = {});

}  // namespace lic::scenarios
