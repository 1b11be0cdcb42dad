#pragma once
// `letitcrash sweep` and `letitcrash merge`: one scenario over many seeds on every core, split
// into shards for many machines (a CI matrix entry, a Kubernetes Indexed Job, a Slurm array task
// each), with results as JSON lines that a killed sweep resumes and `merge` joins.
//
// results.jsonl, one JSON object a line:
//   {"kind":"letitcrash_sweep","version":..,"scenario":..,"file":..,"seeds":"A..B","shard":"K/N",
//    "tie_break":"fifo","until_ns":null,"check_determinism":false,"scenario_hash":"16hex"}
//   {"seed":N,"passed":true,"trace_hash":"16hex","events":N,"virtual_time_ns":N,"failed":[..],
//    "determinism":"ok"|"mismatch"|null}
// Seed lines come in the order the seeds finished, each appended and flushed as it does, so a
// killed sweep loses no finished seed. `failed` names the checks that failed; a determinism
// mismatch adds "determinism: hash X then Y". `merge` writes the lines sorted by seed under the
// header of an unsharded sweep ("shard":"1/1"): a merged file is what one machine would have
// written, and `sweep --out merged.jsonl` resumes it to fill in the seeds a lost shard missed.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/event_queue.hpp"
#include "sim/time.hpp"

namespace lic::tools {

/// The seeds A..B, both included.
struct SeedRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
};

/// Parses "A..B" with A <= B. Returns the reason it is not one, empty when it is.
std::string parse_seed_range(std::string_view text, SeedRange& out);

/// Shard `index` of `count` (1-based): the seeds whose position in the range, seed - A, is
/// index - 1 modulo count.
struct Shard {
  std::uint64_t index = 1;
  std::uint64_t count = 1;
};

/// Parses "K/N" with 1 <= K <= N. Returns the reason it is not one, empty when it is.
std::string parse_shard(std::string_view text, Shard& out);

struct SweepArgs {
  std::string file;
  SeedRange seeds;
  Shard shard;
  unsigned jobs = 0;               ///< worker threads; 0: one per core
  bool check_determinism = false;  ///< run each seed twice and compare
  std::optional<TieBreak> tie_break;  ///< default: the file's
  std::optional<Time> until;
  /// The results file; empty: results are only summarised, and a killed sweep cannot resume.
  std::string out;
  bool fresh = false;  ///< start --out over even when it holds another sweep's results
};

/// Exit code: 0 every seed passed, 1 a seed failed or was not deterministic, 2 bad input.
int sweep_command(const SweepArgs& a);

/// Joins shards' results files into `out`. Exit code: 0 every seed of the range is there and
/// passed, 1 a seed failed or is missing, 2 the inputs do not belong together.
int merge_command(const std::string& out, const std::vector<std::string>& inputs);

}  // namespace lic::tools
