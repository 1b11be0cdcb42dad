#include "tools/letitcrash/explore.hpp"
#include "tools/letitcrash/explore_page.hpp"
#include "tools/letitcrash/redrawn_line.hpp"
#include "tools/letitcrash/shrink.hpp"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "reports/atomic_file.hpp"
#include "reports/escape.hpp"
#include "scenarios/file/read.hpp"
#include "scenarios/file/write.hpp"
#include "scenarios/run/report.hpp"
#include "scenarios/search/shrink.hpp"
#include "scenarios/search/explore.hpp"

namespace lic::tools {

namespace {

using Json = nlohmann::json;
using scenarios::ExploreFailure;
using scenarios::ExploreProgress;
using scenarios::ExploreResult;

constexpr const char* kFormat = kExploreFormat;

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

/// The search's progress on stderr: redrawn in place on a terminal, else a plain line at each
/// tenth of the budget.
class ProgressLine {
 public:
  ProgressLine(bool tty, const char* prefix) : line_(tty, prefix) {}

  void update(const ExploreProgress& p) {
    std::string margins;
    for (std::size_t i = 0; p.checks != nullptr && i < p.checks->size(); ++i)
      margins += fmt::format("{}{} {}", margins.empty() ? "" : ", ", (*p.checks)[i], margin_text((*p.best)[i]));
    const std::string what = fmt::format("run {}/{}, corpus {}, coverage {}, failures {}; best margin: {}", p.runs, p.max_runs,
                                         p.corpus, p.coverage, p.failures, margins);
    const std::size_t tenth = std::max<std::size_t>(p.max_runs / 10, 1);
    if (!line_.tty() && p.runs / tenth == printed_ && p.runs != p.max_runs) return;
    printed_ = p.runs / tenth;
    line_.draw(what, p.runs == p.max_runs);
  }

  void end() const { line_.end(); }

 private:
  RedrawnLine line_;
  std::size_t printed_ = 0;
};

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

std::string identity_text(const scenarios::FailureId& id) { return scenarios::to_string(id); }

/// The file's identity for a corpus folder: its scenario as the writer prints it (comments and
/// layout aside), hashed.
std::string file_hash(const scenarios::Scenario& s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : scenarios::to_yaml(s)) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return fmt::format("{:016x}", h);
}

/// Each run's budgets, as a guided sweep's explore.json records them: a shard run again, or
/// merged, with other budgets is another search. A count scaled to the file is "scaled".
Json budgets_json(const scenarios::Budgets& b) {
  const auto count = [](std::uint64_t n) { return n == scenarios::Budgets::kScaled ? Json("scaled") : Json(n); };
  return {{"max_events", count(b.max_events)}, {"max_memory_bytes", b.max_memory_bytes},
          {"max_events_at_instant", count(b.max_events_at_instant)}};
}

/// What an --out folder holds.
struct OutDir {
  std::string refused;  ///< why it cannot be used; empty: it can
  /// A guided sweep's shard already done there, the same one (file, version, seeds, shard, fix):
  /// its explore.json, whose outcome stands (the search is deterministic; explore.json is
  /// written last, so a shard stopped on the way left none).
  std::optional<Json> done;
};

/// An --out folder that holds an explore: refused unless it is fresh, with the reason; a guided
/// sweep's shard already done is reported as done.
OutDir check_out_dir(const std::string& dir, const scenarios::Scenario& s, const ExploreArgs& a) {
  const std::filesystem::path state = std::filesystem::path(dir) / "explore.json";
  std::error_code ec;
  if (!std::filesystem::exists(state, ec)) return {};
  std::ifstream in(state);
  Json j = Json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("format", "") != kFormat)
    return {fmt::format("{} is not an explore folder of this version ({} unreadable or of another format): give another --out", dir,
                        state.string()),
            std::nullopt};
  if (j.value("version", "") != scenarios::version())
    return {fmt::format("{} holds an explore made by letitcrash {} (this is {}): its corpus is not comparable; give another --out or --fresh",
                        dir, j.value("version", "?"), scenarios::version()),
            std::nullopt};
  if (j.value("file_hash", "") != file_hash(s))
    return {fmt::format("{} holds an explore of another file ({}, scenario '{}'): give another --out, or --fresh to replace it", dir,
                        j.value("file", "?"), j.value("scenario", "?")),
            std::nullopt};
  if (a.fresh) return {};
  if (a.sweep) {
    const Json& sw = j.contains("sweep") ? j["sweep"] : Json();
    const std::string seeds = fmt::format("{}..{}", a.sweep->seeds.first, a.sweep->seeds.last);
    const bool readable = sw.is_object() && sw.contains("seeds") && sw["seeds"].is_string() && sw.contains("shard") && sw["shard"].is_string() &&
                          sw.contains("fixed") && sw["fixed"].is_boolean() && j.contains("seed") && j["seed"].is_number_unsigned() &&
                          j.contains("max_runs") && j["max_runs"].is_number_unsigned() && j.contains("failures") && j["failures"].is_array() &&
                          j.contains("runs") && j["runs"].is_number_unsigned();
    if (!readable)
      return {fmt::format("{} holds an explore.json this command cannot read back as a guided sweep's: give --fresh to run it again, or "
                          "another --out", dir),
              std::nullopt};
    if (sw["seeds"] == seeds && sw["shard"] == scenarios::to_string(a.sweep->shard) && sw["fixed"] == a.fixed && j["seed"] == a.seed &&
        j["max_runs"] == a.runs && sw.value("budgets", Json()) == budgets_json(a.budgets))
      return {{}, std::move(j)};
    return {fmt::format("{} holds another search of this file ({}; its seeds, shard, fix, budgets or search seed differ from this "
                        "command's): give --fresh to replace it, or another --out",
                        dir,
                        sw.is_object() ? fmt::format("seeds {}, shard {}", sw.value("seeds", "?"), sw.value("shard", "?"))
                                       : fmt::format("an explore, seed {}", j.value("seed", std::uint64_t{0}))),
            std::nullopt};
  }
  return {fmt::format(
              "{} holds an earlier explore of this file (seed {}, {} runs): explore does not resume from a folder, because the same "
              "--seed makes the same runs again, in the same order, so rerunning the command repeats it; give --fresh to start over, "
              "or another --out",
              dir, j.value("seed", std::uint64_t{0}), j.value("runs", std::uint64_t{0})),
          std::nullopt};
}

