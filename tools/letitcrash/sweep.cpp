#include "tools/letitcrash/sweep.hpp"
#include "tools/letitcrash/explore.hpp"
#include "scenarios/file/read.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <tuple>
#include <type_traits>

#include "scenarios/run/report.hpp"
#include "scenarios/file/fix.hpp"
#include "scenarios/file/validate.hpp"
#include "scenarios/file/write.hpp"
#include "sim/rng.hpp"
#include "reports/atomic_file.hpp"
#include "reports/escape.hpp"
#include "reports/sweep_page.hpp"
#include "scenarios/search/coverage.hpp"
#include "scenarios/search/results_file.hpp"
#include "scenarios/search/vary.hpp"
#include "tools/letitcrash/shrink.hpp"

namespace lic::tools {

namespace {

/// `text` as one printable line: control characters, a newline too, written as \xNN.
std::string one_line_printable(std::string_view text) {
  std::string out;
  for (const char c : scenarios::printable(text)) out += c == '\n' ? std::string("\\x0A") : std::string(1, c);
  return out;
}

/// A string argument made one printable line; any other passes as it is.
template <typename T>
auto clean(const T& v) {
  if constexpr (std::is_convertible_v<const T&, std::string_view>) return one_line_printable(v);
  else return v;
}

/// Prints as fmt::print does, every string argument made one printable line: what a sweep prints
/// comes partly from results files (check and metric names, witnesses, the scenario's name and
/// file), which `merge` and a resumed sweep read back and must never echo raw to a terminal
/// (issue 34: a results line could retitle the window, clear it, or print a verdict of its own).
template <typename... A>
void say(std::string_view f, const A&... a) {
  const std::string text = fmt::vformat(f, fmt::make_format_args(clean(a)...));
  std::fwrite(text.data(), 1, text.size(), stdout);
}

/// Prints a text of several lines made elsewhere (the coverage table), each line printable.
void say_lines(std::string_view text) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t nl = text.find('\n', at);
    say("{}\n", text.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at));
    at = nl == std::string_view::npos ? text.size() : nl + 1;
  }
}

using scenarios::Scenario;
using scenarios::SeedRange;
using scenarios::SeedResult;
using scenarios::SweepHeader;

/// Failing seeds listed in a summary; the rest are counted ("and N more").
constexpr std::size_t kListed = 20;
/// Failing seeds kept with their checks and witnesses for the pages (index.html, junit.xml).
constexpr std::size_t kKept = 500;
/// Gaps listed when a merge finds seeds missing.
constexpr std::size_t kGapsListed = 10;
/// Seeds a strip keeps an outcome for (two bytes each); a larger sweep draws no strip.
constexpr std::uint64_t kStripPositions = 50'000'000;
/// Distinct sets of failing checks the strip names; other failures say only FAILED.
constexpr std::size_t kFailureKinds = 65'000;

// ---- Tallies and the summary ---------------------------------------------------------------

/// What a failing seed failed, and where each check's verdict was decided.
struct Failure {
  std::vector<std::string> failed;
  std::map<std::string, reports::Witness> witnesses;
};

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

/// Each seed's outcome, two bytes a seed, for the pages' strip (reports::SeedOutcomes).
class OutcomeStrip {
 public:
  /// Keeps the seeds first, first + stride, ...; without it nothing is kept.
  void track(std::uint64_t first, std::uint64_t stride) {
    tracking_ = true;
    o_.first = first;
    o_.stride = stride;
  }
  void add(const scenarios::SeedResult& r) {
    if (!tracking_ || r.seed < o_.first || (r.seed - o_.first) % o_.stride != 0) return;
    const std::uint64_t at = (r.seed - o_.first) / o_.stride;
    if (at >= kStripPositions) {  // too many to draw a seed each: no strip
      tracking_ = false;
      o_.codes.clear();
      o_.codes.shrink_to_fit();
      return;
    }
    if (at >= o_.codes.size()) o_.codes.resize(at + 1, reports::SeedOutcomes::kMissing);
    o_.codes[at] = r.passed ? reports::SeedOutcomes::kPassed : kind_code(join(r.failed));
  }
  const reports::SeedOutcomes& outcomes() const { return o_; }

