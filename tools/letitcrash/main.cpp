// The `letitcrash` command line. It wires the stages together and does nothing else.
// Exit codes: 0 success (every check holds), 1 a check failed, 2 bad input or usage.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <string>

#include "bench/bench.hpp"
#include "scenarios/scenario.hpp"
#include "tools/letitcrash/commands.hpp"
#include "tools/letitcrash/demo.hpp"
#include "tools/letitcrash/sweep.hpp"

#ifndef LETITCRASH_VERSION
#define LETITCRASH_VERSION "0.0.0"
#endif

namespace {

/// CLI11 check for enumerated choices that reports the valid ones.
template <class T, class Parse>
CLI::Validator choice(const char* name, Parse parse) {
  return CLI::Validator(
      [parse, name](std::string& s) -> std::string {
        T v{};
        return parse(s, v) ? std::string() : "'" + s + "' is not one of " + name;
      },
      name);
}

CLI::Validator duration_check() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        const lic::DurationParse p = lic::parse_duration(s);
        return p.ok ? std::string() : p.error;
      },
      "DURATION");
}

CLI::Validator tie_break_check() {
  return choice<lic::TieBreak>("fifo|random", [](const std::string& s, lic::TieBreak& t) { return lic::parse_tie_break(s, t); });
}

/// CLI11 check for a value that `parse` reads, which returns the reason it cannot (empty: it can).
template <class T>
CLI::Validator parse_check(std::string (*parse)(std::string_view, T&), const char* name) {
  return CLI::Validator(
      [parse](std::string& s) -> std::string {
        T v{};
        return parse(s, v);
      },
      name);
}

std::optional<lic::Time> as_time(const std::string& text) {
  if (text.empty()) return std::nullopt;
  return lic::Time{} + lic::parse_duration(text).value;
}

