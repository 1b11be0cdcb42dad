#pragma once
// What the report writers read: one finished run as plain data (the scenario's tree shape, the
// verdicts, the final state, the trace). tools/ fills it in from a scenarios::RunResult; the
// writers here never run anything (DESIGN.md §8).

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.hpp"
#include "sim/trace.hpp"
#include "supervision/lifecycle.hpp"
#include "supervision/supervisor.hpp"

namespace lic::reports {

struct RunView;  // reports/run_view.hpp: what the timeline and Perfetto writers draw
struct Flow;     // reports/dataflow.hpp: index.html's data flow
class MessageFlowStream;  // reports/streams.hpp: Perfetto's message flows, read as the run went
class TraceFileStream;    // reports/streams.hpp: trace.jsonl, written as the run went

/// A node of the tree as the scenario declares it (for the diagram's labels).
struct ShapeNode {
  std::string path;   ///< "/root/input/parser"
  std::string id;     ///< "parser"
  std::string kind;   ///< "supervisor", "worker", "lifecycle" or "service"
  std::string behaviour;  ///< workers and services: the catalogue name
  std::string node;   ///< the node it runs on ("" = its parent's)
  // supervisors
  std::string strategy;     ///< "one_for_one", ...
  std::uint32_t intensity = 0;
  Duration period{};
  // children
  std::string restart;      ///< "permanent", "transient", "temporary"
  std::string shutdown;     ///< "brutal_kill", "5s", "infinity"
  bool significant = false;
  std::vector<std::string> depends_on;  ///< services
  std::vector<ShapeNode> children;
};

/// A run's measurement: one number, or a list of numbers (one per occurrence: each failover).
struct MetricValue {
  std::vector<double> values;
  bool list = false;
  bool operator==(const MetricValue&) const = default;
};
/// Measurements by name, in name order (summary.json's and a results line's `metrics`).
using Metrics = std::map<std::string, MetricValue>;

/// Where a check's verdict was decided: the instant, the event's index in the trace (its `seq`
/// in trace.jsonl), the processes involved, and why, in one line. For a check judged over the
/// whole run it is the event that made it fail, or the run's end (then `event` is the last one).
struct Witness {
  std::int64_t t_ns = 0;
  std::uint64_t event = 0;
  std::vector<std::string> processes;
  std::string why;
  /// Other events the verdict names, by index: a non-linearizable history's last operations of
  /// the longest linearizable prefix and those concurrent with the one that fits nowhere (each
  /// one's completion, an unknown one's invocation). The timeline marks them.
  std::vector<std::uint64_t> related{};
  bool operator==(const Witness&) const = default;
};

/// "t=41.25s event 18204 (/root/input): why".
std::string format_witness(const Witness& w);

struct CheckOutcome {
  std::string name;
  bool passed = false;
  std::string detail;
  std::optional<Witness> witness{};
  std::string kind{};                ///< a failure's kind (empty when it holds)
  std::vector<std::string> roles{};  ///< a failure's roles
  std::optional<double> margin{};    ///< the signed distance to failing, when the check measures one
  bool judged = true;                ///< false: the run gave it nothing to judge (it holds; "not judged: ..." in detail)
};

/// A fault of the file: how often it acted and how often it was skipped.
struct FaultCount {
  std::string name;
  std::string kind;
  std::uint64_t injected = 0;
  std::uint64_t skipped = 0;
  /// A window fault (loss, duplicate, reorder, clog, partition, pause): how long each window
  /// stays open (0: until the quiet phase or the run's end). The timeline shades them.
  Duration window{};
};

struct RunReport {
  std::string scenario;      ///< its name
  std::string file;          ///< the scenario file as given on the command line
  std::uint64_t seed = 0;
  std::string tie_break;     ///< "fifo" or "random"
  Time end{};
  std::uint64_t events = 0;
  std::uint64_t trace_hash = 0;
  bool passed = false;
  /// Not empty: a budget stopped the run here (what, when, where); the checks were not judged.
  std::string stopped;
  std::vector<CheckOutcome> checks;
  Metrics metrics;
  std::vector<FaultCount> faults;  ///< each fault of the file, in file order
  /// The one-line command that runs exactly this again.
  std::string reproduce;
  /// When not empty: the first line of trace.jsonl (a JSON object saying how to run this again,
  /// which `letitcrash replay` reads).
  std::string trace_header;
  std::vector<ShapeNode> trees;
  /// The kept trace (TraceMode::keep); never null when writing reports. In a streamed run
  /// (scenarios/run/stream.hpp) only what the view reads, and the three below are set.
  const EventLog* trace = nullptr;
  /// Read while the run went, instead of from `trace`: Perfetto's message flows, index.html's
  /// line flow, and trace.jsonl itself (uncommitted, then committed into the folder).
  const MessageFlowStream* message_flows = nullptr;
  const Flow* line_flow = nullptr;
  TraceFileStream* trace_file = nullptr;
  std::vector<supervision::SupervisorSnapshot> final_supervisors;
  std::vector<supervision::LifecycleSnapshot> final_lifecycles;
  std::map<std::string, std::uint32_t> starts;  ///< start attempts per path
  std::vector<std::string> alive;               ///< paths alive at the end
};

/// Which files write_reports writes.
struct ReportSelection {
  bool trace = true, tree = true, timeline = true, perfetto = true, junit = true, summary = true,
       html = true;
};

/// The summary object: scenario, seed, virtual_time_ns, events, trace_hash, passed,
/// checks[{name, passed, detail}], metrics{name: number or [numbers]},
/// faults[{name, kind, injected, skipped}], reproduce,
/// final{supervisors, lifecycles, starts, alive}.
/// It is what `run --format json` prints and what summary.json holds.
std::string summary_json(const RunReport& r);

/// tree.dot: supervisors with strategy and intensity, children with restart type, coloured by
/// final state, with restart counts and escalations marked.
/// With `when` ("at 1.5s": the diagram command's tree at a time, whose checks were not judged)
/// in the title instead of the run's verdict.
std::string tree_dot(const RunReport& r, std::string_view when = {});
/// timeline.svg: one lane per tree path over [0, end).
std::string timeline_svg(const RunReport& r);
/// The same from a view built once (view_of(r)) for every writer that reads it.
std::string timeline_svg(const RunReport& r, const RunView& v);
/// trace.perfetto.json: Chrome trace event format.
std::string perfetto_json(const RunReport& r);
std::string perfetto_json(const RunReport& r, const RunView& v);
/// The same document written to `path` atomically as it is rendered (never held whole); returns
/// an error message, empty on success.
std::string write_perfetto_json(const RunReport& r, const RunView& v, const std::filesystem::path& path);
/// junit.xml: one test case per check; a failure carries the reproduce command.
std::string junit_xml(const RunReport& r);
/// What became of tree.svg: written, or why not (empty `problem`: Graphviz's `dot` is not on
/// PATH; otherwise how running it failed).
struct TreeSvg {
  bool written = false;
  std::string problem{};
  /// Not empty: dot was not run, and why (a tree too large for Graphviz to lay out quickly).
  std::string skipped{};
};

/// Trees with more nodes than this are not drawn with Graphviz (`dot` takes tens of seconds on
/// a few thousand nodes; tree.dot is still written).
inline constexpr std::size_t kDotNodesMax = 2000;

/// index.html: the verdict table and links to the other files.
/// `view`, when given, is view_of(r) already built (the timeline section draws it).
std::string index_html(const RunReport& r, const ReportSelection& written, const TreeSvg& svg,
                       const RunView* view = nullptr);

/// Writes the selected reports into `dir`, as one run's folder: every file is written into a
/// fresh folder beside it (`<dir>.tmp.<pid>`) with manifest.json (the run, and each file's
/// size and FNV-1a hash), then that folder is swapped in place of `dir` in one rename. A folder
/// holding files a run does not write is refused, never replaced; staging folders left by a
/// killed run are removed. tree.svg when Graphviz's `dot` is on PATH (a note in index.html
/// otherwise). Returns the errors (and leaves `dir` as it was); empty on success.
/// A file's size and XXH3-128 hash (32 hex digits), as manifest.json records it.
struct Fingerprint {
  std::uint64_t bytes = 0;
  std::string xxh3_128;
  bool operator==(const Fingerprint&) const = default;
};
Fingerprint file_fingerprint(const std::filesystem::path& file);
/// A file's FNV-1a 64-bit hash (16 hex digits): what manifests written before letitcrash moved
/// to XXH3 record, and replay still checks.
std::string file_fnv1a64(const std::filesystem::path& file);

std::vector<std::string> write_reports(const RunReport& r, const std::filesystem::path& dir,
                                       const ReportSelection& which = {});

/// Where a TraceFileStream for the reports into `dir` writes while the run goes: beside the
/// folder (`<dir>.trace.jsonl.tmp.<pid>`), moved into it by write_reports.
std::filesystem::path streamed_trace_path(const std::filesystem::path& dir);

/// Why write_reports would refuse `dir` (a file, or a folder holding files a run does not
/// write), or "": asked before a run, so a refused folder costs no run and leaves nothing beside it.
std::string refused_out_dir(const std::filesystem::path& dir);

}  // namespace lic::reports