 private:
  std::uint16_t kind_code(const std::string& kind) {
    auto it = codes_.find(kind);
    if (it == codes_.end()) {
      if (o_.failure_kinds.size() >= kFailureKinds) return 0xFFFF;  // past failure_kinds: checks not named
      it = codes_.emplace(kind, static_cast<std::uint16_t>(o_.failure_kinds.size() + 2)).first;
      o_.failure_kinds.push_back(kind);
    }
    return it->second;
  }
  bool tracking_ = false;
  reports::SeedOutcomes o_;
  std::map<std::string, std::uint16_t> codes_;
};

struct Tally {
  std::uint64_t seeds = 0;
  std::uint64_t passed = 0;
  std::uint64_t failed = 0;
  std::uint64_t mismatches = 0;
  std::map<std::uint64_t, Failure> listed;  ///< the kKept smallest failing seeds
  scenarios::MetricSummary metrics;
  std::optional<scenarios::Coverage> coverage;  ///< what the seeds exercised (a sweep of a file)
  OutcomeStrip strip;  ///< each seed's outcome (when tracked)
  /// The seeds whose supervisors came closest to their restart intensity: {peak, seed, metric},
  /// highest first (ties: the smaller seed), at most kPeaks.
  std::vector<std::tuple<double, std::uint64_t, std::string>> peaks;

  void add(const scenarios::SeedResult& r) {
    ++seeds;
    metrics.add(r.metrics);
    if (coverage) coverage->add(r);
    strip.add(r);
    note_peak(r);
    if (r.passed) ++passed;
    else ++failed;
    if (r.determinism == "mismatch") ++mismatches;
    if (r.passed) return;
    if (listed.size() == kKept && r.seed > std::prev(listed.end())->first) return;
    listed.emplace(r.seed, Failure{r.failed, r.witnesses});
    if (listed.size() > kKept) listed.erase(std::prev(listed.end()));
  }

 private:
  static constexpr std::size_t kPeaks = 5;
  void note_peak(const scenarios::SeedResult& r) {
    std::optional<std::tuple<double, std::uint64_t, std::string>> best;
    for (const auto& [name, v] : r.metrics) {
      if (name.rfind("intensity_peak(", 0) != 0 || v.values.empty()) continue;
      if (!best || v.values.front() > std::get<0>(*best)) best = std::tuple{v.values.front(), r.seed, name};
    }
    if (!best || std::get<0>(*best) <= 0) return;
    peaks.push_back(*best);
    std::sort(peaks.begin(), peaks.end(), [](const auto& a, const auto& b) {
      return std::get<0>(a) != std::get<0>(b) ? std::get<0>(a) > std::get<0>(b) : std::get<1>(a) < std::get<1>(b);
    });
    if (peaks.size() > kPeaks) peaks.pop_back();
  }
};

/// What a summary says besides the tally.
struct SummaryContext {
  std::string program;  ///< the executable, for the reproduce commands
  std::string file;  ///< the scenario file, for the reproduce commands
  TieBreak tie = TieBreak::fifo;
  std::optional<Time> until;
  bool determinism_checked = false;
  std::uint64_t resumed = 0;
  std::optional<double> wall_s;  ///< sweep only: the seeds run now over their wall time
  std::uint64_t ran = 0;
  unsigned jobs = 0;
  std::string out;  ///< where every result is
  std::vector<std::string> metrics;  ///< --metrics: those to print (empty: all)
  bool swarm = false;                ///< reproduce commands say --swarm
  bool fixed = false;                ///< reproduce commands say --fixed
  std::optional<TieBreak> explicit_tie;  ///< a swarm sweep's tie-break given on the command line
};

std::string reproduce(const SummaryContext& c, std::uint64_t seed) {
  return (c.swarm ? scenarios::swarm_reproduce_command(c.program, c.file, seed, c.explicit_tie, c.until)
                  : scenarios::reproduce_command(c.program, c.file, seed, c.tie, c.until)) +
         (c.fixed ? " --fixed" : "");
}

/// Whether --metrics lets `name` through.
bool shown(const std::vector<std::string>& only, const std::string& name) {
  return only.empty() || std::find(only.begin(), only.end(), name) != only.end();
}

void print_metrics(const scenarios::MetricSummary& m, const std::vector<std::string>& only) {
  if (m.by_name().empty()) return;
  std::size_t w = 22;
  for (const auto& [name, d] : m.by_name()) w = std::max(w, name.size());
  say("  metrics:     {:<{}} {:>6} {:>10} {:>10} {:>10} {:>10}\n", "", w, "runs", "p50", "p90", "p99", "max");
  for (const auto& [name, d] : m.by_name()) {
    if (!shown(only, name)) continue;
    if (d.empty()) {  // a list that stayed empty in every run
      say("               {:<{}} {:>6} {:>10} {:>10} {:>10} {:>10}\n", name, w, d.runs, "-", "-", "-", "-");
      continue;
    }
    say("               {:<{}} {:>6} {:>10.4g} {:>10.4g} {:>10.4g} {:>10.4g}\n", name, w, d.runs, d.quantile(0.5),
               d.quantile(0.9), d.quantile(0.99), d.max());
  }
}