/// The command that made a search, as a reproducer's header names it.
std::string found_by(const ExploreArgs& a) {
  if (!a.sweep) return fmt::format("letitcrash explore {} --seed {}", a.file, a.seed);
  return fmt::format("letitcrash sweep {} --seeds {}..{} --guided --shard {}{}", a.file, a.sweep->seeds.first, a.sweep->seeds.last,
                     scenarios::to_string(a.sweep->shard), a.fixed ? " --fixed" : "");
}

struct Written {
  std::string path;
  bool verified = false;  ///< running the written file fails with the same identity
  std::string check;      ///< what that run said
  scenarios::ShrinkResult shrunk;
  bool was_shrunk = false;
  std::string seeds;  ///< the header's line on seeds 1..100
};

std::string header(const ExploreFailure& x, const ExploreArgs& a, const Written& w, std::size_t max_runs, const std::string& reproduce,
                   const scenarios::Scenario& s, const std::string& seeds) {
  std::string h = fmt::format("# Found by `{}` at run {} of {}: {}.\n", found_by(a), x.run, max_runs,
                              x.plain ? fmt::format("the file at seed {}", x.seed) : "a mutated fault schedule (" + one_line(x.how) + ")");
  h += fmt::format("# It fails {} (kind {}{}):\n#   {}\n", x.result.name, x.result.kind,
                   x.id.roles.empty() ? "" : ", roles " + fmt::format("{}", fmt::join(x.id.roles, " ")), one_line(x.result.detail));
  if (w.was_shrunk) {
    const auto& b = w.shrunk.before;
    const auto& z = w.shrunk.after;
    h += fmt::format("# Shrunk in {} runs, keeping that failure: faults {} -> {}, processes {} -> {}, events {} -> {}{}.\n",
                     w.shrunk.runs, b.faults, z.faults, b.processes, z.processes, b.events, z.events,
                     w.shrunk.scenario.seed == w.shrunk.seed
                         ? ""
                         : fmt::format(", seed {} -> {} (it fails the same way there)", w.shrunk.seed, w.shrunk.scenario.seed));
  }
  const bool explicit_all = std::none_of(s.faults.begin(), s.faults.end(), [](const faults::Fault& f) { return f.mtbf || f.every; });
  h += explicit_all ? "# Every fault is an explicit event (a time, a target, its knobs): the file is the reproducer, at its own seed.\n"
                    : "# Some faults are still drawn at random (mtbf or every): the file reproduces the failure at its own seed.\n";
  return h + seeds + "# Reproduce: " + reproduce + "\n";
}

