#pragma once
// Real small runs for the report writers' tests: a Simulation with a supervision tree, crashed
// on a schedule, and the RunReport filled in from it the way tools/ fills it from a RunResult
// (snapshots, start counts, live paths, hash). Test support only.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "reports/run_report.hpp"
#include "sim/simulation.hpp"

namespace lic::reports::testing {

/// A finished run and its report; the report's trace points into the simulation.
struct TestRun {
  std::unique_ptr<Simulation> sim;
  RunReport report;
};

/// /root (one_for_one 3/5s) -> [/root/input (rest_for_one 3/5s) -> [reader, parser],
/// /root/db_sink]; the parser takes 50 ms to start and crashes ({error,boom}) at each of
/// `crashes`; the run ends at `end`. Four crashes within a second make /root/input give up (an escalation).
TestRun pipeline_run(const std::vector<Duration>& crashes, Duration end);

/// /root (one_for_one, never gives up) -> `workers` workers w0, w1, ...; worker i crashes
/// `crashes_each` times, spread over `end` (killed instead of crashed every third time).
TestRun wide_run(std::size_t workers, std::size_t crashes_each, Duration end);

/// /root -> [/root/pool (simple_one_for_one, template "worker")]; three workers are started
/// (/root/pool/worker.1 .. .3) and worker.2 crashes once.
TestRun dynamic_run();

/// /root on node0 (one_for_one) -> [/root/w]; /edge on node1 (one_for_one) -> [/edge/w],
/// booted again when node1 restarts; /app (a lifecycle supervisor on node0) -> [db, cache
/// (depends on db)]. node0 and node1 are partitioned from 2 s to 4 s (both ways), node1 pauses
/// at 5 s for 1 s and crashes at 7 s, back at 8 s; the db service crashes at 9 s. Two
/// fault_injected records, as the injector writes them: the partition (no process) and the
/// db's crash (its pid). Ends at 12 s.
TestRun network_run();

/// Abnormal exits under `path_prefix`: kills (kill, killed) or, with `killed` false, crashes.
std::size_t count_exits(const RunReport& r, bool killed, const std::string& path_prefix);

/// How often `needle` occurs in `text`.
std::size_t count(const std::string& text, const std::string& needle);

/// Empty when every element of the XML or HTML text is closed in order (void elements,
/// self-closing tags, declarations and comments aside); otherwise what is wrong and where.
std::string unbalanced_tags(const std::string& text);

}  // namespace lic::reports::testing