/// Writes the summary to `path`; prints why it cannot (the results are kept).
void write_summary_file(const std::string& path, const SweepHeader& h, const Tally& t) {
  const std::string error =
      scenarios::write_summary(path, h, t.seeds, t.passed, t.failed, t.metrics, t.coverage ? t.coverage->json() : std::string());
  if (!error.empty()) std::fprintf(stderr, "%s\n", scenarios::printable(error).c_str());
  else say("summary: {}\n", path);
}

void print_summary(const Tally& t, const SummaryContext& c) {
  say("  seeds:       {}{}\n", t.seeds,
             c.resumed > 0 ? fmt::format(" ({} resumed from {}, {} run now)", c.resumed, c.out, c.ran) : "");
  say("  passed:      {}\n", t.passed);
  say("  failed:      {}\n", t.failed);
  if (c.determinism_checked) say("  determinism: {} mismatch{}\n", t.mismatches, t.mismatches == 1 ? "" : "es");
  else say("  determinism: not checked (--check-determinism runs each seed twice)\n");
  if (c.wall_s && c.ran == 0) {
    say("  wall time:   none: no seed was left to run\n");
  } else if (c.wall_s) {
    const double rate = *c.wall_s > 0 ? static_cast<double>(c.ran) / *c.wall_s : 0.0;
    say("  wall time:   {:.2f} s for {} seeds on {} job{}: {:.1f} seeds/s\n", *c.wall_s, c.ran, c.jobs,
               c.jobs == 1 ? "" : "s", rate);
  }
  print_metrics(t.metrics, c.metrics);
  if (!t.peaks.empty()) {
    say("  closest to giving up (the seeds to look at):");
    for (const auto& [peak, seed, name] : t.peaks) say(" seed {} {:.0f}% ({});", seed, peak * 100, name.substr(15, name.size() - 16));
    say("\n");
  }
  if (t.failed == 0) return;
  const std::uint64_t printed = std::min<std::uint64_t>(kListed, t.listed.size());
  say("failing seeds{}, each with the command that reproduces it:\n",
             t.failed > printed ? fmt::format(" (the first {} of {})", printed, t.failed) : "");
  std::size_t n = 0;
  for (const auto& [seed, r] : t.listed) {
    if (n++ == printed) break;
    say("  {}  # {}\n", reproduce(c, seed), join(r.failed));
    if (!r.failed.empty())
      if (const auto w = r.witnesses.find(r.failed.front()); w != r.witnesses.end())
        say("      {}: {}\n", w->first, reports::format_witness(w->second));
  }
  if (t.failed > printed)
    say("  and {} more{}\n", t.failed - printed, c.out.empty() ? "" : " (every one is in " + c.out + ")");
}

std::string verdict(const Tally& t, bool missing) {
  if (t.failed > 0) return fmt::format("FAIL ({} of {} seeds failed)", t.failed, t.seeds);
  return missing ? "INCOMPLETE (no seed failed, but some are missing)" : "PASS (every seed passed)";
}

// ---- The pages: summary.json, index.html, junit.xml, coverage.html --------------------------

/// Where `--out` puts a sweep's files. A path ending in .jsonl is the results file, with the
/// pages beside it (<stem>.summary.json, <stem>.index.html, ...); any other path is a folder
/// holding results.jsonl and the pages.
struct SweepFiles {
  std::string folder;  ///< empty: the .jsonl form
  std::string results, summary, index, junit, coverage;
};

bool is_jsonl(const std::string& out) { return out.size() > 6 && out.ends_with(".jsonl"); }

SweepFiles sweep_files(const std::string& out) {
  SweepFiles f;
  if (out.empty()) return f;
  if (is_jsonl(out)) {
    f.results = out;
    f.summary = scenarios::summary_path(out);  // <stem>.summary.json: the pages are <stem>.*
    const std::string stem = f.summary.substr(0, f.summary.size() - std::string_view(".summary.json").size());
    f.index = stem + ".index.html";
    f.junit = stem + ".junit.xml";
    f.coverage = stem + ".coverage.html";
    return f;
  }
  f.folder = out;
  const std::filesystem::path dir(out);
  f.results = (dir / "results.jsonl").string();
  f.summary = (dir / "summary.json").string();
  f.index = (dir / "index.html").string();
  f.junit = (dir / "junit.xml").string();
  f.coverage = (dir / "coverage.html").string();
  return f;
}