/// Shrinks the failure (keeping its identity), writes it, and runs the written file to see that it
/// fails the same way.
Written write_failure(const Invocation& cli, const ExploreArgs& a, const scenarios::Scenario& file, const ExploreFailure& x,
                      const std::string& path, std::size_t max_runs) {
  Written w;
  w.path = path;
  // The explicit schedule first; a plain seed whose schedule does not fail the same way (the order
  // of one instant's events) is shrunk from the file at the seed instead.
  std::vector<scenarios::Scenario> tries{x.schedule};
  if (x.plain) {
    tries.push_back(file);
    tries.back().seed = x.seed;
  }
  scenarios::Scenario s = tries.back();
  if (a.shrink_runs > 0) {
    for (const scenarios::Scenario& from : tries) {
      scenarios::ShrinkOptions so;
      so.seed = x.seed;
      so.registry = cli.registry;
      so.max_runs = a.shrink_runs;
      so.budgets = a.budgets;
      so.target = x.check;
      try {
        w.shrunk = scenarios::shrink(from, so);
      } catch (const std::exception&) {
        continue;  // the next, or the schedule as found
      }
      if (w.shrunk.failed && scenarios::failure_id(w.shrunk.original) == x.id) {
        s = w.shrunk.scenario;
        w.was_shrunk = true;
        break;
      }
    }
  }
  if (!w.was_shrunk) s.seed = x.seed;
  const std::string reproduce = scenarios::shell_word(cli.program) + " run " + scenarios::shell_word(path);
  w.seeds = seed_line(*cli.registry, a.budgets, s, x.id, w.was_shrunk ? w.shrunk.after.events : 0);
  const std::string error = reports::write_file_atomically(path, header(x, a, w, max_runs, reproduce, s, w.seeds) + scenarios::to_yaml(s));
  if (!error.empty()) throw std::runtime_error(error);
  // The file as a user will run it: read back, run at its own seed.
  const scenarios::ParseResult back = scenarios::load_scenario(path, *cli.registry);
  if (back.ok()) {
    scenarios::RunOptions ro;
    ro.registry = cli.registry;
    ro.budgets = a.budgets;
    const scenarios::RunResult r = scenarios::run(back.scenario, ro);
    const std::vector<scenarios::CheckDecl> checks = scenarios::effective_checks(back.scenario);
    for (std::size_t i = 0; i < r.checks.size(); ++i) {
      if (r.checks[i].passed) continue;
      if (scenarios::failure_id(r.checks[i]) == x.id) w.verified = true;
      if (w.check.empty() || w.verified) w.check = identity_text(scenarios::failure_id(r.checks[i]));
      if (w.verified) break;
    }
  }
  return w;
}

/// The series the page draws: coverage over runs and each check's best margin, at the runs where
/// they changed.
Json series_json(const ExploreResult& r) {
  Json cov = Json::array();
  std::vector<Json> margins(r.checks.size(), Json::array());
  std::vector<std::optional<double>> last(r.checks.size());
  for (const scenarios::ExploreStep& st : r.steps) {
    if (cov.empty() || cov.back()[1].get<std::size_t>() != st.coverage) cov.push_back({st.run, st.coverage});
    for (std::size_t c = 0; c < r.checks.size() && c < st.best.size(); ++c) {
      if (!st.best[c] || st.best[c] == last[c]) continue;
      last[c] = st.best[c];
      margins[c].push_back({st.run, *st.best[c]});
    }
  }
  return {{"coverage", cov}, {"margins", margins}};
}

