// The command line: arguments in, a command of commands.hpp / sweep.hpp / demo.hpp / bench out.
// Exit codes: 0 success (every check holds), 1 a check failed, 2 bad input or usage.

#include "tools/letitcrash/cli.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>

#include "bench/bench.hpp"
#include "bench/bugs.hpp"
#include "bench/histories.hpp"
#include "scenarios/file/read.hpp"
#include "scenarios/run/report.hpp"
#include "tools/letitcrash/commands.hpp"
#include "tools/letitcrash/demo.hpp"
#include "tools/letitcrash/explore.hpp"
#include "tools/letitcrash/shrink.hpp"
#include "tools/letitcrash/sweep.hpp"

namespace lic {

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
        const DurationParse p = parse_duration(s);
        return p.ok ? std::string() : p.error;
      },
      "DURATION");
}

CLI::Validator tie_break_check() {
  return choice<TieBreak>("fifo|random", [](const std::string& s, TieBreak& t) { return parse_tie_break(s, t); });
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

/// A count (--max-runs, --max-events, ...): a whole number from 0 to 2^64-1. CLI11 alone reads
/// "-1" into an unsigned option as 2^64-1 (issue 34).
CLI::Validator count_check() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        std::uint64_t v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc() && end == s.data() + s.size()) return {};
        return fmt::format("'{}' is not a count: give a whole number from 0 to {}", s, UINT64_MAX);
      },
      "COUNT");
}

std::optional<Time> as_time(const std::string& text) {
  if (text.empty()) return std::nullopt;
  return Time{} + parse_duration(text).value;
}

std::optional<TieBreak> as_tie_break(const std::string& text) {
  TieBreak t{};
  if (text.empty() || !parse_tie_break(text, t)) return std::nullopt;
  return t;
}

/// --max-events and --max-memory: what one run may use before it stops with exit 2
/// (docs/robustness.md).
void add_budgets(CLI::App* c, scenarios::Budgets& b) {
  // 2^64-1 events is no limit (0); the field's own 2^64-1 means "scaled to the file".
  c->add_option_function<std::uint64_t>(
       "--max-events", [&b](const std::uint64_t& n) { b.max_events = n == scenarios::Budgets::kScaled ? 0 : n; },
       "Stop a run after this many kernel events, exit 2 (default: 2000000 plus 100 for each process the file declares; "
       "0: no limit)")
      ->check(count_check());
  c->add_option_function<std::uint64_t>(
      "--max-memory", [&b](const std::uint64_t& mib) { b.max_memory_bytes = mib << 20; },
      "Stop a run whose kept trace takes more than this many MiB, exit 2 (default 4096; 0: no limit)")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1} << 40));
}

/// A subcommand: what it runs once its arguments are parsed.
using Action = std::function<int()>;

