#include "tools/letitcrash/shrink.hpp"
#include "tools/letitcrash/redrawn_line.hpp"
#include "scenarios/file/read.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <system_error>

#include "reports/atomic_file.hpp"
#include "scenarios/file/write.hpp"
#include "scenarios/run/report.hpp"
#include "scenarios/search/reach.hpp"
#include "scenarios/search/shrink.hpp"
#include "scenarios/search/swarm.hpp"
#include "scenarios/search/explore.hpp"

namespace lic::tools {

namespace {

using scenarios::ShrinkProgress;
using scenarios::ShrinkResult;
using scenarios::ShrinkSize;

/// The search's progress on stderr: redrawn in place on a terminal, else a plain line each time it
/// starts a new pass (a CI log stays short).
class ProgressLine {
 public:
  explicit ProgressLine(bool tty) : line_(tty, "shrink: ") {}

  void update(const ShrinkProgress& p) {
    const ShrinkSize& z = p.current;
    const std::string what = fmt::format("run {}/{}, {}: faults {}, steps {}, processes {}, events {}", p.runs,
                                         p.max_runs, p.pass, z.faults, z.steps, z.processes, z.events);
    if (!line_.tty() && p.pass == pass_) return;
    pass_ = p.pass;
    line_.draw(what);
  }

  void end() const { line_.end(); }

 private:
  RedrawnLine line_;
  std::string pass_;
};

/// A run's length as `run` prints it: 180.022s.
std::string seconds(Duration d) { return format_time(Time{} + d); }

void print_sizes(const ShrinkSize& b, const ShrinkSize& a) {
  fmt::print("  {:<14} {:>12} {:>12}\n", "", "before", "after");
  const std::pair<const char*, std::pair<std::uint64_t, std::uint64_t>> rows[] = {
      {"faults", {b.faults, a.faults}},          {"steps", {b.steps, a.steps}}, {"processes", {b.processes, a.processes}},
      {"nodes", {b.nodes, a.nodes}},             {"checks", {b.checks, a.checks}}, {"events", {b.events, a.events}}};
  for (const auto& [name, v] : rows) fmt::print("  {:<14} {:>12} {:>12}\n", name, v.first, v.second);
  fmt::print("  {:<14} {:>12} {:>12}\n", "virtual time", seconds(b.virtual_time), seconds(a.virtual_time));
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

/// What the file says about itself: where it came from, what fails, what was taken out and how
/// to run it. Comment lines, so the file reads back as the scenario alone.
std::string header(const ShrinkResult& r, const ShrinkArgs& a, const std::string& reproduce, const std::string& seeds) {
  const ShrinkSize& b = r.before;
  const ShrinkSize& z = r.after;
  std::string h = fmt::format("# Shrunk by `letitcrash shrink` from {}, seed {}{}, tie-break {}, in {} runs{}.\n", a.file, r.seed,
                              a.swarm ? " (its swarm configuration: the faults it turned on and the buggify points)" : "",
                              to_string(r.tie_break), r.runs,
                              r.scenario.seed == r.seed ? ""
                                                        : fmt::format("; it runs at seed {}, where it fails the same way (see Changed)", r.scenario.seed));
  h += fmt::format("# It fails {} as the original did:\n#   {}\n", r.failure.name, one_line(r.failure.detail));
  h += fmt::format("# Before -> after: faults {} -> {}, steps {} -> {}, processes {} -> {}, nodes {} -> {}, virtual time {} -> {}, "
                   "events {} -> {}.\n",
                   b.faults, z.faults, b.steps, z.steps, b.processes, z.processes, b.nodes, z.nodes,
                   seconds(b.virtual_time), seconds(z.virtual_time), b.events, z.events);
  if (r.exhausted || r.stopped) h += "# The budget ran out before nothing more could go: it may shrink further.\n";
  if (!r.removed.empty()) h += "# Removed:\n";
  for (const std::string& x : r.removed) h += "#   " + one_line(x) + "\n";
  if (!r.changed.empty()) h += "# Changed:\n";
  for (const std::string& x : r.changed) h += "#   " + one_line(x) + "\n";
  return h + seeds + "# Reproduce: " + reproduce + "\n";
}

void print_result(const ShrinkResult& r, const ShrinkArgs& a) {
  fmt::print("shrunk in {} runs (after the one that judged the seed; {} candidate{} tried before, {} did not validate{}){}\n",
             r.runs, r.reused, r.reused == 1 ? "" : "s", r.invalid,
             r.unsaved == 0 ? "" : fmt::format(", {} failed alike but the declared fix did not save", r.unsaved),
             r.exhausted ? fmt::format(": --max-runs {} ran out, a larger budget may shrink it further", a.max_runs)
             : r.stopped ? fmt::format(": --max-seconds {} ran out, a larger budget may shrink it further", *a.max_seconds)
                         : "");
  print_sizes(r.before, r.after);
  if (!r.removed.empty()) fmt::print("removed:\n");
  for (const std::string& x : r.removed) fmt::print("  {}\n", x);
  if (!r.changed.empty()) fmt::print("changed:\n");
  for (const std::string& x : r.changed) fmt::print("  {}\n", x);
  fmt::print("still fails: {} {}\n", r.failure.name, r.failure.detail);
}

/// Why the shrunk file could not be written at `out` (empty: it can): a folder there, or a
/// folder it would go in that cannot be made or written, found by making it (as the writer
/// would) and a probe file in it (issue 34: this failed only after the whole search).
std::string unwritable(const std::string& out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(out, ec)) return "is a folder: give the path of a file";
  const fs::path dir = fs::path(out).has_parent_path() ? fs::path(out).parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec) && !fs::create_directories(dir, ec) && ec) return "cannot make the folder " + dir.string() + ": " + ec.message();
  std::string probe = (dir / ".letitcrash-probe-XXXXXX").string();
  const int fd = mkstemp(probe.data());
  if (fd < 0) return "cannot write in " + dir.string() + ": " + std::strerror(errno);
  close(fd);
  fs::remove(probe, ec);
  return {};
}