/// Creates the folder of the folder form (and its parents). Returns an error, empty when it is there.
std::string make_folder(const SweepFiles& f) {
  if (f.folder.empty()) return {};
  std::error_code ec;
  if (std::filesystem::exists(f.folder, ec) && !std::filesystem::is_directory(f.folder, ec))
    return f.folder + ": --out is not a folder (a results file's name ends in .jsonl)";
  std::filesystem::create_directories(f.folder, ec);
  return ec ? f.folder + ": cannot create the folder: " + ec.message() : std::string();
}

std::string base_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

/// The pages' view of a sweep (coverage.html only when the tally has the coverage).
reports::SweepReport sweep_report(const SweepHeader& h, const Tally& t, const SummaryContext& c, const SweepFiles& f) {
  reports::SweepReport r{h.scenario, h.file, h.seeds, h.shard, h.tie_break, h.swarm, t.seeds, t.passed, t.failed,
                         t.strip.outcomes(), {}, {}, {}, {}};
  for (const auto& [seed, failure] : t.listed) {
    reports::SweepFailure x{seed, reproduce(c, seed), failure.failed, {}};
    for (const std::string& check : failure.failed)
      if (const auto w = failure.witnesses.find(check); w != failure.witnesses.end()) x.witnesses.emplace_back(check, w->second);
    r.failing.push_back(std::move(x));
  }
  for (const auto& [name, d] : t.metrics.by_name()) {
    const bool any = !d.empty();
    r.metrics.push_back({name, d.runs, d.weighted(), d.count(), any ? d.quantile(0.5) : 0, any ? d.quantile(0.9) : 0,
                         any ? d.quantile(0.99) : 0, any ? d.max() : 0, d.quantile_error()});
  }
  if (t.coverage) {
    reports::SweepCoverage cov{t.coverage->seeds(), {}, {}};
    for (const auto& x : t.coverage->faults()) cov.faults.push_back({x.name, x.on, x.acted, x.injected});
    for (const auto& x : t.coverage->checks()) cov.checks.push_back({x.name, x.passed, x.failed, x.not_judged});
    r.coverage = std::move(cov);
  }
  r.links = {base_name(f.results), base_name(f.summary), base_name(f.junit), t.coverage ? base_name(f.coverage) : ""};
  return r;
}

/// Writes summary.json, coverage.html (a sweep of a file), index.html and junit.xml; prints
/// where they went, or why one could not be written (the results are kept).
void write_sweep_pages(const SweepFiles& f, const SweepHeader& h, const Tally& t, const SummaryContext& c) {
  if (f.results.empty()) return;
  write_summary_file(f.summary, h, t);
  std::string error;
  if (t.coverage) error = reports::write_file_atomically(f.coverage, t.coverage->html(h.scenario));
  const reports::SweepReport report = sweep_report(h, t, c, f);
  if (error.empty()) error = reports::write_file_atomically(f.index, reports::sweep_index_html(report));
  if (error.empty()) error = reports::write_file_atomically(f.junit, reports::sweep_junit_xml(report));
  if (!error.empty()) std::fprintf(stderr, "%s\n", scenarios::printable(error).c_str());
  else if (t.coverage) say("pages: {} (coverage: {}, junit: {})\n", f.index, f.coverage, f.junit);
  else say("pages: {} (junit: {})\n", f.index, f.junit);
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

/// The summary's view of a sweep's header (a merge has no arguments, only its inputs' header).
SummaryContext summary_context(const Invocation& cli, const SweepHeader& h, const std::string& out) {
  SummaryContext c;
  c.program = cli.program;
  c.file = h.file;
  c.swarm = h.swarm;
  if (parse_tie_break(h.tie_break, c.tie) && h.swarm) c.explicit_tie = c.tie;  // "swarm": each seed's own
  if (h.until_ns) c.until = Time{*h.until_ns};
  c.determinism_checked = h.check_determinism;
  c.out = out;
  return c;
}

/// Opens --out (resuming it) and tallies what it already holds; prints why it cannot.
bool open_results(const SweepArgs& a, const SweepHeader& h, scenarios::ResultsWriter& w, Tally& tally) {
  std::vector<std::string> notes;
  const std::string error = w.open(a.out, h, a.seeds, a.shard, a.fresh, notes);
  for (const std::string& n : notes) say("{}\n", n);
  if (!error.empty()) {
    std::fprintf(stderr, "%s\n", scenarios::printable(error).c_str());
    return false;
  }
  for (const SeedResult& r : w.resumed()) tally.add(r);
  if (w.resuming())
    say("resuming: {} of {} seeds already done ({})\n", w.done().size(), scenarios::shard_size(a.seeds, a.shard), a.out);
  return true;
}

void print_start(const Scenario& s, const SweepArgs& a, const SweepHeader& h, std::uint64_t size, std::uint64_t done,
                 unsigned jobs) {
  const std::uint64_t pending = size - done;
  say("sweep: {} ({}), seeds {} shard {}: {} seed{}{}, tie-break {}, {} job{}{}\n", s.name, a.file, h.seeds,
             h.shard, size, size == 1 ? "" : "s", done == 0 ? "" : fmt::format(" ({} to run)", pending), h.tie_break, jobs,
             jobs == 1 ? "" : "s", a.check_determinism ? ", each seed run twice" : "");
  std::fflush(stdout);
}

}  // namespace