Action add_bench(CLI::App& app, const tools::Invocation& cli) {
  auto o = std::make_shared<bench::BenchOptions>();
  o->self_path = cli.program;
  auto only = std::make_shared<std::string>("w1,w2,w3,pipeline,sweep,tree,supervised,merge,seed");
  auto backend = std::make_shared<std::string>("both");
  auto* b = app.add_subcommand("bench", "Run the benchmark workloads (docs/benchmarks.md) and print `name value unit` lines");
  b->add_flag("--quick", o->quick, "Small sizes: a smoke run of every workload in a few seconds");
  b->add_flag("--json", o->json, "Print one JSON object of every figure (null with a reason for one not measured) and nothing else on stdout");
  b->add_option("--only", *only, "Comma-separated workloads to run: w1, w2, w3, pipeline, sweep, tree, supervised, merge, seed")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            for (std::size_t i = 0; i <= s.size();) {
              const std::size_t j = std::min(s.find(',', i), s.size());
              const std::string w = s.substr(i, j - i);
              static const std::set<std::string> known{"w1", "w2", "w3", "pipeline", "sweep", "tree", "supervised", "merge", "seed"};
              if (!known.contains(w)) return "unknown workload '" + w + "' (w1, w2, w3, pipeline, sweep, tree, supervised, merge, seed)";
              i = j + 1;
            }
            return {};
          },
          "w1,...,seed"));
  b->add_option("--catalog", o->catalog, "The catalogue files the seed workload measures (default scenarios/catalog)");
  b->add_option("--backend", *backend, "Fiber backends for the fiber workloads: context, or both")->check(CLI::IsMember({"context", "both"}));
  b->add_flag("!--no-peer", o->peer, "Do not run the SimGrid peer");
  b->add_option("--w2-fiber-max", o->w2_fiber_max, "Largest W2 size for fiber processes")->check(CLI::PositiveNumber);
  b->add_option("--repeat", o->repeat, "Throughput figures are the best of this many runs; the sweep speed-up the median of this many pairs (at least 5)")->check(CLI::Range(1, 100));
  auto bugs = std::make_shared<bench::BugBenchOptions>();
  bugs->registry = cli.registry;
  auto* bb = b->add_subcommand("bugs", "Runs to the first failure of each known bug in scenarios/bugs/: uniform seeds, swarm and the guided explorer on the same budget, their CPU time, the shrunk case's size, and issue 31's targets (docs/benchmarks.md)");
  bb->add_option("--dir", bugs->dir, "The bug files' folder (default scenarios/bugs)");
  bb->add_option("--only", bugs->only, "Measure the one bug file of this stem (e.g. rare_pause_past_lease)");
  bb->add_option("--ranges", bugs->ranges, "Independent tries per bug and mode: seed ranges, explorer seeds (default 20)")->check(CLI::Range(1, 1000));
  bb->add_option("--max-seeds", bugs->max_seeds, "Runs a try makes before it counts as not found (default 2000)")->check(CLI::Range(1, 1000000));
  bb->add_flag("!--no-swarm", bugs->swarm, "Leave swarm mode out");
  bb->add_flag("!--no-explore", bugs->explore, "Leave the explorer out");
  bb->add_option("--shrink-runs", bugs->shrink_runs, "The shrinker's run budget per bug, 0: no shrinking (default 500, as `shrink --max-runs`)")->check(count_check());
  bb->add_option("--shrunk-dir", bugs->shrunk_dir, "Write each failing seed's shrunk file as DIR/BUG/SEED.yaml, to read where shrinks from different seeds part");
  bb->add_option("--jobs", bugs->jobs, "Seeds run at once (default: one per core)")->check(CLI::Range(1U, 4096U));
  auto hist = std::make_shared<bench::HistoryBenchOptions>();
  auto* bh = b->add_subcommand("histories", "The linearizability checker on Porcupine's test histories (Jepsen etcd, key-value): each verdict against Porcupine's, each time beside Porcupine's, a generated 100,000-operation history, and issue 38's targets (docs/history.md)");
  bh->add_option("--dir", hist->dir, "The histories' folder (default conformance/porcupine)");
  bh->add_option("--repeat", hist->repeat, "Each time is the best of this many checks (default 3)")->check(CLI::Range(1, 100));
  return [b, bb, bh, o, bugs, hist, only, backend] {
    if (!b->parsed()) return -1;
    if (bb->parsed()) return bench::run_bugs(*bugs);
    if (bh->parsed()) return bench::run_histories(*hist);
    const std::string list = "," + *only + ",";
    const auto picked = [&list](const char* w) { return list.find("," + std::string(w) + ",") != std::string::npos; };
    o->w1 = picked("w1");
    o->w2 = picked("w2");
    o->w3 = picked("w3");
    o->pipeline = picked("pipeline");
    o->sweep = picked("sweep");
    o->tree = picked("tree");
    o->supervised = picked("supervised");
    o->merge = picked("merge");
    o->seed = picked("seed");
    o->both_backends = *backend == "both";
    return bench::run(*o);
  };
}

Action add_demo(CLI::App& app) {
  auto o = std::make_shared<tools::DemoOptions>();
  auto tie = std::make_shared<std::string>("fifo");
  auto backend = std::make_shared<std::string>("context");
  auto duration = std::make_shared<std::string>("2s");
  auto* d = app.add_subcommand("demo", "Run the kernel demo (a crashing parser restarted by a watchdog) and print its trace");
  d->add_option("--seed", o->seed, "Root seed")->check(parse_check(scenarios::parse_seed, "SEED"));
  d->add_option("--tie-break", *tie, "Order of same-time events: fifo or random")->check(tie_break_check());
  d->add_option("--backend", *backend, "Fiber backend: context or boost_fiber")
      ->check(choice<FiberBackend>("context|boost_fiber", [](const std::string& s, FiberBackend& f) { return parse_fiber_backend(s, f); }));
  d->add_option("--for", *duration, "Virtual time to run, e.g. 2s or 500ms")->check(duration_check());
  d->add_option("--out", o->out_dir, "Write trace.txt, trace.jsonl and summary.txt into this folder");
  d->add_flag("--quiet", o->quiet, "Print only the summary line");
  return [d, o, tie, backend, duration] {
    if (!d->parsed()) return -1;
    parse_tie_break(*tie, o->tie_break);
    parse_fiber_backend(*backend, o->backend);
    o->duration = parse_duration(*duration).value;
    return tools::run_demo(*o);
  };
}