/// The options the library gets: the budget, and the clock the library never reads.
scenarios::ShrinkOptions options(const Invocation& cli, const ShrinkArgs& a, ProgressLine& line) {
  scenarios::ShrinkOptions o;
  o.seed = a.seed;
  o.tie_break = a.tie_break;
  o.registry = cli.registry;
  o.max_runs = a.max_runs;
  o.move_seed = !a.keep_seed;
  o.budgets = a.budgets;
  o.progress = [&line](const ShrinkProgress& p) { line.update(p); };
  if (a.max_seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(*a.max_seconds);
    o.stop = [deadline] { return std::chrono::steady_clock::now() >= deadline; };
  }
  return o;
}

}  // namespace

std::string seed_line(const scenarios::Registry& registry, const scenarios::Budgets& budgets, scenarios::Scenario& s,
                      const scenarios::FailureId& id, std::uint64_t events) {
  if (events > kSeedLineEvents)
    return fmt::format("# Other seeds were not tried: a run of it is {} trace events (more than {}); run it at its own seed.\n",
                       events, kSeedLineEvents);
  scenarios::ReachOptions ro;
  ro.registry = &registry;
  ro.budgets = budgets;
  const scenarios::Scenario unpinned = s;
  scenarios::SeedReach reach = scenarios::pin_streams(s, id, ro);
  // The file must read back as what was judged: pins that would not (a key the reader cannot
  // take) are left out, and the line says how far it holds without them.
  const scenarios::ParseResult back = scenarios::parse_scenario(scenarios::to_yaml(s), "shrunk.yaml", registry);
  if (!reach.pinned.empty() && (!back.ok() || !(back.scenario == s))) {
    s = unpinned;
    reach.pinned.clear();
    reach.failing = reach.failing_unpinned;
  }
  std::string line = fmt::format("# It fails the same way ({}) on {} of seeds 1..100", scenarios::to_string(id), reach.failing);
  if (!reach.pinned.empty())
    line += fmt::format(" with the draws of {} pinned to seed {} (`streams:`; on {} without)", fmt::join(reach.pinned, ", "), s.seed,
                        reach.failing_unpinned);
  if (reach.failing >= scenarios::kReachHolds)
    return line + (reach.pinned.empty() ? ": the seed hardly matters.\n" : ": the failure needs those draws, the others hardly matter.\n");
  std::string why = reach.drawn.empty()
                        ? "a behaviour's input, the network's, the tie-break's, or a fault still drawn at random"
                        : fmt::format("even the {} streams it draws from pinned ({}) did not make it hold on 90: it needs draws a file "
                                      "cannot pin (a process outside the trees, the order of ties)",
                                      reach.drawn.size(), reach.stopped ? "the search for them stopped early" : "all of them");
  return line + fmt::format(": it is seed-bound. The failure needs the draws of its own seed, {} (written in): {}. Run it as it is.\n",
                            s.seed, why);
}

