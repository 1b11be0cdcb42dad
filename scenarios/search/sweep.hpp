#pragma once
// One scenario over many seeds, on every core: what `letitcrash sweep` runs and a user's own
// test can call (docs/library.md). Seeds come in ranges A..B and split into shards K/N, so a
// sweep outgrows one machine as independent jobs whose results `merge` joins
// (search/results_file.hpp keeps them).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reports/run_report.hpp"
#include "scenarios/run/runner.hpp"
#include "scenarios/search/swarm.hpp"

namespace lic::scenarios {

/// The seeds A..B, both included.
struct SeedRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
};

/// Parses one seed: a decimal whole number from 0 to 2^64-1, nothing else (no sign, no
/// spaces, no hex). Returns the reason it is not one, empty when it is.
std::string parse_seed(std::string_view text, std::uint64_t& out);

/// Parses "A..B" with A <= B. Returns the reason it is not one, empty when it is.
std::string parse_seed_range(std::string_view text, SeedRange& out);
std::string to_string(const SeedRange& r);

/// Shard `index` of `count` (1-based): the seeds whose position in the range, seed - A, is
/// index - 1 modulo count.
struct Shard {
  std::uint64_t index = 1;
  std::uint64_t count = 1;
};

/// Parses "K/N" with 1 <= K <= N. Returns the reason it is not one, empty when it is.
std::string parse_shard(std::string_view text, Shard& out);

/// `--shard` as written: "K/N", or "auto" / "auto/N" (resolve_shard reads the runner's
/// environment). Returns the reason it is none of these, empty when it is one.
std::string check_shard_spec(std::string_view text);

/// What a job array's runner says about this job: the value of an environment variable, or
/// nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(const char*)>;

/// Resolves `--shard` into K/N. "K/N" is itself. "auto" and "auto/N" take the shard from the
/// first runner whose variables are set, in this order (shards count from 1):
///   Kubernetes Indexed Job  K = JOB_COMPLETION_INDEX + 1; N from auto/N (the Job has no count)
///   GitLab parallel jobs    K = CI_NODE_INDEX, N = CI_NODE_TOTAL
///   Slurm job array         K = SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN + 1, N = SLURM_ARRAY_TASK_COUNT
/// A count given both ways must agree. `source` names the variables used. Returns the reason it
/// cannot resolve (no runner's variables set, a value that is not a number, ...), empty when it did.
std::string resolve_shard(std::string_view text, const EnvLookup& env, Shard& out, std::string& source);
std::string to_string(const Shard& s);
/// How many seeds of the range a shard holds.
std::uint64_t shard_size(const SeedRange& r, const Shard& s);
bool in_shard(std::uint64_t seed, const SeedRange& r, const Shard& s);
/// The i-th seed of the shard (0-based).
std::uint64_t shard_seed(const SeedRange& r, const Shard& s, std::uint64_t i);

/// One fault of the file in one run: whether it was on (a swarm run turns some off) and how
/// often it acted.
struct FaultUse {
  std::string name;
  bool on = true;
  std::uint64_t injected = 0;
  std::uint64_t skipped = 0;
  bool operator==(const FaultUse&) const = default;
};

/// One buggify point in one run: how often it was asked and how often it fired.
struct PointUse {
  std::uint64_t asked = 0;
  std::uint64_t fired = 0;
  bool operator==(const PointUse&) const = default;
};

/// One seed's outcome, as a results line keeps it.
struct SeedResult {
  std::uint64_t seed = 0;
  bool passed = false;
  std::string trace_hash;  ///< 16 hex digits
  std::uint64_t events = 0;
  std::int64_t virtual_time_ns = 0;
  std::vector<std::string> failed;  ///< the failing checks' names; "determinism: ..." on a mismatch
  std::optional<std::string> determinism;  ///< "ok" or "mismatch"; none: not checked
  reports::Metrics metrics;                ///< the run's metrics
  std::optional<SwarmChoice> swarm;        ///< what a swarm run's seed chose
  // What the run exercised, for `sweep --coverage` (search/coverage.hpp).
  std::vector<FaultUse> faults;            ///< each fault of the file, in file order
  std::map<std::string, PointUse> buggify;  ///< each buggify point asked
  std::vector<std::string> reached;        ///< the supervision outcomes reached (sorted)
  std::vector<std::string> judged;         ///< the checks judged, by name
  /// Each failing check's witness (where its verdict was decided), by the check's name.
  std::map<std::string, reports::Witness> witnesses;
  /// The line as read from a results file (empty for a fresh result): a merge writes it back
  /// as it was, fields it does not know included.
  std::string line;
  /// Equal results, whatever their lines look like.
  bool operator==(const SeedResult& o) const {
    return seed == o.seed && passed == o.passed && trace_hash == o.trace_hash && events == o.events &&
           virtual_time_ns == o.virtual_time_ns && failed == o.failed && determinism == o.determinism &&
           metrics == o.metrics && swarm == o.swarm && faults == o.faults && buggify == o.buggify &&
           reached == o.reached && judged == o.judged && witnesses == o.witnesses;
  }
};

struct SweepOptions {
  std::optional<TieBreak> tie_break{};  ///< default: the scenario's
  std::optional<Time> until{};
  bool check_determinism = false;       ///< run each seed twice and compare the traces
  unsigned jobs = 0;                    ///< threads; 0: one per core
  const Registry* registry = nullptr;   ///< null: Registry::builtin()
  Budgets budgets{};                     ///< each run's
  /// Each seed runs its own configuration of the file (search/swarm.hpp).
  bool swarm = false;
  /// Results reach `each` in seed order, and the sweep stops at the first that fails: which
  /// seed that is does not depend on the threads.
  bool stop_at_first_failure = false;
  /// Each run's RunOptions::on_loop (bench's split of a seed's time; called on the run's thread).
  std::function<void(bool)> on_loop{};
};

/// One seed (twice with check_determinism). An exception from the run is a failed seed
/// ("error: ..."), not the end of the sweep.
SeedResult run_seed(const Scenario& s, std::uint64_t seed, const SweepOptions& o);

/// Runs the seeds of `shard` of `range` that `done` (sorted) does not hold, on o.jobs threads.
/// `each` gets every result as it finishes, one at a time (under a lock), in the order they
/// finish; it returns false to stop the sweep (the seeds running finish first). Returns how many
/// seeds ran.
std::uint64_t run_seeds(const Scenario& s, const SeedRange& range, const Shard& shard, const SweepOptions& o,
                        const std::vector<std::uint64_t>& done, const std::function<bool(const SeedResult&)>& each);

/// Every seed of `range`, results in seed order.
std::vector<SeedResult> run_seeds(const Scenario& s, const SeedRange& range, const SweepOptions& o = {});

/// The threads a sweep of `pending` seeds uses for `jobs` (0: one per core).
unsigned sweep_jobs(unsigned jobs, std::uint64_t pending);

}  // namespace lic::scenarios