Action add_run(CLI::App& app, const tools::Invocation& cli) {
  auto a = std::make_shared<tools::RunArgs>();
  auto until = std::make_shared<std::string>();
  auto tie = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("text");
  auto* r = app.add_subcommand("run", "Run a scenario file: exit 0 when every check holds, 1 when one fails, 2 for bad input");
  r->add_option("file", a->file, "The scenario file (YAML; docs/scenario-format.md)")->required();
  r->add_option("--seed", a->seed, "Root seed (default: the file's)")->check(parse_check(scenarios::parse_seed, "SEED"));
  r->add_option("--tie-break", *tie, "Order of same-time events: fifo or random (default: the file's)")->check(tie_break_check());
  r->add_option("--until", *until, "Stop at this virtual time, e.g. 90s (default: the end of the phases)")->check(duration_check());
  r->add_option("--out", a->out_dir, "Write the reports into this folder: trace.jsonl, tree.dot/svg, timeline.svg, trace.perfetto.json, junit.xml, summary.json, index.html");
  r->add_flag("--trace", a->print_trace, "Print every trace event as a readable line while it runs (on stderr with --format json, whose stdout is one object)");
  add_budgets(r, a->budgets);
  r->add_flag("--swarm", a->swarm, "Swarm mode (docs/swarm.md): the seed picks which faults are on, ranged knobs, the tie-break and buggify points, and the choice is printed first");
  r->add_option("--format", *format, "What to print: text or json (the summary object)")->check(CLI::IsMember({"text", "json"}));
  r->add_flag("--fixed", a->fixed, "Run the file with its `fix:` applied (a known bug's fix: it should pass)");
  return [r, a, until, tie, format, &cli] {
    if (!r->parsed()) return -1;
    a->until = as_time(*until);
    a->tie_break = as_tie_break(*tie);
    a->json = *format == "json";
    return tools::run_command(cli, *a);
  };
}

Action add_validate(CLI::App& app, const tools::Invocation& cli) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto list = std::make_shared<bool>(false);
  auto* v = app.add_subcommand("validate", "Check scenario files without running them: every mistake as file:line:col: message (exit 2)");
  v->add_option("files", *files, "Scenario files");
  v->add_flag("--list", *list, "Also list the behaviours and checks a file can name");
  return [v, files, list, &cli] {
    if (!v->parsed()) return -1;
    if (files->empty() && !*list) {
      std::fprintf(stderr, "validate: give one or more scenario files (or --list)\n");
      return 2;
    }
    return tools::validate_command(cli, *files, *list);
  };
}

Action add_diagram(CLI::App& app, const tools::Invocation& cli) {
  auto a = std::make_shared<tools::DiagramArgs>();
  auto at = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("text");
  auto* g = app.add_subcommand("diagram", "Print the supervision tree as it stands at a virtual time");
  g->add_option("file", a->file, "The scenario file")->required();
  g->add_option("--at", *at, "The virtual time, e.g. 30s (default: 0, right after the trees boot)")->check(duration_check());
  g->add_option("--seed", a->seed, "Root seed (default: the file's)")->check(parse_check(scenarios::parse_seed, "SEED"));
  g->add_option("--format", *format, "text (an indented tree) or dot (Graphviz)")->check(CLI::IsMember({"text", "dot"}));
  return [g, a, at, format, &cli] {
    if (!g->parsed()) return -1;
    a->at = as_time(*at);
    a->dot = *format == "dot";
    return tools::diagram_command(cli, *a);
  };
}