Json state_json(const ExploreArgs& a, const scenarios::Scenario& s, const ExploreResult& r, const std::vector<Written>& written,
                double cpu) {
  Json j;
  j["format"] = kFormat;
  j["version"] = scenarios::version();
  j["file"] = a.file;
  j["scenario"] = s.name;
  j["file_hash"] = file_hash(s);
  j["seed"] = a.seed;
  if (a.sweep)
    j["sweep"] = {{"seeds", fmt::format("{}..{}", a.sweep->seeds.first, a.sweep->seeds.last)},
                  {"shard", scenarios::to_string(a.sweep->shard)},
                  {"fixed", a.fixed},
                  {"budgets", budgets_json(a.budgets)}};
  j["runs"] = r.runs;
  j["max_runs"] = a.runs;
  j["plain_runs"] = r.plain_runs;
  j["runs_to_first_failure"] = r.runs_to_first_failure ? Json(*r.runs_to_first_failure) : Json(nullptr);
  j["coverage"] = r.coverage;
  j["corpus"] = r.corpus.size();
  j["cpu_s"] = std::round(cpu * 1000) / 1000;
  j["nothing_to_mutate"] = r.nothing_to_mutate;
  Json checks = Json::array();
  for (std::size_t c = 0; c < r.checks.size(); ++c)
    checks.push_back({{"name", r.checks[c]},
                      {"guided", r.has_margin[c]},
                      {"best_margin", r.best[c] ? Json(*r.best[c]) : Json(nullptr)}});
  j["checks"] = checks;
  Json failures = Json::array();
  for (std::size_t i = 0; i < r.failures.size(); ++i) {
    const ExploreFailure& x = r.failures[i];
    Json f{{"run", x.run},
           {"check", x.result.name},
           {"kind", x.result.kind},
           {"roles", x.id.roles},
           {"identity", identity_text(x.id)},
           {"detail", x.result.detail},
           {"plain_seed", x.plain},
           {"seed", x.seed},
           {"how", x.how}};
    if (x.result.witness)
      f["witness"] = {{"t_ns", x.result.witness->t_ns}, {"event", x.result.witness->event}, {"processes", x.result.witness->processes},
                      {"why", x.result.witness->why}};
    if (i < written.size()) {
      f["reproducer"] = written[i].path;
      f["reproducer_verified"] = written[i].verified;
      if (!written[i].verified) f["reproducer_fails_as"] = written[i].check;
      f["reproducer_seeds"] = written[i].seeds.substr(2, written[i].seeds.size() - 3);
    }
    failures.push_back(std::move(f));
  }
  j["failures"] = failures;
  j["failure"] = failures.empty() ? Json(nullptr) : failures.front();
  j["reproducer"] = written.empty() ? Json(nullptr) : Json(written.front().path);
  Json entries = Json::array();
  for (std::size_t i = 0; i < r.corpus.size(); ++i) {
    const scenarios::CorpusEntry& e = r.corpus[i];
    entries.push_back({{"file", fmt::format("corpus/{:04}.yaml", i + 1)},
                       {"run", e.run},
                       {"how", e.how},
                       {"faults", e.schedule.faults.size()},
                       {"seed", e.schedule.seed},
                       {"least_margin", e.least ? Json(*e.least) : Json(nullptr)},
                       {"slots", e.signature.slots.size()},
                       {"mutated", e.picked}});
  }
  j["corpus_entries"] = entries;
  j["slots"] = r.slots;
  j["series"] = series_json(r);
  return j;
}

std::string reproducer_path(const ExploreArgs& a, std::size_t i) {
  const std::string suffix = i == 0 ? "" : fmt::format("-{}", i + 1);
  if (!a.out.empty()) return (std::filesystem::path(a.out) / ("reproducer" + suffix + ".yaml")).string();
  return std::filesystem::path(a.file).stem().string() + ".explore" + suffix + ".yaml";
}

/// The checks before anything runs: the budget, the file, its checks, the --out folder. Returns
/// the scenario, or nothing (every mistake said).
std::optional<scenarios::Scenario> explorable(const Invocation& cli, const ExploreArgs& a, std::optional<Json>& done) {
  if (a.runs == 0 && !a.sweep) {  // a guided sweep's shard with no seed is a search of none: it records that, for merge
    std::fprintf(stderr, "explore: --runs 0 runs nothing: give 1 or more\n");
    return std::nullopt;
  }
  if (a.max_seconds && !(*a.max_seconds > 0)) {
    std::fprintf(stderr, "explore: --max-seconds must be more than 0\n");
    return std::nullopt;
  }
  std::optional<scenarios::Scenario> s = load_or_report(a.file, *cli.registry, a.fixed);
  if (!s) return std::nullopt;
  if (s->checks.empty()) {
    std::fprintf(stderr, "%s\n",
                 scenarios::format_diagnostic(a.file, scenarios::Diagnostic{scenarios::Mark{1, 1},
                                                                            std::string(a.sweep ? "sweep --guided" : "explore") + " looks for a failing check, and the file names none "
                                                                            "(`checks:`): there is nothing to find"})
                     .c_str());
    return std::nullopt;
  }
  if (!a.out.empty()) {
    OutDir d = check_out_dir(a.out, *s, a);
    if (!d.refused.empty()) {
      std::fprintf(stderr, "%s: %s\n", a.sweep ? "sweep" : "explore", scenarios::printable(d.refused).c_str());
      return std::nullopt;
    }
    done = std::move(d.done);
  }
  return s;
}

