#include "tools/letitcrash/explore.hpp"
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

constexpr const char* kFormat = "letitcrash-explore/1";

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

std::string margin_text(const std::optional<double>& m) {
  if (!m) return "coverage only";
  return fmt::format("{:+.3f}", *m);
}

/// The search's progress on stderr: redrawn in place on a terminal, else a plain line at each
/// tenth of the budget.
class ProgressLine {
 public:
  explicit ProgressLine(bool tty) : line_(tty, "explore: ") {}

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

/// An --out folder that holds an explore: refused unless it is fresh, with the reason.
std::string check_out_dir(const std::string& dir, const scenarios::Scenario& s, const ExploreArgs& a) {
  const std::filesystem::path state = std::filesystem::path(dir) / "explore.json";
  std::error_code ec;
  if (!std::filesystem::exists(state, ec)) return {};
  std::ifstream in(state);
  Json j = Json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("format", "") != kFormat)
    return fmt::format("{} is not an explore folder of this version ({} unreadable or of another format): give another --out", dir,
                       state.string());
  if (j.value("version", "") != scenarios::version())
    return fmt::format("{} holds an explore made by letitcrash {} (this is {}): its corpus is not comparable; give another --out or --fresh",
                       dir, j.value("version", "?"), scenarios::version());
  if (j.value("file_hash", "") != file_hash(s))
    return fmt::format("{} holds an explore of another file ({}, scenario '{}'): give another --out, or --fresh to replace it", dir,
                       j.value("file", "?"), j.value("scenario", "?"));
  if (a.fresh) return {};
  return fmt::format(
      "{} holds an earlier explore of this file (seed {}, {} runs): explore does not resume from a folder, because the same "
      "--seed makes the same runs again, in the same order, so rerunning the command repeats it; give --fresh to start over, "
      "or another --out",
      dir, j.value("seed", std::uint64_t{0}), j.value("runs", std::uint64_t{0}));
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
  std::string h = fmt::format("# Found by `letitcrash explore {} --seed {}` at run {} of {}: {}.\n", a.file, a.seed, x.run, max_runs,
                              x.plain ? fmt::format("the file at seed {}", x.seed) : "a mutated fault schedule (" + one_line(x.how) + ")");
  h += fmt::format("# It fails {} (kind {}{}):\n#   {}\n", x.result.name, x.result.kind,
                   x.id.roles.empty() ? "" : ", roles " + fmt::format("{}", fmt::join(x.id.roles, " ")), one_line(x.result.detail));
  if (w.was_shrunk) {
    const auto& b = w.shrunk.before;
    const auto& z = w.shrunk.after;
    h += fmt::format("# Shrunk in {} runs, keeping that failure: faults {} -> {}, processes {} -> {}, events {} -> {}.\n",
                     w.shrunk.runs, b.faults, z.faults, b.processes, z.processes, b.events, z.events);
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

// ---- The page ------------------------------------------------------------------------------------

/// A step line over runs as an SVG path: (run, value) points, x over [1, runs], y over [lo, hi].
std::string chart(const std::string& id, const std::string& title, const std::vector<std::pair<double, double>>& pts, double runs,
                  double lo, double hi, const std::string& colour, const std::string& ylabel) {
  constexpr double kW = 560, kH = 140, kL = 56, kB = 24, kT = 10;
  const auto x = [&](double r) { return kL + (runs <= 1 ? 0 : (r - 1) / (runs - 1)) * (kW - kL - 10); };
  const auto y = [&](double v) { return kT + (hi <= lo ? 0.5 : (hi - v) / (hi - lo)) * (kH - kT - kB); };
  std::string d;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    if (i == 0) d += fmt::format("M{:.1f},{:.1f}", x(pts[i].first), y(pts[i].second));
    else d += fmt::format(" H{:.1f} V{:.1f}", x(pts[i].first), y(pts[i].second));
  }
  if (!pts.empty()) d += fmt::format(" H{:.1f}", x(runs));
  std::string svg = fmt::format(
      "<svg id=\"{}\" class=\"chart\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">"
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fafafa\" stroke=\"#ccc\"/>",
      id, kW, kH, kW, kH, reports::xml_escape(title), kL, kT, kW - kL - 10, kH - kT - kB);
  if (lo < 0 && hi > 0)
    svg += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#c00\" stroke-dasharray=\"4 3\"><title>0: the check fails "
                       "below this line</title></line>",
                       kL, kW - 10, y(0), y(0));
  svg += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>", d, colour);
  for (const auto& [r, v] : pts)
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>run {:.0f}: {:.4g}</title></circle>", x(r), y(v),
                       colour, r, v);
  svg += fmt::format("<text x=\"4\" y=\"{}\" font-size=\"11\">{:.3g}</text><text x=\"4\" y=\"{}\" font-size=\"11\">{:.3g}</text>", kT + 10,
                     hi, kH - kB, lo);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\">run 1</text><text x=\"{}\" y=\"{}\" font-size=\"11\" "
                     "text-anchor=\"end\">run {:.0f}</text>",
                     kL, kH - 6, kW - 10, kH - 6, runs);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text></svg>", (kW + kL) / 2, kH - 6,
                     reports::xml_escape(ylabel));
  return svg;
}