std::optional<lic::TieBreak> as_tie_break(const std::string& text) {
  lic::TieBreak t{};
  if (text.empty() || !lic::parse_tie_break(text, t)) return std::nullopt;
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"letitcrash: a deterministic simulator and chaos harness for OTP-style supervision trees"};
  app.name("letitcrash");
  app.set_version_flag("--version", std::string("letitcrash ") + LETITCRASH_VERSION);
  app.require_subcommand(1);
  app.fallthrough(false);

  lic::bench::BenchOptions bench;
  bench.self_path = argv[0];
  std::string only = "w1,w2,w3";
  std::string backend = "both";
  auto* b = app.add_subcommand("bench", "Run the benchmark workloads (DESIGN.md §9) and print `name value unit` lines");
  b->add_flag("--quick", bench.quick, "Small sizes: a smoke run of every workload in a few seconds");
  b->add_option("--only", only, "Comma-separated workloads to run: w1, w2, w3")->check(
      CLI::Validator([](std::string& s) -> std::string {
        for (std::size_t i = 0; i < s.size();) {
          const std::size_t j = s.find(',', i);
          const std::string w = s.substr(i, j == std::string::npos ? std::string::npos : j - i);
          if (w != "w1" && w != "w2" && w != "w3") return "unknown workload '" + w + "' (w1, w2, w3)";
          if (j == std::string::npos) break;
          i = j + 1;
        }
        return {};
      }, "w1,w2,w3"));
  b->add_option("--backend", backend, "Fiber backends for the fiber workloads: context, or both")
      ->check(CLI::IsMember({"context", "both"}));
  b->add_flag("!--no-peer", bench.peer, "Do not run the SimGrid peer");
  b->add_option("--w2-fiber-max", bench.w2_fiber_max, "Largest W2 size for fiber processes")
      ->check(CLI::PositiveNumber);
  b->add_option("--repeat", bench.repeat, "Throughput figures are the best of this many runs")
      ->check(CLI::Range(1, 100));

  lic::tools::DemoOptions demo;
  std::string tie = "fifo";
  std::string demo_backend = "context";
  std::string duration = "2s";
  auto* d = app.add_subcommand("demo", "Run the kernel demo (a crashing parser restarted by a watchdog) and print its trace");
  d->add_option("--seed", demo.seed, "Root seed");
  d->add_option("--tie-break", tie, "Order of same-time events: fifo or random")
      ->check(choice<lic::TieBreak>("fifo|random", [](const std::string& s, lic::TieBreak& t) {
        return lic::parse_tie_break(s, t);
      }));
  d->add_option("--backend", demo_backend, "Fiber backend: context or boost_fiber")
      ->check(choice<lic::FiberBackend>("context|boost_fiber",
                                        [](const std::string& s, lic::FiberBackend& f) {
                                          return lic::parse_fiber_backend(s, f);
                                        }));
  d->add_option("--for", duration, "Virtual time to run, e.g. 2s or 500ms")
      ->check(CLI::Validator([](std::string& s) -> std::string {
        const lic::DurationParse p = lic::parse_duration(s);
        return p.ok ? std::string() : p.error;
      }, "DURATION"));
  d->add_option("--out", demo.out_dir, "Write trace.txt, trace.jsonl and summary.txt into this folder");
  d->add_flag("--quiet", demo.quiet, "Print only the summary line");

  lic::tools::RunArgs run;
  std::string run_until;
  std::string run_tie;
  std::string run_format = "text";
  auto* r = app.add_subcommand("run", "Run a scenario file: exit 0 when every check holds, 1 when one fails, 2 for bad input");
  r->add_option("file", run.file, "The scenario file (YAML; docs/scenario-format.md)")->required();
  r->add_option("--seed", run.seed, "Root seed (default: the file's)");
  r->add_option("--tie-break", run_tie, "Order of same-time events: fifo or random (default: the file's)")->check(tie_break_check());
  r->add_option("--until", run_until, "Stop at this virtual time, e.g. 90s (default: the end of the phases)")->check(duration_check());
  r->add_option("--out", run.out_dir, "Write the reports into this folder: trace.jsonl, tree.dot/svg, timeline.svg, trace.perfetto.json, junit.xml, summary.json, index.html");
  r->add_flag("--trace", run.print_trace, "Print every trace event as a readable line while it runs");
  r->add_option("--format", run_format, "What to print: text or json (the summary object)")->check(CLI::IsMember({"text", "json"}));

  std::vector<std::string> validate_files;
  bool validate_list = false;
  auto* v = app.add_subcommand("validate", "Check scenario files without running them: every mistake as file:line:col: message (exit 2)");
  v->add_option("files", validate_files, "Scenario files");
  v->add_flag("--list", validate_list, "Also list the behaviours and checks a file can name");

  lic::tools::DiagramArgs diagram;
  std::string diagram_at;
  std::string diagram_format = "text";
  auto* g = app.add_subcommand("diagram", "Print the supervision tree as it stands at a virtual time");
  g->add_option("file", diagram.file, "The scenario file")->required();
  g->add_option("--at", diagram_at, "The virtual time, e.g. 30s (default: 0, right after the trees boot)")->check(duration_check());
  g->add_option("--seed", diagram.seed, "Root seed (default: the file's)");
  g->add_option("--format", diagram_format, "text (an indented tree) or dot (Graphviz)")->check(CLI::IsMember({"text", "dot"}));

  std::string replay_file;
  auto* p = app.add_subcommand("replay", "Re-run a recorded trace's scenario and seed and report the first divergence, if any (exit 1)");
  p->add_option("trace", replay_file, "A trace.jsonl written by `run --out`")->required();

  lic::tools::SweepArgs sweep;
  std::string sweep_seeds;
  std::string sweep_shard = "1/1";
  std::string sweep_tie;
  std::string sweep_until;
  auto* w = app.add_subcommand("sweep", "Run a scenario for every seed of a range on every core: exit 0 when every seed passes, 1 when one fails, 2 for bad input");
  w->add_option("file", sweep.file, "The scenario file")->required();
  w->add_option("--seeds", sweep_seeds, "The seeds to run, A..B (both included), e.g. 1..1000")->required()->check(parse_check(lic::tools::parse_seed_range, "A..B"));
  w->add_option("--jobs", sweep.jobs, "Seeds run at once (default: one per core)")->check(CLI::Range(1U, 4096U));
  w->add_option("--shard", sweep_shard, "Run only shard K of N (1-based): the seeds whose position in A..B is K-1 modulo N; `merge` joins the shards")
      ->check(parse_check(lic::tools::parse_shard, "K/N"));
  w->add_flag("--check-determinism", sweep.check_determinism, "Run every seed twice and fail it when the two traces differ");
  w->add_option("--tie-break", sweep_tie, "Order of same-time events: fifo or random (default: the file's)")->check(tie_break_check());
  w->add_option("--until", sweep_until, "Stop each run at this virtual time, e.g. 90s")->check(duration_check());
  w->add_option("--out", sweep.out, "Append each seed's result to this JSON-lines file as it finishes; run again with the same file to resume a stopped sweep (without --out nothing is kept and nothing can resume)");
  w->add_flag("--fresh", sweep.fresh, "Start --out over even when it holds another sweep's results");

  std::string merge_out;
  std::vector<std::string> merge_in;
  auto* m = app.add_subcommand("merge", "Join the results files of a sweep's shards into one, sorted by seed (exit 1 when a seed failed or is missing)");
  m->add_option("out", merge_out, "The merged results file (written atomically)")->required();
  m->add_option("inputs", merge_in, "The shards' results files")->required();

  // No command at all: the overview of the commands is the useful answer. A word that names no
  // command: say so (CLI11 alone would report only that a command is required).
  if (argc < 2) {
    std::fputs(app.help().c_str(), stderr);
    return 2;
  }
  if (argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      std::string hint = lic::scenarios::closest_name(argv[1], names);
      std::string all;
      for (const std::string& n : names) all += (all.empty() ? "" : ", ") + n;
      std::fprintf(stderr, "letitcrash: unknown command '%s'%s; the commands are: %s\nRun with --help for more information.\n",
                   argv[1], hint.empty() ? "" : (" (did you mean '" + hint + "'?)").c_str(), all.c_str());
      return 2;
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and the usage hint
    return 2;
  }

  if (b->parsed()) {
    bench.w1 = only.find("w1") != std::string::npos;
    bench.w2 = only.find("w2") != std::string::npos;
    bench.w3 = only.find("w3") != std::string::npos;
    bench.both_backends = backend == "both";
    return lic::bench::run(bench);
  }
  if (r->parsed()) {
    run.until = as_time(run_until);
    run.tie_break = as_tie_break(run_tie);
    run.json = run_format == "json";
    return lic::tools::run_command(run);
  }
  if (v->parsed()) {
    if (validate_files.empty() && !validate_list) {
      std::fprintf(stderr, "validate: give one or more scenario files (or --list)\n");
      return 2;
    }
    return lic::tools::validate_command(validate_files, validate_list);
  }
  if (g->parsed()) {
    diagram.at = as_time(diagram_at);
    diagram.dot = diagram_format == "dot";
    return lic::tools::diagram_command(diagram);
  }
  if (p->parsed()) return lic::tools::replay_command(replay_file);
  if (w->parsed()) {
    lic::tools::parse_seed_range(sweep_seeds, sweep.seeds);
    lic::tools::parse_shard(sweep_shard, sweep.shard);
    sweep.tie_break = as_tie_break(sweep_tie);
    sweep.until = as_time(sweep_until);
    return lic::tools::sweep_command(sweep);
  }
  if (m->parsed()) return lic::tools::merge_command(merge_out, merge_in);
  if (d->parsed()) {
    lic::parse_tie_break(tie, demo.tie_break);
    lic::parse_fiber_backend(demo_backend, demo.backend);
    demo.duration = lic::parse_duration(duration).value;
    return lic::tools::run_demo(demo);
  }
  return 2;
}