/// --out: the corpus, the page and explore.json, in that order (explore.json last: a folder that
/// has it is complete). Corpus files of an earlier explore (--fresh) beyond this one's go. Returns
/// an error, empty when all was written.
std::string write_out(const ExploreArgs& a, const ExploreResult& r, const Json& state) {
  const std::filesystem::path corpus = std::filesystem::path(a.out) / "corpus";
  for (std::size_t i = 0; i < r.corpus.size(); ++i) {
    const std::string error = reports::write_file_atomically(
        corpus / fmt::format("{:04}.yaml", i + 1),
        fmt::format("# corpus entry {}: found at run {} ({})\n", i + 1, r.corpus[i].run, one_line(r.corpus[i].how)) +
            scenarios::to_yaml(r.corpus[i].schedule));
    if (!error.empty()) return error;
  }
  std::error_code ec;
  for (std::size_t i = r.corpus.size() + 1; std::filesystem::remove(corpus / fmt::format("{:04}.yaml", i), ec); ++i) {
  }
  // Reproducers of an earlier search in this folder beyond this one's (reproducer.yaml itself when
  // this one found nothing).
  const std::size_t written = state.value("failures", Json::array()).size();
  if (written == 0) std::filesystem::remove(std::filesystem::path(a.out) / "reproducer.yaml", ec);
  for (std::size_t i = std::max<std::size_t>(written, 1) + 1; std::filesystem::remove(std::filesystem::path(a.out) / fmt::format("reproducer-{}.yaml", i), ec); ++i) {
  }
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"index.html", explore_page(state, a.file)},
                                   {"explore.json", state.dump(2) + "\n"}}) {
    const std::string error = reports::write_file_atomically(std::filesystem::path(a.out) / name, text);
    if (!error.empty()) return error;
  }
  return {};
}

void print_text(const Invocation& cli, const ExploreArgs& a, const ExploreResult& r, const std::vector<Written>& written, double cpu) {
  if (r.nothing_to_mutate)
    fmt::print("nothing to mutate: the file has no fault, and its seed changes nothing (its first {} runs had the same trace)\n", r.runs);
  fmt::print("{} run{}{}, corpus {}, coverage {} slots, {:.1f} s of CPU\n", r.runs, r.runs == 1 ? "" : "s",
             r.stopped ? " (--max-seconds ran out)" : "", r.corpus.size(), r.coverage, cpu);
  for (std::size_t c = 0; c < r.checks.size(); ++c)
    fmt::print("  {:<36} {}\n", r.checks[c], r.has_margin[c] ? "best margin " + margin_text(r.best[c]) : "coverage only (no margin)");
  if (r.failures.empty()) fmt::print("no failure in {} runs\n", r.runs);
  for (std::size_t i = 0; i < r.failures.size(); ++i) {
    const ExploreFailure& x = r.failures[i];
    const Written& w = written[i];
    fmt::print("FAIL at run {}: {}\n  {}\n  found by: {}\n", x.run, identity_text(x.id), x.result.detail,
               x.plain ? fmt::format("seed {} of the file", x.seed) : x.how);
    if (w.was_shrunk)
      fmt::print("  shrunk in {} runs: faults {} -> {}, events {} -> {}\n", w.shrunk.runs, w.shrunk.before.faults, w.shrunk.after.faults,
                 w.shrunk.before.events, w.shrunk.after.events);
    fmt::print("  {}", w.seeds.substr(2));
    fmt::print("  wrote: {}{}\n", w.path,
               w.verified ? " (run again: fails the same way)"
                          : " (WARNING: run again it " + (w.check.empty() ? std::string("passes") : "fails " + w.check) + ")");
    fmt::print("reproduce: {} run {}\n", scenarios::shell_word(cli.program), scenarios::shell_word(w.path));
  }
  if (!a.out.empty()) fmt::print("page: {}\n", (std::filesystem::path(a.out) / "index.html").string());
}

}  // namespace