std::string page(const ExploreArgs& a, const ExploreResult& r, const std::vector<Written>& written, double cpu) {
  using reports::xml_escape;
  std::string h = "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>explore: " + xml_escape(a.file) +
                  "</title><style>body{font-family:sans-serif;margin:24px;max-width:1100px}table{border-collapse:collapse}"
                  "td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:left;vertical-align:top}"
                  ".fail{color:#b00;font-weight:bold}.ok{color:#070;font-weight:bold}code{background:#f2f2f2;padding:2px 4px}"
                  ".chart{display:block;margin:6px 0 14px}</style></head><body>";
  h += fmt::format("<h1>explore: {}</h1>", xml_escape(a.file));
  h += fmt::format("<p id=\"counts\" data-runs=\"{}\" data-corpus=\"{}\" data-coverage=\"{}\" data-failures=\"{}\">seed {}, {} run{}, "
                   "corpus {}, coverage {} slots, {:.1f} s of CPU. ",
                   r.runs, r.corpus.size(), r.coverage, r.failures.size(), a.seed, r.runs, r.runs == 1 ? "" : "s", r.corpus.size(),
                   r.coverage, cpu);
  if (r.runs_to_first_failure) h += fmt::format("<span class=\"fail\">First failure at run {}.</span>", *r.runs_to_first_failure);
  else h += "<span class=\"ok\">No failure within the budget.</span>";
  if (r.nothing_to_mutate) h += " Nothing to mutate: the file has no fault, and its seed changes nothing (the first runs had the same trace).";
  h += "</p>";
  h += "<h2>Failures</h2>";
  if (r.failures.empty()) h += "<p>None.</p>";
  else h += "<ol id=\"failures\">";
  for (std::size_t i = 0; i < r.failures.size(); ++i) {
    const ExploreFailure& x = r.failures[i];
    h += fmt::format("<li><span class=\"fail\">{}</span> at run {} ({}): {}", xml_escape(identity_text(x.id)), x.run,
                     xml_escape(x.plain ? fmt::format("seed {}", x.seed) : x.how), xml_escape(x.result.detail));
    if (i < written.size()) {
      const Written& w = written[i];
      const std::string rel = std::filesystem::path(w.path).filename().string();
      h += fmt::format("<br>reproducer: <a class=\"reproducer\" href=\"{}\">{}</a> — <code class=\"reproduce\">letitcrash run {}</code> {}",
                       xml_escape(rel), xml_escape(rel), xml_escape(w.path),
                       w.verified ? "(run again: fails the same way)" : "<span class=\"fail\">(run again: " + xml_escape(w.check.empty() ? "passes" : w.check) + ")</span>");
    }
    h += "</li>";
  }
  if (!r.failures.empty()) h += "</ol>";
  // Coverage over runs.
  std::vector<std::pair<double, double>> cov;
  for (const auto& s : r.steps)
    if (cov.empty() || cov.back().second != static_cast<double>(s.coverage)) cov.emplace_back(static_cast<double>(s.run), static_cast<double>(s.coverage));
  h += "<h2>Behaviour coverage over runs</h2>";
  h += chart("coverage", "coverage over runs", cov, static_cast<double>(std::max<std::size_t>(r.runs, 1)), 0,
             std::max(1.0, static_cast<double>(r.coverage)), "#1f6fb4", "slots reached");
  // Each check's best margin over runs.
  h += "<h2>Each check's best margin over runs</h2><p>A margin is the signed distance to failing: above 0 the check holds with that "
       "much room, at or below 0 it fails (docs/explore.md).</p><div id=\"margins\">";
  for (std::size_t c = 0; c < r.checks.size(); ++c) {
    h += fmt::format("<h3 class=\"check\" data-check=\"{}\">{}: {}</h3>", xml_escape(r.checks[c]), xml_escape(r.checks[c]),
                     xml_escape(r.has_margin[c] ? "best " + margin_text(r.best[c]) : "coverage only (the check reports no margin)"));
    if (!r.has_margin[c]) continue;
    std::vector<std::pair<double, double>> pts;
    double lo = 0, hi = 0;
    for (const auto& s : r.steps) {
      if (c >= s.best.size() || !s.best[c]) continue;
      const double v = *s.best[c];
      if (pts.empty() || pts.back().second != v) pts.emplace_back(static_cast<double>(s.run), v);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    h += chart(fmt::format("margin-{}", c), r.checks[c], pts, static_cast<double>(std::max<std::size_t>(r.runs, 1)), lo,
               std::max(hi, 0.01), "#8a3ab9", "best margin");
  }
  h += "</div><h2>Corpus</h2><table id=\"corpus\"><tr><th>found at run</th><th>how</th><th>faults</th><th>seed</th><th>least margin</th>"
       "<th>slots</th><th>mutated</th></tr>";
  for (const auto& e : r.corpus)
    h += fmt::format("<tr class=\"entry\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", e.run,
                     xml_escape(e.how), e.schedule.faults.size(), e.schedule.seed, xml_escape(margin_text(e.least)),
                     e.signature.slots.size(), e.picked);
  h += "</table></body></html>\n";
  return h;
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
  j["runs"] = r.runs;
  j["max_runs"] = a.runs;
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
      f["reproducer_seeds"] = written[i].seeds.substr(2, written[i].seeds.size() - 3);
    }
    failures.push_back(std::move(f));
  }
  j["failures"] = failures;
  j["failure"] = failures.empty() ? Json(nullptr) : failures.front();
  j["reproducer"] = written.empty() ? Json(nullptr) : Json(written.front().path);
  return j;
}

