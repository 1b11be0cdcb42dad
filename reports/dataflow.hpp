#pragma once
// The data-flow view of index.html, for systems whose inputs are accounted for (conservation):
// the mini pipeline's line protocol (properties/conservation.hpp) and the ingest server's
// events (properties/ingest_conservation.hpp). A diagram of the stages with how many items took
// each path, where they ended (stored, dead-lettered, uploaded, in the DLQ), and the lost ones
// listed by where and why. Internal to reports/.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "properties/conservation.hpp"
#include "reports/run_report.hpp"

namespace lic::reports {

/// One box of the diagram: a stage (a process path or a registered name) or an end.
struct FlowNode {
  std::string name;
  std::string kind;  ///< "source", "stage", "end" (stored, uploaded, ...), "lost"
  std::uint64_t count = 0;  ///< items that reached it (a source: that it took in)
};

/// Items that went from node `from` to node `to` (indices into Flow::nodes).
struct FlowEdge {
  std::size_t from = 0;
  std::size_t to = 0;
  std::uint64_t count = 0;
};

/// Items lost together: where they were, why, how many, and which (the first few).
struct FlowLoss {
  std::string where;
  std::string why;
  std::uint64_t count = 0;
  std::string items;  ///< "seq 17, 40, ..." or "events 1260..1277 (batch 48) at t=90s"
};

struct Flow {
  std::string what;  ///< "lines" or "events"
  std::vector<FlowNode> nodes;
  std::vector<FlowEdge> edges;
  std::vector<FlowLoss> losses;
  std::string summary;  ///< conservation's own one line
  bool empty() const { return nodes.empty(); }
};

/// The line protocol's flow read one event at a time as the run appends them, so the run need
/// not keep its events (the same pass flow_of makes over a kept trace): on() each event in
/// trace order, then finish() once with conservation's verdict over the same events.
class LineFlowStream {
 public:
  LineFlowStream();
  LineFlowStream(const LineFlowStream&) = delete;
  LineFlowStream& operator=(const LineFlowStream&) = delete;
  ~LineFlowStream();
  void on(const TraceEvent& e);
  /// A line_emitted was seen: the trace holds the line protocol.
  bool emitted() const;
  Flow finish(const properties::Conservation& c);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

/// The run's data flow (empty when its trace holds neither protocol). `streamed_lines`: the
/// line protocol's flow read while the run went (`events` then holds no line protocol event),
/// used unless the trace holds the ingest server's.
Flow flow_of(const EventLog& events, const Flow* streamed_lines = nullptr);

/// The section: the diagram as inline SVG and the table of losses ("" for an empty flow).
std::string dataflow_html(const Flow& f);

}  // namespace lic::reports
