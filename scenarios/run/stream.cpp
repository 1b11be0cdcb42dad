#include "scenarios/run/stream.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "scenarios/checks/table.hpp"
#include "scenarios/registry.hpp"
#include "scenarios/run/report.hpp"

namespace lic::scenarios {

namespace {

/// Only conservation, the line flow and the message flows read these: the small log leaves
/// them out.
bool streamed_only(const TraceEvent& e) {
  if (e.kind == EventKind::send || e.kind == EventKind::deliver) return true;
  if (e.kind != EventKind::system) return false;
  namespace line = properties::line;
  return e.name == line::kEmitted || e.name == line::kSent || e.name == line::kBuffered || e.name == line::kStored ||
         e.name == line::kDeadLettered || e.name == line::kLost;
}

TraceEvent without_fields(const TraceEvent& e) {
  TraceEvent c = e;
  c.field_count = 0;
  c.field_data = nullptr;
  return c;
}

/// Whether the run's network may deliver a message twice: a path or a fault that duplicates.
bool may_duplicate(const Scenario& s) {
  const auto duplicates = [](const LinkParams& p) { return p.duplicate.num != 0; };
  return duplicates(s.default_link) ||
         std::any_of(s.links.begin(), s.links.end(), [&](const LinkDecl& l) { return duplicates(l.params); }) ||
         std::any_of(s.faults.begin(), s.faults.end(), [](const faults::Fault& f) { return f.kind == faults::Kind::duplicate; });
}

}  // namespace

bool RunStream::can_stream(const Scenario& s, const Registry& registry) {
  if (&registry != &Registry::builtin()) return false;
  // The built-in checks that read the trace only for events the small log keeps (none reads a
  // message or a line event but conservation, which reads the streamed pass). The tree checks
  // read spawns, shutdown signals and the supervisors' and services' own events, and name the
  // event they judge by as their witness. Not `model` (it replays every event against the
  // model) nor the leader checks (they name as witness the first event at times they compute,
  // such as a lease's end, where the whole trace may hold only messages).
  static constexpr std::array<std::string_view, 11> kStreamed{
      "converges",    "no_escalation", "escalates", "availability",   "alive",
      "conservation", "drained",       "restarts",  "clean_shutdown", "never_gives_up",
      "intensity_headroom"};
  const std::vector<CheckDecl> checks = effective_checks(s);
  return std::all_of(checks.begin(), checks.end(), [](const CheckDecl& c) {
    return std::find(kStreamed.begin(), kStreamed.end(), c.name) != kStreamed.end();
  });
}

RunStream::RunStream(const Scenario& s, bool with_reports)
    : messages_([lanes = reports::LanePaths(tree_shapes(s))](std::string_view path) { return lanes(path); },
                may_duplicate(s)) {
  const std::vector<CheckDecl> checks = effective_checks(s);
  line_flow_wanted_ = with_reports && s.reports.html;
  conserve_ = line_flow_wanted_ || std::any_of(checks.begin(), checks.end(), [](const CheckDecl& c) { return c.name == "conservation"; });
  messages_wanted_ = with_reports && s.reports.perfetto;
}

RunStream::~RunStream() = default;

void RunStream::write_trace(const std::filesystem::path& path, const std::string& header) {
  trace_file_ = std::make_unique<reports::TraceFileStream>(path, header);
}

void RunStream::keep(const TraceEvent& e, bool with_fields) {
  if (!with_fields || e.field_count == 0) {
    kept_.push_back(without_fields(e));
    return;
  }
  auto block = std::make_unique<TraceField[]>(e.field_count);
  field_bytes_ += e.field_count * sizeof(TraceField);
  std::copy(e.fields().begin(), e.fields().end(), block.get());
  TraceEvent c = e;
  c.field_data = block.get();
  field_blocks_.push_back(std::move(block));
  kept_.push_back(c);
}

void RunStream::on_event(const TraceEvent& e) {
  if (trace_file_) trace_file_->on(e);
  if (conserve_) conservation_.on(e);
  if (line_flow_wanted_) lines_.on(e);
  if (messages_wanted_) messages_.on(e);
  if (seen_++ == 0 || e.time != instant_first_.time) {
    instant_first_ = without_fields(e);
    instant_first_kept_ = false;
  }
  last_kept_ = !streamed_only(e);
  if (!last_kept_) {
    last_ = without_fields(e);
    return;
  }
  // A witness found at this instant names its first event, as in the whole trace.
  if (!instant_first_kept_ && instant_first_.seq != e.seq) kept_.push_back(instant_first_);
  instant_first_kept_ = true;
  keep(e, true);
}

void RunStream::finish() {
  if (finished_) return;
  finished_ = true;
  if (seen_ > 0 && !last_kept_) {
    if (!instant_first_kept_ && instant_first_.seq != last_.seq) kept_.push_back(instant_first_);
    kept_.push_back(last_);
  }
  if (conserve_) conservation_result_ = conservation_.finish();
  if (line_flow_wanted_ && lines_.emitted()) line_flow_ = lines_.finish(conservation_result_);
}

}  // namespace lic::scenarios
