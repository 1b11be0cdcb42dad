#pragma once
// A run that need not keep its events (TraceMode::hash): what the checks and the report writers
// read is gathered while the run appends its events, so memory does not grow with them.
//
// One trace sink feeds: conservation's pass (properties/conservation.hpp), index.html's line
// flow and Perfetto's message flows (reports/), trace.jsonl written as it goes (with --out),
// and a small kept log for the rest: every event except the messages (send, deliver) and the
// line protocol's events, which only those streamed readers read. So that a witness found in
// the small log names the same event as in the whole trace, the first event of each instant
// that holds a kept event is kept too, and the run's last event; those two kinds without their
// fields (nothing reads a message's or a line event's fields from this log).
//
// Only runs whose checks all read the small log alike are streamed (can_stream): the model
// comparison, the leader checks and a user's own checks and metrics (any registry but the built-in
// one) read the whole trace, so those runs keep it as before, and so do sweeps, shrinking and coverage (they do not come through here).

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "properties/conservation.hpp"
#include "reports/dataflow.hpp"
#include "reports/streams.hpp"
#include "scenarios/scenario.hpp"
#include "sim/trace.hpp"

namespace lic::scenarios {

class Registry;

class RunStream : public TraceSink {
 public:
  /// Every check `s` judges reads only what a stream keeps, and `registry` is the built-in one
  /// (a registry of one's own may hold checks and metrics that read any event: its runs keep
  /// the whole trace).
  static bool can_stream(const Scenario& s, const Registry& registry);

  /// `with_reports`: the run's reports will be written (--out): read what its selected ones need.
  RunStream(const Scenario& s, bool with_reports);
  RunStream(const RunStream&) = delete;
  RunStream& operator=(const RunStream&) = delete;
  ~RunStream() override;

  /// trace.jsonl too: `header` then every event, to `path`'s temporary (reports::streamed_trace_path).
  void write_trace(const std::filesystem::path& path, const std::string& header);

  void on_event(const TraceEvent& e) override;
  /// The small kept log and its fields' blocks (what grows with the run's events).
  std::size_t held_bytes() const override { return kept_.bytes() + field_bytes_; }
  /// After the run's last event: keeps it, and ends conservation's and the line flow's passes.
  void finish();

  const EventLog& kept() const { return kept_; }
  /// Null when no conservation check nor index.html asked for the pass.
  const properties::Conservation* conservation() const { return conserve_ ? &conservation_result_ : nullptr; }
  /// Null when no line_emitted was seen.
  const reports::Flow* line_flow() const { return line_flow_ ? &*line_flow_ : nullptr; }
  /// Null when no trace.perfetto.json is written.
  const reports::MessageFlowStream* message_flows() const { return messages_wanted_ ? &messages_ : nullptr; }
  reports::TraceFileStream* trace_file() { return trace_file_.get(); }

 private:
  void keep(const TraceEvent& e, bool with_fields);

  EventLog kept_;
  std::vector<std::unique_ptr<TraceField[]>> field_blocks_;
  std::size_t field_bytes_ = 0;
  TraceEvent instant_first_{};  // the first event of the current instant
  bool instant_first_kept_ = false;
  TraceEvent last_{};
  bool last_kept_ = false;
  std::uint64_t seen_ = 0;
  properties::ConservationStream conservation_;
  properties::Conservation conservation_result_;
  reports::LineFlowStream lines_;
  std::optional<reports::Flow> line_flow_;
  reports::MessageFlowStream messages_;
  std::unique_ptr<reports::TraceFileStream> trace_file_;
  bool finished_ = false;
  bool conserve_ = false;   // conservation's pass: a conservation check, or index.html's line flow
  bool line_flow_wanted_ = false;
  bool messages_wanted_ = false;
};

}  // namespace lic::scenarios
