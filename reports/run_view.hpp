#pragma once
// What the timeline and the Perfetto trace draw, read once from a RunReport: a lane per tree
// path in tree order (dynamic children seen in the trace after their parent's declared
// children), each lane's up intervals and marks, the world's marks, and the shaded bands
// (partitions, node pauses, node outages). Both writers render the same view, so they agree.
// Internal to reports/.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "properties/availability.hpp"
#include "reports/run_report.hpp"

namespace lic::reports {

enum class MarkKind : std::uint8_t {
  crash,       ///< an exit with an abnormal reason other than kill/killed
  kill,        ///< an exit with reason kill or killed
  restart,     ///< a start attempt after the first: child_started with start > 1, or a
               ///< service going from failed to starting
  escalation,  ///< reached_max_restart_intensity: the supervisor gave up
  fault,       ///< fault_injected (on the lane of its pid; the world's otherwise)
  operation,   ///< an operation a failing `linearizable` names (Witness::related: the longest
               ///< linearizable prefix's end, the window), at its completion
};
constexpr std::size_t kMarkKinds = 6;
/// "crash", "kill", "restart", "escalation", "fault", "operation".
const char* to_string(MarkKind k);

struct Mark {
  Time at;
  MarkKind kind = MarkKind::crash;
  std::string detail;  ///< the reason, the start number, the fault's name and kind
};

enum class BandKind : std::uint8_t { partition, pause, node_down, draining, loss, duplicate, reorder, clog, history };
constexpr std::size_t kBandKinds = 9;
/// "partition", "pause", "node_down", "draining" (a task between SIGTERM and its end), and the
/// link faults' windows: "loss", "duplicate", "reorder", "clog"; "history": an operation that fits
/// no linearization (a failing `linearizable`), from its invocation to its completion.
const char* to_string(BandKind k);

struct Band {
  Time from;
  Time to;
  BandKind kind = BandKind::partition;
  std::string label;  ///< "node0 -> node1", "node0 <-> node1", "node2 paused", "node2 down"
};

struct Lane {
  std::string path;
  std::size_t depth = 0;             ///< 0 for a root
  const ShapeNode* shape = nullptr;  ///< null: a dynamic child seen only in the trace
  std::string node;                  ///< where its first process ran ("" if it never started)
  properties::Intervals up;          ///< within [0, end)
  std::vector<Mark> marks;           ///< in trace order
  /// A lifecycle service's states as they change ("inactive", "waiting for db", "starting",
  /// "running", "failed", "backoff 1.9s (attempt 2)", "stopping", "stopped"), in trace order.
  std::vector<std::pair<Time, std::string>> states;
};

/// A channel with a buffer (capacity 2 or more), drawn as a backlog lane: its length over time.
/// Channels made again under the same name on the same node (a restarted system) share one.
struct Backlog {
  std::string name;
  std::string node;
  std::uint64_t cap = 0;
  std::uint64_t max = 0;                               ///< the longest it got
  std::vector<std::pair<Time, std::uint64_t>> steps;  ///< its length from each instant on
};

/// A node in a leader election over the simulated database (properties/leader.hpp): when it
/// believed it led, and when the database accepted its leader writes (unsafe: while another node
/// held the lock or lease, or none did).
struct LeaderLane {
  std::string node;
  properties::Intervals believed;
  std::vector<Time> writes;
  std::vector<Time> unsafe;
};

/// Who the database had as leader, from when to when.
struct HolderSpan {
  Time from;
  Time to;
  std::string node;
};

struct RunView {
  Time end;  ///< the report's end, or the last event's time if later
  std::vector<Lane> lanes;
  std::vector<Backlog> backlogs;  ///< in the order the channels were made
  std::vector<Mark> world_marks;   ///< faults that name no process
  std::vector<Band> bands;         ///< by start time
  /// When the quiet phase began (`quiet_phase`): the chaos phase is before it. None: no quiet
  /// phase in this run (the faults ran to its end).
  std::optional<Time> quiet_from;
  std::vector<std::string> nodes;  ///< every node named, in the order first seen
  /// Leader election: a lane per node that ever believed it led or wrote, and the database's
  /// holder (empty without one).
  std::vector<LeaderLane> leaders;
  std::vector<HolderSpan> holders;
};

/// The leader-election lanes of a trace (none when it holds no election).
void leadership_of(const EventLog& events, Time end, RunView& v);

/// The backlog lanes of a trace: chan_make with a capacity of 2 or more, then every change of
/// its length.
std::vector<Backlog> backlogs_of(const EventLog& events);

/// Reads the report's trace once (plus one pass per lane over its spawn, exit and
/// child_started events for up_intervals). Up intervals: a supervised child's are
/// properties::up_intervals; a service's run from each `service_state` to running until it
/// leaves running; a process the world spawned (a root) is up from its spawn to its exit.
RunView view_of(const RunReport& r);

}  // namespace lic::reports
