#pragma once
// A sweep's results file, results.jsonl: one JSON object a line (docs/scenario-format.md, "Sweep
// results"):
//   {"kind":"letitcrash_sweep","version":..,"scenario":..,"file":..,"seeds":"A..B","shard":"K/N",
//    "tie_break":"fifo","until_ns":null,"check_determinism":false,"scenario_hash":"16hex"}
//   {"seed":N,"passed":true,"trace_hash":"16hex","events":N,"virtual_time_ns":N,"failed":[..],
//    "determinism":"ok"|"mismatch"|null, "metrics":{..}, "swarm":{on,off,knobs,tie_break,buggify},
//    "faults":[{name,on,injected,skipped}], "buggify":{point:{asked,fired}}, "reached":[..], "judged":[..]}
//   (swarm only in a `--swarm` sweep, whose header says "swarm":true)
// Seed lines come in the order the seeds finished, each appended and flushed as it does, so a
// killed sweep loses no finished seed and resumes from the file. Merging shards writes the
// lines sorted by seed under the header of an unsharded sweep ("shard":"1/1"): a merged file is
// what one machine would have written, and a sweep resumes it to fill in the seeds a lost shard
// missed.

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/run/metrics.hpp"
#include "scenarios/search/sweep.hpp"

namespace lic::scenarios {

/// What a sweep is: results can be resumed or merged only among equal sweeps.
struct SweepHeader {
  std::string version;
  std::string scenario;
  std::string file;
  std::string seeds;  ///< "A..B"
  std::string shard;  ///< "K/N"
  std::string tie_break;
  std::optional<std::int64_t> until_ns;
  bool check_determinism = false;
  std::string scenario_hash;  ///< stable_hash of the scenario written back as YAML
  bool swarm = false;         ///< each seed ran its own configuration (`--swarm`)
};

/// The header of a sweep of `s` (read from `file`).
SweepHeader make_sweep_header(const Scenario& s, const std::string& file, const SeedRange& seeds, const Shard& shard,
                              TieBreak tie, const std::optional<Time>& until, bool check_determinism,
                              bool swarm = false);

/// The first way two sweeps differ ("seeds 1..100 in a, 1..200 in b"); empty when they are the
/// same sweep. The shard is compared only for resuming: merging joins different shards.
std::string header_difference(const SweepHeader& a, const std::string& a_name, const SweepHeader& b,
                              const std::string& b_name, bool compare_shard);

/// A line of the file (with its newline).
std::string header_line(const SweepHeader& h);
std::string result_line(const SeedResult& r);

/// One seed's result line read through nlohmann's DOM, as ResultsReader reads a line the fast
/// reader (search/json_line.hpp) declines: nothing when it is not a seed result. For tests.
std::optional<SeedResult> read_result_json(std::string_view text);

/// Reads a results file line by line (a sweep's file may hold millions of seeds). Only whole
/// lines count: a last line without its newline, or one that does not parse, is torn (the sweep
/// was stopped while writing it); any other line that does not parse is an error.
class ResultsReader {
 public:
  explicit ResultsReader(std::string path);

  bool exists() const { return exists_; }
  bool empty() const { return empty_; }
  const SweepHeader& header() const { return header_; }
  /// file:line: what is wrong; empty while the file reads.
  const std::string& error() const { return error_; }
  /// Where the torn last line starts, once next() has reached it.
  std::optional<std::uintmax_t> torn_at() const { return torn_at_; }
  std::size_t line() const { return line_; }  ///< the line next() read last

  /// The next seed's result; nothing at the end, at a torn last line, or at an error.
  std::optional<SeedResult> next();

 private:
  std::string path_;
  std::ifstream in_;
  bool exists_ = false;
  bool empty_ = true;
  SweepHeader header_;
  std::string error_;
  std::size_t line_ = 1;
  std::uintmax_t offset_ = 0;  // where the next line starts
  std::optional<std::uintmax_t> torn_at_;
};

/// A results file open for a sweep to append to, locked against a second sweep writing it at
/// the same time. A new (or `fresh`) file gets the header; an earlier run's file of the same
/// sweep is resumed: its seeds are read back and a torn last line is dropped.
class ResultsWriter {
 public:
  ResultsWriter() = default;
  ~ResultsWriter();
  ResultsWriter(const ResultsWriter&) = delete;
  ResultsWriter& operator=(const ResultsWriter&) = delete;