Action add_replay(CLI::App& app, const tools::Invocation& cli) {
  auto file = std::make_shared<std::string>();
  auto* p = app.add_subcommand("replay", "Re-run a recorded trace's scenario and seed and report the first divergence, if any (exit 1)");
  p->add_option("trace", *file, "A trace.jsonl written by `run --out`")->required();
  auto budgets = std::make_shared<scenarios::Budgets>();
  add_budgets(p, *budgets);
  return [p, file, budgets, &cli] { return p->parsed() ? tools::replay_command(cli, *file, *budgets) : -1; };
}

Action add_sweep(CLI::App& app, const tools::Invocation& cli) {
  auto a = std::make_shared<tools::SweepArgs>();
  auto seeds = std::make_shared<std::string>();
  auto shard = std::make_shared<std::string>("1/1");
  auto tie = std::make_shared<std::string>();
  auto until = std::make_shared<std::string>();
  auto* w = app.add_subcommand("sweep", "Run a scenario for every seed of a range on every core: exit 0 when every seed passes, 1 when one fails, 2 for bad input");
  w->add_option("file", a->file, "The scenario file")->required();
  w->add_option("--seeds", *seeds, "The seeds to run, A..B (both included), e.g. 1..1000")->required()->check(parse_check(scenarios::parse_seed_range, "A..B"));
  w->add_option("--jobs", a->jobs, "Seeds run at once (default: one per core)")->check(CLI::Range(1U, 4096U));
  w->add_option("--shard", *shard, "Run only shard K of N (1-based): the seeds whose position in A..B is K-1 modulo N; `merge` joins the shards. auto (or auto/N) reads K and N from a Kubernetes Indexed Job, GitLab parallel jobs or a Slurm array (docs/sweeps.md)")
      ->check(CLI::Validator([](std::string& t) { return scenarios::check_shard_spec(t); }, "K/N|auto|auto/N"));
  w->add_flag("--check-determinism", a->check_determinism, "Run every seed twice and fail it when the two traces differ");
  w->add_option("--tie-break", *tie, "Order of same-time events: fifo or random (default: the file's)")->check(tie_break_check());
  w->add_option("--until", *until, "Stop each run at this virtual time, e.g. 90s")->check(duration_check());
  w->add_option("--out", a->out, "Keep the results: a path ending in .jsonl is the results file (each seed's result appended as it finishes, pages beside it); any other path is a folder (created) holding results.jsonl, summary.json, index.html, junit.xml and coverage.html. Run again with the same --out to resume a stopped sweep (without --out nothing is kept and nothing can resume)");
  w->add_flag("--fresh", a->fresh, "Start --out over even when it holds another sweep's results");
  w->add_option("--vary", a->vary, "Run the seeds again at each value of a behaviour's argument, BEHAVIOUR:ARG=A..B (a duration, an int or a ratio), and print each value's pass count and metrics, e.g. ingest.s3:latency=100ms..10s");
  w->add_option("--steps", a->steps, "How many values --vary walks, evenly spaced, A and B included (default 10)")->check(CLI::Range(1, 1000));
  add_budgets(w, a->budgets);
  w->add_flag("--swarm", a->swarm, "Swarm mode (docs/swarm.md): each seed picks which faults are on, their ranged knobs, the tie-break and buggify points; results lines record the choice");
  w->add_flag("--coverage", a->coverage, "Print what the sweep exercised: each fault's seeds on and acted, buggify hits, check verdicts, supervision outcomes reached (always in summary.json and <results>.coverage.html with --out)");
  w->add_flag("--fixed", a->fixed, "Run the file with its `fix:` applied (a known bug's fix: every seed should pass)");
  w->add_flag("--guided", a->guided, "Guided search (docs/explore.md \"In CI\"): the shard's seeds are a budget of runs for `explore`'s engine; its first runs are the first seeds, the rest mutated fault schedules. Stops at the first failure, shrinks it and writes its reproducer; --out is a folder (the explore page, explore.json, corpus/), and `merge` unions the shards'");
  w->add_flag("--stop-at-first-failure", a->stop_at_first_failure, "Stop at the first failing seed in seed order (the same seed whatever --jobs) and print its reproduce line");
  w->add_option("--shrink", a->shrink, "Shrink the first K failing seeds to scenario files (letitcrash shrink), e.g. --shrink 1")->check(CLI::Range(1, 1000));
  w->add_option("--metrics", a->metrics, "Print only these metrics, e.g. --metrics failover_s,leader_availability (default: all)")
      ->delimiter(',');
  return [w, a, seeds, shard, tie, until, &cli] {
    if (!w->parsed()) return -1;
    scenarios::parse_seed_range(*seeds, a->seeds);
    std::string source;
    const auto env = [](const char* name) -> std::optional<std::string> {
      const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read once, before any thread
      return v == nullptr ? std::nullopt : std::optional<std::string>(v);
    };
    if (const std::string e = scenarios::resolve_shard(*shard, env, a->shard, source); !e.empty()) {
      std::fprintf(stderr, "sweep: %s\n", scenarios::printable(e).c_str());
      return 2;
    }
    if (!source.empty()) std::printf("shard %s from %s\n", scenarios::to_string(a->shard).c_str(), source.c_str());
    a->tie_break = as_tie_break(*tie);
    a->until = as_time(*until);
    return tools::sweep_command(cli, *a);
  };
}

