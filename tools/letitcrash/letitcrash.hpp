#pragma once
// letitcrash as a library: #include <letitcrash/letitcrash.hpp> (docs/library.md).
//
// What a user's own project does with it:
//   - writes its processes as lic::Behaviour subclasses (GenServer-style callbacks, sim/process.hpp)
//     or free-form bodies, under virtual time (never a wall clock or an unseeded random number:
//     Context::now(), Context::rng());
//   - registers them, and its own checks, with names, argument schemas and help
//     (lic::Registry::add; the built-in catalogue adds itself the same way);
//   - runs a scenario file, or a scenario built in code, for one seed (lic::run) or a seed range
//     (lic::run_seeds), and reads the verdicts, the trace hash and the trace, or writes the reports
//     (lic::write_run_reports); shrinks a failing seed to a smaller scenario (lic::shrink);
//   - builds its own `letitcrash` that knows its behaviours: main() returns
//     lic::cli_main(argc, argv, registry);
//   - in its Catch2 tests, asserts that a file holds over a range of seeds, a failure printing the
//     command that reproduces it (<letitcrash/testing.hpp>, target letitcrash::testing);
//   - records the operations its clients make (lic::history::Client) and has them checked for
//     linearizability (`linearizable` in a file, or lic::history::check_linearizable with a model
//     of its own).

#include "properties/history.hpp"
#include "scenarios/args.hpp"
#include "scenarios/behaviours/table.hpp"
#include "scenarios/checks/table.hpp"
#include "scenarios/file/fix.hpp"
#include "scenarios/file/read.hpp"
#include "scenarios/file/validate.hpp"
#include "scenarios/file/write.hpp"
#include "scenarios/registry.hpp"
#include "scenarios/run/replay.hpp"
#include "scenarios/run/report.hpp"
#include "scenarios/run/judge.hpp"
#include "scenarios/run/runner.hpp"
#include "scenarios/search/shrink.hpp"
#include "scenarios/search/sweep.hpp"
#include "scenarios/search/explore.hpp"
#include "scenarios/scenario.hpp"
#include "sim/process.hpp"
#include "sim/simulation.hpp"
#include "sim/trace_keys.hpp"
#include "supervision/events.hpp"
#include "supervision/lifecycle.hpp"
#include "supervision/supervisor.hpp"
#include "supervision/tree_path.hpp"
#include "tools/letitcrash/cli.hpp"

namespace lic {

// The names a user's project reaches for, without the stage they live in. These are the stable
// surface (docs/library.md, "What is kept stable"): within a minor version (0.2.x) a name here
// keeps its meaning, a struct's fields keep their names and meanings (new ones may be added, with
// defaults, at the end), and a function keeps its signature. What the stage namespaces hold
// beyond these may move.

// Registering behaviours and checks.
using scenarios::ArgInfo;            // an argument: name, type, default, help
using scenarios::Args;               // reads a behaviour's or check's arguments by type
using scenarios::BehaviourFactory;
using scenarios::BehaviourInfo;
using scenarios::CheckInfo;
using scenarios::MetricInfo;         // a measurement of every run: name, help, measure(in, out)
using scenarios::Registry;

// Judging a run: a check's input, its verdict (detail, witness, kind, roles, margin, judged) and
// what a judged check became.
using scenarios::CheckInput;
using scenarios::CheckJudge;
using scenarios::CheckResult;
using scenarios::failure_id;
using scenarios::FailureId;
using scenarios::first_at;           // the first event at or after a time
using scenarios::judge_linearizable; // the `linearizable` check's judge, for a history model of one's own
using scenarios::Verdict;
using scenarios::Witness;            // where a verdict was decided: time, event, processes, why
using scenarios::witness_at;         // a witness at an event
using reports::MetricValue;          // one number, or a list of them (one per occurrence)
using reports::Metrics;              // measurements by name

// Formatting a detail the way the built-in checks do ("5%", "1.5s"); lic::format_duration and
// lic::fraction_at_most / fraction_at_least come with sim/.
using scenarios::format_ratio;

// Reading, checking and writing scenario files.
using scenarios::apply_fix;          // a bug file with its declared fix applied
using scenarios::Diagnostic;         // a mistake at file:line:col
using scenarios::format_diagnostic;
using scenarios::load_scenario;
using scenarios::parse_scenario;
using scenarios::ParseResult;
using scenarios::Scenario;
using scenarios::to_yaml;
using scenarios::validate;

// Running, sweeping, searching and shrinking.
using scenarios::explore;
using scenarios::ExploreOptions;
using scenarios::ExploreResult;
using scenarios::replay;
using scenarios::reproduce_command;  // the command line that runs a seed again
using scenarios::run;
using scenarios::run_seeds;
using scenarios::RunOptions;
using scenarios::RunResult;
using scenarios::SeedRange;
using scenarios::SeedResult;
using scenarios::shrink;
using scenarios::ShrinkOptions;
using scenarios::ShrinkResult;
using scenarios::SweepOptions;
using scenarios::write_run_reports;

}  // namespace lic