std::string default_shrunk_path(const std::string& file) {
  return std::filesystem::path(file).stem().string() + ".shrunk.yaml";
}

int shrink_command(const Invocation& cli, const ShrinkArgs& a) {
  if (a.max_runs == 0 || (a.max_seconds && !(*a.max_seconds > 0))) {
    std::fprintf(stderr, "shrink: a budget of 0 (--max-runs, --max-seconds) cannot shrink anything: give 1 or more\n");
    return 2;
  }
  std::optional<scenarios::Scenario> s = load_or_report(a.file, *cli.registry);
  if (!s) return 2;
  if (a.swarm) {  // the seed's configuration, written out as plain faults (and the buggify points it needs)
    scenarios::Swarmed sw = scenarios::swarm(*s, a.seed.value_or(s->seed), *cli.registry);
    fmt::print("swarm: {}\n", scenarios::describe(sw.choice));
    s = std::move(sw.scenario);
  }
  const std::string out = a.out.empty() ? default_shrunk_path(a.file) : a.out;
  std::error_code ec;
  if (std::filesystem::equivalent(out, a.file, ec)) {
    std::fprintf(stderr, "shrink: --out %s is the file being shrunk: give another path\n", scenarios::printable(out).c_str());
    return 2;
  }
  if (const std::string why = unwritable(out); !why.empty()) {  // before the search, not after it
    std::fprintf(stderr, "shrink: --out %s: %s\n", scenarios::printable(out).c_str(), why.c_str());
    return 2;
  }
  fmt::print("shrink: {} ({}), seed {}, tie-break {}\n", s->name, a.file, a.seed.value_or(s->seed),
             to_string(a.tie_break.value_or(s->tie_break)));
  std::fflush(stdout);
  ProgressLine line(isatty(fileno(stderr)) != 0);
  ShrinkResult r;
  try {
    r = scenarios::shrink(*s, options(cli, a, line));
  } catch (const std::exception& e) {  // the scenario as given cannot run
    line.end();
    std::fprintf(stderr, "shrink: %s: %s\n", scenarios::printable(a.file).c_str(), scenarios::printable(e.what()).c_str());
    return 2;
  }
  line.end();
  if (!r.failed) {
    fmt::print("shrink: seed {} passes every check of {}: nothing to shrink, no file written\n", r.seed, a.file);
    return 1;
  }
  print_result(r, a);
  const std::string reproduce = scenarios::shell_word(cli.program) + " run " + scenarios::shell_word(out);
  // Pins, in r.scenario, the streams the failure needs when the seed matters (search/reach.hpp).
  const std::string seeds = seed_line(*cli.registry, a.budgets, r.scenario, scenarios::failure_id(r.failure), r.after.events);
  fmt::print("{}", seeds.substr(2));
  const std::string error = reports::write_file_atomically(out, header(r, a, reproduce, seeds) + scenarios::to_yaml(r.scenario));
  if (!error.empty()) {
    std::fprintf(stderr, "shrink: %s\n", scenarios::printable(error).c_str());
    return 2;
  }
  fmt::print("wrote: {}\nreproduce: {}\n", out, reproduce);
  return 0;
}

}  // namespace lic::tools