Action add_merge(CLI::App& app, const tools::Invocation& cli) {
  auto out = std::make_shared<std::string>();
  auto inputs = std::make_shared<std::vector<std::string>>();
  auto* m = app.add_subcommand("merge", "Join the results files of a sweep's shards into one, sorted by seed, or a guided sweep's shard folders into one (exit 1 when a seed failed or is missing)");
  m->add_option("out", *out, "The merged results file (written atomically), or a folder for results.jsonl and the pages")->required();
  m->add_option("inputs", *inputs, "The shards' results files (a sweep's folder stands for its results.jsonl)")->required();
  return [m, out, inputs, &cli] { return m->parsed() ? tools::merge_command(cli, *out, *inputs) : -1; };
}

Action add_shrink(CLI::App& app, const tools::Invocation& cli) {
  auto a = std::make_shared<tools::ShrinkArgs>();
  auto tie = std::make_shared<std::string>();
  auto* s = app.add_subcommand("shrink", "Shrink a failing seed to a smaller scenario file that fails the same check (docs/shrinking.md): exit 0 when it wrote the file, 1 when the seed passes, 2 for bad input");
  s->add_option("file", a->file, "The scenario file")->required();
  s->add_option("--seed", a->seed, "The failing seed (default: the file's)")->check(parse_check(scenarios::parse_seed, "SEED"));
  s->add_option("--tie-break", *tie, "Order of same-time events: fifo or random (default: the file's)")->check(tie_break_check());
  s->add_option("--out", a->out, "The shrunk file, written atomically (default: <the file's stem>.shrunk.yaml in the current directory)");
  s->add_option("--max-runs", a->max_runs, "Candidate runs at most (default 500)")->check(count_check());
  s->add_option("--max-seconds", a->max_seconds, "Wall time at most, in seconds (default 60)");
  add_budgets(s, a->budgets);
  s->add_flag("--swarm", a->swarm, "Shrink the seed's swarm configuration (as `run --swarm` runs it), written out as plain faults and the buggify points it needs");
  s->add_flag("--keep-seed", a->keep_seed, "Run every candidate at the seed given, and write the shrunk file with it (by default the search moves to the lowest of seeds 1..8 where the file fails the same way, and later to seed 1 where the failure holds there too, so that shrinks from different seeds meet on one file)");
  return [s, a, tie, &cli] {
    if (!s->parsed()) return -1;
    a->tie_break = as_tie_break(*tie);
    return tools::shrink_command(cli, *a);
  };
}