  /// Opens `path` for the sweep `want`. Returns an error (empty: open). `notes` gets what the
  /// opening did that a person should hear (a torn line dropped).
  std::string open(const std::string& path, const SweepHeader& want, const SeedRange& range, const Shard& shard,
                   bool fresh, std::vector<std::string>& notes);
  /// The seeds already done (sorted) and their results, when resuming.
  const std::vector<std::uint64_t>& done() const { return done_; }
  const std::vector<SeedResult>& resumed() const { return resumed_; }
  /// Whether the file held this sweep's header already (it is resumed, maybe with no seed).
  bool resuming() const { return resuming_; }
  /// Appends and flushes one result. Returns an error (empty: written).
  std::string append(const SeedResult& r);
  /// Closes the file. Returns an error (empty: closed).
  std::string close();

 private:
  std::string resume(ResultsReader& rf, const SweepHeader& want, const SeedRange& range, const Shard& shard,
                     std::vector<std::string>& notes);

  std::string path_;
  std::FILE* f_ = nullptr;
  std::vector<std::uint64_t> done_;
  std::vector<SeedResult> resumed_;
  bool resuming_ = false;
};

/// Shards' results files, joined: the first input's header and every seed once, sorted.
struct Merged {
  SweepHeader header;  ///< as an unsharded sweep ("1/1")
  SeedRange range;
  std::uint64_t seeds = 0;  ///< distinct seeds written
  /// The seeds of the range no input holds: their number, the number of gaps, and the first
  /// kGapsKept gaps.
  static constexpr std::size_t kGapsKept = 100;
  std::uint64_t missing_seeds = 0;
  std::uint64_t missing_gaps = 0;
  std::vector<SeedRange> missing;
  std::vector<std::string> notes;  ///< torn last lines ignored
};

struct MergeOptions {
  /// Lines held in memory before a sorted run of them goes to a temporary file (in $TMPDIR, or
  /// /tmp; unlinked at once, so nothing is left behind). Memory stays near this whatever the
  /// number of seeds; below it, nothing is spilled.
  std::size_t chunk_bytes = std::size_t{64} << 20;
};

/// Checks that `inputs` are shards of one sweep (their headers); fills out.header and out.range.
/// Returns an error naming the file, empty when they belong together.
std::string merge_headers(const std::vector<std::string>& inputs, Merged& out);

/// Joins `inputs` into `path`, written atomically: the header of an unsharded sweep, then every
/// seed once, sorted. Streams: the lines go through sorted runs (spilled past
/// options.chunk_bytes) and a k-way merge, so a merge of ten million seeds needs no more memory
/// than one of ten thousand. `each` sees every distinct seed's result once, in the order the
/// inputs hold them (not sorted): what a summary counts. Returns an error naming the file and
/// line when an input is not a shard of the same sweep, a seed is outside the range, or a seed
/// has other results in another input; empty on success (nothing is written on an error).
std::string merge_results(const std::vector<std::string>& inputs, const std::string& path, Merged& out,
                          const std::function<void(const SeedResult&)>& each = {}, const MergeOptions& options = {});

/// The summary written next to a results file: results.jsonl -> results.summary.json.
std::string summary_path(const std::string& results);
/// Writes it atomically: the sweep, its tally, and for every metric its runs, values, p50, p90,
/// p99 and max, and `coverage` (a JSON object, search/coverage.hpp) when given. Returns an error,
/// empty on success.
std::string write_summary(const std::string& path, const SweepHeader& h, std::uint64_t seeds, std::uint64_t passed,
                          std::uint64_t failed, const MetricSummary& metrics, const std::string& coverage = {});

}  // namespace lic::scenarios
