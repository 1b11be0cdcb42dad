#include "tools/letitcrash/sweep.hpp"

#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "reports/atomic_file.hpp"
#include "scenarios/run/runner.hpp"
#include "scenarios/file/read.hpp"
#include "scenarios/file/write.hpp"
#include "sim/rng.hpp"
#include "tools/letitcrash/commands.hpp"

#ifndef LETITCRASH_VERSION
#define LETITCRASH_VERSION "0.0.0"
#endif

namespace lic::tools {

namespace {

using Json = nlohmann::ordered_json;
using scenarios::Scenario;

/// Failing seeds listed in a summary; the rest are counted ("and N more").
constexpr std::size_t kListed = 20;
/// Gaps listed when a merge finds seeds missing.
constexpr std::size_t kGapsListed = 10;

bool parse_u64(std::string_view text, std::uint64_t& out) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

// ---- The results file: one header line, then one line per seed ------------------------------

/// What a sweep is: results can be resumed or merged only among equal sweeps.
struct SweepHeader {
  std::string version = LETITCRASH_VERSION;
  std::string scenario;
  std::string file;
  std::string seeds;  ///< "A..B"
  std::string shard;  ///< "K/N"
  std::string tie_break;
  std::optional<std::int64_t> until_ns;
  bool check_determinism = false;
  std::string scenario_hash;  ///< stable_hash of the scenario written back as YAML
};

/// One line of the file: compact, and never throwing on text that is not UTF-8 (a path, an
/// exception's message).
std::string dump_line(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n"; }

Json header_json(const SweepHeader& h) {
  Json j;
  j["kind"] = "letitcrash_sweep";
  j["version"] = h.version;
  j["scenario"] = h.scenario;
  j["file"] = h.file;
  j["seeds"] = h.seeds;
  j["shard"] = h.shard;
  j["tie_break"] = h.tie_break;
  j["until_ns"] = h.until_ns ? Json(*h.until_ns) : Json(nullptr);
  j["check_determinism"] = h.check_determinism;
  j["scenario_hash"] = h.scenario_hash;
  return j;
}

std::optional<SweepHeader> read_header(const Json& j) {
  if (!j.is_object() || j.value("kind", "") != "letitcrash_sweep") return std::nullopt;
  for (const char* k : {"scenario", "file", "seeds", "shard", "tie_break", "scenario_hash"})
    if (!j.contains(k) || !j[k].is_string()) return std::nullopt;
  if (!j.contains("check_determinism") || !j["check_determinism"].is_boolean()) return std::nullopt;
  SweepHeader h;
  h.version = j.value("version", "");
  h.scenario = j["scenario"].get<std::string>();
  h.file = j["file"].get<std::string>();
  h.seeds = j["seeds"].get<std::string>();
  h.shard = j["shard"].get<std::string>();
  h.tie_break = j["tie_break"].get<std::string>();
  h.check_determinism = j["check_determinism"].get<bool>();
  h.scenario_hash = j["scenario_hash"].get<std::string>();
  if (j.contains("until_ns") && j["until_ns"].is_number_integer()) h.until_ns = j["until_ns"].get<std::int64_t>();
  return h;
}

/// The first way two sweeps differ ("seeds 1..100 in a, 1..200 in b"); empty when they are the
/// same sweep. The shard is compared only for resuming: merging joins different shards.
std::string header_difference(const SweepHeader& a, const std::string& a_name, const SweepHeader& b,
                              const std::string& b_name, bool compare_shard) {
  const auto until = [](const SweepHeader& h) {
    return h.until_ns ? format_duration(Duration{*h.until_ns}) : std::string("none");
  };
  const auto differ = [&](const char* what, const std::string& x, const std::string& y) {
    return fmt::format("{} {} in {}, {} in {}", what, x, a_name, y, b_name);
  };
  if (a.scenario_hash != b.scenario_hash)
    return differ("the scenario differs: scenario_hash", a.scenario_hash, b.scenario_hash);
  if (a.seeds != b.seeds) return differ("seeds", a.seeds, b.seeds);
  if (compare_shard && a.shard != b.shard) return differ("shard", a.shard, b.shard);
  if (a.tie_break != b.tie_break) return differ("tie-break", a.tie_break, b.tie_break);
  if (a.until_ns != b.until_ns) return differ("--until", until(a), until(b));
  if (a.check_determinism != b.check_determinism)
    return differ("--check-determinism", a.check_determinism ? "on" : "off", b.check_determinism ? "on" : "off");
  return {};
}

/// One seed's outcome, as one line of the results file.
struct SeedResult {
  std::uint64_t seed = 0;
  bool passed = false;
  std::string trace_hash;
  std::uint64_t events = 0;
  std::int64_t virtual_time_ns = 0;
  std::vector<std::string> failed;  ///< failing checks; "determinism: ..." on a mismatch
  std::optional<std::string> determinism;  ///< "ok" or "mismatch"; none: not checked
  bool operator==(const SeedResult&) const = default;
};

std::string result_line(const SeedResult& r) {
  Json j;
  j["seed"] = r.seed;
  j["passed"] = r.passed;
  j["trace_hash"] = r.trace_hash;
  j["events"] = r.events;
  j["virtual_time_ns"] = r.virtual_time_ns;
  j["failed"] = r.failed;
  j["determinism"] = r.determinism ? Json(*r.determinism) : Json(nullptr);
  return dump_line(j);
}

std::optional<SeedResult> read_result(const Json& j) {
  if (!j.is_object()) return std::nullopt;
  const auto has = [&](const char* k, bool (Json::*is)() const noexcept) { return j.contains(k) && (j[k].*is)(); };
  if (!has("seed", &Json::is_number_unsigned) || !has("passed", &Json::is_boolean) ||
      !has("trace_hash", &Json::is_string) || !has("events", &Json::is_number_unsigned) ||
      !has("virtual_time_ns", &Json::is_number_integer) || !has("failed", &Json::is_array) ||
      !j.contains("determinism") || !(j["determinism"].is_null() || j["determinism"].is_string()))
    return std::nullopt;
  SeedResult r;
  r.seed = j["seed"].get<std::uint64_t>();
  r.passed = j["passed"].get<bool>();
  r.trace_hash = j["trace_hash"].get<std::string>();
  r.events = j["events"].get<std::uint64_t>();
  r.virtual_time_ns = j["virtual_time_ns"].get<std::int64_t>();
  for (const Json& f : j["failed"]) {
    if (!f.is_string()) return std::nullopt;
    r.failed.push_back(f.get<std::string>());
  }
  if (j["determinism"].is_string()) r.determinism = j["determinism"].get<std::string>();
  return r;
}

/// Reads a results file line by line (a sweep's file may hold millions of seeds). Only whole
/// lines count: a last line without its newline, or one that does not parse, is torn (the sweep
/// was stopped while writing it); any other line that does not parse is an error.
class ResultsReader {
 public:
  explicit ResultsReader(std::string path) : path_(std::move(path)), in_(path_, std::ios::binary) {
    if (!in_) return;
    exists_ = true;
    std::string line;
    if (!std::getline(in_, line)) return;  // empty: a sweep can start it
    empty_ = false;
    const Json j = Json::parse(line, nullptr, false);
    const std::optional<SweepHeader> h = in_.eof() || j.is_discarded() ? std::nullopt : read_header(j);
    if (!h) error_ = fmt::format("{}:1: not a sweep results file (its first line is the header `sweep --out` writes)", path_);
    else header_ = *h;
    offset_ = line.size() + 1;
  }

  bool exists() const { return exists_; }
  bool empty() const { return empty_; }
  const SweepHeader& header() const { return header_; }
  /// file:line: what is wrong; empty while the file reads.
  const std::string& error() const { return error_; }
  /// Where the torn last line starts, once next() has reached it.
  std::optional<std::uintmax_t> torn_at() const { return torn_at_; }
  std::size_t line() const { return line_; }  ///< the line next() read last

  /// The next seed's result; nothing at the end, at a torn last line, or at an error.
  std::optional<SeedResult> next() {
    std::string text;
    if (!error_.empty() || empty_ || !std::getline(in_, text)) return std::nullopt;
    ++line_;
    const bool whole = !in_.eof();
    const Json j = whole ? Json::parse(text, nullptr, false) : Json();
    std::optional<SeedResult> r = whole && !j.is_discarded() ? read_result(j) : std::nullopt;
    if (!r && (!whole || in_.peek() == std::char_traits<char>::eof())) torn_at_ = offset_;
    else if (!r) error_ = fmt::format("{}:{}: not a seed result line", path_, line_);
    offset_ += text.size() + 1;
    return r;
  }

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

// ---- Tallies and the summary ---------------------------------------------------------------

struct Tally {
  std::uint64_t seeds = 0;
  std::uint64_t passed = 0;
  std::uint64_t failed = 0;
  std::uint64_t mismatches = 0;
  std::map<std::uint64_t, SeedResult> listed;  ///< the kListed smallest failing seeds

  void add(const SeedResult& r) {
    ++seeds;
    if (r.passed) ++passed;
    else ++failed;
    if (r.determinism == "mismatch") ++mismatches;
    if (r.passed) return;
    listed.emplace(r.seed, r);
    if (listed.size() > kListed) listed.erase(std::prev(listed.end()));
  }
};

/// What a summary says besides the tally.
struct SummaryContext {
  std::string file;  ///< the scenario file, for the reproduce commands
  TieBreak tie = TieBreak::fifo;
  std::optional<Time> until;
  bool determinism_checked = false;
  std::uint64_t resumed = 0;
  std::optional<double> wall_s;  ///< sweep only: the seeds run now over their wall time
  std::uint64_t ran = 0;
  unsigned jobs = 0;
  std::string out;  ///< where every result is
};

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

void print_summary(const Tally& t, const SummaryContext& c) {
  fmt::print("  seeds:       {}{}\n", t.seeds,
             c.resumed > 0 ? fmt::format(" ({} resumed from {}, {} run now)", c.resumed, c.out, c.ran) : "");
  fmt::print("  passed:      {}\n", t.passed);
  fmt::print("  failed:      {}\n", t.failed);
  if (c.determinism_checked) fmt::print("  determinism: {} mismatch{}\n", t.mismatches, t.mismatches == 1 ? "" : "es");
  else fmt::print("  determinism: not checked (--check-determinism runs each seed twice)\n");
  if (c.wall_s && c.ran == 0) {
    fmt::print("  wall time:   none: no seed was left to run\n");
  } else if (c.wall_s) {
    const double rate = *c.wall_s > 0 ? static_cast<double>(c.ran) / *c.wall_s : 0.0;
    fmt::print("  wall time:   {:.2f} s for {} seeds on {} job{}: {:.1f} seeds/s\n", *c.wall_s, c.ran, c.jobs,
               c.jobs == 1 ? "" : "s", rate);
  }
  if (t.failed == 0) return;
  fmt::print("failing seeds{}, each with the command that reproduces it:\n",
             t.failed > t.listed.size() ? fmt::format(" (the first {} of {})", t.listed.size(), t.failed) : "");
  for (const auto& [seed, r] : t.listed)
    fmt::print("  {}  # {}\n", reproduce_command(c.file, seed, c.tie, c.until), join(r.failed));
  if (t.failed > t.listed.size())
    fmt::print("  and {} more{}\n", t.failed - t.listed.size(), c.out.empty() ? "" : " (every one is in " + c.out + ")");
}

std::string verdict(const Tally& t, bool missing) {
  if (t.failed > 0) return fmt::format("FAIL ({} of {} seeds failed)", t.failed, t.seeds);
  return missing ? "INCOMPLETE (no seed failed, but some are missing)" : "PASS (every seed passed)";
}

// ---- Progress on stderr --------------------------------------------------------------------

std::string format_eta(double s) {
  const auto total = static_cast<std::uint64_t>(s + 0.5);
  if (total < 60) return fmt::format("{}s", total);
  if (total < 3600) return fmt::format("{}m{:02}s", total / 60, total % 60);
  return fmt::format("{}h{:02}m", total / 3600, total % 3600 / 60);
}

/// A one-line bar redrawn in place on a terminal (at most ten times a second), plain lines at
/// every tenth otherwise (a CI log). Called under the sweep's lock.
class Progress {
 public:
  Progress(std::uint64_t total, std::uint64_t resumed, bool tty)
      : total_(total), resumed_(resumed), tty_(tty), start_(Clock::now()), tenth_(share(resumed, 10)) {}

  void update(std::uint64_t ran, std::uint64_t failing) {
    const std::uint64_t done = resumed_ + ran;
    const bool end = done == total_;
    const Clock::time_point now = Clock::now();
    if (tty_ && !end && now - drawn_ < std::chrono::milliseconds(100)) return;
    if (!tty_ && !end && share(done, 10) == tenth_) return;
    drawn_ = now;
    tenth_ = share(done, 10);
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double rate = elapsed > 0 ? static_cast<double>(ran) / elapsed : 0.0;
    const std::string eta = rate > 0 ? format_eta(static_cast<double>(total_ - done) / rate) : "?";
    if (!tty_) {
      std::fputs(fmt::format("sweep: {}/{} seeds ({}%), {:.0f} seeds/s, {} failing, eta {}\n", done, total_,
                             share(done, 100), rate, failing, eta).c_str(), stderr);
      return;
    }
    const std::uint64_t filled = share(done, 20);
    std::string line = fmt::format("\r[{}{}] {}/{} seeds  {:>3}%  {:.0f} seeds/s  {} failing  eta {}",
                                   std::string(filled, '#'), std::string(20 - filled, '.'), done, total_,
                                   share(done, 100), rate, failing, eta);
    const std::size_t width = line.size();
    if (width < width_) line += std::string(width_ - width, ' ');  // wipe the longer line before
    width_ = width;
    if (end) line += "\n";
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
  }

 private:
  using Clock = std::chrono::steady_clock;

  /// done/total in `parts`, rounded down (in floating point: done * parts may not fit 64 bits).
  std::uint64_t share(std::uint64_t done, std::uint64_t parts) const {
    if (total_ == 0) return parts;
    return std::min(parts, static_cast<std::uint64_t>(static_cast<double>(done) / static_cast<double>(total_) *
                                                      static_cast<double>(parts)));
  }

  std::uint64_t total_;
  std::uint64_t resumed_;
  bool tty_;
  Clock::time_point start_;
  Clock::time_point drawn_{};
  std::uint64_t tenth_;  // the last tenth printed (plain lines)
  std::size_t width_ = 0;
};

// ---- Running the seeds ---------------------------------------------------------------------

SeedResult summarise(const scenarios::RunResult& r) {
  SeedResult s;
  s.seed = r.seed;
  s.passed = r.passed;
  s.trace_hash = scenarios::hash_hex(r.trace_hash);
  s.events = r.events;
  s.virtual_time_ns = r.end.ns;
  for (const scenarios::CheckResult& c : r.checks)
    if (!c.passed) s.failed.push_back(c.name);
  return s;
}

/// Runs one seed (twice when `twice`, comparing). The trace is kept, since the checks read it,
/// and freed with the RunResult before the second run.
SeedResult run_seed(const Scenario& s, std::uint64_t seed, TieBreak tie, const std::optional<Time>& until, bool twice) {
  scenarios::RunOptions o;
  o.seed = seed;
  o.tie_break = tie;
  o.until = until;
  try {
    SeedResult first = summarise(scenarios::run(s, o));
    if (!twice) return first;
    const SeedResult again = summarise(scenarios::run(s, o));
    first.determinism = "ok";
    if (again.trace_hash != first.trace_hash) {
      first.failed.push_back(fmt::format("determinism: hash {} then {}", first.trace_hash, again.trace_hash));
    } else if (again.failed != first.failed) {
      first.failed.push_back(fmt::format("determinism: failed [{}] then [{}]", join(first.failed), join(again.failed)));
    } else {
      return first;
    }
    first.determinism = "mismatch";
    first.passed = false;
    return first;
  } catch (const std::exception& e) {
    SeedResult r;
    r.seed = seed;
    r.failed.push_back(std::string("error: ") + e.what());
    if (twice) r.determinism = "ok";
    return r;
  }
}

/// The seeds of one shard, and the threads that run the ones not yet done.
class SweepRun {
 public:
  SweepRun(const Scenario& s, const SweepArgs& a, TieBreak tie, const std::vector<std::uint64_t>& done,
           std::FILE* out, Tally& tally, Progress& progress)
      : s_(s), a_(a), tie_(tie), done_(done), out_(out), tally_(tally), progress_(progress) {}

  /// Runs every pending seed on `jobs` threads; returns the seeds run.
  std::uint64_t run(unsigned jobs, std::uint64_t positions) {
    positions_ = positions;
    {
      std::vector<std::jthread> workers;
      for (unsigned i = 0; i < jobs; ++i) workers.emplace_back([this] { work(); });
    }
    return ran_;
  }

  const std::string& write_error() const { return write_error_; }

 private:
  void work() {
    for (;;) {
      const std::uint64_t i = next_.fetch_add(1);
      if (i >= positions_) return;
      const std::uint64_t seed = a_.seeds.first + (a_.shard.index - 1) + i * a_.shard.count;
      if (std::binary_search(done_.begin(), done_.end(), seed)) continue;
      const SeedResult r = run_seed(s_, seed, tie_, a_.until, a_.check_determinism);
      const std::string line = result_line(r);
      std::lock_guard lock(mutex_);
      // Appended and flushed one by one: a killed sweep keeps every seed it finished.
      if (out_ != nullptr && write_error_.empty() &&
          (std::fwrite(line.data(), 1, line.size(), out_) != line.size() || std::fflush(out_) != 0)) {
        write_error_ = fmt::format("cannot write {}: {}", a_.out, std::strerror(errno));
        next_.store(positions_);  // stop: results that cannot be kept are not worth computing
      }
      tally_.add(r);
      ++ran_;
      progress_.update(ran_, tally_.failed);
    }
  }

  const Scenario& s_;
  const SweepArgs& a_;
  TieBreak tie_;
  const std::vector<std::uint64_t>& done_;  // sorted
  std::FILE* out_;
  Tally& tally_;
  Progress& progress_;
  std::uint64_t positions_ = 0;
  std::atomic<std::uint64_t> next_{0};
  std::mutex mutex_;
  std::uint64_t ran_ = 0;
  std::string write_error_;
};

std::string range_text(const SeedRange& r) { return fmt::format("{}..{}", r.first, r.last); }
std::string shard_text(const Shard& s) { return fmt::format("{}/{}", s.index, s.count); }

/// How many seeds of the range a shard holds.
std::uint64_t shard_size(const SeedRange& r, const Shard& s) {
  const std::uint64_t span = r.last - r.first;  // seeds - 1
  const std::uint64_t first = s.index - 1;
  return first > span ? 0 : (span - first) / s.count + 1;
}

bool in_shard(std::uint64_t seed, const SeedRange& r, const Shard& s) {
  return seed >= r.first && seed <= r.last && (seed - r.first) % s.count == s.index - 1;
}

/// Reads back the seeds an earlier run of the same sweep left in --out (into `done`, sorted, and
/// `tally`) and drops a torn last line. Returns an error, empty when the sweep can go on.
std::string resume(const SweepArgs& a, const SweepHeader& want, ResultsReader& rf, std::FILE* f,
                   std::vector<std::uint64_t>& done, Tally& tally) {
  if (const std::string d = header_difference(rf.header(), a.out, want, "this sweep", true); !d.empty())
    return fmt::format("{}:1: holds the results of another sweep ({})", a.out, d);
  std::vector<std::pair<std::uint64_t, std::size_t>> lines;  // seed, line: to name duplicates
  while (const std::optional<SeedResult> r = rf.next()) {
    if (!in_shard(r->seed, a.seeds, a.shard))
      return fmt::format("{}:{}: seed {} is not in seeds {} shard {}", a.out, rf.line(), r->seed, want.seeds, want.shard);
    lines.emplace_back(r->seed, rf.line());
    tally.add(*r);
  }
  if (!rf.error().empty()) return rf.error();
  std::sort(lines.begin(), lines.end());
  for (std::size_t i = 1; i < lines.size(); ++i)
    if (lines[i].first == lines[i - 1].first)  // two sweeps wrote the file at once, before the lock
      return fmt::format("{}:{}: seed {} is there twice (line {} too)", a.out, lines[i].second, lines[i].first,
                         lines[i - 1].second);
  if (rf.torn_at()) {
    if (ftruncate(fileno(f), static_cast<off_t>(*rf.torn_at())) != 0)
      return fmt::format("cannot truncate {}: {}", a.out, std::strerror(errno));
    fmt::print("{}:{}: dropped a torn last line (a result cut short when the sweep stopped)\n", a.out, rf.line());
  }
  for (const auto& [seed, line] : lines) done.push_back(seed);
  fmt::print("resuming: {} of {} seeds already done ({})\n", done.size(), shard_size(a.seeds, a.shard), a.out);
  return {};
}

/// Opens --out to append results, locked against a second sweep writing it at the same time:
/// a new (or --fresh) file gets the header, an earlier run's file is resumed. Returns nothing
/// after printing why it cannot.
std::FILE* open_results(const SweepArgs& a, const SweepHeader& want, std::vector<std::uint64_t>& done, Tally& tally) {
  const std::filesystem::path p(a.out);
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  std::FILE* f = std::fopen(a.out.c_str(), "ab");  // appends go to the end, also after a truncation
  if (f == nullptr) {
    std::fprintf(stderr, "cannot write %s: %s\n", a.out.c_str(), std::strerror(errno));
    return nullptr;
  }
  std::string error;
  if (flock(fileno(f), LOCK_EX | LOCK_NB) != 0) {
    error = fmt::format("{}: another sweep is writing it", a.out);
  } else if (a.fresh && ftruncate(fileno(f), 0) != 0) {
    error = fmt::format("cannot truncate {}: {}", a.out, std::strerror(errno));
  } else if (ResultsReader rf(a.out); !rf.empty()) {
    error = !rf.error().empty() ? rf.error() : resume(a, want, rf, f, done, tally);
    if (!error.empty()) error += "; pass --fresh to start over, or choose another --out";
  } else if (const std::string header = dump_line(header_json(want));
             std::fwrite(header.data(), 1, header.size(), f) != header.size() || std::fflush(f) != 0) {
    error = fmt::format("cannot write {}: {}", a.out, std::strerror(errno));
  }
  if (error.empty()) return f;
  std::fprintf(stderr, "%s\n", error.c_str());
  std::fclose(f);
  return nullptr;
}

}  // namespace

std::string parse_seed_range(std::string_view text, SeedRange& out) {
  const std::size_t dots = text.find("..");
  if (dots == std::string_view::npos)
    return fmt::format("'{}' is not a range of seeds: write A..B, e.g. 1..1000", text);
  SeedRange r;
  if (!parse_u64(text.substr(0, dots), r.first) || !parse_u64(text.substr(dots + 2), r.last))
    return fmt::format("'{}' is not a range of seeds: A and B in A..B are whole numbers from 0 to {}", text,
                       UINT64_MAX);
  if (r.first > r.last) return fmt::format("'{}' is an empty range: the first seed is after the last", text);
  if (r.first == 0 && r.last == UINT64_MAX) return fmt::format("'{}' holds 2^64 seeds, one more than a sweep counts", text);
  out = r;
  return {};
}

std::string parse_shard(std::string_view text, Shard& out) {
  const std::size_t slash = text.find('/');
  Shard s;
  if (slash == std::string_view::npos || !parse_u64(text.substr(0, slash), s.index) ||
      !parse_u64(text.substr(slash + 1), s.count))
    return fmt::format("'{}' is not a shard: write K/N, shard K of N counting from 1, e.g. 2/8", text);
  if (s.count == 0 || s.index == 0 || s.index > s.count)
    return fmt::format("'{}' is not a shard: K/N needs 1 <= K <= N (shards count from 1)", text);
  out = s;
  return {};
}

namespace {

SweepHeader make_header(const Scenario& s, const SweepArgs& a, TieBreak tie) {
  SweepHeader h;
  h.scenario = s.name;
  h.file = a.file;
  h.seeds = range_text(a.seeds);
  h.shard = shard_text(a.shard);
  h.tie_break = std::string(to_string(tie));
  if (a.until) h.until_ns = a.until->ns;
  h.check_determinism = a.check_determinism;
  h.scenario_hash = scenarios::hash_hex(stable_hash(scenarios::to_yaml(s)));
  return h;
}

/// The summary's view of a sweep's header (a merge has no arguments, only its inputs' header).
SummaryContext summary_context(const SweepHeader& h, const std::string& out) {
  SummaryContext c;
  c.file = h.file;
  parse_tie_break(h.tie_break, c.tie);
  if (h.until_ns) c.until = Time{*h.until_ns};
  c.determinism_checked = h.check_determinism;
  c.out = out;
  return c;
}

}  // namespace

int sweep_command(const SweepArgs& a) {
  const std::optional<Scenario> s = load_or_report(a.file);
  if (!s) return 2;
  const TieBreak tie = a.tie_break.value_or(s->tie_break);
  const SweepHeader h = make_header(*s, a, tie);
  Tally tally;
  std::vector<std::uint64_t> done;  // sorted
  std::FILE* out = a.out.empty() ? nullptr : open_results(a, h, done, tally);
  if (!a.out.empty() && out == nullptr) return 2;
  const std::uint64_t size = shard_size(a.seeds, a.shard);
  const std::uint64_t pending = size - done.size();
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  const auto jobs = static_cast<unsigned>(std::clamp<std::uint64_t>(pending, 1, a.jobs == 0 ? cores : a.jobs));
  fmt::print("sweep: {} ({}), seeds {} shard {}: {} seed{}{}, tie-break {}, {} job{}{}\n", s->name, a.file, h.seeds,
             h.shard, size, size == 1 ? "" : "s", done.empty() ? "" : fmt::format(" ({} to run)", pending), h.tie_break, jobs,
             jobs == 1 ? "" : "s", a.check_determinism ? ", each seed run twice" : "");
  std::fflush(stdout);

  Progress progress(size, done.size(), isatty(fileno(stderr)) != 0);
  SweepRun sweep(*s, a, tie, done, out, tally, progress);
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t ran = pending == 0 ? 0 : sweep.run(jobs, size);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string error = sweep.write_error();
  if (out != nullptr && std::fclose(out) != 0 && error.empty())
    error = fmt::format("cannot write {}: {}", a.out, std::strerror(errno));
  if (!error.empty()) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 2;
  }
  SummaryContext c = summary_context(h, a.out);
  c.resumed = done.size();
  c.wall_s = wall_s;
  c.ran = ran;
  c.jobs = jobs;
  print_summary(tally, c);
  if (a.out.empty()) fmt::print("results were not kept: --out results.jsonl keeps them (and lets a stopped sweep resume)\n");
  else fmt::print("results: {}\n", a.out);
  fmt::print("verdict: {}\n", verdict(tally, false));
  return tally.failed == 0 ? 0 : 1;
}

namespace {

/// The seeds of `r` that `present` lacks, as closed ranges.
std::vector<SeedRange> gaps(const SeedRange& r, const std::map<std::uint64_t, SeedResult>& present) {
  std::vector<SeedRange> out;
  std::uint64_t next = r.first;  // the first seed not yet accounted for
  bool done = false;
  for (const auto& [seed, res] : present) {
    if (seed > next) out.push_back({next, seed - 1});
    if (seed == r.last) done = true;
    else next = seed + 1;
  }
  if (!done) out.push_back({next, r.last});
  return out;
}

/// The sweep that resumes `out`, a merged file of the sweep `h`.
std::string resume_command(const SweepHeader& h, const std::string& out) {
  const auto word = [](const std::string& w) {  // quoted for a POSIX shell when it needs it
    if (w.find_first_of(" \t\n'\"$`\\;&|<>()*?[]{}~!#") == std::string::npos) return w;
    std::string q = "'";
    for (char ch : w) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return q + "'";
  };
  std::string cmd = fmt::format("letitcrash sweep {} --seeds {} --tie-break {}", word(h.file), h.seeds, h.tie_break);
  if (h.until_ns) cmd += " --until " + format_duration(Duration{*h.until_ns});
  if (h.check_determinism) cmd += " --check-determinism";
  return cmd + " --out " + word(out);
}

/// Prints the seeds of the range that no input holds; returns whether there are any.
bool print_missing(const SweepHeader& h, const SeedRange& range, const std::map<std::uint64_t, SeedResult>& seeds,
                   const std::string& out) {
  const std::vector<SeedRange> missing = gaps(range, seeds);
  if (missing.empty()) return false;
  std::uint64_t count = 0;
  std::string listed;
  for (std::size_t i = 0; i < missing.size(); ++i) {
    count += missing[i].last - missing[i].first + 1;
    const SeedRange& g = missing[i];
    if (i < kGapsListed) listed += (i == 0 ? "" : ", ") + (g.first == g.last ? std::to_string(g.first) : range_text(g));
  }
  if (missing.size() > kGapsListed) listed += fmt::format(" and {} more gaps", missing.size() - kGapsListed);
  fmt::print("  missing:     {} seed{} of {}: {}\n", count, count == 1 ? "" : "s", h.seeds, listed);
  fmt::print("  resume the merged file to run just those: {}\n", resume_command(h, out));
  return true;
}

/// The shards' results, joined: the first input's header and every seed once. Returns an
/// error (naming the file) when an input is not a shard of the same sweep or a seed clashes.
std::string gather(const std::vector<std::string>& inputs, SweepHeader& first, SeedRange& range,
                   std::map<std::uint64_t, SeedResult>& seeds) {
  std::map<std::uint64_t, std::string> origin;  // which input each seed came from
  for (const std::string& in : inputs) {
    ResultsReader rf(in);
    if (!rf.exists()) return "cannot read " + in;
    if (rf.empty()) return in + ": empty, not a sweep results file";
    if (!rf.error().empty()) return rf.error();
    if (&in == &inputs.front()) {
      first = rf.header();
      if (const std::string e = parse_seed_range(first.seeds, range); !e.empty()) return in + ":1: " + e;
    } else if (const std::string d = header_difference(rf.header(), in, first, inputs.front(), false); !d.empty()) {
      return fmt::format("{} is not a shard of the same sweep as {} ({})", in, inputs.front(), d);
    }
    while (const std::optional<SeedResult> r = rf.next()) {
      if (r->seed < range.first || r->seed > range.last)
        return fmt::format("{}:{}: seed {} is outside the sweep's seeds {}", in, rf.line(), r->seed, first.seeds);
      const auto [it, added] = seeds.emplace(r->seed, *r);
      if (added) origin[r->seed] = in;
      else if (!(it->second == *r))
        return fmt::format("{}:{}: seed {} has other results (trace_hash {}) than in {} (trace_hash {})", in, rf.line(),
                           r->seed, r->trace_hash, origin[r->seed], it->second.trace_hash);
    }
    if (!rf.error().empty()) return rf.error();
    if (rf.torn_at()) fmt::print(stderr, "merge: {}:{}: ignoring a torn last line\n", in, rf.line());
  }
  return {};
}

}  // namespace

int merge_command(const std::string& out, const std::vector<std::string>& inputs) {
  SweepHeader first;
  SeedRange range;
  std::map<std::uint64_t, SeedResult> seeds;
  std::string error = inputs.empty() ? "give the shards' results files to join" : gather(inputs, first, range, seeds);
  Tally tally;
  if (error.empty()) {
    // The merged file reads as one unsharded sweep: "1/1" (see sweep.hpp).
    SweepHeader merged = first;
    merged.shard = "1/1";
    std::string text = dump_line(header_json(merged));
    for (const auto& [seed, r] : seeds) {
      text += result_line(r);
      tally.add(r);
    }
    error = reports::write_file_atomically(out, text);
  }
  if (!error.empty()) {
    std::fprintf(stderr, "merge: %s\n", error.c_str());
    return 2;
  }
  fmt::print("merge: {} ({}), seeds {}: {} file{} into {}\n", first.scenario, first.file, first.seeds, inputs.size(),
             inputs.size() == 1 ? "" : "s", out);
  print_summary(tally, summary_context(first, out));
  const bool missing = print_missing(first, range, seeds, out);
  fmt::print("verdict: {}\n", verdict(tally, missing));
  return tally.failed == 0 && !missing ? 0 : 1;
}

}  // namespace lic::tools