Action add_explore(CLI::App& app, const tools::Invocation& cli) {
  auto a = std::make_shared<tools::ExploreArgs>();
  auto format = std::make_shared<std::string>("text");
  auto runs = std::make_shared<long long>(1000);
  auto* e = app.add_subcommand("explore", "Guided search for a failing check (docs/explore.md): mutate fault schedules toward the checks' edges and new behaviour; exit 0 when none failed within the budget, 1 when one did (its reproducer written), 2 for bad input");
  e->add_option("file", a->file, "The scenario file (it must name its checks)")->required();
  e->add_option("--runs", *runs, "Runs at most (default 1000)");
  e->add_option("--jobs", a->jobs, "Runs at once (default: one per core; the runs and their order do not depend on it)")->check(CLI::Range(1U, 4096U));
  e->add_option("--seed", a->seed, "The search's own seed: which plain seeds and which mutations (default 1)")->check(parse_check(scenarios::parse_seed, "SEED"));
  e->add_option("--out", a->out, "A folder for index.html (the explore page), explore.json, corpus/ and reproducer.yaml");
  e->add_flag("--fresh", a->fresh, "Start --out over when it holds an earlier explore of this file");
  e->add_flag("--keep-going", a->keep_going, "Collect every distinct failure (by identity: check, kind, roles) until the budget ends, instead of stopping at the first");
  e->add_option("--format", *format, "What to print: text, or json (one object on stdout)")->check(CLI::IsMember({"text", "json"}));
  e->add_option("--shrink-runs", a->shrink_runs, "The shrinker's run budget for a failure found, 0: write it as found (default 200)")->check(count_check());
  e->add_option("--max-seconds", a->max_seconds, "Wall time for the search at most, in seconds (default: no limit)");
  add_budgets(e, a->budgets);
  return [e, a, format, runs, &cli] {
    if (!e->parsed()) return -1;
    if (*runs <= 0) {
      std::fprintf(stderr, "explore: --runs %lld: give 1 or more runs (0 or fewer explore nothing)\n", *runs);
      return 2;
    }
    a->runs = static_cast<std::size_t>(*runs);
    a->json = *format == "json";
    return tools::explore_command(cli, *a);
  };
}

/// A first word that names no command: say so, with the nearest one (CLI11 alone would report
/// only that a command is required). Returns 2 when it printed that, 0 otherwise.
int unknown_command(CLI::App& app, const char* word) {
  if (word[0] == '-') return 0;
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  if (std::find(names.begin(), names.end(), word) != names.end()) return 0;
  const std::string hint = scenarios::closest_name(word, names);
  std::string all;
  for (const std::string& n : names) all += (all.empty() ? "" : ", ") + n;
  std::fprintf(stderr, "letitcrash: unknown command '%s'%s; the commands are: %s\nRun with --help for more information.\n",
               scenarios::printable(word).c_str(), hint.empty() ? "" : (" (did you mean '" + hint + "'?)").c_str(), all.c_str());
  return 2;
}

}  // namespace

namespace {

/// The command line as cli_main runs it; with `act` false it stops after parsing (nothing runs,
/// nothing is written).
int command_line(int argc, char** argv, const scenarios::Registry& registry, bool run_action) {
  CLI::App app{"letitcrash: a deterministic simulator and chaos harness for OTP-style supervision trees"};
  const std::string program = argc > 0 ? argv[0] : "letitcrash";
  app.name(program.substr(program.find_last_of('/') + 1));
  app.set_version_flag("--version", "letitcrash " + std::string(scenarios::version()));
  app.require_subcommand(1);
  app.fallthrough(false);
  const tools::Invocation cli{&registry, program};
  const std::vector<Action> actions{add_bench(app, cli), add_demo(app),           add_run(app, cli),
                                    add_validate(app, cli),     add_diagram(app, cli),  add_replay(app, cli),
                                    add_sweep(app, cli),        add_merge(app, cli),    add_shrink(app, cli),
                                    add_explore(app, cli)};
  if (argc < 2) {  // no command at all: the overview of the commands is the useful answer
    std::fputs(app.help().c_str(), stderr);
    return 2;
  }
  if (const int rc = unknown_command(app, argv[1]); rc != 0) return rc;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {  // the message echoes the argument: escaped for the terminal
    std::fprintf(stderr, "%s\nRun with --help for more information.\n", scenarios::printable(e.what()).c_str());
    return 2;
  }
  if (!run_action) return 0;
  try {
    for (const Action& act : actions) {
      if (const int rc = act(); rc >= 0) return rc;
    }
  } catch (const std::exception& e) {  // a budget, a file that cannot be written, ...: a message, never an abort
    std::fprintf(stderr, "letitcrash: %s\n", scenarios::printable(e.what()).c_str());
    return 2;
  }
  return 2;
}

}  // namespace

int cli_main(int argc, char** argv, const scenarios::Registry& registry) { return command_line(argc, argv, registry, true); }

int cli_parse_only(int argc, char** argv, const scenarios::Registry& registry) { return command_line(argc, argv, registry, false); }

}  // namespace lic