namespace {

/// A guided sweep's shard already done in --out: its outcome, as recorded.
int report_done(const Invocation& cli, const ExploreArgs& a, Json state) {
  const Json failures = state.value("failures", Json::array());  // an array (check_out_dir looked)
  if (a.json) {
    state.erase("format");
    fmt::print("{}\n", state.dump(2));
    return failures.empty() ? 0 : 1;
  }
  fmt::print("sweep --guided: {} already holds this shard's search ({} runs, seeds {}, shard {}): it is deterministic, so its outcome "
             "stands (--fresh runs it again)\n",
             a.out, state.value("runs", std::size_t{0}), state["sweep"].value("seeds", "?"), state["sweep"].value("shard", "?"));
  for (const Json& f : failures) {
    if (!f.is_object()) continue;
    fmt::print("FAIL at run {}: {}\n  {}\n", f.value("run", Json()).dump(), scenarios::printable(f.value("identity", Json()).dump()),
               scenarios::printable(f.value("detail", Json()).dump()));
    if (f.is_object() && f.contains("reproducer") && f["reproducer"].is_string()) {
      // Beside the folder as given now: the path recorded is relative to where the shard first ran.
      const std::string here = (std::filesystem::path(a.out) / std::filesystem::path(f["reproducer"].get<std::string>()).filename()).string();
      fmt::print("reproduce: {} run {}\n", scenarios::shell_word(cli.program), scenarios::shell_word(here));
    }
  }
  fmt::print("verdict: {}\n", failures.empty() ? "PASS (no failure within the budget)" : "FAIL");
  return failures.empty() ? 0 : 1;
}

}  // namespace

int explore_command(const Invocation& cli, const ExploreArgs& given) {
  ExploreArgs a = given;
  if (a.sweep) {
    // The budget is the shard's seeds; its plain runs take them in order; its search seed is its first.
    a.runs = scenarios::shard_size(a.sweep->seeds, a.sweep->shard);
    if (a.runs > 0) a.seed = scenarios::shard_seed(a.sweep->seeds, a.sweep->shard, 0);
  }
  std::optional<Json> done;
  const std::optional<scenarios::Scenario> s = explorable(cli, a, done);
  if (!s) return 2;
  if (done) return report_done(cli, a, std::move(*done));
  if (!a.out.empty()) {
    // explore.json goes last, when all is written: an earlier search's (--fresh) must not stand
    // for this one if it stops on the way.
    std::error_code ec;
    std::filesystem::remove(std::filesystem::path(a.out) / "explore.json", ec);
  }
  scenarios::ExploreOptions o;
  o.seed = a.seed;
  o.runs = a.runs;
  o.jobs = a.jobs;
  o.registry = cli.registry;
  o.budgets = a.budgets;
  o.keep_going = a.keep_going;
  if (a.sweep) {
    const GuidedSweep g = *a.sweep;
    o.plain_seed = [g](std::size_t k) { return scenarios::shard_seed(g.seeds, g.shard, k); };
  }
  if (a.max_seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(*a.max_seconds);
    o.stop = [deadline] { return std::chrono::steady_clock::now() >= deadline; };
  }
  ProgressLine line(isatty(fileno(stderr)) != 0, a.sweep ? "sweep --guided: " : "explore: ");
  o.progress = [&line](const ExploreProgress& p) { line.update(p); };
  if (!a.json) {
    if (a.sweep)
      fmt::print("sweep --guided: {} ({}{}), seeds {}..{}, shard {}: {} runs, its first seeds plain, then mutated fault schedules "
                 "(search seed {})\n",
                 s->name, a.file, a.fixed ? ", with its fix" : "", a.sweep->seeds.first, a.sweep->seeds.last,
                 scenarios::to_string(a.sweep->shard), a.runs, a.seed);
    else fmt::print("explore: {} ({}), seed {}, at most {} runs\n", s->name, a.file, a.seed, a.runs);
    std::fflush(stdout);
  }
  const double cpu0 = cpu_seconds();
  const ExploreResult r = scenarios::explore(*s, o);
  line.end();
  std::vector<Written> written;
  for (std::size_t i = 0; i < r.failures.size(); ++i) written.push_back(write_failure(cli, a, *s, r.failures[i], reproducer_path(a, i), a.runs));
  const double cpu = cpu_seconds() - cpu0;
  const Json state = state_json(a, *s, r, written, cpu);
  if (!a.out.empty()) {
    if (const std::string error = write_out(a, r, state); !error.empty()) {
      std::fprintf(stderr, "%s: %s\n", a.sweep ? "sweep" : "explore", scenarios::printable(error).c_str());
      return 2;
    }
  }
  if (a.json) {
    Json j = state;
    j.erase("format");
    fmt::print("{}\n", j.dump(2));
  } else {
    print_text(cli, a, r, written, cpu);
    if (a.sweep) fmt::print("verdict: {}\n", r.failures.empty() ? fmt::format("PASS (no failure in {} runs)", r.runs) : "FAIL");
  }
  return r.failures.empty() ? 0 : 1;
}

}  // namespace lic::tools