namespace {

/// One value of a --vary walk: the seeds run with the argument at `value`.
struct VaryRow {
  std::string value;
  Tally tally;
};

void print_vary(const std::vector<VaryRow>& rows, const scenarios::Vary& v, const std::vector<std::string>& only) {
  std::vector<std::string> names;
  for (const VaryRow& r : rows)
    for (const auto& [name, d] : r.tally.metrics.by_name())
      if (shown(only, name) && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  std::string head = fmt::format("  {:<14} {:>7} {:>7}", v.arg, "passed", "failed");
  for (const std::string& n : names) head += fmt::format("  {:>10} {:>10}", n + " p50", "max");
  say("{}\n", head);
  const VaryRow* last_good = nullptr;
  for (const VaryRow& r : rows) {
    std::string line = fmt::format("  {:<14} {:>7} {:>7}", r.value, r.tally.passed, r.tally.failed);
    for (const std::string& n : names) {
      const auto it = r.tally.metrics.by_name().find(n);
      if (it == r.tally.metrics.by_name().end() || it->second.empty()) line += fmt::format("  {:>10} {:>10}", "-", "-");
      else line += fmt::format("  {:>10.4g} {:>10.4g}", it->second.quantile(0.5), it->second.max());
    }
    say("{}\n", line);
    if (r.tally.failed == 0 && (last_good == nullptr || last_good == &r - 1)) last_good = &r;
  }
  if (last_good == nullptr) say("every value failed some seed, from the first ({})\n", rows.front().value);
  else if (last_good == &rows.back()) say("every seed passed at every value, up to {}\n", last_good->value);
  else say("the largest value from {} up at which every seed passed: {} (the next, {}, fails)\n", rows.front().value,
                  last_good->value, (last_good + 1)->value);
}

int vary_sweep(const Invocation& cli, const SweepArgs& a, const Scenario& base) {
  if (!a.out.empty() || a.shard.count != 1) {
    std::fprintf(stderr, "sweep: --vary runs every value itself: not with --out or --shard\n");
    return 2;
  }
  scenarios::Vary v;
  std::vector<std::string> values;
  std::string error = scenarios::parse_vary(a.vary, v);
  if (error.empty()) error = scenarios::vary_values(v, *cli.registry, a.steps, values);
  Scenario probe = base;
  if (error.empty() && scenarios::set_arg(probe, v, values.front()) == 0)
    error = "--vary: the file does not use behaviour '" + v.behaviour + "'";
  if (!error.empty()) {
    std::fprintf(stderr, "%s\n", scenarios::printable(error).c_str());
    return 2;
  }
  say("sweep: {} ({}), seeds {}, walking {}:{} over {}..{} in {} values\n", base.name, a.file,
             scenarios::to_string(a.seeds), v.behaviour, v.arg, v.from, v.to, values.size());
  std::vector<VaryRow> rows;
  for (const std::string& value : values) {
    Scenario s = base;
    scenarios::set_arg(s, v, value);
    for (const scenarios::Diagnostic& d : scenarios::validate(s, *cli.registry)) {
      std::fprintf(stderr, "--vary %s=%s: %s\n", scenarios::printable(v.arg).c_str(), scenarios::printable(value).c_str(), scenarios::printable(d.message).c_str());
      return 2;
    }
    scenarios::SweepOptions o{a.tie_break, a.until, a.check_determinism, a.jobs, cli.registry};
    VaryRow row{value, {}};
    for (const SeedResult& r : scenarios::run_seeds(s, a.seeds, o)) row.tally.add(r);
    rows.push_back(std::move(row));
  }
  print_vary(rows, v, a.metrics);
  const bool all = std::all_of(rows.begin(), rows.end(), [](const VaryRow& r) { return r.tally.failed == 0; });
  say("verdict: {}\n", all ? "PASS (every seed at every value)" : "FAIL (some values fail some seeds)");
  return all ? 0 : 1;
}

}  // namespace

namespace {

/// What a sweep of the file is: its header (swarm: the tie-break is each seed's own unless given).
SweepHeader sweep_header(const Scenario& s, const SweepArgs& a) {
  const TieBreak tie = a.tie_break.value_or(s.tie_break);
  SweepHeader h = scenarios::make_sweep_header(s, a.file, a.seeds, a.shard, tie, a.until, a.check_determinism, a.swarm);
  if (a.swarm && !a.tie_break) h.tie_break = "swarm";
  return h;
}

/// `--shrink K`: the first K failing seeds, each shrunk to a file beside the results (or in the
/// current directory): `<file stem>.seed<N>.shrunk.yaml`. Returns 2 when one could not be
/// written, else 0.
int shrink_failures(const Invocation& cli, const SweepArgs& a, const Tally& t) {
  std::size_t n = 0;
  for (const auto& [seed, r] : t.listed) {
    if (n++ == a.shrink) break;
    ShrinkArgs sa;
    sa.file = a.file;
    sa.seed = seed;
    sa.tie_break = a.tie_break;
    sa.swarm = a.swarm;
    sa.budgets = a.budgets;
    const std::string stem = default_shrunk_path(a.file);
    const std::string dir = a.out.empty() || a.out.find('/') == std::string::npos ? std::string() : a.out.substr(0, a.out.find_last_of('/') + 1);
    sa.out = dir + stem.substr(0, stem.size() - 12) + fmt::format(".seed{}.shrunk.yaml", seed);
    say("shrinking seed {} ({})\n", seed, join(r.failed));
    if (shrink_command(cli, sa) == 2) return 2;
  }
  return 0;
}

/// Runs the seeds not done yet, keeping each result and drawing the progress bar. Returns the
/// seeds run, or nothing when a result could not be kept (the error printed).
std::optional<std::uint64_t> run_pending(const Scenario& s, const SweepArgs& a, const scenarios::SweepOptions& o,
                                         scenarios::ResultsWriter& results, Tally& tally) {
  const std::uint64_t size = scenarios::shard_size(a.seeds, a.shard);
  const std::vector<std::uint64_t>& done = results.done();
  Progress progress(size, done.size(), isatty(fileno(stderr)) != 0);
  std::string error;
  std::uint64_t ran = 0;
  if (size > done.size()) {
    scenarios::run_seeds(s, a.seeds, a.shard, o, done, [&](const SeedResult& r) {
      if (!a.out.empty() && error.empty()) error = results.append(r);
      tally.add(r);
      progress.update(++ran, tally.failed);
      return error.empty();  // results that cannot be kept are not worth computing
    });
  }
  if (const std::string e = results.close(); error.empty()) error = e;
  if (!error.empty()) {
    std::fprintf(stderr, "%s\n", scenarios::printable(error).c_str());
    return std::nullopt;
  }
  if (a.stop_at_first_failure && tally.failed > 0)
    say("stopped at the first failing seed, {}: every seed before it passed\n", tally.listed.begin()->first);
  return ran;
}

}  // namespace

namespace {

/// `sweep --guided`: the explorer over the shard's seeds (tools/letitcrash/explore.cpp).
int guided_sweep(const Invocation& cli, const SweepArgs& a) {
  std::vector<std::string> refused;
  if (!a.vary.empty()) refused.emplace_back("--vary");
  if (a.swarm) refused.emplace_back("--swarm");
  if (a.check_determinism) refused.emplace_back("--check-determinism");
  if (a.tie_break) refused.emplace_back("--tie-break");
  if (a.until) refused.emplace_back("--until");
  if (a.coverage) refused.emplace_back("--coverage");
  if (a.shrink > 0) refused.emplace_back("--shrink");
  if (!a.metrics.empty()) refused.emplace_back("--metrics");
  if (!refused.empty()) {
    std::fprintf(stderr,
                 "sweep: --guided does not take %s: a guided sweep mutates fault schedules, stops at its first failure and shrinks it "
                 "(docs/explore.md)\n",
                 fmt::format("{}", fmt::join(refused, ", ")).c_str());
    return 2;
  }
  if (a.out.ends_with(".jsonl")) {
    std::fprintf(stderr, "sweep: --guided --out %s: a guided sweep writes a folder (explore.json, index.html, corpus/, reproducer.yaml), "
                 "not a results file\n", scenarios::printable(a.out).c_str());
    return 2;
  }
  ExploreArgs e;
  e.file = a.file;
  e.jobs = a.jobs;
  e.out = a.out;
  e.fresh = a.fresh;
  e.budgets = a.budgets;
  e.fixed = a.fixed;
  e.sweep = GuidedSweep{a.seeds, a.shard};
  return explore_command(cli, e);
}

}  // namespace

int sweep_command(const Invocation& cli, const SweepArgs& given) {
  if (given.guided) return guided_sweep(cli, given);
  const std::optional<Scenario> s = load_or_report(given.file, *cli.registry, given.fixed);
  if (!s) return 2;
  if (!given.vary.empty()) return vary_sweep(cli, given, *s);
  const SweepFiles files = sweep_files(given.out);
  if (const std::string e = make_folder(files); !e.empty()) {
    std::fprintf(stderr, "%s\n", scenarios::printable(e).c_str());
    return 2;
  }
  SweepArgs a = given;
  a.out = files.results;  // from here on --out is the results file (a folder's results.jsonl)
  const SweepHeader h = sweep_header(*s, a);
  Tally tally;
  if (a.coverage || !a.out.empty()) tally.coverage.emplace(*s, *cli.registry);
  tally.strip.track(a.seeds.first + (a.shard.index - 1), a.shard.count);
  scenarios::ResultsWriter results;
  if (!a.out.empty() && !open_results(a, h, results, tally)) return 2;
  const std::uint64_t size = scenarios::shard_size(a.seeds, a.shard);
  const std::size_t done = results.done().size();
  const unsigned jobs = scenarios::sweep_jobs(a.jobs, size - done);
  print_start(*s, a, h, size, done, jobs);
  if (a.swarm) say("swarm: each seed picks its faults, their ranged knobs, the tie-break and buggify points\n");

  scenarios::SweepOptions o{a.swarm ? a.tie_break : a.tie_break.value_or(s->tie_break), a.until, a.check_determinism, jobs, cli.registry};
  o.swarm = a.swarm;
  o.stop_at_first_failure = a.stop_at_first_failure;
  o.budgets = a.budgets;
  const auto start = std::chrono::steady_clock::now();
  const std::optional<std::uint64_t> ran = run_pending(*s, a, o, results, tally);
  if (!ran) return 2;
  SummaryContext c = summary_context(cli, h, a.out);
  c.fixed = a.fixed;
  c.resumed = done;
  c.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  c.ran = *ran;
  c.jobs = jobs;
  c.metrics = a.metrics;
  print_summary(tally, c);
  if (a.coverage && tally.coverage) say_lines(tally.coverage->text());
  if (a.out.empty()) say("results were not kept: --out results.jsonl keeps them (and lets a stopped sweep resume)\n");
  else say("results: {}\n", a.out);
  write_sweep_pages(files, h, tally, c);
  if (a.shrink > 0 && tally.failed > 0 && shrink_failures(cli, a, tally) != 0) return 2;
  say("verdict: {}\n", verdict(tally, false));
  return tally.failed == 0 ? 0 : 1;
}

namespace {

/// The sweep that resumes `out`, a merged file of the sweep `h`.
std::string resume_command(const Invocation& cli, const SweepHeader& h, const std::string& out) {
  std::string cmd = fmt::format("{} sweep {} --seeds {} --tie-break {}", scenarios::shell_word(cli.program),
                                scenarios::shell_word(h.file), h.seeds, h.tie_break);
  if (h.until_ns) cmd += " --until " + format_duration(Duration{*h.until_ns});
  if (h.check_determinism) cmd += " --check-determinism";
  return cmd + " --out " + scenarios::shell_word(out);
}

/// Prints the seeds of the range that no input holds; returns whether there are any.
bool print_missing(const Invocation& cli, const scenarios::Merged& m, const std::string& out) {
  if (m.missing_seeds == 0) return false;
  std::string listed;
  for (std::size_t i = 0; i < m.missing.size() && i < kGapsListed; ++i) {
    const SeedRange& g = m.missing[i];
    listed += (i == 0 ? "" : ", ") + (g.first == g.last ? std::to_string(g.first) : scenarios::to_string(g));
  }
  if (m.missing_gaps > kGapsListed) listed += fmt::format(" and {} more gaps", m.missing_gaps - kGapsListed);
  say("  missing:     {} seed{} of {}: {}\n", m.missing_seeds, m.missing_seeds == 1 ? "" : "s", m.header.seeds, listed);
  say("  resume the merged file to run just those: {}\n", resume_command(cli, m.header, out));
  return true;
}

/// The coverage of a merged sweep, when its scenario file is still the one the shards ran (its
/// hash, plain or with its fix, is the header's): the coverage needs the file's faults, checks
/// and tree. Otherwise nothing, and a note says why.
std::optional<scenarios::Coverage> merged_coverage(const Invocation& cli, const SweepHeader& h) {
  scenarios::ParseResult p = scenarios::load_scenario(h.file, *cli.registry);
  if (p.ok()) {
    if (h.scenario_hash == scenarios::hash_hex(stable_hash(scenarios::to_yaml(p.scenario))))
      return scenarios::Coverage(p.scenario, *cli.registry);
    if (!p.scenario.fix.empty()) {
      scenarios::ParseResult f = scenarios::apply_fix(p.scenario, *cli.registry);
      if (f.ok() && h.scenario_hash == scenarios::hash_hex(stable_hash(scenarios::to_yaml(f.scenario))))
        return scenarios::Coverage(f.scenario, *cli.registry);
    }
  }
  say("merge: no coverage in the summary: {} is not the file the shards ran (scenario_hash {})\n",
      scenarios::printable(h.file), h.scenario_hash);
  return std::nullopt;
}

}  // namespace

int merge_command(const Invocation& cli, const std::string& out, const std::vector<std::string>& given) {
  const auto guided = std::count_if(given.begin(), given.end(), [](const std::string& in) { return is_explore_output(in); });
  if (guided == static_cast<std::ptrdiff_t>(given.size())) return explore_merge_command(cli, out, given);
  if (guided > 0) {
    std::fprintf(stderr, "merge: %s is a guided sweep's folder and %s is not: merge joins the shards of one sweep, all guided or none\n",
                 scenarios::printable(*std::find_if(given.begin(), given.end(), [](const std::string& in) { return is_explore_output(in); })).c_str(),
                 scenarios::printable(*std::find_if(given.begin(), given.end(), [](const std::string& in) { return !is_explore_output(in); })).c_str());
    return 2;
  }
  std::vector<std::string> inputs;  // a sweep's folder stands for its results.jsonl
  for (const std::string& in : given) {
    std::error_code ec;
    inputs.push_back(std::filesystem::is_directory(in, ec) ? sweep_files(in).results : in);
  }
  const SweepFiles files = sweep_files(out);
  scenarios::Merged m;
  Tally tally;
  std::string error = scenarios::merge_headers(inputs, m);
  if (error.empty()) error = make_folder(files);
  if (error.empty()) {
    tally.strip.track(m.range.first, 1);
    tally.coverage = merged_coverage(cli, m.header);
    // Each seed counted as it is read: the merge itself streams, and so does the summary.
    error = scenarios::merge_results(inputs, files.results, m, [&tally](const SeedResult& r) { tally.add(r); });
  }
  for (const std::string& n : m.notes) fmt::print(stderr, "merge: {}\n", scenarios::printable(n));
  if (!error.empty()) {
    std::fprintf(stderr, "merge: %s\n", scenarios::printable(error).c_str());
    return 2;
  }
  say("merge: {} ({}), seeds {}: {} file{} into {}\n", m.header.scenario, m.header.file, m.header.seeds,
             inputs.size(), inputs.size() == 1 ? "" : "s", files.results);
  const SummaryContext c = summary_context(cli, m.header, files.results);
  print_summary(tally, c);
  write_sweep_pages(files, m.header, tally, c);
  const bool missing = print_missing(cli, m, out);
  say("verdict: {}\n", verdict(tally, missing));
  return tally.failed == 0 && !missing ? 0 : 1;
}

}  // namespace lic::tools