std::string reproducer_path(const ExploreArgs& a, std::size_t i) {
  const std::string suffix = i == 0 ? "" : fmt::format("-{}", i + 1);
  if (!a.out.empty()) return (std::filesystem::path(a.out) / ("reproducer" + suffix + ".yaml")).string();
  return std::filesystem::path(a.file).stem().string() + ".explore" + suffix + ".yaml";
}

/// The checks before anything runs: the budget, the file, its checks, the --out folder. Returns
/// the scenario, or nothing (every mistake said).
std::optional<scenarios::Scenario> explorable(const Invocation& cli, const ExploreArgs& a) {
  if (a.runs == 0) {
    std::fprintf(stderr, "explore: --runs 0 runs nothing: give 1 or more\n");
    return std::nullopt;
  }
  if (a.max_seconds && !(*a.max_seconds > 0)) {
    std::fprintf(stderr, "explore: --max-seconds must be more than 0\n");
    return std::nullopt;
  }
  std::optional<scenarios::Scenario> s = load_or_report(a.file, *cli.registry);
  if (!s) return std::nullopt;
  if (s->checks.empty()) {
    std::fprintf(stderr, "%s\n",
                 scenarios::format_diagnostic(a.file, scenarios::Diagnostic{scenarios::Mark{1, 1},
                                                                            "explore looks for a failing check, and the file names none "
                                                                            "(`checks:`): there is nothing to find"})
                     .c_str());
    return std::nullopt;
  }
  if (!a.out.empty()) {
    if (const std::string why = check_out_dir(a.out, *s, a); !why.empty()) {
      std::fprintf(stderr, "explore: %s\n", scenarios::printable(why).c_str());
      return std::nullopt;
    }
  }
  return s;
}

/// --out: explore.json, the page and the corpus. Returns an error, empty when all was written.
std::string write_out(const ExploreArgs& a, const ExploreResult& r, const std::vector<Written>& written, const Json& state, double cpu) {
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"explore.json", state.dump(2) + "\n"},
                                   {"index.html", page(a, r, written, cpu)}}) {
    const std::string error = reports::write_file_atomically(std::filesystem::path(a.out) / name, text);
    if (!error.empty()) return error;
  }
  for (std::size_t i = 0; i < r.corpus.size(); ++i) {
    const std::string error = reports::write_file_atomically(
        std::filesystem::path(a.out) / "corpus" / fmt::format("{:04}.yaml", i + 1),
        fmt::format("# corpus entry {}: found at run {} ({})\n", i + 1, r.corpus[i].run, one_line(r.corpus[i].how)) +
            scenarios::to_yaml(r.corpus[i].schedule));
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

int explore_command(const Invocation& cli, const ExploreArgs& a) {
  const std::optional<scenarios::Scenario> s = explorable(cli, a);
  if (!s) return 2;
  scenarios::ExploreOptions o;
  o.seed = a.seed;
  o.runs = a.runs;
  o.jobs = a.jobs;
  o.registry = cli.registry;
  o.budgets = a.budgets;
  o.keep_going = a.keep_going;
  if (a.max_seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(*a.max_seconds);
    o.stop = [deadline] { return std::chrono::steady_clock::now() >= deadline; };
  }
  ProgressLine line(isatty(fileno(stderr)) != 0);
  o.progress = [&line](const ExploreProgress& p) { line.update(p); };
  if (!a.json) {
    fmt::print("explore: {} ({}), seed {}, at most {} runs\n", s->name, a.file, a.seed, a.runs);
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
    if (const std::string error = write_out(a, r, written, state, cpu); !error.empty()) {
      std::fprintf(stderr, "explore: %s\n", scenarios::printable(error).c_str());
      return 2;
    }
  }
  if (a.json) {
    Json j = state;
    j.erase("format");
    fmt::print("{}\n", j.dump(2));
  } else {
    print_text(cli, a, r, written, cpu);
  }
  return r.failures.empty() ? 0 : 1;
}

}  // namespace lic::tools
